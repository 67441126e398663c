"""Notebooks 06-07's exercises and predictions: kernels that must not lose their writes.

06: the learner fixes the broken addcmul_ kernel and then designs the bug away with an output
placeholder; both are installed into a private emulated backend and run on hidden output layouts
under the device's contract (course.kernels.contract: the graph takes contiguous buffers only).
07: the learner predicts the naive C++ kernel's scramble, writes a compiled kernel that is right
on every layout (course.kernels.cpp.learner), and covers a matrix with tiles.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from course import emps
from course.errors import CourseError
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    not_attempted,
    passed,
    register,
    register_prediction,
)
from course.kernels.contract import KernelNotes, under_contract
from course.kernels.cpp import learner
from course.kernels.cpp.harness import naive_model, scramble_inputs
from course.kernels.cpp.learner import SKELETON
from course.kernels.placeholder_lab import (
    BUGGY_PROFILE,
    CHECK_STEPS,
    FAMILY_CALLS,
    family_call,
    layouts,
    private_backend,
    run_addcmul,
)
from course.model.runs import run


def _first(t: torch.Tensor) -> str:
    return str([round(v, 4) for v in t.flatten()[:4].tolist()]) + " ..."


# ---- 06.fix_addcmul ----------------------------------------------------------------------------


def fix_variants() -> list[tuple[str, torch.Tensor]]:
    """The outputs a fixed kernel is tried on: four 2-d layouts and a permuted 3-d one."""
    flat = layouts((4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset"))
    return [*flat.items(), *layouts((2, 3, 4), ("permuted",), seed=1).items()]


CLONE_NOTE = (
    "Your temporary has stride {stride}, the output's own layout: clone() and empty_like() keep "
    "the layout (preserve_format, notebook 04), so the Placeholder silently gathered yet another "
    "copy, the graph wrote there, and copying your temporary back copied old values. A "
    "temporary the graph writes into must be contiguous."
)


def check_kernel_layouts(kernel: Callable[[emps.KernelCall], None]) -> Verdict | None:
    """Compare the kernel with torch.addcmul on every hidden layout; a failed Verdict or None."""
    for layout, output in fix_variants():
        where = f"on a {layout} output (stride {tuple(output.stride())})"
        notes = KernelNotes()
        try:
            result, expected, _ = run_addcmul(under_contract(kernel, notes), output)
        except Exception as exc:
            if is_scaffold(exc):
                return not_attempted("your kernel still raises NotImplementedError.")
            if notes.violation:
                return failed(f"{where}: {notes.violation}", "a strided buffer", "contiguous ones")
            return failed(f"{where} your kernel raised {type(exc).__name__}: {exc}")
        if torch.allclose(result, expected, atol=1e-6):
            continue
        if torch.equal(result, output):
            note = (
                CLONE_NOTE.format(stride=notes.strided_temporaries[0])
                if (notes.strided_temporaries)
                else "A Placeholder's copy is not the output."
            )
            return failed(
                f"{where} your kernel's result never reached the output: it still holds its "
                f"old values. {note}",
                _first(result),
                "the output updated",
            )
        return failed(f"{where} your kernel wrote wrong values", _first(result), _first(expected))
    return None


def check_fix(kernel) -> Verdict:
    """06.fix_addcmul: right on every layout under the contract, then the plateau run trains."""
    if not callable(kernel):
        return failed(
            "the answer must be a kernel function, `def my_kernel(call): ...`",
            type(kernel).__name__,
            "a function taking a KernelCall",
        )
    verdict = check_kernel_layouts(kernel)
    if verdict is not None:
        return verdict
    backend = private_backend(under_contract(kernel, KernelNotes()))
    summary = run(backend=backend, steps=CHECK_STEPS, progress=None).summary()
    if summary["encoder_frozen"]:
        return failed(
            f"right on every layout, yet after {CHECK_STEPS} Adam steps the encoder has not moved",
            "encoder frozen",
            "encoder changes",
        )
    if not summary["encoder_max_exp_avg_sq"]:
        return failed(
            "the encoder moves, but its exp_avg_sq is still 0",
            summary["encoder_max_exp_avg_sq"],
            "> 0",
        )
    return passed(
        f"right on every layout, and the plateau run trains: encoder moved by "
        f"{summary['encoder_max_change']:.3g}, its max exp_avg_sq is "
        f"{summary['encoder_max_exp_avg_sq']:.3g} (was exactly 0)"
    )


def _fix_reference():
    def my_kernel(call):
        temporary = call.output.contiguous()  # the output itself when it already is contiguous
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(call.placeholder(temporary), inputs)
        if temporary is not call.output:
            call.output.copy_(temporary)  # scatter the result back into the real output

    return my_kernel


def _buggy():
    def my_kernel(call):
        inputs = [call.placeholder(t) for t in call.inputs]
        call.run_graph(call.placeholder(call.output), inputs)

    return my_kernel


def _zeros():
    def my_kernel(call):
        call.output.zero_()

    return my_kernel


def _no_copy_back():
    def my_kernel(call):
        output = call.output.contiguous()
        call.run_graph(call.placeholder(output), [call.placeholder(t) for t in call.inputs])

    return my_kernel


def _skip_placeholder():
    def my_kernel(call):
        call.graph(call.output, call.inputs)  # right on a CPU, impossible for MPSGraph < macOS 15

    return my_kernel


def _clone_temporary():
    def my_kernel(call):
        temporary = call.output.clone()  # keeps the output's strides
        call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
        call.output.copy_(temporary)

    return my_kernel


def _raw_tensor():
    def my_kernel(call):
        temporary = call.output.contiguous()
        call.run_graph(temporary, [call.placeholder(t) for t in call.inputs])
        call.output.copy_(temporary)

    return my_kernel


register(
    Exercise(
        name="06.fix_addcmul",
        prompt="Write `my_kernel(call)`, a fixed addcmul_ kernel: its result must reach "
        "`call.output` whatever the output's layout, and the graph only ever gets contiguous "
        "buffers. It is installed into a private buggy backend and the plateau run is redone.",
        checker=check_fix,
        hint="Do what the working sibling does: when the output is not contiguous, let the graph "
        "write into a contiguous temporary (through a placeholder), then copy the temporary "
        "into call.output.",
        reference=_fix_reference,
        wrong_answers=(
            _buggy,
            _zeros,
            _no_copy_back,
            _skip_placeholder,
            _clone_temporary,
            _raw_tensor,
        ),
    )
)


# ---- 06.output_placeholder ---------------------------------------------------------------------

REDESIGN_LAYOUTS = {  # the non-contiguous ones first: a lost write is the worse mistake
    "transposed": (3, 4),
    "step-sliced": (3, 4),
    "permuted": (2, 3, 4),
    "storage-offset": (3, 4),
    "contiguous": (3, 4),
}
REDESIGN_FAMILIES = ("lerp", "addcmul", "normal")  # a working, an Adam and a random family


@functools.cache
def _expected_values(family: str, layout: str) -> torch.Tensor:
    """What the family's call leaves in the output on a profile without lost writes."""
    fixed = emps.Backend(emps.FIXED_MACOS14)
    return family_call(fixed, family, layout, REDESIGN_LAYOUTS[layout])[0]


