"""The bias-correction widget and the numbers behind it."""

from __future__ import annotations

import html

import pytest
import torch

from course.adam.bias_correction import (
    BETA1_MAX,
    BETA2_MAX,
    bias_correction_widget,
    draw,
    gradient_stream,
    moments,
)
from course.adam.scratch import MAX_ADAM_STEPS
from course.errors import CourseError
from course.ui import BUSY


def test_first_step_is_exactly_corrected():
    grads = gradient_stream(5, seed=3)
    result = moments(grads, 0.9, 0.999)
    assert result["m"][0].item() == pytest.approx(0.1 * grads[0].item(), rel=1e-6)
    assert result["m_hat"][0].item() == pytest.approx(grads[0].item(), rel=1e-6)
    assert result["v_hat"][0].item() == pytest.approx(grads[0].item() ** 2, rel=1e-5)
    assert result["factor1"][0].item() == pytest.approx(10.0)


def test_corrected_mean_is_closer_early_and_factors_decay():
    result = moments(gradient_stream(200), 0.9, 0.999)
    assert abs(result["m_hat"][4] - 1.0) < abs(result["m"][4] - 1.0)
    assert torch.all(result["factor1"][1:] <= result["factor1"][:-1])
    assert result["factor1"][-1].item() == pytest.approx(1.0, abs=1e-6)


def test_stream_is_seeded():
    assert torch.equal(gradient_stream(10, seed=1), gradient_stream(10, seed=1))


def test_beta_one_is_refused():
    with pytest.raises(CourseError, match="beta2"):
        moments(gradient_stream(3), 0.9, 1.0)


def test_widget_redraws_and_reports_bad_values():
    panel = bias_correction_widget()
    assert panel.error == "" and panel.image.value
    first_text = panel.text.value
    panel.controls["beta1"].value = 0.5
    assert panel.error == "" and panel.text.value != first_text
    assert ">2.0<" in panel.text.value  # 1 / (1 - 0.5) at step 1
    with pytest.raises(CourseError, match="beta1=1.0 is not allowed"):
        panel.controls["beta1"].value = 1.0  # the slider ends at 0.99: never clamped to it
    panel.controls["beta1"].value = 0.9
    panel.controls["step_range"].value = (7, 7)
    assert "at least two steps" in panel.error
    panel.controls["step_range"].value = (10, 300)
    assert panel.error == "" and ">10<" in panel.text.value


def test_the_sliders_offer_exactly_the_betas_and_steps_the_panel_accepts():
    """Issue 38: beta1's slider offered 1.00, which the panel then refused. Both ends of every
    slider draw, and one step past either end is refused where it is typed."""
    panel = bias_correction_widget()
    beta1, beta2, steps = (panel.controls[name] for name in ("beta1", "beta2", "step_range"))
    assert (beta1.high, beta2.high, steps.high) == (BETA1_MAX, BETA2_MAX, MAX_ADAM_STEPS)
    for value in (beta1.low, beta1.high):
        beta1.value = value
        assert panel.error == "" and panel.image.value
    beta2.value = beta2.high
    steps.value = (steps.low, steps.high)
    assert panel.error == "" and f">{MAX_ADAM_STEPS}<" in panel.text.value
    with pytest.raises(CourseError, match="choose 0 <= beta1 < 1"):
        draw(1.0, 0.999, (1, 10))  # what the slider's next step would have been


@pytest.mark.parametrize(
    ("control", "typed", "why"),
    [
        ("beta2", "-3", "which is below 0.000"),
        ("beta1", "1", "which is above 0.99"),
        ("beta1", "0,9", "which is not a number"),
        ("step_range", f"1 - {MAX_ADAM_STEPS + 1}", f"which is above {MAX_ADAM_STEPS}"),
    ],
)
def test_a_typed_beta_or_step_out_of_range_is_refused_out_loud(control, typed, why):
    """03's beta2 box turned -3 into 0 without a word: the panel now says what was typed and
    what is allowed, and the plot and table stay those of the value kept."""
    panel = bias_correction_widget()
    figure, table, kept = panel.image.value, panel.text.value, panel.controls[control].value
    panel.controls[control].box.value = typed
    message = html.unescape(panel.message.value)
    assert f"you typed {typed!r}, {why}" in message and "Type " in message
    assert panel.controls[control].value == kept
    assert panel.image.value == figure and panel.text.value == table


def test_short_step_ranges_get_whole_step_ticks():
    fig = draw(0.9, 0.999, (1, 3)).figure
    for ax in fig.axes:
        assert all(float(t).is_integer() for t in ax.get_xticks())
    assert fig.get_figwidth() * 90 <= 950


def test_the_stream_length_is_bounded():
    with pytest.raises(CourseError, match="steps=1000000"):
        gradient_stream(10**6)


def test_sliders_redraw_once_released_and_say_so_at_once(monkeypatch):
    """An arrow key or a drag redraws once, on release, and the status shows before the work."""
    panel = bias_correction_widget()
    assert not any(control.slider.continuous_update for control in panel.controls.values())
    seen = []

    def watched(*args, **kwargs):
        seen.append(panel.status.value)
        return draw(*args, **kwargs)

    monkeypatch.setattr(panel, "_draw", watched)
    panel.controls["beta2"].value = 0.99
    assert seen and BUSY in seen[0] and panel.status.value == ""
