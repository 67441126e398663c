"""axe-core run in a Playwright page: the serious and critical accessibility findings it reports.

axe-core is the npm package `axe-core` (web/package.json; `make web` installs it into build/node,
so it works offline). It is injected into the page as a script of its own (no request leaves the
machine) and run on a part of the page or all of it. The site and deck suite
(tests/test_site_offline.py) and the JupyterLab suite (tests/browser) both call `findings`;
`course_and_frame` splits JupyterLab's findings into the course's content and JupyterLab's own.

    found = findings(page, include=[".jp-Notebook"])
    assert not found, report(found)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scripts.web_deps import node_modules

SERIOUS = ("serious", "critical")  # axe's two highest impacts; "moderate" and "minor" are not
RUN_AXE = """async ([context, options]) => {
    const result = await axe.run(context, options);
    return result.violations.flatMap(rule => rule.nodes.map(node => ({
        rule: rule.id, impact: node.impact || rule.impact, help: rule.help,
        target: node.target.join(" "), html: node.html, summary: node.failureSummary || ""})));
}"""


@dataclass(frozen=True)
class Finding:
    """One element that breaks one axe rule."""

    rule: str  # "color-contrast"
    impact: str  # "serious"
    help: str  # axe's one-line description of the rule
    target: str  # a CSS selector for the element
    html: str  # the start of the element's markup
    summary: str  # what to fix, in axe's words
    where: str = ""  # the page (and slide) it was found on

    def line(self) -> str:
        """One readable line for a test's failure message."""
        markup = " ".join(self.html.split())[:120]
        return f"{self.where} [{self.impact}] {self.rule}: {self.help} -- {self.target} -- {markup}"


def axe_script() -> Path:
    """axe.min.js from the npm install web/package-lock.json pins (installed if needed)."""
    return node_modules() / "axe-core" / "axe.min.js"


def findings(
    page,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    where: str = "",
    impacts: Sequence[str] = SERIOUS,
    preload: bool = False,
) -> list[Finding]:
    """The findings of `impacts` on the page, or on the elements `include` selects (less those
    `exclude` selects). Hidden elements are not checked: show what should be checked first.

    `preload` lets axe fetch every stylesheet again for its one CSSOM rule (orientation lock):
    a file:// page refuses those requests, so it is off unless the page is served over http."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(axe_script()))
    context = {"include": [[s] for s in include] if include else [["html"]]}
    if exclude:
        context["exclude"] = [[s] for s in exclude]
    options = {"resultTypes": ["violations"], "preload": preload}
    raw = page.evaluate(RUN_AXE, [context, options])
    return [Finding(**item, where=where) for item in raw if item["impact"] in impacts]


def course_and_frame(
    found: Sequence[Finding], is_course: Callable[[Finding], bool]
) -> tuple[list[Finding], list[Finding]]:
    """Split findings into the course's content and the frame around it (JupyterLab's own
    interface, reported separately: the course cannot fix it)."""
    course = [finding for finding in found if is_course(finding)]
    return course, [finding for finding in found if not is_course(finding)]


def report(found: Sequence[Finding], most: int = 30) -> str:
    """The findings as lines, at most `most` of them, for an assertion message."""
    lines = [finding.line() for finding in found[:most]]
    if len(found) > most:
        lines.append(f"... and {len(found) - most} more")
    return f"{len(found)} serious or critical accessibility findings:\n" + "\n".join(lines)