def _placeholder_kernel(placeholder_class, wasted: list[bool]) -> Callable[[emps.KernelCall], None]:
    """Every kernel written against the learner's output placeholder; `wasted` notes a copy of
    an output that was contiguous already."""

    def kernel(call):
        with placeholder_class(call.output) as output:
            if output is None:
                raise CourseError(
                    "`with MyOutputPlaceholder(t) as output` bound None: __enter__ must return "
                    "the placeholder (return self)"
                )
            buffer = getattr(output, "buffer", None)
            if call.output.is_contiguous() and isinstance(buffer, torch.Tensor):
                wasted.append(buffer.data_ptr() != call.output.data_ptr())
            call.run_graph(output, [call.placeholder(t) for t in call.inputs])

    return kernel


def check_output_placeholder(placeholder_class) -> Verdict:
    """06.output_placeholder: every family, every layout, no lost write and no wasted copy."""
    if not callable(placeholder_class):
        return failed("give your class, e.g. class MyOutputPlaceholder: ...", placeholder_class)
    for layout, shape in REDESIGN_LAYOUTS.items():
        for family in REDESIGN_FAMILIES:
            verdict = _redesign_case(placeholder_class, family, layout, shape)
            if verdict is not None:
                return verdict
    return passed(
        "every kernel written with your placeholder keeps its write, in every family and layout, "
        "and a contiguous output costs no copy: no kernel author can forget the copy back now"
    )


