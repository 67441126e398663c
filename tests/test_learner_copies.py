"""The learner copies: generated from the references, fresh, spoiler-free, and runnable as is.

The last tests run every learner copy top to bottom, as a learner who attempted nothing would
("Run All"), inside a student release (scripts/make_release.py: no reference notebooks, no tests,
the package imported from the release itself): every cell must run, every check(...) must answer
"not attempted yet", the progress journal must stay empty, and no cell may print a blank answer.
A crash there is a bug in that lesson's reference notebook.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from course import journal
from course.exercises import NOT_ATTEMPTED
from tests.known_failures import listed

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "make_learner_copies", ROOT / "scripts/make_learner_copies.py"
)
mlc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mlc)
_spec = importlib.util.spec_from_file_location("make_release", ROOT / "scripts/make_release.py")
make_release = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_release)

REFERENCES = sorted(mlc.REFERENCE_DIR.glob("[0-9][0-9]_*.ipynb"))
COPIES = sorted(mlc.LEARNER_DIR.glob("*.ipynb"))


def _code(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


# --- the transformation -------------------------------------------------------------------


def test_a_region_inside_a_function_becomes_not_implemented():
    source = (
        "def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n    ### END SOLUTION\n"
    )
    assert mlc.scaffold(source) == (
        'def f(x):\n    y = 1\n    raise NotImplementedError("your code here")'
    )


def test_a_top_level_region_keeps_only_its_names():
    source = "\n".join(
        [
            "### BEGIN SOLUTION",
            "# the stride after .T",
            "answer = (48,",
            "          8, 1)",
            "a, b = 1, 2",
            "print('reference work')",
            "### END SOLUTION",
            'check("04.x", answer)',
        ]
    )
    assert mlc.scaffold(source).split("\n") == [
        "answer = ...  # your answer",
        "a = ...  # your answer",
        "b = ...  # your answer",
        'check("04.x", answer)',
    ]


def test_an_indented_top_level_region_stays_valid_python():
    source = "for i in range(2):\n    ### BEGIN SOLUTION\n    print(i)\n    ### END SOLUTION\n"
    assert mlc.scaffold(source) == "for i in range(2):\n    pass"


def test_methods_of_a_class_with_blank_lines_between_them():
    source = "\n".join(
        [
            "class Out:",
            "    def __init__(self, t):",
            "        ### BEGIN SOLUTION",
            "        self.t = t",
            "        ### END SOLUTION",
            "",
            "    def __exit__(self, *info):",
            "        ### BEGIN SOLUTION",
            "        self.t.copy_(self.t)",
            "        ### END SOLUTION",
        ]
    )
    assert mlc.scaffold(source).count('        raise NotImplementedError("your code here")') == 2


def test_magics_survive_and_nbval_markers_go():
    source = "# NBVAL_CHECK_OUTPUT\n%time x = 1\n### BEGIN SOLUTION\nx = 2\n### END SOLUTION"
    assert mlc.scaffold(source) == "%time x = 1\nx = ...  # your answer"


@pytest.mark.parametrize(
    "source, problem",
    [
        ("### BEGIN SOLUTION\nx = 1\n", "never ends"),
        ("x = 1\n### END SOLUTION\n", "without a BEGIN"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "inside another"),
    ],
)
def test_unbalanced_markers_are_refused(source, problem):
    with pytest.raises(mlc.SolutionMarkerError, match=problem):
        mlc.scaffold(source)


def test_a_copy_has_no_outputs_no_counts_and_only_tags():
    reference = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "### BEGIN SOLUTION\nx = 'SECRET'\n### END SOLUTION\nprint(x)",
                execution_count=3,
                outputs=[nbformat.v4.new_output("stream", text="SECRET\n")],
                metadata={"tags": ["machine-specific"], "solution": "SECRET", "nbval": {}},
            )
        ],
        metadata={
            "course": {"code_sha256": "SECRET"},
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
        },
    )
    copy = mlc.learner_notebook(json.loads(nbformat.writes(reference)), "test.ipynb")
    text = mlc.render(copy)
    assert "SECRET" not in text
    cell = copy["cells"][1]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["metadata"] == {"tags": ["machine-specific"]}
    assert copy["cells"][0]["id"] == mlc.SETUP_CELL_ID
    nbformat.validate(nbformat.reads(text, as_version=4))


# --- the committed copies -----------------------------------------------------------------


def test_learner_copies_are_fresh(tmp_path):
    """Regenerate into a temporary folder and compare byte for byte with learner/."""
    mlc.write_copies(mlc.REFERENCE_DIR, tmp_path)
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.ipynb")}
    committed = {p.name: p.read_text() for p in COPIES}
    stale = sorted(n for n in fresh.keys() | committed.keys() if fresh.get(n) != committed.get(n))
    assert not stale, f"stale learner copies {stale}: run `make learner`"


def _solution_lines(path: Path) -> set[str]:
    """Lines that appear only inside the reference's solution regions (the answers).

    A line also found outside every region (in code, or quoted in the markdown) is no secret.
    """
    inside, outside = set(), []
    for cell in json.loads(path.read_text())["cells"]:
        lines = "".join(cell["source"]).split("\n")
        regions = mlc.solution_regions(lines) if cell["cell_type"] == "code" else []
        spans = {i for begin, end in regions for i in range(begin, end + 1)}
        for index, line in enumerate(lines):
            if index in spans:
                inside.add(line.strip())
            else:
                outside.append(line)
    rest = "\n".join(outside)
    return {
        line for line in inside if len(line) >= 8 and not line.startswith("#") and line not in rest
    }


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.name)
def test_no_solution_or_output_reaches_the_learner(path):
    copy = mlc.LEARNER_DIR / path.name
    text = copy.read_text()
    assert not re.search(r"(BEGIN|END) SOLUTION", text), f"{copy.name} has a solution marker"
    for line in _solution_lines(path):
        assert json.dumps(line)[1:-1] not in text, f"{copy.name} leaks a solution line: {line}"
    nb = json.loads(text)
    for cell in nb["cells"]:
        assert not cell.get("outputs") and cell.get("execution_count") is None
    assert "code_sha256" not in text


# --- run all, as a learner who attempted nothing -------------------------------------------


@dataclass
class RunAll:
    """A learner copy after "Run All" with nothing attempted: its cells, or the crash, and what
    the progress journal recorded meanwhile (a private one)."""

    nb: nbformat.NotebookNode
    crash: str
    events: list[journal.Event]


@functools.cache
def release() -> Path:
    """A student release, written once per test session: what the learner copies run in."""
    target = Path(tempfile.mkdtemp(prefix="release-")) / "course-release"
    make_release.write_release(target)
    return target


@functools.cache
def run_all(path: Path) -> RunAll:
    """Execute a learner copy once per test session, in a student release and a fresh journal."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    top = release()
    workdir = Path(tempfile.mkdtemp(prefix="run-all-", dir=top))
    progress = workdir / "progress"
    nb = nbformat.read(top / "learner" / path.name, as_version=4)
    client = NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(top / "learner")}})
    crash = ""
    # The kernel inherits these when it starts: its journal, and the release's package first.
    saved = {k: os.environ.get(k) for k in (journal.ENV_DIR, "PYTHONPATH")}
    os.environ.update({journal.ENV_DIR: str(progress), "PYTHONPATH": str(top)})
    try:
        client.execute()
    except CellExecutionError as exc:
        errors = [i for i, c in enumerate(nb.cells) if _has_error(c)]
        where = f"reference cell {errors[0] - 1}" if errors else "a cell"  # copy cell 0: set-up
        crash = f"{path.name}: {where} crashes when the learner attempted nothing:\n{exc}"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return RunAll(nb, crash, journal.load(progress / journal.FILENAME))


