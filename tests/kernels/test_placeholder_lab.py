"""Notebook 06 part 1: kernel sources and their diff, lost writes, the redesign, the exercises."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.exercises import check, get
from course.kernels import exercises as kernel_exercises
from course.kernels import placeholder_lab


def test_sources_are_read_from_the_running_code():
    assert "call.output.copy_(result)" in placeholder_lab.kernel_source("gather_compute_scatter")
    assert "copy_" not in placeholder_lab.kernel_source("write_through_placeholder")
    assert "class OutputPlaceholder" in placeholder_lab.kernel_source("Placeholder")
    with pytest.raises(CourseError, match="choose one of"):
        placeholder_lab.kernel_source("fast_kernel")


def test_diff_highlights_the_copy_back():
    page = placeholder_lab.diff_html("gather_compute_scatter", "write_through_placeholder")
    highlighted = [row for row in page.split("<tr>") if "#f4c7c3" in row or "#fff3cd" in row]
    assert any("copy_(result)" in row for row in highlighted)
    assert not any("call.run_graph(output, inputs)" in row for row in highlighted)


def test_diff_view_redraws_and_complains():
    panel = placeholder_lab.diff_view()
    before = panel.text.value
    assert "write_through_placeholder" in before and panel.error == ""
    panel.controls["right"].value = "output_placeholder"
    assert panel.text.value != before and "output_placeholder" in panel.text.value
    panel.controls["left"].value = "output_placeholder"
    assert "pick two different kernels" in panel.error


def test_buggy_kernel_loses_writes_only_on_non_contiguous_outputs():
    rows = {(r["kernel"], r["output"]): r for r in placeholder_lab.lost_write_rows()}
    assert rows[("write_through_placeholder", "contiguous")]["write"] == "ok"
    for layout in ("transposed", "sliced"):
        assert rows[("write_through_placeholder", layout)]["write"] == "LOST"
        assert not rows[("write_through_placeholder", layout)]["matches torch"]
    for kernel in ("gather_compute_scatter", "output_placeholder"):
        for layout in placeholder_lab.layouts():
            assert (
                rows[(kernel, layout)]["write"] == "ok" and rows[(kernel, layout)]["matches torch"]
            )
    assert "LOST" in placeholder_lab.lost_write_table()


def test_to_emulated_keeps_non_dense_strides():
    sliced = placeholder_lab.layouts()["sliced"]
    copy = placeholder_lab.to_emulated(sliced)
    assert copy.stride() == sliced.stride() and torch.equal(copy.inner, sliced)


def test_redesign_loses_no_write_in_any_family():
    rows = placeholder_lab.redesign_rows()
    lost_before = {r["family"] for r in rows if r["placeholder"] == "LOST"}
    assert lost_before == emps.ADAM_FAMILIES | emps.RANDOM_FAMILIES
    assert all(r["output-placeholder"] == "ok" for r in rows)
    fixed = {
        r["family"]
        for r in placeholder_lab.redesign_rows("fixed-macos14")
        if r["placeholder"] == "LOST"
    }
    assert fixed == set()


def test_redesign_leaves_the_process_backend_alone():
    before = emps.current_backend()
    placeholder_lab.redesign_rows()
    kernel_exercises.check_fix(get("06.fix_addcmul").reference())
    assert emps.current_backend() is before


def test_fix_exercise_accepts_the_fix_and_rejects_the_classics():
    exercise = get("06.fix_addcmul")
    verdict = check("06.fix_addcmul", exercise.reference())
    assert verdict.passed and "exp_avg_sq" in verdict.message
    buggy, zeros, no_copy = (check("06.fix_addcmul", w()) for w in exercise.wrong_answers)
    assert "never reached the output" in buggy.message and "transposed" in buggy.message
    assert "wrong values" in zeros.message
    assert not no_copy.passed
    assert "kernel function" in check("06.fix_addcmul", 42).message
    assert check("06.fix_addcmul", emps.gather_compute_scatter).passed
    assert check("06.fix_addcmul", emps.output_placeholder).passed
    assert not check("06.fix_addcmul", emps.write_through_placeholder).passed


def test_fix_exercise_needs_the_encoder_to_train(monkeypatch):
    class Frozen:
        def summary(self):
            return {"encoder_frozen": True, "encoder_max_exp_avg_sq": 0.0}

    monkeypatch.setattr(kernel_exercises.plateau, "run", lambda **kw: Frozen())
    verdict = kernel_exercises.check_fix(emps.gather_compute_scatter)
    assert not verdict.passed and "encoder has not moved" in verdict.message


def test_scramble_exercise():
    exercise = get("07.predict_scramble")
    assert check("07.predict_scramble", exercise.reference()).passed
    correct_math = check("07.predict_scramble", exercise.wrong_answers[0]())
    assert "torch's (correct) answer" in correct_math.message
    assert not check("07.predict_scramble", "zeros").passed
    assert not check("07.predict_scramble", ...).passed
