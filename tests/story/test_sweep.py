"""The sweep widget: it says it is working, never retrains silently, keeps its legend aside."""

from __future__ import annotations

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from course.errors import CourseError
from course.model.runs import run
from course.story import sweep


@pytest.fixture(scope="module")
def tiny_run():
    return run(steps=3, progress=None, n_features=64, k=8)


def test_first_run_fills_row_one_without_training(tiny_run, monkeypatch):
    monkeypatch.setattr(sweep, "train_setting", lambda *a, **k: pytest.fail("retrained"))
    panel = sweep.sweep_widget(first=tiny_run, steps=3)
    assert panel.error == "" and "<td" in panel.text.value and panel.image.value


def test_a_repeated_click_says_so(tiny_run, monkeypatch):
    monkeypatch.setattr(sweep, "train_setting", lambda *a, **k: tiny_run)
    panel = sweep.sweep_widget(first=tiny_run, steps=3)
    assert panel.message.value == "" and "already used" not in panel.text.value  # no click yet
    panel.button.click()
    assert "Same settings as the last run" in panel.message.value
    panel.controls["k"].value = 8
    assert panel.message.value == ""  # the note was about the settings before the change
    panel.button.click()  # run #2
    panel.controls["k"].value = 32
    panel.button.click()  # back to run #1's settings
    assert "Run #1 already used these settings" in panel.message.value
    panel.controls["lr"].value = 1e-3
    assert panel.message.value == "" and "already used" not in panel.text.value


def test_training_shows_progress_in_the_widget_and_disables_the_controls(tiny_run, monkeypatch):
    seen = []

    def fake_train(setting, steps, progress=None):
        panel = holder[0]
        seen.append((panel.button.disabled, panel.controls["lr"].disabled, panel.status.value))
        progress(steps, steps, "loss 1.0")
        seen.append((panel.button.disabled, panel.controls["lr"].disabled, panel.status.value))
        return tiny_run

    holder = []
    monkeypatch.setattr(sweep, "train_setting", fake_train)
    panel = sweep.sweep_widget(first=tiny_run, steps=3)
    holder.append(panel)
    panel.controls["k"].value = 8
    panel.button.click()
    assert seen[0][:2] == (True, True) and "Training" in seen[0][2] and "3 steps" in seen[0][2]
    assert "3/3" in seen[1][2]
    assert panel.button.disabled is False and panel.status.value == ""
    assert ">2<" in panel.text.value


def test_the_button_comes_back_after_an_error(tiny_run, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(sweep, "train_setting", broken)
    panel = sweep.sweep_widget(first=tiny_run, steps=3)
    panel.controls["hidden"].value = 768
    panel.button.click()
    assert "out of memory" in panel.error and panel.button.disabled is False
    assert panel.image.value == b""  # no stale figure under the error


def test_a_real_click_trains_every_knob(tiny_run):
    one = sweep.train_setting(sweep.Setting(lr=1e-3, k=8, hidden=768, aux_weight=0.1), steps=2)
    assert len(one.history.loss) == 2


def test_legend_stays_beside_the_curves_however_many_runs(tiny_run):
    runs = {sweep.Setting(lr=10 ** (-4 + i / 8)): tiny_run for i in range(15)}
    fig = sweep.sweep_figure(runs)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1
    assert all(float(t).is_integer() for t in ax.get_xticks())
    assert len(sweep.sweep_rows(runs)) == 15


@pytest.mark.parametrize(
    ("first", "steps", "words"),
    [("run", 5, "not a training run"), (None, 0, "steps"), (None, "many", "steps")],
)
def test_bad_arguments_get_a_clear_message_before_any_widget(first, steps, words):
    with pytest.raises(CourseError, match=words):
        sweep.sweep_widget(first=first, steps=steps)


def test_a_trained_run_says_how_long_it_took_here(tiny_run, monkeypatch):
    clock = iter([100.0, 112.4])
    monkeypatch.setattr(sweep, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(sweep, "train_setting", lambda *a, **k: tiny_run)
    panel = sweep.sweep_widget(first=tiny_run, steps=3)
    panel.controls["k"].value = 8
    panel.button.click()
    assert "Run #2 took 12 s on this machine." in panel.message.value