def _has_error(cell) -> bool:
    return any(o.output_type == "error" for o in cell.get("outputs", []))


def _shown(cell) -> str:
    return json.dumps([o.get("data", o.get("text", "")) for o in cell.get("outputs", [])])


@pytest.mark.parametrize("path", COPIES, ids=lambda p: p.name)
def test_run_all_completes_in_a_learner_copy(path):
    """Every cell runs; with solution markers, every check(...) says "not attempted yet"."""
    result = run_all(path)
    if result.crash:
        pytest.fail(result.crash)
    if "BEGIN SOLUTION" not in (mlc.REFERENCE_DIR / path.name).read_text():
        return  # not migrated to solution markers yet: "Run All completes" is all we can ask
    for index, cell in enumerate(result.nb.cells):
        if cell.cell_type == "code" and re.search(r"\bcheck\(", cell.source):
            shown = _shown(cell)
            assert NOT_ATTEMPTED in shown, f"{path.name} cell {index}: {shown[:300]}"


@pytest.mark.parametrize("path", COPIES, ids=lambda p: p.name)
def test_run_all_records_nothing_the_learner_did_not_do(path):
    """Blanks of every kind are "not attempted": the journal stays empty (no check, hint,
    solution or prediction), so an instructor's --collect never calls an idle learner stuck."""
    result = run_all(path)
    recorded = [(e.exercise, e.event, e.passed) for e in result.events]
    assert recorded == [], f"{path.name}: Run All with nothing attempted recorded {recorded}"