def _redesign_case(placeholder_class, family: str, layout: str, shape) -> Verdict | None:
    notes, wasted = KernelNotes(), []
    kernel = under_contract(_placeholder_kernel(placeholder_class, wasted), notes)
    backend = emps.Backend(BUGGY_PROFILE, overrides=dict.fromkeys(FAMILY_CALLS, kernel))
    where = f"{family} on a {layout} output"
    try:
        values, events = family_call(backend, family, layout, shape)
    except Exception as exc:
        if is_scaffold(exc):
            return not_attempted("your class still raises NotImplementedError.")
        if notes.violation:
            return failed(
                f"{where}: {notes.violation}. (clone() and empty_like() keep the tensor's "
                "layout: notebook 04.)",
                "a strided buffer",
                "contiguous ones",
            )
        return failed(f"{where}: your placeholder raised {type(exc).__name__}: {exc}")
    if any(event.lost_write for event in events) or not torch.equal(
        values, _expected_values(family, layout)
    ):
        return failed(
            f"{where}: the write never reached the output. The graph writes into your "
            "placeholder's .buffer; when does that buffer's content get into the tensor?",
            "old values",
            "the output updated",
        )
    if any(wasted):
        return failed(
            f"{where}: your placeholder copied an output that was contiguous already: a wasted "
            "copy on every call (the graph can write into such a tensor directly)",
            "a copy",
            "the tensor itself",
        )
    return None


def _output_placeholder_reference():
    class MyOutputPlaceholder:
        def __init__(self, tensor):
            self.tensor = tensor
            self.buffer = tensor.contiguous()  # the tensor itself when already contiguous

        def __enter__(self):
            return self

        def __exit__(self, *exc_info):
            if self.buffer is not self.tensor:
                self.tensor.copy_(self.buffer)

    return MyOutputPlaceholder


def _placeholder_variant(buffer, exit_copies=True, enter_copies=False):
    class Variant:
        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, buffer(tensor)

        def __enter__(self):
            if enter_copies:
                self.tensor.copy_(self.buffer)
            return self

        def __exit__(self, *exc_info):
            if exit_copies and self.buffer is not self.tensor:
                self.tensor.copy_(self.buffer)

    return Variant


register(
    Exercise(
        name="06.output_placeholder",
        prompt="Write MyOutputPlaceholder(tensor): a context manager whose .buffer the graph "
        "writes into, and which makes sure the result ends up in `tensor`.",
        checker=check_output_placeholder,
        hint="The buffer must be contiguous (the graph's contract) and must not cost a copy when "
        "the tensor already is; the copy back belongs in __exit__, after the graph ran.",
        reference=_output_placeholder_reference,
        wrong_answers=(
            lambda: _placeholder_variant(torch.Tensor.contiguous, exit_copies=False),
            lambda: _placeholder_variant(torch.Tensor.clone),
            lambda: _placeholder_variant(
                torch.Tensor.contiguous, exit_copies=False, enter_copies=True
            ),
            lambda: _placeholder_variant(lambda t: t.clone(memory_format=torch.contiguous_format)),
        ),
    )
)


# ---- predictions for 06 -------------------------------------------------------------------------


def _lost_write_outcome() -> str:
    from course.emps import write_through_placeholder

    output = layouts()["transposed"]
    result, expected, _ = run_addcmul(write_through_placeholder, output)
    if torch.allclose(result, expected):
        return "the right result"
    if torch.equal(result, output):
        return "its old values, unchanged"
    return "zeros" if not result.any() else "NaN or garbage"


