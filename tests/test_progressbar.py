"""The progress bar: on stderr in a terminal, as the cell's own output in a notebook."""

from __future__ import annotations

import IPython.display
import pytest

from course import progressbar
from course.progressbar import bar, line


def test_bar_draws_sparsely_and_finishes_the_line(capsys):
    show = bar("training", every=5)
    for done in range(1, 11):
        show(done, 10, "loss 1.5")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\r") == 2 and err.endswith("10/10 loss 1.5\n")
    assert "[" + "#" * 30 + "]" in err


def test_a_bar_without_a_note_ends_at_the_count(capsys):
    show = bar("auditing", every=1)
    show(1, 2)
    show(2, 2, "")
    assert capsys.readouterr().err.endswith("2/2\n")


def test_outside_a_kernel_is_not_a_notebook():
    assert not progressbar.in_notebook()


class FakeHandle:
    """What IPython's display(..., display_id=True) returns: updated in place."""

    def __init__(self, shown: list[str]):
        self.shown = shown

    def update(self, bundle: dict, raw: bool) -> None:
        assert raw
        self.shown.append(bundle["text/plain"])


@pytest.fixture
def notebook(monkeypatch):
    """A notebook kernel, as far as the bar can tell: displays are recorded, not printed."""
    displayed: list[str] = []
    updates: list[str] = []

    def display(bundle, raw, display_id):
        assert raw and display_id
        displayed.append(bundle["text/plain"])
        return FakeHandle(updates)

    monkeypatch.setattr(progressbar, "in_notebook", lambda: True)
    monkeypatch.setattr(IPython.display, "display", display)
    return displayed, updates


def test_in_a_notebook_the_bar_is_one_output_updated_in_place(notebook, capsys):
    displayed, updates = notebook
    show = bar("training", every=5)
    for done in range(1, 11):
        show(done, 10, f"loss {done}")
    assert capsys.readouterr() == ("", "")  # nothing on stderr: no pink box
    assert len(displayed) == 1  # one output, redrawn: the first step, every 5th, the last
    assert updates == [
        line("training", 1, 10, "loss 1"),
        line("training", 5, 10, "loss 5"),
        line("training", 10, 10),
    ]


def test_a_stored_notebook_and_nbval_see_the_same_finished_bar(notebook):
    """nbval ignores display updates and records the first display; a stored notebook keeps
    the last update. Both read the finished bar, and no machine-dependent note."""
    displayed, updates = notebook
    show = bar("training", every=20)
    for done in range(1, 121):
        show(done, 120, f"loss {1 / done:.4f}")
    assert displayed == [updates[-1]] == ["training [" + "#" * 30 + "] 120/120"]
