"""The course's JavaScript dependencies, installed from npm into build/node (`make web`).

The slides, the static site and the workshop hub serve their own copies of reveal.js, MathJax,
require.js, jQuery and configurable-http-proxy, so a workshop room without a network still gets
working decks and pages. web/package.json and its lock pin the versions; `npm ci` installs exactly
those with the machine's Node.js. Nothing from npm is committed: build/ is ignored.

    python scripts/web_deps.py        # install (or say it is up to date)
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from course.errors import CourseError

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "web"
NODE_DIR = ROOT / "build" / "node"
INSTALL_TIMEOUT_S = 600


def lock_hash(spec_dir: Path = SPEC) -> str:
    """What the install must match: package.json and package-lock.json together."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((spec_dir / name).read_bytes())
    return digest.hexdigest()


def node_modules(node_dir: Path = NODE_DIR, spec_dir: Path = SPEC) -> Path:
    """node_dir/node_modules as the lock pins it, running `npm ci` first when it does not match."""
    stamp = node_dir / ".installed"
    wanted = lock_hash(spec_dir)
    if stamp.exists() and stamp.read_text() == wanted:
        return node_dir / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        raise CourseError(
            "npm not found: the offline slides, site and hub need Node.js >= 20 with npm "
            "(Debian: apt-get install nodejs npm)"
        )
    node_dir.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(spec_dir / name, node_dir / name)
    command = [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            command, cwd=node_dir, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
        )
    except subprocess.TimeoutExpired as exc:
        raise CourseError(f"npm ci in {node_dir} took over {INSTALL_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        raise CourseError(f"npm ci in {node_dir} failed:\n{done.stderr.strip()[-2000:]}")
    stamp.write_text(wanted)
    return node_dir / "node_modules"


def main() -> int:
    try:
        where = node_modules()
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"web dependencies: {where} matches web/package-lock.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