def _macos15_outcome() -> str:
    from course.emps import write_through_placeholder

    output = layouts()["transposed"]
    result, expected, _ = run_addcmul(write_through_placeholder, output, profile=emps.MACOS15)
    return "no: the write arrives" if torch.allclose(result, expected) else "yes: still lost"


register_prediction(
    Prediction(
        "06.lost_write",
        "PyTorch 2.2.1, macOS 14: out is transposed and the broken kernel runs "
        "out.addcmul_(t1, t2). What does out hold afterwards?",
        ("the right result", "its old values, unchanged", "zeros", "NaN or garbage"),
        _lost_write_outcome,
        "The Placeholder gathered a contiguous copy of out, the graph computed the right answer "
        "into that copy, and nothing copied it back: out keeps its old values. Nothing fails.",
        answer_words=("unchanged", "never changed", "old values"),
    )
)
register_prediction(
    Prediction(
        "06.macos15",
        "On macOS 15 MPSGraph reads and writes strided buffers. Does the same broken kernel "
        "(no copy back) still lose the write to a transposed output there?",
        ("yes: still lost", "no: the write arrives"),
        _macos15_outcome,
        "With strided buffers the Placeholder makes no copy: the graph writes into out itself. "
        "The bug needed both a kernel that forgot the copy back and a graph that needed one.",
        answer_words=("the write arrives", "before macOS 15", "takes strided buffers"),
    )
)


# ---- 07.predict_scramble -------------------------------------------------------------------------


def check_scramble(answer) -> Verdict:
    """07.predict_scramble: the naive kernel's result, cell by cell, never shown in full."""
    out, t1, t2 = scramble_case()
    expected = naive_model(out, t1, t2).tolist()
    correct = torch.addcmul(out, t1, t2).tolist()
    try:
        yours = torch.as_tensor(answer, dtype=torch.float32).tolist()
    except (TypeError, ValueError, RuntimeError):
        return failed("answer with a nested list of 2 rows of 3 numbers", answer, "2 rows of 3")
    if not (len(yours) == 2 and all(isinstance(r, list) and len(r) == 3 for r in yours)):
        return failed("answer with 2 rows of 3 numbers: out has shape (2, 3)", yours, "2 rows of 3")
    if yours == expected:
        return passed(
            "right: the values 0..5 were written in memory order, and a transposed "
            "output reads memory column by column"
        )
    if yours == correct:
        return failed(
            "that is torch's (correct) answer; the naive kernel writes element i of "
            "t1 to memory slot i of the output, and reads nothing about strides",
            yours,
            "the naive kernel's result",
        )
    right = [
        [v if v == e else "?" for v, e in zip(r, er, strict=True)]
        for r, er in zip(yours, expected, strict=True)
    ]
    return failed(
        "not what the naive kernel writes: for each memory slot i of out, find which logical "
        "cell out[r][c] sits there (its strides say), then put t1's slot i in it",
        yours,
        f"cells you have right so far: {right}",
    )


def scramble_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The exercise's inputs: a zero transposed (2, 3) output, t1 = 0..5, t2 = ones."""
    out, t1, t2 = scramble_inputs(2, 3)
    return out, t1, t2


def _scramble_reference():
    # memory slot i gets i; out[r][c] sits in slot r + 2 * c
    return [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


register(
    Exercise(
        name="07.predict_scramble",
        prompt="out = torch.zeros(3, 2).t() (shape (2, 3), stride (1, 2)); "
        "t1 = arange(6).reshape(2, 3); t2 = ones. What does the naive kernel leave in "
        "out.tolist()?",
        checker=check_scramble,
        hint="Memory slot i of out gets t1's memory slot i (= i). Logical out[r][c] lives at "
        "memory slot r * 1 + c * 2.",
        reference=_scramble_reference,
        wrong_answers=(
            lambda: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
            lambda: [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]],
            lambda: [[0.0, 2.0, 4.0], [1.0, 3.0, 6.0]],
            lambda: [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]],
        ),
    )
)


# ---- 07.write_kernel ---------------------------------------------------------------------------

