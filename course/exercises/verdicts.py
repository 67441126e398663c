"""What a check says: a verdict (passed, not yet, not attempted), and text that displays as itself.

Kept apart from the registry and the engine so that anything which only reports a result (the
journal's views, the command line, the instructor's tools) imports it without loading a lesson.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass

NOT_ATTEMPTED = "not attempted yet"


@dataclass
class Verdict:
    """The outcome of one check: passed or not, with what was wrong and yours vs expected.

    `attempted` is False for a learner copy's untouched blank: such a verdict is not journaled."""

    passed: bool
    message: str
    yours: str = ""
    expected: str = ""
    attempted: bool = True

    def __str__(self) -> str:
        mark = "PASSED" if self.passed else "NOT YET"
        lines = [f"[{mark}] {self.message}"]
        if self.yours or self.expected:
            lines += [f"  yours:    {self.yours}", f"  expected: {self.expected}"]
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        colour = "#1b7f3b" if self.passed else "#b00020"
        body = html.escape(str(self)).replace("\n", "<br>")
        return f"<pre style='color:{colour};white-space:pre-wrap'>{body}</pre>"


def passed(message: str) -> Verdict:
    """A passing verdict."""
    return Verdict(True, message)


def failed(message: str, yours: object = "", expected: object = "") -> Verdict:
    """A failing verdict that shows the learner's value beside the expected one."""
    return Verdict(False, message, str(yours), str(expected))


def not_attempted(detail: str) -> Verdict:
    """The "not attempted yet" verdict, never journaled: for a checker that finds a blank part."""
    return Verdict(False, f"{NOT_ATTEMPTED}: {detail}", attempted=False)


TEXT_WIDTH = 96  # JupyterLab breaks longer printed lines anywhere, mid-word


def wrapped(text: str, width: int = TEXT_WIDTH) -> str:
    """Text filled to fit a notebook cell: paragraphs (split at blank lines) re-flowed to `width`.

    Single line breaks inside a paragraph are reflowed too, so prose is written as one string
    and never wrapped by hand."""
    return "\n\n".join(
        textwrap.fill(" ".join(paragraph.split()), width, break_on_hyphens=False)
        for paragraph in text.split("\n\n")
    )


class Text(str):
    """A string that displays as itself (not as a quoted repr) in a notebook."""

    def __repr__(self) -> str:
        return str(self)


class Shown(Text):
    """Text displayed the moment it is made, and only once.

    `hint(...)` and `solution(...)` in one cell must both appear, but a function's return value
    is shown only when it is the cell's last expression. So the text displays itself at once;
    when it is also the last expression, IPython asks it to display again, and it declines.
    Outside IPython (a script, pytest) nothing is displayed: the caller has the returned text.
    """

    def __new__(cls, text: str) -> Shown:
        self = super().__new__(cls, text)
        self._displayed = False
        if _ipython_shell() is not None:
            from IPython.display import display

            display(self)
        return self

    def _ipython_display_(self) -> None:
        if self._displayed:
            return
        self._displayed = True
        from IPython.display import display

        display({"text/plain": str(self)}, raw=True)


def _ipython_shell() -> object | None:
    """The running IPython shell, if this code runs inside one (never imports IPython)."""
    import sys

    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None
