"""The stride explorer driven from pytest, and the layout demonstrations of notebook 04."""

from __future__ import annotations

import pytest

import course.layout.explorer as strides
from course.errors import CourseError
from course.layout.calculator import Layout
from course.layout.explorer import (
    CUSTOM,
    PRESETS,
    channels_last_layouts,
    explore,
    storage_values,
    trace_chain,
)
from course.tables import text_table


@pytest.fixture
def panel():
    return explore()


def test_default_explorer_draws_the_encoder_layout(panel):
    assert panel.error == ""
    assert bytes(panel.image.value).startswith(b"\x89PNG")
    assert "(1, 6)" in panel.text.value and "not contiguous" in panel.text.value


def test_a_preset_fills_the_text_boxes_and_redraws(panel):
    before_image, before_text = panel.image.value, panel.text.value
    panel.controls["preset"].value = "transpose then contiguous() (copies)"
    assert panel.controls["ops"].value == "T; contiguous()"
    assert panel.error == "" and "NEW (copy)" in panel.text.value
    assert bytes(panel.image.value) != bytes(before_image) and panel.text.value != before_text


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_draws_without_error(panel, name):
    panel.controls["preset"].value = name
    assert panel.error == "", panel.error
    assert panel.image.value


def test_selecting_an_element_shows_its_storage_address(panel):
    panel.controls["index"].value = "2, 3"
    assert "storage[offset 0 + 2×1 + 3×6] = storage[20]" in panel.text.value


def test_view_verdict_for_the_transposed_view(panel):
    assert "view(24,) is impossible" in panel.text.value and "dims 0 and 1" in panel.text.value
    panel.controls["view_as"].value = "4, 6"
    assert "view(4, 6) is impossible" in panel.text.value
    panel.controls["view_as"].value = "6, 2, 2"
    assert "is possible" in panel.text.value
    panel.controls["view_as"].value = "5"
    assert panel.error == "" and "holds 5 elements" in panel.text.value


@pytest.mark.parametrize(
    "control, value, message",
    [
        ("ops", "T; view(24", "step 2 'view(24': not valid syntax"),
        ("ops", "T; flip(0)", "unknown operation 'flip'"),
        ("ops", "T; view(24)", "view(24,) is impossible"),
        ("ops", "[::-1]", "greater than zero"),
        ("index", "one", "write whole numbers"),
        ("shape", "9, 9", "at most 64 elements"),
        ("shape", "four", "write whole numbers"),
        ("ops", "expand(3, 4, 6)", "the view has 72 elements"),
    ],
)
def test_bad_input_shows_a_message_not_a_traceback(panel, control, value, message):
    panel.controls[control].value = value
    assert message in panel.error
    assert "Traceback" not in panel.message.value and panel.message.value


def test_custom_choice_keeps_the_text_boxes(panel):
    panel.controls["ops"].value = "[1:, ::2]"
    panel.controls["preset"].value = CUSTOM
    assert panel.controls["ops"].value == "[1:, ::2]" and panel.error == ""


def test_unknown_preset_is_refused():
    with pytest.raises(CourseError, match="preset="):
        explore("no such preset")


def test_the_widget_refuses_when_calculator_and_torch_disagree(monkeypatch):
    wrong = Layout((4, 6), (1, 4), 0, 24)
    monkeypatch.setattr(strides, "apply_chain", lambda layout, ops: [layout, wrong])
    with pytest.raises(CourseError, match="please report"):
        trace_chain("4, 6", "T")


def test_storage_values_follow_a_copy():
    _, tensor = trace_chain("2, 3", "T; contiguous()")
    assert storage_values(tensor) == [0, 3, 1, 4, 2, 5]
    _, view = trace_chain("2, 3", "T")
    assert storage_values(view) == [0, 1, 2, 3, 4, 5]


def test_channels_last_survives_clone_but_not_contiguous():
    rows = {row["tensor"]: row for row in channels_last_layouts()}
    kept = rows["images.to(memory_format=channels_last)"]["stride"]
    assert rows["channels_last .clone()"]["stride"] == kept
    assert rows["torch.zeros_like(channels_last)"]["channels_last"] is True
    assert rows["channels_last .contiguous()"]["contiguous"] is True


def test_layout_tables_align_columns():
    lines = text_table(channels_last_layouts()).splitlines()
    assert lines[0].startswith("tensor") and len(lines) == 8
    assert len({line.index("(2, ") for line in lines[1:]}) == 1


def test_a_bad_chain_clears_the_old_figure(panel):
    assert panel.image.value
    panel.controls["ops"].value = "T; flip(0)"
    assert "unknown operation 'flip'" in panel.error
    assert panel.image.value == b"" and panel.text.value == ""


def test_an_index_that_does_not_fit_keeps_the_explorer_drawn(panel):
    panel.controls["index"].value = "1, 9"
    assert panel.error == "" and panel.image.value
    assert "element (1, 9) fits no step of this chain" in panel.text.value
    assert "out of range for dim 1 of size 4" in panel.text.value
    assert "Showing element (0, 0) instead" in panel.text.value and "<table" in panel.text.value


def test_an_index_left_from_an_earlier_step_names_the_step_it_no_longer_fits(panel):
    panel.controls["index"].value = "5, 3"  # fits the (6, 4) transposed view
    assert "storage[offset 0 + 5×1 + 3×6] = storage[23]" in panel.text.value
    panel.controls["ops"].value = "T; [:, ::2]"
    assert panel.error == "" and "<table" in panel.text.value
    assert (
        "element (5, 3) fits the layout after step &#x27;T&#x27; (shape (6, 4)) but no longer "
        "after step &#x27;[:, ::2]&#x27; (shape (6, 2))"
    ) in panel.text.value
    panel.controls["index"].value = "5, 1"
    assert "no longer" not in panel.text.value


def test_a_view_as_error_says_its_prefix_once(panel):
    panel.controls["view_as"].value = "4, x"
    assert panel.text.value.count("view as") == 1 and "write whole numbers" in panel.text.value


def test_the_presets_do_not_answer_the_clone_prediction():
    from course.exercises.registry import prediction

    words = prediction("04.clone_layout").answer_words
    assert not [p for p in PRESETS for w in words if w in p]