REFERENCE_KERNEL = """extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes,
                            int64_t ndim, float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = ndim - 1; d >= 0; --d) {  // i -> its index, last dim fastest
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d];  // notebook 04's address(), once per tensor
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
}
"""


def check_write_kernel(source) -> Verdict:
    """07.write_kernel: compile the learner's C++ and run it on hidden layouts (child process)."""
    try:
        report = learner.check_source(source)
    except CourseError as exc:  # not a kernel, no compiler, or a compile error: say which
        return failed(str(exc))
    if report.passed:
        return passed(
            f"right on all {len(learner.VARIANTS)} layouts (transposed, step-sliced, offset, "
            "permuted 3-d, 1-d, mixed and broadcast inputs): each element found through its "
            "own strides and offset, in every tensor"
        )
    return failed(
        f"on {report.variant} your kernel {report.problem}. " + _kernel_nudge(report.problem),
        report.yours,
        report.expected or "torch's addcmul_",
    )


def _kernel_nudge(problem: str) -> str:
    if "crashed" in problem or "outside" in problem:
        return "Check that every index stays below its size, and each tensor uses its own strides."
    return "Element idx of a tensor lives at offset + sum(idx[d] * stride[d]), per tensor."


def _kernel_variant(body: str) -> str:
    head = (
        'extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes,\n'
        "                            int64_t ndim, float value) {\n"
    )
    return head + body + "}\n"


WRONG_KERNELS = {
    "with offsets, still flat": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i)
    out.data[out.offset + i] += value * a.data[a.offset + i] * b.data[b.offset + i];
""",
    "the output's strides for all three": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      o += (rest % sizes[d]) * out.stride[d];
      rest /= sizes[d];
    }
    out.data[out.offset + o] += value * a.data[a.offset + o] * b.data[b.offset + o];
  }
""",
    "no offsets": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0, x = 0, y = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d];
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
""",
    "two dims only": """  for (int64_t r = 0; r < sizes[0]; ++r)
    for (int64_t c = 0; c < sizes[1]; ++c)
      out.data[out.offset + r * out.stride[0] + c * out.stride[1]] +=
          value * a.data[a.offset + r * a.stride[0] + c * a.stride[1]] *
          b.data[b.offset + r * b.stride[0] + c * b.stride[1]];
""",
}


register(
    Exercise(
        name="07.write_kernel",
        prompt="Write my_addcmul_ in C++ (start from the skeleton, course.kernels.cpp.learner."
        "SKELETON): out += value * a * b, right for every layout of every tensor.",
        checker=check_write_kernel,
        hint="For each flat position i, turn i into an index (last dim fastest: k = rest % "
        "sizes[d], rest /= sizes[d]) and add k * stride[d] to each tensor's own offset.",
        reference=lambda: REFERENCE_KERNEL,
        wrong_answers=(
            lambda: SKELETON,
            *((lambda body=body: _kernel_variant(body)) for body in WRONG_KERNELS.values()),
        ),
    )
)


# ---- 07.tiles ----------------------------------------------------------------------------------

TILE_CASES: tuple[tuple[tuple[int, int], int, str], ...] = (
    ((8, 8), 4, "contiguous"),
    ((7, 5), 3, "transposed"),
    ((64, 48), 16, "transposed"),
    ((1, 10), 4, "contiguous"),
    ((5, 5), 8, "transposed"),
    ((33, 17), 8, "step-sliced"),
)


def check_tiles(fn) -> Verdict:
    """07.tiles: the learner's tiled loop leaves what torch.addcmul_ would, on hidden shapes."""
    from course.layout.named import laid_out

    if not callable(fn):
        return failed("give a function, e.g. def tiled_addcmul_(out, t1, t2, value, tile): ...")
    gen = torch.Generator().manual_seed(3)
    for shape, tile, layout in TILE_CASES:
        out = laid_out(torch.randn(shape, generator=gen), layout)
        t1, t2 = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
        expected, before = torch.addcmul(out, t1, t2, value=0.5), out.clone()
        where = f"a {shape} {layout} output with tile {tile}"
        try:
            fn(out, t1, t2, 0.5, tile)
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(f"on {where} your function raised {type(exc).__name__}: {exc}")
        if torch.allclose(out, expected, atol=1e-5):
            continue
        return failed(
            f"on {where}: " + _tile_nudge(out, before, expected),
            _cells(out, before, expected),
            "every element updated exactly once",
        )
    return passed(
        f"right on {len(TILE_CASES)} shapes, ragged edges and tiles larger than the matrix "
        "included: every element updated exactly once, tile by tile"
    )


