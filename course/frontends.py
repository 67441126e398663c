"""Where a learner opens the course: Colab, Binder, a local JupyterLab, VS Code.

One place holds the repository's address (`REPOSITORY`) and the release every link and install
uses (`REF`), so moving the repository is one edit here, then `make learner` (which rewrites the
learner copies' set-up cell) and pasting `colab_table()` into README.

Every learner copy starts with the cell `setup_cell_source()` writes. On Colab the course is
not installed, so the cell pip-installs this repository at `REF`; pip keeps a torch that already
satisfies the course's requirement (`torch>=2.9,<3`), so Colab's own torch is not replaced.
Those few lines must run before the course exists, so they live in the cell itself and import
nothing from it; everything after the install (`setup_report`) lives here.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util

import course
from course.catalog import LESSONS

# The repository's address. It is not known yet: replace OWNER (one edit), then `make learner`.
REPOSITORY = "https://github.com/OWNER/pytorch-internals-course"
# The git tag of this release: Colab links open the learner copies at this tag, and the set-up
# cell installs the course from it, so a notebook and the code it imports always match.
REF = f"v{course.__version__}"
LEARNER_DIR = "learner"
# Where a learner works: `make lab` and the hub's start hook copy learner/ there
# (scripts/lab_workspace.py, whose default a test holds equal to this), never over an edit.
WORKSPACE_DIR = "workspace"
START = "00_start_here.ipynb"


def install_spec(repository: str = REPOSITORY, ref: str = REF) -> str:
    """What pip installs on a machine without the course: this repository at `ref`."""
    return f"git+{repository}@{ref}"


def setup_cell_source(spec: str | None = None) -> str:
    """The first cell of every learner copy: install the course where it is missing, then say so.

    Short on purpose, and importing nothing from the course before it exists.
    """
    spec = install_spec() if spec is None else spec
    return "\n".join(
        [
            "# Set-up: installs the course where it is missing (as on Colab); elsewhere a no-op.",
            "import importlib.util",
            "import subprocess",
            "import sys",
            "",
            'installing = importlib.util.find_spec("course") is None',
            "if installing:",
            f'    spec = "{spec}"',
            '    subprocess.run([sys.executable, "-m", "pip", "install", "-q", spec], check=True)',
            "from course.frontends import setup_report",
            "",
            "setup_report(installed=installing)",
        ]
    )


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def enable_colab_widgets() -> bool:
    """On Colab, turn on its custom widget manager (ipywidgets 8 needs it); False elsewhere."""
    try:
        if importlib.util.find_spec("google.colab") is None:
            return False
    except ModuleNotFoundError:  # no `google` package at all
        return False
    from google.colab import output  # type: ignore[import-not-found]

    output.enable_custom_widget_manager()
    return True


def setup_report(installed: bool) -> None:
    """Print one line saying what the set-up cell did.

    Returns nothing: the call is the cell's last line, so a returned string would be shown a
    second time, in quotes, under the printed one.
    """
    torch, version = _version("torch") or "missing", course.__version__
    if installed:
        line = f"Set-up: installed the course {version} from {install_spec()}; torch {torch}."
    else:
        line = f"Set-up: nothing to do, the course {version} is installed (torch {torch})."
    if enable_colab_widgets():
        line = line[:-1] + "; Colab's widget manager is on."
    print(line)


def _github_path() -> str:
    """`OWNER/NAME` of a GitHub `REPOSITORY`."""
    return REPOSITORY.removeprefix("https://github.com/").rstrip("/")


def colab_url(filename: str) -> str:
    """Open a learner copy in Colab, at this release."""
    return f"https://colab.research.google.com/github/{_github_path()}/blob/{REF}/{LEARNER_DIR}/{filename}"


def binder_url(filename: str = START) -> str:
    """Start Binder on this release, opening a learner copy in JupyterLab."""
    return (
        f"https://mybinder.org/v2/gh/{_github_path()}/{REF}"
        f"?urlpath=lab/tree/{LEARNER_DIR}/{filename}"
    )


def colab_table() -> str:
    """README's table of Colab links, one per lesson (tests/test_learner_copies.py holds it)."""
    rows = ["| notebook | open |", "|---|---|"]
    for lesson in LESSONS:
        name = lesson.filename.removesuffix(".ipynb")
        rows.append(f"| {name} · {lesson.title} | [Colab]({colab_url(lesson.filename)}) |")
    return "\n".join(rows)
