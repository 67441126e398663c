"""The widget shell, used as a learner would: set .value, click, read what the panel shows."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import ipywidgets as widgets
import pytest

from course.errors import CourseError
from course.figures import describe, fitted_figure
from course.ui import ACCESS_HELPER, BUSY, Drawing, Panel, widget_check


def _panel(button: str | None = None) -> tuple[Panel, list[int]]:
    calls: list[int] = []

    def draw(n: int) -> Drawing:
        calls.append(n)
        if n < 0:
            raise CourseError(f"n={n} is out of range; allowed: 0 to 10")
        if n == 7:
            raise ZeroDivisionError("seven")
        fig = fitted_figure(400, 200)
        fig.add_subplot().plot(range(n + 1))
        return Drawing(fig, f"<p>n is {n}</p>")

    return Panel({"n": widgets.IntText(value=1, description="n")}, draw, button=button), calls


def test_setting_a_value_redraws():
    panel, calls = _panel()
    panel.controls["n"].value = 3
    assert calls == [1, 3] and "n is 3" in panel.text.value and panel.image.value


def test_bad_value_shows_a_message_and_clears_the_stale_figure():
    panel, _ = _panel()
    panel.controls["n"].value = -1
    assert "n=-1 is out of range" in panel.message.value and panel.error
    assert panel.image.value == b"" and panel.image.layout.display == "none"
    assert panel.text.value == "" and panel.figure is None
    panel.controls["n"].value = 2
    assert panel.error == "" and panel.message.value == "" and panel.image.value


def test_unexpected_error_never_shows_a_traceback():
    panel, _ = _panel()
    panel.controls["n"].value = 7
    assert "ZeroDivisionError: seven" in panel.error and "Traceback" not in panel.message.value


def test_text_form_says_to_run_the_cell():
    panel, _ = _panel()
    assert repr(panel) == "Interactive widget (n): run this cell in JupyterLab to use it."
    bundle = panel._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "run this cell" in data["text/plain"]


def test_button_runs_once_per_setting_and_says_so_on_a_repeat():
    panel, calls = _panel(button="Run")
    panel.button.click()  # the panel drew once when made; nothing changed since
    assert calls == [1] and "Same settings" in panel.message.value
    panel.controls["n"].value = 4
    assert calls == [1]  # a button panel waits for the click
    panel.button.click()
    assert calls == [1, 4] and panel.message.value == ""


def test_working_disables_controls_and_shows_progress_at_once():
    panel, _ = _panel(button="Train")
    with panel.working("Training 200 steps..."):
        assert panel.button.disabled and panel.controls["n"].disabled
        assert "Training 200 steps" in panel.status.value
        panel.progress(20, 200, "loss 3.25")
        assert "20/200, loss 3.25" in panel.status.value
    assert not panel.button.disabled and panel.status.value == ""


def test_working_restores_controls_after_an_error():
    panel, _ = _panel(button="Train")
    with pytest.raises(RuntimeError), panel.working("Training..."):
        raise RuntimeError("boom")
    assert not panel.button.disabled and not panel.controls["n"].disabled


def test_a_draw_function_that_asks_for_its_panel_gets_it_from_the_first_drawing():
    seen: list[tuple[bool, str]] = []

    def draw(n: int, panel: Panel) -> Drawing:
        with panel.working(f"Working on {n}..."):
            panel.progress(1, 2)
            seen.append((panel.controls["n"].disabled, panel.status.value))
        return Drawing(html=f"<p>{n}</p>")

    panel = Panel({"n": widgets.IntText(value=1, description="n")}, draw, button="Run")
    assert len(seen) == 1 and seen[0][0] and "working: 1/2" in seen[0][1]
    assert panel.error == "" and panel.text.value == "<p>1</p>" and panel.status.value == ""
    panel.controls["n"].value = 2
    panel.button.click()
    assert len(seen) == 2 and panel.text.value == "<p>2</p>"


def test_a_control_may_not_take_the_panels_name():
    with pytest.raises(ValueError, match="'panel'"):
        Panel({"panel": widgets.IntText()}, lambda panel: Drawing())


def test_widget_check_follows_its_slider():
    panel = widget_check()
    panel.controls["n"].value = 6
    assert "the slider says 6" in panel.text.value


def test_every_redraw_says_so_before_drawing_and_rendering(monkeypatch):
    """The status is sent to the page before the slow part, and cleared once the result shows."""
    import course.ui

    seen: list[str] = []
    panels: list[Panel] = []

    def draw(n: int, panel: Panel) -> Drawing:
        panels.append(panel)
        seen.append(panel.status.value)
        return Drawing(fitted_figure(200, 100))

    def render(fig):
        seen.append(panels[-1].status.value)
        return b"png"

    monkeypatch.setattr(course.ui, "figure_png", render)
    panel = Panel({"n": widgets.IntSlider(value=1, description="n")}, draw)
    seen.clear()
    panel.controls["n"].value = 2
    assert len(seen) == 2 and all(BUSY in status for status in seen)
    assert panel.status.value == "" and panel.image.value == b"png"


def test_sliders_report_once_released_other_controls_as_they_were():
    text = widgets.Text(value="a", description="t")
    panel = Panel(
        {
            "n": widgets.IntSlider(value=1, description="n"),
            "r": widgets.FloatRangeSlider(description="r"),
            "t": text,
        },
        lambda n, r, t: Drawing(),
    )
    assert not panel.controls["n"].continuous_update
    assert not panel.controls["r"].continuous_update
    assert text.continuous_update  # typing is not a drag


def test_a_note_goes_when_a_setting_changes_an_error_stays():
    def draw(n: int) -> Drawing:
        if n < 0:
            raise CourseError(f"n={n} is out of range")
        return Drawing(html=f"<p>{n}</p>", note=f"{n} was seen before")

    panel = Panel({"n": widgets.IntText(value=1, description="n")}, draw, button="Run")
    assert "1 was seen before" in panel.message.value
    panel.controls["n"].value = 2
    assert panel.message.value == ""
    panel.controls["n"].value = -1
    panel.button.click()
    panel.controls["n"].value = 3
    assert "out of range" in panel.message.value  # the last run's error, until the next run


def test_work_inside_a_redraw_hands_the_status_back():
    panel, _ = _panel(button="Train")
    with panel.working("Training..."), panel.working("Step 2..."):
        assert "Step 2" in panel.status.value and panel.controls["n"].disabled
    assert panel.status.value == "" and not panel.controls["n"].disabled


def test_a_figure_as_wide_as_the_cell_fits_it_without_margins():
    panel = widget_check()
    assert panel.image.layout.max_width == "100%" and panel.image.layout.margin == "0"


def test_a_double_click_on_two_kernel_threads_runs_once_then_says_it_is_a_repeat():
    """JupyterLab may hand each click to its own kernel thread while the first still runs."""
    import threading
    import time

    calls: list[int] = []

    def draw(n: int) -> Drawing:
        calls.append(n)
        time.sleep(0.2)  # a run long enough for the second click to arrive meanwhile
        return Drawing(html=f"<p>{n}</p>")

    panel = Panel({"n": widgets.IntText(value=1, description="n")}, draw, button="Run")
    panel.controls["n"].value = 2
    clicks = [threading.Thread(target=panel.button.click) for _ in range(2)]
    for click in clicks:
        click.start()
    for click in clicks:
        click.join()
    assert calls == [1, 2] and "Same settings" in panel.message.value


def test_a_control_without_a_description_is_refused():
    with pytest.raises(ValueError, match=r"\['k'\] have no description"):
        Panel({"n": widgets.IntText(description="n"), "k": widgets.Dropdown(options=[1])}, Drawing)


def _panel_builders() -> list[str]:
    """Every public function in course/ that returns a Panel (found in the source, so a new
    widget is checked without being listed here), as "module:function"."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted((root / "course").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        found += [
            f"{module}:{node.name}"
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef)
            and not node.name.startswith("_")
            and isinstance(node.returns, ast.Name)
            and node.returns.id == "Panel"
        ]
    return found


