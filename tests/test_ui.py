"""The widget shell, used as a learner would: set .value, click, read what the panel shows."""

from __future__ import annotations

import ast
import html
import importlib
import re
from pathlib import Path

import ipywidgets as widgets
import pytest

from course.errors import CourseError
from course.figures import describe, fitted_figure
from course.markup import message_html
from course.ui import (
    ACCESS_HELPER,
    BUSY,
    COMPLETIONS,
    CompletingText,
    Drawing,
    NumberSlider,
    Panel,
    number_slider,
    widget_check,
)


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
    for typed in ("99", "abc"):  # 00's box clamped 99 to 12 and put 6 back for abc, unsaid
        panel.controls["n"].box.value = typed
        assert f"typed &#x27;{typed}&#x27;" in panel.message.value
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
    panel = Panel({"n": number_slider("n", 1, 0, 10)}, draw)
    seen.clear()
    panel.controls["n"].value = 2
    assert len(seen) == 2 and all(BUSY in status for status in seen)
    assert panel.status.value == "" and panel.image.value == b"png"


def test_sliders_report_once_released_other_controls_as_they_were():
    text = widgets.Text(value="a", description="t")
    panel = Panel(
        {
            "n": number_slider("n", 1, 0, 10),
            "r": number_slider("r", (0.5, 2.5), 0.0, 10.0, step=0.5),
            "t": text,
        },
        lambda n, r, t: Drawing(),
    )
    assert not panel.controls["n"].slider.continuous_update
    assert not panel.controls["r"].slider.continuous_update
    assert text.continuous_update  # typing is not a drag


def test_a_plain_ipywidgets_slider_gets_the_checked_box_too():
    """Its own readout clamps or reverts on the page, and Python never hears of it (issue 38):
    a panel shows it as a NumberSlider, a log slider's ends in its own units."""
    lr = widgets.FloatLogSlider(value=1e-3, min=-4, max=-2, description="lr")
    panel = Panel({"lr": lr}, lambda lr: Drawing(html=f"<p>{lr}</p>"))
    box = panel.controls["lr"]
    assert isinstance(box, NumberSlider) and box.slider is lr and not lr.readout
    box.box.value = "0.5"
    assert "which is above 0.01" in panel.message.value and "0.0001 to 0.01" in panel.message.value
    box.box.value = "5e-3"
    assert lr.value == 0.005 and panel.text.value == "<p>0.005</p>" and box.box.value == "0.005"
    with pytest.raises(ValueError, match="not one of the sliders"):
        NumberSlider(widgets.SelectionSlider(options=["a", "b"], description="s"))


def test_a_log_sliders_box_keeps_its_exponent_notation():
    """01's lr box wrote 3e-03, then 0.00562341 one step further: one notation throughout, as
    many digits as the value needs (up to six), and what it shows reads back as the value."""
    lr = widgets.FloatLogSlider(value=3e-3, min=-4, max=-2, step=0.25, readout_format=".0e")
    box = NumberSlider(lr)
    assert box.box.value == "3e-03"
    lr.value = 10**-2.25
    assert box.box.value == "5.62341e-03" and box.shown(1e-4) == "1e-04"
    assert box.shown(2.5e-3) == "2.5e-03" and float(box.shown(1 / 3 * 1e-2)) != 1 / 3 * 1e-2