# Learner copies whose cells print a blank answer (`Ellipsis`) today; each lesson's rewrite
# takes itself off the list.
PRINTS_BLANKS: set[str] = set()


@pytest.mark.parametrize(
    "path", listed(COPIES, PRINTS_BLANKS, "prints a blank"), ids=lambda p: p.name
)
def test_run_all_prints_no_blank_answer(path):
    """A scaffold cell never shows `Ellipsis`: a blank answer is not a value to print."""
    cells = run_all(path).nb.cells
    shows = [i - 1 for i, c in enumerate(cells) if "Ellipsis" in _shown(c)]  # 0: the set-up cell
    assert not shows, f"{path.name}: reference cells {shows} print `Ellipsis` on a blank answer"


def test_the_learner_folder_holds_only_copies():
    assert {p.name for p in COPIES} == {p.name for p in REFERENCES}
    assert not [p for p in mlc.LEARNER_DIR.iterdir() if p.suffix != ".ipynb"]


# --- make lab: the learner's workspace ----------------------------------------------------

_wspec = importlib.util.spec_from_file_location("lab_workspace", ROOT / "scripts/lab_workspace.py")
lab = importlib.util.module_from_spec(_wspec)
_wspec.loader.exec_module(lab)


@pytest.fixture
def course_dirs(tmp_path):
    """A learner/ with two lessons and an empty workspace/ beside it."""
    learner, workspace = tmp_path / "learner", tmp_path / "workspace"
    learner.mkdir()
    (learner / "01_a.ipynb").write_text("v1 of 01")
    (learner / "02_b.ipynb").write_text("v1 of 02")
    return learner, workspace


def test_first_run_copies_every_lesson(course_dirs):
    learner, workspace = course_dirs
    assert lab.sync(learner, workspace) == [
        "01_a.ipynb: copied into workspace/",
        "02_b.ipynb: copied into workspace/",
    ]
    assert (workspace / "01_a.ipynb").read_text() == "v1 of 01"
    assert lab.sync(learner, workspace) == []  # nothing changed: nothing said


def test_an_edited_notebook_is_never_overwritten(course_dirs):
    learner, workspace = course_dirs
    lab.sync(learner, workspace)
    (workspace / "01_a.ipynb").write_text("my work")
    (workspace / "02_b.ipynb").write_text("my other work")
    (learner / "01_a.ipynb").write_text("v2 of 01")  # upstream changes only 01
    messages = lab.sync(learner, workspace)
    assert (workspace / "01_a.ipynb").read_text() == "my work"
    assert (workspace / "01_a.new.ipynb").read_text() == "v2 of 01"
    assert len(messages) == 1 and "01_a.new.ipynb" in messages[0] and "mv " in messages[0]
    assert (workspace / "02_b.ipynb").read_text() == "my other work"
    assert lab.sync(learner, workspace) == []  # said once; the .new file stays as the reminder


def test_an_untouched_notebook_is_updated(course_dirs):
    learner, workspace = course_dirs
    lab.sync(learner, workspace)
    (learner / "02_b.ipynb").write_text("v2 of 02")
    assert lab.sync(learner, workspace) == ["02_b.ipynb: updated (you had not changed it)"]
    assert (workspace / "02_b.ipynb").read_text() == "v2 of 02"


