"""Draw the course's diagrams into assets/ (`make assets`), or say which committed ones are stale.

The notebooks' markdown shows them as `![alt](../assets/NAME.png)`, so a learner copy with no
outputs still has its figures. The drawings live in `course.figures`; this script only saves
them. PNGs carry no timestamp or software metadata, so redrawing unchanged code gives the same
pixels and tests/test_assets.py can compare them (`--check` does the same from the shell).

    python scripts/make_assets.py                 # (re)draw every figure into assets/
    python scripts/make_assets.py --check         # exit 1 naming each missing or stale file
    python scripts/make_assets.py --out /tmp/a    # elsewhere (tests do this)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from course.figures import FIGURES, figure_png

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"


def draw_all(out_dir: Path) -> list[Path]:
    """Every figure of course.figures as out_dir/NAME.png; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in FIGURES.items():
        path = out_dir / f"{name}.png"
        path.write_bytes(figure_png(draw()))  # at the DPI of every course figure
        written.append(path)
    return written


def pixels(path: Path) -> np.ndarray:
    """An image's pixels as RGBA, whatever metadata the file carries."""
    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"))


def stale(committed_dir: Path, fresh_dir: Path) -> list[str]:
    """Why each committed asset differs from a fresh drawing (missing, size, pixels); [] if none."""
    problems = []
    for fresh in sorted(fresh_dir.glob("*.png")):
        committed = committed_dir / fresh.name
        if not committed.exists():
            problems.append(f"{fresh.name}: missing")
            continue
        old, new = pixels(committed), pixels(fresh)
        if old.shape != new.shape:
            problems.append(f"{fresh.name}: size {old.shape[1::-1]} != fresh {new.shape[1::-1]}")
        elif not np.array_equal(old, new):
            changed = int(np.any(old != new, axis=-1).sum())
            problems.append(f"{fresh.name}: {changed} pixels differ from a fresh drawing")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ASSETS, help="folder (default assets/)")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if not args.check:
        files = draw_all(args.out)
        print(f"assets: {len(files)} figures in {args.out}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        draw_all(Path(tmp))
        problems = stale(args.out, Path(tmp))
    for problem in problems:
        print(f"stale: {problem} (run `make assets`)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
