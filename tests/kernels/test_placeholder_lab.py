"""Notebook 06's lab: kernel sources and their diff, lost writes per layout, the redesign."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.errors import CourseError
from course.kernels import placeholder_lab


def test_sources_are_read_from_the_running_code():
    assert "(call.output, result)" in placeholder_lab.kernel_source("gather_compute_scatter")
    assert "copy_" not in placeholder_lab.kernel_source("write_through_placeholder")
    assert "class OutputPlaceholder" not in placeholder_lab.kernel_source("Placeholder")
    assert "class OutputPlaceholder" in placeholder_lab.kernel_source("OutputPlaceholder")
    with pytest.raises(CourseError, match="choose one of"):
        placeholder_lab.kernel_source("fast_kernel")


def test_diff_highlights_the_copy_back():
    page = placeholder_lab.diff_html("gather_compute_scatter", "write_through_placeholder")
    highlighted = [row for row in page.split("<tr>") if "#f4c7c3" in row or "#fff3cd" in row]
    assert any("(call.output, result)" in row for row in highlighted)  # the copy back
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
    for layout in ("transposed", "step-sliced"):
        assert rows[("write_through_placeholder", layout)]["write"] == "LOST"
        assert not rows[("write_through_placeholder", layout)]["matches torch"]
    for kernel in ("gather_compute_scatter", "output_placeholder"):
        for layout in placeholder_lab.layouts():
            assert (
                rows[(kernel, layout)]["write"] == "ok" and rows[(kernel, layout)]["matches torch"]
            )


@pytest.mark.parametrize("family", ["addcmul", "addcdiv"])
def test_run_addc_matches_torch_bit_for_bit_with_a_right_kernel(family):
    for output in placeholder_lab.layouts((4, 6), ("transposed", "storage-offset")).values():
        result, expected, _ = placeholder_lab.run_addc(
            emps.gather_compute_scatter, output, family, value=-1.5
        )
        assert torch.equal(result, expected)


def test_results_are_read_through_the_storage_not_the_tensor_object():
    """A kernel that swaps the output object's memory has not written the output's storage."""

    def swap(call):
        temporary = call.output.contiguous()
        call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
        call.output.data = temporary

    output = placeholder_lab.layouts()["transposed"]
    result, expected, _ = placeholder_lab.run_addcmul(swap, output)
    assert torch.equal(result, output) and not torch.equal(result, expected)


@pytest.mark.parametrize(
    ("kernel", "output", "value", "words"),
    [
        ("not a kernel", torch.zeros(2, 3), 0.5, "kernel must be a kernel function"),
        (emps.gather_compute_scatter, [[0.0]], 0.5, "output must be a tensor"),
        (emps.gather_compute_scatter, torch.zeros(2, 3, dtype=torch.int64), 0.5, "floating"),
        (emps.gather_compute_scatter, torch.zeros(1 << 17), 0.5, "at most"),
        (emps.gather_compute_scatter, torch.zeros(2, 3), "half", "value must be a number"),
    ],
)
def test_run_addcmul_names_bad_input(kernel, output, value, words):
    with pytest.raises(CourseError, match=words):
        placeholder_lab.run_addcmul(kernel, output, value)


@pytest.mark.parametrize("layout", ["step-sliced", "storage-offset", "permuted"])
def test_to_emulated_keeps_strides_and_offset(layout):
    shape = (2, 3, 4) if layout == "permuted" else (4, 6)
    cpu = placeholder_lab.layouts(shape, (layout,))[layout]
    copy = placeholder_lab.to_emulated(cpu)
    assert copy.stride() == cpu.stride() and copy.storage_offset() == cpu.storage_offset()
    assert torch.equal(copy.inner, cpu)


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


def test_redesign_leaves_the_process_backend_and_rng_alone():
    before = emps.current_backend()
    torch.manual_seed(5)
    expected = torch.rand(2)
    torch.manual_seed(5)
    placeholder_lab.redesign_rows()
    assert emps.current_backend() is before
    assert torch.equal(torch.rand(2), expected)


def test_macos15_profile_loses_no_write_even_with_the_broken_kernel():
    rows = placeholder_lab.lost_write_rows(("write_through_placeholder",), profile="macos15")
    assert all(r["write"] == "ok" and r["temporaries"] == 0 for r in rows)


def test_diff_fits_any_width():
    page = placeholder_lab.diff_html("Placeholder", "OutputPlaceholder")
    assert "table-layout:fixed;width:100%" in page and "white-space:pre-wrap" in page
    assert "white-space:pre;" not in page