def _cells(out: torch.Tensor, before: torch.Tensor, expected: torch.Tensor) -> str:
    untouched = int(((out == before) & (expected != before)).sum())
    return f"{untouched} of {out.numel()} elements never updated"


def _tile_nudge(out: torch.Tensor, before: torch.Tensor, expected: torch.Tensor) -> str:
    untouched = (out == before) & (expected != before)
    if untouched.any():
        rows, cols = untouched.nonzero()[0].tolist()
        return (
            f"element ({rows}, {cols}) was never updated: do your tiles reach the last rows and "
            "columns when the size is not a multiple of the tile?"
        )
    return (
        "some elements were updated twice or with the wrong values: do tiles overlap, or mix "
        "up rows and columns?"
    )


def _tiles_reference():
    def tiled_addcmul_(out, t1, t2, value, tile):
        rows, cols = out.shape
        for r0 in range(0, rows, tile):
            for c0 in range(0, cols, tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                out[block].addcmul_(t1[block], t2[block], value=value)
        return out

    return tiled_addcmul_


def _tiles_wrong(stop_short=False, overlap=False, swapped=False):
    def tiled_addcmul_(out, t1, t2, value, tile):
        rows, cols = out.shape
        step = tile - 1 if overlap and tile > 1 else tile
        row_end = rows // tile * tile if stop_short else rows
        col_end = cols // tile * tile if stop_short else cols
        for r0 in range(0, row_end, step):
            for c0 in range(0, col_end, step):
                rs, cs = slice(r0, r0 + tile), slice(c0, c0 + tile)
                block = (cs, rs) if swapped else (rs, cs)
                out[block].addcmul_(t1[block], t2[block], value=value)
        return out

    return tiled_addcmul_


register(
    Exercise(
        name="07.tiles",
        prompt="Write tiled_addcmul_(out, t1, t2, value, tile): out += value * t1 * t2 for a 2-d "
        "out, one tile x tile block at a time, every element exactly once.",
        checker=check_tiles,
        hint="Two loops over the tiles' top-left corners, range(0, rows, tile) and "
        "range(0, cols, tile); a slice past the end simply stops at the edge.",
        reference=_tiles_reference,
        wrong_answers=(
            lambda: _tiles_wrong(stop_short=True),
            lambda: _tiles_wrong(overlap=True),
            lambda: _tiles_wrong(swapped=True),
            lambda: lambda out, t1, t2, value, tile: out.copy_(torch.addcmul(out, t1, t2)),
        ),
    )
)


# ---- predictions for 07 -------------------------------------------------------------------------


def _cache_lines_outcome() -> str:
    transposed = torch.zeros(1024, 1024).t()  # the story's layout: stride (1, 1024)
    addresses = [transposed[0, j].data_ptr() for j in range(16)]  # 16 steps along a row
    lines = len({address // 64 for address in addresses})  # 64-byte cache lines
    return "1: they share one line" if lines == 1 else f"{lines}: one line per element"


register_prediction(
    Prediction(
        "07.cache_lines",
        "Reading 16 consecutive elements along a row of a transposed (1024, 1024) float32 "
        "matrix: how many 64-byte cache lines does the CPU fetch?",
        ("1: they share one line", "16: one line per element"),
        _cache_lines_outcome,
        "Along a row of a transposed matrix consecutive elements are 1024 floats (4 kB) apart, "
        "so each one sits in its own cache line, and the other 15 floats of that line are "
        "wasted unless the line is still in cache when the loop comes back for them.",
    )
)