def _slider_panel(slider):
    """A panel drawing its slider's value as text, and the values it drew."""
    drawn = []

    def draw(n) -> Drawing:
        drawn.append(n)
        return Drawing(fitted_figure(200, 100), f"<p>drawn at {n}</p>")

    return Panel({"n": slider}, draw), drawn


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("99", "which is above 12"),
        ("abc", "which is not a number"),
        ("0", "which is below 1"),
        ("2.5", "which is not a whole number"),
        ("", "which is not a number"),
        ("inf", "which is not a number"),
    ],
)
def test_a_typed_value_out_of_range_is_refused_out_loud(typed, why):
    """00's `99` and `abc` were clamped or reverted in silence: now the panel says what was
    typed and what is allowed, and the figure and text stay those of the value kept."""
    panel, drawn = _slider_panel(number_slider("n", 4, 1, 12))
    slider = panel.controls["n"]
    figure, text = panel.image.value, panel.text.value
    slider.box.value = typed
    message = html.unescape(panel.message.value)
    assert f"you typed {typed!r}, {why}" in message
    assert "a whole number from 1 to 12" in message and "n stays at 4" in message
    assert message_html("x", "warning")[:60] in message  # amber: refused, nothing broke
    assert slider.value == 4 and slider.slider.value == 4 and slider.box.value == "4"
    assert drawn == [4] and panel.image.value == figure and panel.text.value == text
    assert panel.error == ""  # nothing is wrong with what is drawn


def test_a_typed_value_in_range_moves_the_slider_and_the_message_goes():
    panel, drawn = _slider_panel(number_slider("n", 4, 1, 12))
    slider = panel.controls["n"]
    slider.box.value = "99"
    assert "you typed" in panel.message.value
    slider.box.value = " 7.0 "
    assert slider.value == 7 and slider.slider.value == 7 and slider.box.value == "7"
    assert drawn == [4, 7] and "drawn at 7" in panel.text.value and panel.message.value == ""
    slider.slider.value = 3  # the handle moved on the page: the box follows
    assert slider.box.value == "3" and drawn[-1] == 3


@pytest.mark.parametrize(
    ("typed", "why"),
    [("1", "which is above 0.99"), ("-3", "which is below 0.00"), ("0.9.1", "not a number")],
)
def test_a_float_slider_refuses_what_its_panel_would(typed, why):
    """03's beta2 `-3` was clamped to 0 in silence, and beta1 offered 1.00, which the panel
    then refused: the slider ends where the panel does."""
    panel, drawn = _slider_panel(number_slider("beta1", 0.9, 0.0, 0.99, step=0.01))
    beta = panel.controls["n"]
    assert beta.box.value == "0.90" and beta.slider.max == 0.99
    beta.box.value = typed
    message = html.unescape(panel.message.value)
    assert why in message and "a number from 0.00 to 0.99" in message and drawn == [0.9]
    beta.box.value = "0.905"  # more decimals than the step: kept as typed, and shown so
    assert drawn[-1] == 0.905 and beta.box.value == "0.905"


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("1 - 600", "which is above 500"),
        ("50 - 20", "which starts after it ends"),
        ("50", "which is not two numbers"),
        ("a - b", "which is not two numbers"),
    ],
)
def test_a_range_slider_reads_first_and_last(typed, why):
    panel, drawn = _slider_panel(number_slider("steps", (1, 100), 1, 500))
    steps = panel.controls["n"]
    assert steps.box.value == "1 - 100"
    steps.box.value = typed
    message = html.unescape(panel.message.value)
    assert why in message and "two whole numbers, first - last, from 1 to 500" in message
    assert drawn == [(1, 100)] and steps.box.value == "1 - 100"
    for other in ("10 - 300", "10 to 300", "10, 300", "10 300"):
        steps.box.value = other
        assert steps.value == (10, 300) and steps.box.value == "10 - 300"
    assert drawn == [(1, 100), (10, 300)]


@pytest.mark.parametrize("value", [13, 0, 4.5, "4", True, None])
def test_a_value_set_from_python_is_checked_never_clamped(value):
    slider = number_slider("n", 4, 1, 12)
    with pytest.raises(CourseError, match=r"n=.* is not allowed: it takes a whole number from 1"):
        slider.value = value
    assert slider.value == 4 and slider.slider.value == 4


@pytest.mark.parametrize("args", [(5, 1, 4), (1, 4, 1), (1, 1, 4, 0), ((3, 9), 1, 8)])
def test_a_slider_must_hold_its_own_value(args):
    with pytest.raises(CourseError, match="slider 'n'"):
        number_slider("n", *args)


