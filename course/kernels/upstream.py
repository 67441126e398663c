"""PyTorch's real MPS kernels, read at run time from GitHub at pinned commits (never stored here).

Notebook 06 compares the broken `addc_mul_div_out_mps` of PyTorch 2.2.1 with its working sibling
`binaryOpTensor`, and with the fixed version of 2.4.0. The course does not copy PyTorch's source
into its repository: where the learner has a network, the two files are fetched once at the
release commits below and cached in the user's cache folder (outside the repository); each
function is cut out of its file by its name and braces (found by content, so a moved line does
not matter). Offline, or with `COURSE_OFFLINE=1` (the tests set it: they never touch the
network), the functions are not shown and the links are.

A workshop room's network is the first thing to fail, so an instructor fills the cache while
online (`make fetch-sources`, i.e. `python -m course.kernels.upstream`): notebook 06 then shows
the kernels offline on that machine, and `make site` (which only ever reads the cache) puts them
into the static pages.

    python -m course.kernels.upstream    # fetch every source notebook 06 shows into the cache
"""

from __future__ import annotations

import os
import re
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError

COMMITS = {  # release tags, pinned to the commits they name (tags can move, commits cannot)
    "2.2.1": "6c8c5ad5eaf47a62fafbb4a2747198cbffbf1ff0",
    "2.4.0": "d990dada86a8ad94882b5c23e859b88c0c255bda",
}
MPS_OPS = "aten/src/ATen/native/mps/operations"
TIMEOUT_S = 5.0
MAX_BYTES = 2_000_000  # both files are ~20-40 kB; anything huge is not what we asked for


class Offline(CourseError):
    """The source could not be fetched (no network, or COURSE_OFFLINE set)."""


@dataclass(frozen=True)
class Source:
    """One function of PyTorch's source at one release."""

    label: str
    version: str
    file: str  # file name under MPS_OPS
    function: str

    @property
    def raw_url(self) -> str:
        return (
            "https://raw.githubusercontent.com/pytorch/pytorch/"
            f"{COMMITS[self.version]}/{MPS_OPS}/{self.file}"
        )

    @property
    def page_url(self) -> str:
        """The file on GitHub, for reading in a browser."""
        return f"https://github.com/pytorch/pytorch/blob/v{self.version}/{MPS_OPS}/{self.file}"


BROKEN = Source("broken, PyTorch 2.2.1", "2.2.1", "PointwiseOps.mm", "addc_mul_div_out_mps")
SIBLING = Source("working sibling, PyTorch 2.2.1", "2.2.1", "BinaryOps.mm", "binaryOpTensor")
FIXED = Source("fixed, PyTorch 2.4.0", "2.4.0", "PointwiseOps.mm", "addc_mul_div_out_mps")
SOURCES = (BROKEN, SIBLING, FIXED)  # everything notebook 06 shows
FETCH_HINT = "run `make fetch-sources` while online to cache it"


def offline() -> bool:
    """Whether fetching is switched off (COURSE_OFFLINE=1, as in the tests and CI)."""
    return os.environ.get("COURSE_OFFLINE", "") not in ("", "0")


def cache_dir() -> Path:
    """$COURSE_CACHE_DIR, else the user's cache folder (the same place the C++ builds go)."""
    if os.environ.get("COURSE_CACHE_DIR"):
        return Path(os.environ["COURSE_CACHE_DIR"]) / "upstream"
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "pytorch-internals-course" / "upstream"


def cached_path(source: Source) -> Path:
    """Where the file `source` lives in, once fetched, is kept."""
    return cache_dir() / COMMITS[source.version] / source.file


def fetch(source: Source, network: bool = True) -> str:
    """The whole file `source` lives in: from the cache, else (if `network`) from GitHub, cached."""
    cached = cached_path(source)
    if cached.is_file():
        return cached.read_text()
    if not network:
        raise Offline(f"{source.file} at {source.version} is not cached: {FETCH_HINT}")
    if offline():
        raise Offline(f"COURSE_OFFLINE is set, so nothing is fetched ({FETCH_HINT})")
    try:
        with urllib.request.urlopen(source.raw_url, timeout=TIMEOUT_S) as response:
            text = response.read(MAX_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:  # URLError, timeouts and bad bytes are all OSError/Value
        raise Offline(f"could not fetch {source.raw_url}: {exc}") from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(text)
    return text


def function_text(file_text: str, name: str) -> str:
    """The definition of function `name` in C++/Objective-C++ text: its signature and body.

    A definition starts a line (calls are indented inside a body) with a type and `name(`, and
    the next `{` comes before any `;` (a declaration ends with `;`). The body ends at the
    matching brace.
    """
    pattern = rf"^[A-Za-z_][^\n;{{}}]*\b{re.escape(name)}\s*\("
    for match in re.finditer(pattern, file_text, re.M):
        brace = file_text.find("{", match.end())
        semicolon = file_text.find(";", match.end())
        if brace < 0 or (0 <= semicolon < brace):
            continue
        depth = 0
        for index in range(brace, len(file_text)):
            depth += {"{": 1, "}": -1}.get(file_text[index], 0)
            if depth == 0:
                return file_text[match.start() : index + 1]
    raise CourseError(f"no definition of {name}() found: PyTorch moved it, read the file instead")


def show(*sources: Source, network: bool = True) -> str:
    """Each function with a heading, or why not and where to read it; `network=False` reads
    only the cache (the static site's build never fetches)."""
    parts = []
    for source in sources:
        head = f"// ---- {source.function}, {source.label} ({source.file}) ----"
        try:
            text = function_text(fetch(source, network), source.function)
            parts.append(f"{head}\n{text}")
        except CourseError as exc:
            parts.append(f"{head}\n// not shown: {exc}\n// read it at {source.page_url}")
    return "\n\n".join(parts)


def fetch_all(sources: tuple[Source, ...] = SOURCES) -> list[str]:
    """Fetch (or find cached) every source and cut its function, so a missing or moved one
    shows up now, online, and not in front of a room. One line per source; Offline or
    CourseError names the first that failed."""
    lines = []
    for source in sources:
        lines_of_code = function_text(fetch(source), source.function).count("\n") + 1
        lines.append(
            f"cached: {source.function}, {source.label}: {lines_of_code} lines "
            f"({cached_path(source)})"
        )
    return lines


def missing_sources(sources: tuple[Source, ...] = SOURCES) -> list[Source]:
    """The sources notebook 06 shows that are not in this machine's cache (the doctor asks)."""
    return [source for source in sources if not cached_path(source).is_file()]


def main() -> int:
    """`make fetch-sources`: fill the cache notebook 06 and `make site` read."""
    try:
        lines = fetch_all()
    except Offline as exc:
        print(
            "You are offline (GitHub could not be reached): notebook 06 will show links instead "
            "of PyTorch's kernel source, and `make site` will too, until you run "
            f"`make fetch-sources` once while online.\n({exc})",
            file=sys.stderr,
        )
        return 1
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    print("Notebook 06 now shows these offline on this machine; rebuild the site (make site).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