def test_panel_builders_are_found():
    assert {"course.ui:widget_check", "course.adam.switchboard:switchboard"} <= set(
        _panel_builders()
    )


@pytest.mark.parametrize("builder", _panel_builders())
def test_every_control_of_every_course_panel_has_a_label(builder, monkeypatch):
    """The label is what a screen reader reads for a control (issue 27). Drawing is skipped:
    only the controls are looked at, and some panels train before their first figure."""
    monkeypatch.setattr(Panel, "redraw", lambda self: None)
    module, name = builder.split(":")
    panel = getattr(importlib.import_module(module), name)()
    parts = [*panel.controls.items(), *([("button", panel.button)] if panel.button else [])]
    unlabelled = [key for key, part in parts if not str(part.description).strip()]
    assert not unlabelled, f"{builder}: {unlabelled} have no description"


def test_a_panels_figure_carries_alt_text_and_loses_it_with_the_figure():
    """The <img>'s title (an Image has no alt) is course.figures.figure_alt of the figure."""

    def draw(n: int) -> Drawing:
        if n < 0:
            raise CourseError("negative")
        fig = fitted_figure(300, 200)
        ax = fig.add_subplot()
        ax.plot([0, n], label="loss")
        ax.set(title="Loss\nper step", xlabel="step", ylabel="loss")
        ax.legend()
        return Drawing(describe(fig, "The loss falls") if n == 2 else fig)

    panel = Panel({"n": widgets.IntText(value=1, description="n")}, draw)
    assert panel.image.tooltip == "Loss per step (x: step, y: loss) legend: loss"
    panel.controls["n"].value = 2
    assert panel.image.tooltip.startswith("The loss falls. Loss per step")
    panel.controls["n"].value = -1
    assert panel.image.tooltip is None