def test_a_refused_value_shows_beside_an_error_and_disabling_reaches_the_box():
    def draw(n: int) -> Drawing:
        if n == 3:
            raise CourseError("three is refused by the draw")
        return Drawing(html=f"<p>{n}</p>")

    panel = Panel({"n": number_slider("n", 3, 1, 5)}, draw)
    panel.controls["n"].box.value = "9"
    assert "three is refused" in panel.message.value and "you typed" in panel.message.value
    with panel.working("busy"):
        assert panel.controls["n"].slider.disabled and panel.controls["n"].box.disabled
    assert not panel.controls["n"].box.disabled


def test_the_same_error_after_a_change_says_so():
    """05: changing the tensor while an op error showed changed nothing visible (issue 38)."""

    def draw(op: str, tensor: str) -> Drawing:
        raise CourseError(f"no operator {op!r}")

    panel = Panel(
        {
            "op": widgets.Text(value="mull", description="op"),
            "tensor": widgets.Dropdown(options=["cpu", "meta"], value="cpu", description="t"),
        },
        draw,
    )
    first = panel.message.value
    panel.controls["tensor"].value = "meta"
    second = panel.message.value
    panel.controls["tensor"].value = "cpu"
    assert len({first, second, panel.message.value}) == 3
    assert "after tensor = &#x27;meta&#x27;: 2 times in a row" in second
    panel.controls["op"].value = "mul2"
    assert "again" not in panel.message.value and "mul2" in panel.message.value


def test_a_button_panel_says_an_error_came_back_after_a_press():
    def draw(n: int) -> Drawing:
        raise CourseError("always refused")

    panel = Panel({"n": widgets.IntText(value=1, description="n")}, draw, button="Run")
    panel.button.click()
    assert "after pressing Run again: 2 times" in panel.message.value
    panel.controls["n"].value = 2
    panel.button.click()
    assert "after n = 2: 3 times" in panel.message.value


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

    auto = Panel({"n": number_slider("n", 1, 0, 10)}, draw)
    statuses = _sent_values(auto.status)
    update = {"method": "update", "state": {"value": 2}, "buffer_paths": []}
    auto.controls["n"].slider._handle_msg({"content": {"data": update}, "buffers": []})
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
    for control in ("input", "select", "textarea", "button", ".noUi-handle"):
        assert f".course-panel {control}:focus-visible" in rules
    width = re.search(r"outline: (\d+)px solid (#[0-9a-f]{6})", rules)
    assert width and int(width[1]) >= 2  # thicker than the 1 px border it replaces
    assert "word-break: normal !important" in rules
    assert "overflow-wrap: break-word !important" in rules
    assert "anywhere" not in rules and "break-all" not in rules


def test_the_same_value_refused_again_says_so_again():
    panel, _ = _slider_panel(number_slider("n", 4, 1, 12))
    notes = []
    for _ in range(3):
        panel.controls["n"].box.value = "99"
        notes.append(panel.message.value)
    assert len(set(notes)) == 3 and "3 times in a row" in notes[-1]
    panel.controls["n"].box.value = "5"
    panel.controls["n"].box.value = "99"
    assert "times in a row" not in panel.message.value


def test_a_completing_box_keeps_its_names_for_the_page_and_draws_on_enter():
    """The page refills the box's list as it is typed (ACCESS_HELPER's item 4, at most
    COMPLETIONS names); the kernel hears the value on Enter only, and a panel draws it then."""
    text = CompletingText("b", ["alpha", "beta", "b<c"], description="name", placeholder="a name")
    panel = Panel({"name": text}, lambda name: Drawing(html=f"<p>{name}</p>"))
    assert text.box.options == () and not text.box.continuous_update
    assert "data-names='alpha beta b&lt;c'" in text.source.value
    assert f"data-limit='{COMPLETIONS}'" in text.source.value
    text.box.value = "beta"
    assert text.value == "beta" and panel.text.value == "<p>beta</p>"
    with panel.working("busy"):
        assert text.box.disabled
    assert "course-completions" in ACCESS_HELPER and "course-completing" in text._dom_classes
