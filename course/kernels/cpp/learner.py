"""The learner's own compiled addcmul_ kernel: built in about a second, checked in a child process.

Why not like the course's kernels (torch's cpp_extension): their headers take 30-60 s to compile,
too long to wait for after every edit. The learner's kernel is plain C++ that sees tensors the way
notebook 04 describes them (a storage pointer, an offset, strides), so it needs no torch header:
`c++ -O2 -shared` builds it in about a second, cached by the hash of its source, and `ctypes`
calls it with each tensor's storage pointer, offset and strides.

Why a child process: a kernel with an indexing bug writes outside its tensors, and in the
notebook's own process that could crash the kernel (a segmentation fault) or silently corrupt
memory. The checks run in `python -m course.kernels.cpp.learner LIBRARY`, which reports each
variant as a JSON line; a crash there is reported as a message naming the variant that crashed.
Each tensor's storage also has guard slots before and after it, so a write just outside is seen.

What a kernel right only on small calls gets wrong is tried too: 7 and 8 dims (with an array of
one slot per dim bounds-checked, see FLAGS), storage offsets past 2^32 (see Guarded.view), and a
value that no rounding keeps (e).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from course.errors import CourseError
from course.kernels.cpp.build import build_dir, compiler_status

ENTRY = "my_addcmul_"
PRELUDE = """#include <cstdint>
struct View {             // one tensor, as notebook 04 describes it
  float* data;            // slot 0 of its storage
  int64_t offset;         // where the tensor starts in that storage
  const int64_t* stride;  // one stride per dim, in elements
};
"""
SKELETON = """// For every index idx of the shape sizes[0], ..., sizes[ndim - 1]:
//     out[idx] += value * a[idx] * b[idx]
// Element idx of a View v lives at v.data[v.offset + idx[0] * v.stride[0] + ...].
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {  // the naive loop: element i taken to be at slot i
    out.data[i] += value * a.data[i] * b.data[i];
  }
}
"""
# After the learner's source: the signature the checker calls through ctypes. A definition that
# differs (`double value`, `int ndim`) would still compile and then read garbage arguments;
# with this declaration it is a compile error instead.
SIGNATURE = (
    'extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim, '
    "float value)"
)
MAX_SOURCE = 20_000  # characters: a kernel, not a library
# -fsanitize=bounds with traps: an index past the end of a fixed-size C array (`int64_t idx[6]` on
# a 7-d call) stops the child with a trap instead of silently overwriting the stack, which at -O2
# can leave every result right. Traps need no sanitizer runtime; g++ and clang++ both accept these.
FLAGS = (
    *("-O2", "-std=c++17", "-shared", "-fPIC"),
    *("-fsanitize=bounds", "-fsanitize-undefined-trap-on-error"),
)
COMPILE_TIMEOUT_S = 60
RUN_TIMEOUT_S = 120
GUARD = 64  # sentinel slots before and after every storage
SENTINEL = -12345.0


class CompileError(CourseError):
    """The learner's C++ did not compile: the message holds the compiler's first errors."""


class NoCompiler(CompileError):
    """No C++ compiler on this machine: the kernel cannot be built here (a skip, not a fail)."""


def library_dir() -> Path:
    """Where learners' kernels are cached (next to the course's own builds)."""
    return build_dir() / "learner"


def compile_kernel(source: str) -> Path:
    """Build the learner's kernel as a shared library (cached by source hash); its path."""
    if not isinstance(source, str) or ENTRY not in source:
        raise CourseError(
            f'give the C++ source as a string that defines `extern "C" void {ENTRY}(...)` '
            "(start from the skeleton)"
        )
    if len(source) > MAX_SOURCE:
        raise CourseError(
            f"{len(source):,} characters is too long for one kernel (max {MAX_SOURCE:,})"
        )
    status = compiler_status()
    if status.compiler is None:
        raise NoCompiler(
            "skipped: no C++ compiler on this machine (g++ or clang++), so your kernel cannot be "
            "built here; the rest of the notebook runs without it"
        )
    unit = f"{PRELUDE}{_without_prelude(source)}\n{SIGNATURE};\n"  # compiled
    digest = hashlib.sha256(" ".join((*FLAGS, unit)).encode()).hexdigest()[:16]
    library = library_dir() / f"{ENTRY}{digest}.so"
    if library.exists():
        return library
    library.parent.mkdir(parents=True, exist_ok=True)
    cpp = library.with_suffix(".cpp")
    cpp.write_text(unit)
    command = [status.compiler, *FLAGS, str(cpp), "-o"]
    try:
        done = subprocess.run(
            [*command, str(library)], capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise CompileError(f"compiling took more than {COMPILE_TIMEOUT_S} s") from None
    if "conflicting declaration" in done.stderr:
        raise CompileError(
            f"keep the skeleton's signature, {SIGNATURE}: the checker calls your kernel with "
            "exactly these types, and a kernel declared with others would read garbage"
        )
    if done.returncode != 0:
        raise CompileError("your kernel does not compile:\n" + _first_errors(done.stderr, cpp))
    return library


def _without_prelude(source: str) -> str:
    """The source with a pasted copy of the prelude blanked out, line for line.

    Why: the notebook prints the prelude above the skeleton, and a learner who copies both would
    define `struct View` twice, a compile error about code that is not theirs. Blank lines keep
    the compiler's line numbers counted from the learner's own source."""
    wanted = [line.strip() for line in PRELUDE.splitlines() if line.strip()]
    lines = source.splitlines()
    filled = [i for i, line in enumerate(lines) if line.strip()][: len(wanted)]
    if [lines[i].strip() for i in filled] != wanted:
        return source
    return "\n" * (filled[-1] + 1) + "\n".join(lines[filled[-1] + 1 :])


def _first_errors(stderr: str, cpp: Path, lines: int = 8) -> str:
    """The compiler's first error lines, with the temporary path shortened and line numbers
    counted from the start of the learner's own source (the prelude is not theirs)."""
    offset = PRELUDE.count("\n")

    def relative(match: re.Match) -> str:
        return f"line {int(match.group(1)) - offset}:"

    text = stderr.replace(str(cpp) + ":", "")
    text = re.sub(r"^(\d+):\d+:", relative, text, flags=re.M)
    errors = [line for line in text.splitlines() if re.match(r"line -?\d+: (error|warning)", line)]
    return "\n".join(errors[:lines]) or text.strip()[-1500:]


# ---- the variants (run in the child process) ---------------------------------------------------


class Variant(NamedTuple):
    """One hidden call: out, a and b in named layouts (course.layout.named) of one shape."""

    label: str
    shape: tuple[int, ...]
    out: str
    a: str
    b: str
    value: float
    far: int = 0  # slots added to every tensor's storage offset (see Guarded.view)


FAR = 2**32 + 2**20  # past any 32-bit offset, signed or unsigned
E = 2.718281828459045  # e: rounded to float16, to quarters or to two decimals, it changes

VARIANTS: tuple[Variant, ...] = (
    # a and b differ in one, so a kernel that reads b through a's strides or offset fails
    Variant("a contiguous output", (4, 6), "contiguous", "contiguous", "contiguous", 0.5),
    Variant("a transposed output", (4, 6), "transposed", "contiguous", "contiguous", 0.5),
    Variant("a step-sliced output", (4, 6), "step-sliced", "contiguous", "contiguous", 0.5),
    Variant(
        "an output with a storage offset", (4, 6), "storage-offset", "contiguous", "contiguous", 0.5
    ),
    Variant("a permuted 3-d output", (2, 3, 4), "permuted", "contiguous", "contiguous", 0.5),
    Variant(
        "a 4-d output stored transposed",
        (2, 3, 2, 3),
        "transposed",
        "contiguous",
        "contiguous",
        0.5,
    ),
    Variant("a 1-d step-sliced output", (9,), "step-sliced", "contiguous", "contiguous", 0.5),
    Variant(
        "a contiguous output and transposed inputs",
        (5, 3),
        "contiguous",
        "transposed",
        "transposed",
        0.5,
    ),
    Variant(
        "inputs with a storage offset",
        (4, 6),
        "contiguous",
        "storage-offset",
        "storage-offset",
        0.5,
    ),
    Variant(
        "a transposed output and step-sliced inputs",
        (3, 5),
        "transposed",
        "step-sliced",
        "step-sliced",
        0.5,
    ),
    Variant("an expanded (stride 0) input", (4, 6), "contiguous", "expanded", "expanded", 0.5),
    Variant(
        "a transposed a and a b with a storage offset",
        (4, 6),
        "contiguous",
        "transposed",
        "storage-offset",
        0.5,
    ),
    Variant(
        "a 5-d output stored transposed",
        (2, 1, 3, 2, 2),
        "transposed",
        "step-sliced",
        "step-sliced",
        0.5,
    ),
    Variant(
        "a transposed output with value=-1.5",
        (3, 4),
        "transposed",
        "contiguous",
        "contiguous",
        -1.5,
    ),
    # these catch what passes every call above: five nested loops (the notebook names 5-d), the
    # naive loop as a fast path for tensors laid out alike, a loop body run before its bound is
    # checked, and an inner loop over sizes[ndim - 1] (not there at ndim 0)
    Variant(
        "a 6-d output stored transposed",
        (2, 1, 2, 2, 1, 3),
        "transposed",
        "contiguous",
        "step-sliced",
        0.5,
    ),
    Variant(
        "out, a and b all step-sliced (alike, with gaps)",
        (3, 4),
        "step-sliced",
        "step-sliced",
        "step-sliced",
        0.5,
    ),
    Variant("an empty (4, 0) output", (4, 0), "transposed", "contiguous", "contiguous", 0.5),
    Variant(
        "a 0-d output (ndim 0, one element)", (), "contiguous", "contiguous", "contiguous", 0.5
    ),
    # and these what is right only up to the sizes and values above: a fixed array of 6 dims (or
    # nested loops up to 6), offsets kept in 32-bit ints, a value rounded (0.5 and -1.5 survive a
    # cast to half, to quarters, to two decimals; e does not)
    Variant(
        "a 7-d output stored transposed",
        (2, 1, 2, 1, 2, 1, 2),
        "transposed",
        "contiguous",
        "step-sliced",
        0.5,
    ),
    Variant(
        "an 8-d step-sliced output",
        (1, 2, 1, 2, 2, 1, 2, 2),
        "step-sliced",
        "transposed",
        "contiguous",
        0.5,
    ),
    Variant(
        "offsets past 2^32 (each tensor starts 2^32 + 2^20 slots into its storage)",
        (3, 4),
        "transposed",
        "step-sliced",
        "storage-offset",
        0.5,
        far=FAR,
    ),
    Variant(
        f"a transposed output with value=e ({E:.7g}, not a round number)",
        (4, 5),
        "transposed",
        "contiguous",
        "step-sliced",
        E,
    ),
)
VALUE = 0.5  # the value of most variants: a kernel that hard-codes it fails the later ones


class _View(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
        ("stride", ctypes.POINTER(ctypes.c_int64)),
    ]


@dataclass(frozen=True)
class Guarded:
    """A tensor in a named layout whose storage sits between sentinel slots."""

    buffer: object  # the whole float32 buffer: guard, storage, guard
    tensor: object  # the tensor the kernel updates (a view into the storage)
    offset: int  # its storage offset, counted from the storage (not from the guard)

    def guards_intact(self) -> bool:
        ends = (self.buffer[:GUARD], self.buffer[-GUARD:])
        return all(bool((end == SENTINEL).all()) for end in ends)

    def view(self, keep: list, far: int = 0) -> _View:
        """The tensor as the learner's kernel sees it: storage pointer, offset, strides.

        `far` slots more of offset, with the storage pointer moved back as far: the same
        elements, found by a kernel only if it keeps offsets in 64 bits. Why not a real storage
        that large: 2^32 floats are 16 GiB; the slots before the tensor are never read by a right
        kernel, so they need not exist (the pointer to slot 0 is only ever added to)."""
        data = self.buffer.data_ptr() + GUARD * self.buffer.element_size()
        slot0 = (data - far * self.buffer.element_size()) % 2**64  # an address, wrapped as C does
        return _View(slot0, self.offset + far, _padded(self.tensor.stride(), keep))


def _padded(numbers, keep: list):
    """A C array of int64 with a 0 on each side, as a pointer to its first number: sizes[ndim - 1]
    at ndim 0, or a stride one past the last, reads that 0, the same on every run."""
    array = (ctypes.c_int64 * (len(numbers) + 2))(0, *numbers, 0)
    keep.append(array)  # ctypes arrays must outlive the call
    pointer = ctypes.addressof(array) + ctypes.sizeof(ctypes.c_int64)
    return ctypes.cast(pointer, ctypes.POINTER(ctypes.c_int64))


def _guarded(values, layout: str) -> Guarded:
    import torch

    from course.layout.named import laid_out

    model = values.clone() if values.dim() == 0 else laid_out(values, layout)
    size = model.untyped_storage().nbytes() // model.element_size()
    offset = model.storage_offset()
    # the slots between elements (a step-sliced tensor's gaps, an expanded row's unused rows) hold
    # numbers of their own, not uninitialised memory: a kernel that reads one gets the same
    # finite, non-zero values on every run (a zero would look like "this element was skipped");
    # an expanded layout shares one row, so each of its slots is written several times, one value
    storage = torch.randn(size, generator=torch.Generator().manual_seed(size))
    slots = torch.arange(size).as_strided(model.shape, model.stride(), offset)
    storage[slots.flatten()] = model.flatten()
    buffer = torch.cat([torch.full((GUARD,), SENTINEL), storage, torch.full((GUARD,), SENTINEL)])
    tensor = buffer.as_strided(model.shape, model.stride(), GUARD + offset)
    return Guarded(buffer, tensor, offset)


def run_variant(function, variant: Variant) -> dict:
    """Run the learner's kernel on one variant; what happened, as a JSON-able dict."""
    import torch

    shape, layouts, value = variant.shape, (variant.out, variant.a, variant.b), variant.value
    gen = torch.Generator().manual_seed(sum(shape))
    out, a, b = (_guarded(torch.randn(shape, generator=gen), layout) for layout in layouts)
    expected = torch.addcmul(out.tensor, a.tensor, b.tensor, value=value)
    before = [t.buffer.clone() for t in (out, a, b)]
    keep: list = []
    sizes = _padded(shape, keep)
    function(*(t.view(keep, variant.far) for t in (out, a, b)), sizes, len(shape), value)
    if not out.guards_intact():
        return {"ok": False, "problem": _outside(out.tensor)}
    if not all(torch.equal(x.buffer, y) for x, y in zip((a, b), before[1:], strict=True)):
        return {"ok": False, "problem": "wrote into an input"}
    if torch.allclose(out.tensor, expected, atol=1e-5):
        return {"ok": True}
    # out as it was, gaps and guards included: a model of a slot-by-slot loop walks its memory
    was = before[0].as_strided(out.tensor.shape, out.tensor.stride(), out.tensor.storage_offset())
    alike = len(set(layouts)) == 1
    return {
        "ok": False,
        "problem": FAR_NOTE
        if variant.far
        else _diagnosis(out.tensor, was, a.tensor, b.tensor, value, alike),
        "yours": _head(out.tensor),
        "torch": _head(expected),
    }


# What a kernel that fails only where offsets pass 2^32 does wrong, crashed or not
FAR_NOTE = (
    "lost track of offsets past 2^32: an offset or index held in a 32-bit `int` (or `unsigned`) "
    "wraps around and points far from the tensor; keep every offset, stride and index in int64_t"
)


def _outside(out) -> str:
    """A write outside the output's storage, said for what the output is."""
    if out.numel() == 0:
        return (
            f"wrote into an output of shape {tuple(out.shape)}, which has no elements: nothing "
            "may be written (does your loop run its body once before it checks the sizes?)"
        )
    return "wrote outside the output's storage"


def _diagnosis(result, before, a, b, value: float, alike: bool = False) -> str:
    """What a wrong result is, where it matches a known mistake (`alike`: out, a and b share
    one layout, where a slot-by-slot walk looks right unless the elements have gaps)."""
    import torch

    from course.kernels.cpp.harness import naive_model

    if torch.equal(result, before) and result.dim() == 0:
        return (
            "left a 0-d output unchanged: with ndim 0 there are no sizes and no strides (sizes[0] "
            "and sizes[ndim - 1] are not there to read), yet the tensor has one element, at its "
            "offset, and an index loop must run its body once for it"
        )
    if torch.equal(result, before):
        return (
            "left the output unchanged: whatever it computed never reached out's storage (a "
            "result written into a temporary must be copied back, the Placeholder's bug)"
        )
    if alike and torch.allclose(result, naive_model(before, a, b, value), atol=1e-5):
        return (
            "walked memory slot by slot from each offset, as the naive loop does: with out, a "
            "and b laid out alike that is right only when the elements have no gaps between "
            "them, and a step-sliced tensor's have. Same strides are no shortcut: follow them"
        )
    kept, expected = result == before, torch.addcmul(before, a, b, value=value)
    if torch.allclose(result[~kept], expected[~kept], atol=1e-5):
        return (
            f"left {int(kept.sum())} of {result.numel()} elements of out unchanged and got the "
            "others right: your loop does not reach every index of every dim (sizes[0] to "
            "sizes[ndim - 1], however many dims there are)"
        )
    mistakes = [
        (
            value != VALUE,
            lambda: torch.addcmul(before, a, b, value=VALUE),
            f"used value {VALUE}, not the `value` passed in",
        ),
        (
            value != 1,
            lambda: torch.addcmul(before, a, b),
            "ignored `value` (computed out += a * b)",
        ),
        (
            True,
            lambda: value * a * b,
            "overwrote out instead of adding to it (`=` where `+=` belongs)",
        ),
        (
            True,
            lambda: naive_model(before, a, b, value),
            "paired each memory slot of out with the same slot of a and b, as if a and b were "
            "laid out like out (element i at slot i)",
        ),
    ]
    for applies, model, problem in mistakes:
        if applies and torch.allclose(result, model(), atol=1e-5):
            return problem
    return _value_used(result, before, a, b, value) or _moved(result, expected)


def _value_used(result, before, a, b, value: float) -> str | None:
    """A kernel right but for its scale: the value it used in place of `value`, if it is one.
    A difference of 1e-5 of the value counts: e rounded to float16 is off by about 2e-4 of it."""
    import torch

    product, added = (a * b).flatten(), (result - before).flatten()
    used = float(added @ product / (product @ product))
    if abs(used - value) > 1e-5 * max(1.0, abs(value)) and torch.allclose(
        added, used * product, atol=1e-5
    ):
        rounded = (
            " (a rounded value? keep it a float, as passed)" if value != round(value, 1) else ""
        )
        return f"used value {used:.7g}, not the `value` passed in ({value:.7g}){rounded}"
    return None


def _moved(result, expected) -> str:
    """Right values in the wrong elements (a write address that ignores out's layout), or not."""
    import torch

    ordered = (t.flatten().sort().values for t in (result, expected))
    if torch.allclose(*ordered, atol=1e-5):
        return (
            "wrote the right values into the wrong elements of out: the address each result "
            "is written to must follow out's own strides and offset"
        )
    return "wrote wrong values"


def _head(t) -> list[float]:
    return [round(v, 3) for v in t.flatten()[:4].tolist()]


def main(*libraries: str) -> int:
    """Child process: run every variant of each kernel in turn, one JSON line before ("start")
    and after each variant and after each kernel ("done"), every line naming its kernel by
    position; a kernel stops at its first failing variant."""
    for kernel, library in enumerate(libraries):
        function = getattr(ctypes.CDLL(library), ENTRY)
        function.restype = None
        function.argtypes = [
            _View,
            _View,
            _View,
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_int64,
            ctypes.c_float,
        ]
        for variant in VARIANTS:
            print(json.dumps({"kernel": kernel, "start": variant.label}), flush=True)
            result = run_variant(function, variant)
            print(json.dumps({"kernel": kernel, "variant": variant.label, **result}), flush=True)
            if not result["ok"]:
                break
        print(json.dumps({"kernel": kernel, "done": True}), flush=True)
    return 0


# ---- the parent's side --------------------------------------------------------------------------


@dataclass(frozen=True)
class Report:
    """How the learner's kernel did: passed, or the first variant it failed and why."""

    passed: bool
    variant: str = ""
    problem: str = ""
    yours: object = ""
    expected: object = ""


# Each kernel's report, by its library (a hash of its source): one run per kernel per process
_REPORTS: dict[Path, Report] = {}


def check_source(source: str) -> Report:
    """Compile the learner's kernel and run every variant in a child process."""
    library = compile_kernel(source)
    _run([library])
    return _REPORTS[library]


def run_together(sources: list[str]) -> None:
    """Check several kernels in one child process, for check_source to answer from memory.

    Why: each child imports torch, about two seconds on a busy machine, far longer than the
    variants take; a test's corpus of wrong kernels needs one child, not one per kernel. A
    source that does not compile is left to check_source, which says why.
    """
    libraries = []
    for source in sources:
        try:
            libraries.append(compile_kernel(source))
        except CourseError:
            continue
    _run(libraries)


def _run(libraries: list[Path]) -> None:
    """Run the kernels not run yet; after a crash, a new child goes on with the next one."""
    todo = [library for library in dict.fromkeys(libraries) if library not in _REPORTS]
    while todo:
        _REPORTS.update(_child(todo))  # at least the first kernel's report, crashed or not
        todo = [library for library in todo if library not in _REPORTS]


def _child(libraries: list[Path]) -> dict[Path, Report]:
    """One child process for these kernels: the report of each one it finished, and of the one
    it crashed or timed out in (those after it are left to the next child)."""
    command = [sys.executable, "-m", "course.kernels.cpp.learner", *map(str, libraries)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        stdout, stopped = done.stdout, _crash(done.returncode)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        stdout = out.decode() if isinstance(out, bytes) else out
        stopped = f"did not finish within {RUN_TIMEOUT_S} s (an endless loop?)"
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    reports = {}
    for kernel, library in enumerate(libraries):
        mine = [event for event in events if event["kernel"] == kernel]
        if not any("done" in event for event in mine):
            started = [event["start"] for event in mine if "start" in event]
            variant = started[-1] if started else "the first variant"
            reports[library] = Report(False, variant, _stopped(stopped, variant))
            break
        reports[library] = _report(mine)
    return reports


def _crash(returncode: int) -> str:
    """What a child that died this way tells about the kernel it was running."""
    if returncode in (-8, 136):
        return (
            "crashed the process with a division by zero (SIGFPE): an integer % or / by a size "
            "that is 0?"
        )
    if returncode in (-4, 132, -5, 133):  # SIGILL (x86's ud2), SIGTRAP (arm64's brk): FLAGS' trap
        return (
            "stopped on an index past the end of a fixed-size array (the bounds check traps): "
            "an array of one slot per dim must hold ndim slots, and ndim has no upper limit here"
        )
    how = "a segmentation fault" if returncode in (-11, 139) else f"exit {returncode}"
    return f"crashed the process ({how}): it read or wrote far outside a tensor's storage"


def _stopped(how: str, label: str) -> str:
    """Why a kernel stopped on this variant: on one whose offsets pass 2^32, that first."""
    far = any(v.far for v in VARIANTS if v.label == label)
    return f"{FAR_NOTE}; it {how}" if far else how


def _report(events: list[dict]) -> Report:
    """One finished kernel's report: passed, or its first failing variant and why."""
    failure = next((e for e in events if "variant" in e and not e["ok"]), None)
    if failure is None:
        return Report(True)
    return Report(
        False,
        failure["variant"],
        failure["problem"],
        failure.get("yours", ""),
        failure.get("torch", ""),
    )


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