def test_every_panel_carries_the_page_side_access_helper():
    """It names slider handles and gives the focus back after work (run in a browser by
    tests/browser/test_keyboard.py): every panel has it once."""
    for panel in (widget_check(), Panel({"n": widgets.IntText(description="n")}, Drawing)):
        held = [c for c in panel.children if getattr(c, "value", None) == ACCESS_HELPER]
        assert len(held) == 1


def _sent_values(widget: widgets.Widget) -> list[str]:
    """Every `value` the widget sends to the page from now on (its comm's update messages)."""
    sent: list[str] = []
    send = widget.comm.send

    def record(data=None, metadata=None, buffers=None):
        if "value" in (data or {}).get("state", {}):
            sent.append(data["state"]["value"])
        send(data=data, metadata=metadata, buffers=buffers)

    widget.comm.send = record
    return sent


def test_the_status_reaches_the_page_before_any_slow_work_starts():
    """Issue 27's 200 ms: what matters is the message the page gets, not the trait, so the status
    must be *sent* before the draw function starts its slow work, whether the page changes a
    value (a redraw) or clicks Run; a `working` label is sent before its block runs. The page's
    own messages are replayed through the widgets' message handlers, as the kernel does."""
    sent_when: dict[str, list[str]] = {}
    statuses: list[str] = []  # the panel being driven's, once it is built

    def draw(n: int, panel: Panel) -> Drawing:
        sent_when.setdefault(f"draw {n}", list(statuses))
        with panel.working(f"Training {n} ..."):
            sent_when.setdefault(f"block {n}", list(statuses))
        return Drawing(html=f"<p>{n}</p>")

    auto = Panel({"n": widgets.IntSlider(value=1, description="n")}, draw)
    statuses = _sent_values(auto.status)
    update = {"method": "update", "state": {"value": 2}, "buffer_paths": []}
    auto.controls["n"]._handle_msg({"content": {"data": update}, "buffers": []})
    assert any(BUSY in s for s in sent_when["draw 2"])
    assert any("Training 2" in s for s in sent_when["block 2"])

    run = Panel({"n": widgets.IntText(value=3, description="n")}, draw, button="Run")
    statuses = _sent_values(run.status)
    run.controls["n"].value = 4
    assert statuses == []  # a button panel waits for the click
    click = {"method": "custom", "content": {"event": "click"}}
    run.button._handle_msg({"content": {"data": click}, "buffers": []})
    assert any(BUSY in s for s in sent_when["draw 4"]) and statuses[-1] == ""


def test_every_press_with_unchanged_settings_changes_the_note():
    """A second press on an unchanged note would look ignored: the note counts the presses."""
    panel, calls = _panel(button="Run")
    notes = []
    for _ in range(3):
        panel.button.click()
        notes.append(panel.message.value)
    assert calls == [1] and len(set(notes)) == 3 and "pressed 3 times" in notes[-1]
    panel.controls["n"].value = 2
    panel.controls["n"].value = 1  # back to the settings shown: a new count
    panel.button.click()
    assert "Same settings" in panel.message.value and "pressed" not in panel.message.value


def test_a_panel_that_rereads_draws_on_every_press():
    """A draw that reads a saved file changes with no setting changed: no "Same settings"."""
    reads = iter(["first", "second"])
    panel = Panel({}, lambda: Drawing(html=next(reads)), button="Refresh", rereads=True)
    panel.button.click()
    assert panel.text.value == "second" and panel.message.value == ""


def test_panels_show_the_keyboard_focus_and_break_only_between_words():
    """Issue 38: focus on a text box or a dropdown was a 1 px border colour, and words broke
    mid-word ("th|ere", "ten|sor2"): every panel carries rules for both (WCAG 2.4.7)."""
    from course.ui import PANEL_CSS

    panel = widget_check()
    held = [c.value for c in panel.children if getattr(c, "value", None) == ACCESS_HELPER]
    assert held and f"<style>{PANEL_CSS}</style>" in held[0]
    rules = re.sub(r"\s+", " ", PANEL_CSS)
    for control in ("input", "select", "textarea", "button", ".widget-readout", ".noUi-handle"):
        assert f".course-panel {control}:focus-visible" in rules
    width = re.search(r"outline: (\d+)px solid (#[0-9a-f]{6})", rules)
    assert width and int(width[1]) >= 2  # thicker than the 1 px border it replaces
    assert "word-break: normal !important" in rules
    assert "overflow-wrap: break-word !important" in rules
    assert "anywhere" not in rules and "break-all" not in rules