def _notebook(source: str) -> dict:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return {"cells": [{**cell, "source": source}], "metadata": meta, "nbformat": 4}


def test_opening_and_running_an_untouched_notebook_is_not_an_edit(course_dirs):
    """JupyterLab rewrites the kernelspec's display name and autosaves; outputs are not edits."""
    learner, workspace = course_dirs
    (learner / "01_a.ipynb").write_text(json.dumps(_notebook("x = 1\n")))
    lab.sync(learner, workspace)
    opened = _notebook(["x = 1\n"])  # sources as a list of lines, as JupyterLab saves them
    opened["metadata"]["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    opened["cells"][0].update(execution_count=1, outputs=[{"output_type": "stream"}])
    (workspace / "01_a.ipynb").write_text(json.dumps(opened, indent=2))
    (learner / "01_a.ipynb").write_text(json.dumps(_notebook("x = 2\n")))
    assert lab.sync(learner, workspace) == ["01_a.ipynb: updated (you had not changed it)"]
    assert "x = 2" in (workspace / "01_a.ipynb").read_text()


def test_an_edited_cell_is_an_edit(course_dirs):
    learner, workspace = course_dirs
    (learner / "01_a.ipynb").write_text(json.dumps(_notebook("x = 1\n")))
    lab.sync(learner, workspace)
    (workspace / "01_a.ipynb").write_text(json.dumps(_notebook("x = 1  # my note\n")))
    (learner / "01_a.ipynb").write_text(json.dumps(_notebook("x = 2\n")))
    assert "01_a.new.ipynb" in lab.sync(learner, workspace)[0]
    assert "my note" in (workspace / "01_a.ipynb").read_text()


def test_switching_to_the_new_version_is_recognised(course_dirs):
    learner, workspace = course_dirs
    lab.sync(learner, workspace)
    (workspace / "01_a.ipynb").write_text("my work")
    (learner / "01_a.ipynb").write_text("v2 of 01")
    lab.sync(learner, workspace)
    (workspace / "01_a.new.ipynb").rename(workspace / "01_a.ipynb")  # the suggested mv
    (learner / "01_a.ipynb").write_text("v3 of 01")
    assert lab.sync(learner, workspace) == ["01_a.ipynb: updated (you had not changed it)"]


def test_an_edited_new_file_is_not_overwritten_either(course_dirs):
    learner, workspace = course_dirs
    lab.sync(learner, workspace)
    (workspace / "01_a.ipynb").write_text("my work")
    (learner / "01_a.ipynb").write_text("v2 of 01")
    lab.sync(learner, workspace)
    (workspace / "01_a.new.ipynb").write_text("I started on the new one")
    (learner / "01_a.ipynb").write_text("v3 of 01")
    messages = lab.sync(learner, workspace)
    assert (workspace / "01_a.new.ipynb").read_text() == "I started on the new one"
    assert "learner/01_a.ipynb" in messages[0]


def test_a_lost_manifest_errs_on_the_safe_side(course_dirs):
    learner, workspace = course_dirs
    lab.sync(learner, workspace)
    (workspace / "01_a.ipynb").write_text("my work")
    (workspace / lab.MANIFEST).write_text("{broken")
    lab.sync(learner, workspace)
    assert (workspace / "01_a.ipynb").read_text() == "my work"


def test_make_lab_opens_the_workspace_and_git_ignores_it():
    makefile = (ROOT / "Makefile").read_text()
    lab_recipe = makefile.split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert (
        "scripts/lab_workspace.py" in lab_recipe and "workspace/00_start_here.ipynb" in lab_recipe
    )
    assert "workspace/" in (ROOT / ".gitignore").read_text().split()


def test_make_lab_and_the_hub_name_the_workspace_alike():
    """scripts/lab_workspace.py runs without the course installed (the hub's start hook), so it
    spells the folders itself: they must be course.frontends' names."""
    from course.frontends import LEARNER_DIR, WORKSPACE_DIR

    defaults = {
        a.dest: a.default for a in lab.parser()._actions if a.dest in ("learner", "workspace")
    }
    assert defaults == {"learner": ROOT / LEARNER_DIR, "workspace": ROOT / WORKSPACE_DIR}
