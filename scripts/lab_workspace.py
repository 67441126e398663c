"""Keep a learner's workspace/ in step with learner/ without ever overwriting their work.

    python scripts/lab_workspace.py           # what `make lab` runs before opening JupyterLab

A local learner works in workspace/ (untracked, .gitignored), so `git pull` never conflicts with
their notebooks. Each copy's origin is recorded in workspace/.course-copies.json as the hash of
the learner copy it was made from (of its cells: JupyterLab's rewrites of metadata and a cell's
outputs are not edits). On each run, per lesson:
- missing from workspace/: copied from learner/;
- upstream unchanged since the copy: left alone, edited or not;
- upstream changed and the learner never touched their copy: replaced by the new version;
- upstream changed and the learner edited theirs: theirs stays; the new version is written
  beside it as NN_name.new.ipynb (never over an existing .new file the learner has edited), and
  one line says so and how to switch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ".course-copies.json"


def digest(path: Path) -> str:
    """The hash of what a learner changes in a notebook: each cell's type and source.

    Not the file's bytes: opening a notebook makes JupyterLab rewrite its metadata (the
    kernelspec's display name) and autosave it, and running a cell stores outputs; neither is an
    edit. A file that is not a notebook's JSON is hashed as bytes (a broken file counts as edited).
    """
    data = path.read_bytes()
    try:
        cells = [(cell["cell_type"], _text(cell["source"])) for cell in json.loads(data)["cells"]]
    except (ValueError, KeyError, TypeError):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha256(json.dumps(cells).encode()).hexdigest()


def _text(source: str | list[str]) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    return source if isinstance(source, str) else "".join(source)


def new_name(name: str) -> str:
    """Where an upstream update goes beside a learner's edited copy."""
    return name.removesuffix(".ipynb") + ".new.ipynb"


def _read_manifest(workspace: Path) -> dict[str, dict[str, str]]:
    try:
        return json.loads((workspace / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}


def _offer(source: Path, workspace: Path, record: dict[str, str], upstream: str) -> str:
    """Put the new version beside an edited copy (never over a .new file the learner edited)."""
    name, beside = source.name, workspace / new_name(source.name)
    if beside.is_file() and digest(beside) not in (record.get("offered"), upstream):
        return (
            f"{name}: changed upstream; yours and your {beside.name} are untouched. "
            f"The new version is learner/{name}."
        )
    shutil.copyfile(source, beside)
    record["offered"] = upstream
    return (
        f"{name}: changed upstream; yours is untouched. The new version is beside it: "
        f"{beside.name} (to switch: mv {workspace.name}/{beside.name} {workspace.name}/{name})."
    )


def sync(learner_dir: Path, workspace: Path) -> list[str]:
    """Bring workspace/ up to date with learner/; one message per lesson that needs a word."""
    workspace.mkdir(parents=True, exist_ok=True)
    manifest = _read_manifest(workspace)
    messages = []
    for source in sorted(learner_dir.glob("*.ipynb")):
        name, upstream = source.name, digest(source)
        mine = workspace / name
        record = manifest.setdefault(name, {})
        if not mine.is_file():
            shutil.copyfile(source, mine)
            record["copied"] = upstream
            messages.append(f"{name}: copied into {workspace.name}/")
            continue
        current = digest(mine)
        if upstream in (current, record.get("copied")):
            record["copied"] = upstream  # in step (or unchanged upstream: their edits are theirs)
        elif current in (record.get("copied"), record.get("offered")):  # theirs is unedited
            shutil.copyfile(source, mine)
            record["copied"] = upstream
            messages.append(f"{name}: updated (you had not changed it)")
        elif record.get("offered") != upstream:
            messages.append(_offer(source, workspace, record, upstream))
    (workspace / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return messages


def parser() -> argparse.ArgumentParser:
    """The command line; the folder names are course.frontends' (a test holds them equal: this
    script runs where the course may not be importable yet, the hub's start hook)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--learner", type=Path, default=ROOT / "learner", help="the learner copies")
    p.add_argument("--workspace", type=Path, default=ROOT / "workspace", help="your notebooks")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not args.learner.is_dir():
        print(f"no learner copies in {args.learner}", file=sys.stderr)
        return 2
    for message in sync(args.learner, args.workspace):
        print(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
