"""The bias-correction widget and the numbers behind it."""

from __future__ import annotations

import pytest
import torch

from course.adam.bias_correction import bias_correction_widget, draw, gradient_stream, moments
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
    panel.controls["beta1"].value = 1.0
    assert "beta1=1.0" in panel.error and "beta1" in panel.message.value
    panel.controls["beta1"].value = 0.9
    panel.controls["step_range"].value = (7, 7)
    assert "at least two steps" in panel.error
    panel.controls["step_range"].value = (10, 300)
    assert panel.error == "" and ">10<" in panel.text.value


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
    assert not any(control.continuous_update for control in panel.controls.values())
    seen = []

    def watched(*args, **kwargs):
        seen.append(panel.status.value)
        return draw(*args, **kwargs)

    monkeypatch.setattr(panel, "_draw", watched)
    panel.controls["beta2"].value = 0.99
    assert seen and BUSY in seen[0] and panel.status.value == ""
