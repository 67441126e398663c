"""06.kernel_test: the learner writes the test that would have caught the lost write.

`breaks(kernel)` is tried on hidden kernels: the story's, two right ones, and kernels broken in
ways that one kind of careless test cannot see (only on a step-sliced or 3-d output, only with
a storage offset or a value other than 1, 3% off, scrambled, two values swapped where no sum
sees it, a row short, NaN). Each hidden kernel is watched, so a miss is explained by what the
test never varied (only contiguous outputs, value=1 throughout) before what its comparison
cannot see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from course import emps
from course.exercises import Exercise, Verdict, failed, is_scaffold, passed, register
from course.kernels import placeholder_lab
from course.kernels.placeholder_lab import layouts, run_addcmul
from course.layout.named import is_dense


@dataclass(frozen=True)
class Run:
    """One run of a hidden kernel inside the learner's test: what the test varied."""

    contiguous: bool
    dense: bool  # its elements fill one block of memory (a step-sliced output does not)
    transpose: bool  # a 2-d output stored column by column
    dims: int
    offset: int
    values: tuple[object, ...]
    strided_buffers: bool
    lost: bool = False  # the whole write was lost: old values, none of them torch's (set after)

    @classmethod
    def of(cls, call: emps.KernelCall) -> Run:
        out = call.output
        return cls(
            contiguous=out.is_contiguous(),
            dense=is_dense(out),
            transpose=out.dim() == 2 and not out.is_contiguous() and out.t().is_contiguous(),
            dims=out.dim(),
            offset=out.storage_offset(),
            values=tuple(call.arguments),
            strided_buffers=call.strided_buffers,
        )


def _noncontiguous(runs: list[Run]) -> list[Run]:
    return [r for r in runs if not r.contiguous and not r.strided_buffers]


def _needs_noncontiguous(runs: list[Run]) -> str | None:
    if _noncontiguous(runs):
        return None
    if any(r.strided_buffers for r in runs):
        return (
            "your test ran it on a profile with strided buffers (macOS 15), where no copy is "
            "made and no write can be lost; test on the story's profile (run_addcmul's default)"
        )
    return (
        "your test only ran it on contiguous outputs, where the Placeholder makes no copy: the "
        "bug needs a non-contiguous output (a transposed one, say)"
    )


def _needs_a_change(runs: list[Run]) -> str | None:
    """A lost write shows only where the call changes the output: value=0 adds nothing."""
    if _needs_noncontiguous(runs) or any(v != 0 for r in _noncontiguous(runs) for v in r.values):
        return _needs_noncontiguous(runs)
    return (
        "your test ran it on non-contiguous outputs with value=0 only, where addcmul_ adds "
        "nothing: the output is torch's result whether the write is lost or not. Use a value "
        "that changes the output (neither 0 nor 1)"
    )


def _needs_non_transpose(runs: list[Run]) -> str | None:
    if any(not r.transpose for r in _noncontiguous(runs)):
        return None
    return (
        "your test tried no non-contiguous output other than a 2-d transpose; a step-sliced "
        "w[:, ::2] or a permuted 3-d tensor is non-contiguous too, and a kernel can get one of "
        "them wrong"
    )


def _needs_gaps(runs: list[Run]) -> str | None:
    if any(not r.dense for r in _noncontiguous(runs)):
        return None
    return (
        "your test never tried an output with gaps between its elements (a step-sliced "
        "w[:, ::2]): a kernel can copy back to every transposed or permuted output, whose "
        "elements fill one block of memory, and still lose the write there"
    )


def _needs_more_dims(runs: list[Run]) -> str | None:
    if any(r.dims > 2 for r in _noncontiguous(runs)):
        return None
    return (
        "your test never tried a non-contiguous output with more than 2 dims (a permuted 3-d "
        "one, say); a kernel may handle matrices and still lose the write on anything else"
    )


def _needs_offset(runs: list[Run]) -> str | None:
    if any(r.offset for r in runs):
        return None
    return (
        "your test never tried an output with a storage offset (one that starts inside its "
        "storage, like w[4:]); a kernel that addresses memory from the storage's start is "
        "right on every other output"
    )


def _needs_value(runs: list[Run]) -> str | None:
    if any(v != 1 for r in runs for v in r.values):
        return None
    return (
        "your test always used value=1, the default; a kernel that ignores `value` is right "
        "there and wrong everywhere else: test with another value (run_addcmul's default is 0.5)"
    )


def _copy_back(call: emps.KernelCall, write: Callable[[torch.Tensor], object]) -> None:
    """Compute into a contiguous temporary, then `write(temporary)` into the output."""
    temporary = torch.empty(call.output.shape, dtype=call.output.dtype)
    call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
    write(temporary)


def _only_if(condition: Callable[[torch.Tensor], bool]) -> Callable[[emps.KernelCall], None]:
    """The working pattern where `condition(output)` holds, 2.2.1's kernel elsewhere."""

    def kernel(call):
        if condition(call.output):
            emps.gather_compute_scatter(call)
        else:
            emps.write_through_placeholder(call)

    return kernel


def _from_storage_start(call):
    out = call.output
    _copy_back(call, lambda t: out.as_strided(out.shape, out.stride(), 0).copy_(t))


def _value_one(call):
    temporary = torch.empty(call.output.shape, dtype=call.output.dtype)
    call.graph(temporary, [t.contiguous() for t in call.inputs], scalar=lambda v: 1.0)
    call.output.copy_(temporary)


def _three_percent_off(call):
    emps.gather_compute_scatter(call)
    call.output.mul_(1.03)


def _unless_contiguous(kernel: Callable[[emps.KernelCall], None]):
    """`kernel` for a non-contiguous output, the working pattern for a contiguous one."""

    def chosen(call):
        (emps.gather_compute_scatter if call.output.is_contiguous() else kernel)(call)

    return chosen


def _memory_order(call):
    out = call.output
    if not is_dense(out):
        emps.gather_compute_scatter(call)
        return
    flat = out.as_strided((out.numel(),), (1,), out.storage_offset())
    _copy_back(call, lambda t: flat.copy_(t.flatten()))


def _summary_blind_swap(line: int | None = None) -> Callable[[emps.KernelCall], None]:
    """Torch's values with two of them swapped: a scramble that sums cannot see (with `line`,
    two values of one line along that dim, so that the sums along it cannot see it either)."""

    def kernel(call):
        out = call.output
        temporary = torch.empty(out.shape, dtype=out.dtype)
        call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
        flat = temporary.view(-1)
        i, j = _pair_sums_miss(temporary, out.stride(), out.storage_offset(), line)
        flat[[i, j]] = flat[[j, i]]
        out.copy_(temporary)

    return kernel


SWAP_TRIES = 400  # candidate pairs: on outputs of 15 elements or more, one was found within 70


def _pair_sums_miss(
    values: torch.Tensor, stride, offset: int, line: int | None = None
) -> tuple[int, int]:
    """Two cells (flat indices of `values`, logical order) holding different values whose swap
    leaves every whole-output summary (and with `line`, every sum along that dim) bit for bit
    as it was: by design, not by rounding luck.

    The summaries are taken on a copy with the output's own strides and offset (what the
    learner reads back) and on a contiguous one; near-equal values are tried first. Where no
    pair is found (as on some outputs of 8 elements), the closest two values are swapped
    anyway."""
    spans = ((size - 1) * step for size, step in zip(values.shape, stride, strict=True))
    extent = offset + sum(spans) + 1
    like = torch.zeros(extent, dtype=values.dtype).as_strided(values.shape, stride, offset)
    like.copy_(values)
    before = _summaries(like, line)
    flat = values.reshape(-1)
    # with `line`, pairs of one line first; any two cells where lines hold one value each
    candidates = ([] if line is None else _line_pairs(values, line)) + _near_pairs(values)
    pairs = [p for p in candidates if flat[p[0]] != flat[p[1]]] or [(0, 0)]
    for i, j in pairs[:SWAP_TRIES]:
        swapped = flat.clone()
        swapped[[i, j]] = swapped[[j, i]]
        like.copy_(swapped.view(values.shape))
        if all(map(torch.equal, _summaries(like, line), before)):
            return i, j
    return pairs[0]


def _near_pairs(values: torch.Tensor) -> list[tuple[int, int]]:
    """The SWAP_TRIES pairs of cells up to 8 apart in sorted order that come first: those in
    different lines along every dim (so a sum along any dim, a row or a column sees the swap),
    then the others; the closest values first (their swap is the likeliest to leave a sum's
    roundings as they were)."""
    flat = values.reshape(-1)
    if flat.numel() < 2:
        return []
    order = flat.argsort()
    coords = torch.stack(torch.unravel_index(torch.arange(flat.numel()), values.shape), dim=1)
    single = torch.tensor(values.shape) == 1
    firsts, seconds = zip(*((order[:-k], order[k:]) for k in range(1, 9)), strict=True)
    i, j = torch.cat(firsts), torch.cat(seconds)
    apart = ((coords[i] != coords[j]) | single).all(dim=1)
    gap = (flat[j].double() - flat[i].double()).abs()
    return _first_pairs(i, j, gap + (~apart) * (gap.max() + 1))


def _line_pairs(values: torch.Tensor, line: int) -> list[tuple[int, int]]:
    """The SWAP_TRIES pairs of cells of one line along dim `line` (a row for -1, a column for
    0), up to 4 apart in that line's sorted order, with the closest values."""
    cells = torch.arange(values.numel()).view(values.shape).movedim(line, -1)
    cells = cells.reshape(-1, values.shape[line])
    lines = values.movedim(line, -1).reshape(cells.shape)
    ranked = cells.gather(1, lines.argsort(dim=1))
    if ranked.shape[1] < 2:
        return []
    steps = range(1, min(5, ranked.shape[1]))
    i = torch.cat([ranked[:, :-k].reshape(-1) for k in steps])
    j = torch.cat([ranked[:, k:].reshape(-1) for k in steps])
    flat = values.reshape(-1).double()
    return _first_pairs(i, j, (flat[j] - flat[i]).abs())


def _first_pairs(i: torch.Tensor, j: torch.Tensor, rank: torch.Tensor) -> list[tuple[int, int]]:
    """The SWAP_TRIES pairs (i[n], j[n]) of lowest rank, lowest first."""
    first = rank.argsort(stable=True)[:SWAP_TRIES]
    return list(zip(i[first].tolist(), j[first].tolist(), strict=True))


def _summaries(x: torch.Tensor, line: int | None = None) -> list[torch.Tensor]:
    """What a test that compares less than every cell looks at: sums, means, norms, in the
    output's memory order and in logical order, in its dtype and in float64 (and with `line`,
    the sums and means along that dim)."""
    along = [] if line is None or x.dim() < 2 else [line]
    return [
        summary
        for y in (x, x.contiguous())
        for summary in (
            y.sum(),
            y.mean(),
            y.abs().sum(),
            y.square().sum(),
            torch.linalg.vector_norm(y),
            y.double().sum(),
            y.double().mean(),
            *(f(d) for d in along for f in (y.sum, y.mean, y.double().sum, y.double().mean)),
        )
    ]


def _one_bit_off_unsummed(call):
    """Torch's values with one of them a bit off: one whose change no float32 sum sees."""
    out = call.output
    temporary = torch.empty(out.shape, dtype=out.dtype)
    call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
    flat = temporary.view(-1)
    cell = _cell_sums_miss(temporary, out.stride(), out.storage_offset())
    flat[cell] = _one_bit_away(flat[cell])
    out.copy_(temporary)


def _one_bit_away(value: torch.Tensor) -> torch.Tensor:
    """The next float away from zero: the last bit of `value` changed."""
    return torch.nextafter(value, value * 2 if value != 0 else torch.ones_like(value))


def _cell_sums_miss(values: torch.Tensor, stride, offset: int) -> int:
    """A cell (flat index) whose last bit, changed, leaves every sum and mean in the dtype,
    whole and along each dim, bit for bit as it was; the smallest values are tried first (their
    last bit is the likeliest to vanish in a sum's rounding). Where none is found, the
    smallest."""
    spans = ((size - 1) * step for size, step in zip(values.shape, stride, strict=True))
    like = torch.zeros(offset + sum(spans) + 1, dtype=values.dtype)
    like = like.as_strided(values.shape, stride, offset)
    like.copy_(values)
    before = _sums_in_dtype(like)
    flat = values.reshape(-1)
    order = flat.abs().argsort().tolist()
    for cell in order[:SWAP_TRIES]:
        changed = flat.clone()
        changed[cell] = _one_bit_away(changed[cell])
        like.copy_(changed.view(values.shape))
        if all(map(torch.equal, _sums_in_dtype(like), before)):
            return cell
    return order[0]


def _sums_in_dtype(x: torch.Tensor) -> list[torch.Tensor]:
    """Sums and means in the tensor's own dtype, whole and along each dim, in memory order and
    in logical order (a float64 sum of float32 values is exact: it would see one bit)."""
    dims = range(x.dim()) if x.dim() > 1 else ()
    return [
        summary
        for y in (x, x.contiguous())
        for summary in (y.sum(), y.mean(), *(f(d) for d in dims for f in (y.sum, y.mean)))
    ]


def _all_but_last_row(call):
    _copy_back(call, lambda t: call.output[:-1].copy_(t[:-1]))


def _round_toward_zero(call):
    """Torch's values rounded toward zero instead of to the nearest float: 1 ulp off on about
    half the elements (the exact sum, in float64, is rounded once, the wrong way)."""
    out, t1, t2 = (t.double() for t in call.inputs)  # read before the output is written
    exact = out + call.arguments[0] * t1 * t2
    nearest = exact.to(call.output.dtype)
    away = nearest.double().abs() > exact.abs()
    call.output.copy_(
        torch.where(away, torch.nextafter(nearest, torch.zeros_like(nearest)), nearest)
    )


def _all_but_one_element(call):
    out = call.output
    cell = tuple(
        int(i) for i in torch.unravel_index(torch.tensor(min(1, out.numel() - 1)), out.shape)
    )
    old = out[cell].clone()
    _copy_back(call, lambda t: (out.copy_(t), out[cell].copy_(old)))


def _nan_garbage(call):
    call.output.fill_(float("nan"))


@dataclass(frozen=True)
class HiddenKernel:
    """A kernel the learner's test is tried on: what it does, whether it breaks, why a test
    that says otherwise is wrong, and `needs`: a message when the test never ran it where its
    fault shows."""

    does: str
    kernel: Callable[[emps.KernelCall], None]
    breaks: bool
    why: str
    needs: Callable[[list[Run]], str | None] = lambda runs: None


COMPARE = "compare the output after the call with torch's result (run_addcmul's second value)"
HIDDEN_KERNELS: tuple[HiddenKernel, ...] = (
    HiddenKernel(
        "is 2.2.1's broken kernel under another name",
        emps.write_through_placeholder,
        True,
        f"it loses every write to a non-contiguous output; {COMPARE}",
        _needs_a_change,
    ),
    HiddenKernel(
        "gathers, computes and copies back (the working pattern)",
        emps.gather_compute_scatter,
        False,
        "it is right on every layout: compare the output with torch's result, not with its "
        "old values; a temporary (the recorder counts them) is how a right kernel handles a "
        "non-contiguous output, not a fault",
    ),
    HiddenKernel(
        "copies back through an output placeholder (the redesign)",
        emps.output_placeholder,
        False,
        f"it is right on every layout; {COMPARE}",
    ),
    HiddenKernel(
        "copies back only when the output is a 2-d transpose",
        _only_if(lambda out: out.dim() == 2 and out.t().is_contiguous()),
        True,
        f"it loses the write to every other non-contiguous output; {COMPARE}",
        _needs_non_transpose,
    ),
    HiddenKernel(
        "copies back only to outputs whose elements fill one block of memory",
        _only_if(is_dense),
        True,
        f"it loses the write to a step-sliced output; {COMPARE}",
        _needs_gaps,
    ),
    HiddenKernel(
        "copies back only for outputs of at most 2 dims",
        _only_if(lambda out: out.dim() <= 2),
        True,
        f"it loses the write to a non-contiguous 3-d output; {COMPARE}",
        _needs_more_dims,
    ),
    HiddenKernel(
        "writes its result from the start of the output's storage, ignoring its offset",
        _from_storage_start,
        True,
        "the output changes, but not to torch's values: 'did it change?' is not 'is it "
        f"right?'; {COMPARE}",
        _needs_offset,
    ),
    HiddenKernel(
        "computes as if value were 1",
        _value_one,
        True,
        "its write arrives (the recorder's lost_write flag is False: that flag only says "
        "whether the graph's result reached the output), but the values are wrong; " + COMPARE,
        _needs_value,
    ),
    HiddenKernel(
        "writes every value 3% off",
        _three_percent_off,
        True,
        "a tolerance (allclose with a loose rtol, a max-difference bound) lets a 3% error "
        "through; on this emulated device a right kernel gives torch's result bit for bit: "
        "compare with torch.equal",
    ),
    HiddenKernel(
        "writes the right values in memory order (cells scrambled on a transposed output)",
        _unless_contiguous(_memory_order),
        True,
        "every value is there, in the wrong cell (the first and the last cells are right): "
        "sorted values, a sum or a mean, one element cannot see a scramble; compare every cell",
    ),
    HiddenKernel(
        "swaps two of torch's values in a non-contiguous output, keeping every sum and mean",
        _unless_contiguous(_summary_blind_swap()),
        True,
        "two values are in each other's cells, yet its sum, mean and norm are torch's bit for "
        "bit (in float32 and float64, in any order): a summary of the output cannot see values "
        "in the wrong cells; compare every cell",
    ),
    HiddenKernel(
        "copies back all but the last row of a non-contiguous output",
        _unless_contiguous(_all_but_last_row),
        True,
        "one element or the first rows cannot see it: compare every element",
    ),
    HiddenKernel(
        "copies back every element of a non-contiguous output but one (the second)",
        _unless_contiguous(_all_but_one_element),
        True,
        "a comparison of part of the output (a row, a column, the first or last element, every "
        "other element) cannot see one lost element: compare every element",
    ),
    HiddenKernel(
        "rounds its results toward zero (the last bit wrong on about half the elements)",
        _round_toward_zero,
        True,
        "no tolerance sees a last-bit error: allclose (even with its default rtol=1e-5), "
        "isclose or assert_close, a max-difference bound all call it right, yet it is not "
        "torch's result. On this emulated device a right kernel gives torch's result bit for "
        "bit: compare with torch.equal",
    ),
    HiddenKernel(
        "writes NaN into a non-contiguous output",
        _unless_contiguous(_nan_garbage),
        True,
        "NaN compares False with everything, so a check like `(diff > tol).any()` is False "
        "for NaN garbage; torch.equal (or `not (diff <= tol).all()`) sees it",
    ),
    HiddenKernel(
        "swaps two of torch's values within one row of a non-contiguous output",
        _unless_contiguous(_summary_blind_swap(line=-1)),
        True,
        "two values of one row are in each other's cells, yet every row's sum and mean (sums "
        "along the last dim) and the whole sum are torch's bit for bit: a summary of each row "
        "cannot see values swapped within it; compare every cell",
    ),
    HiddenKernel(
        "swaps two of torch's values within one column of a non-contiguous output",
        _unless_contiguous(_summary_blind_swap(line=0)),
        True,
        "two values of one column are in each other's cells, yet every column's sum and mean "
        "(sums along dim 0) and the whole sum are torch's bit for bit: a summary of each column "
        "cannot see values swapped within it; compare every cell",
    ),
    HiddenKernel(
        "writes one value of a non-contiguous output one bit off, where no float32 sum sees it",
        _unless_contiguous(_one_bit_off_unsummed),
        True,
        "one value's last bit is wrong, yet every float32 sum and mean of the output, whole or "
        "along any dim (each row's, each column's), is torch's bit for bit: sums along every "
        "dim are still a summary, not every cell; compare every cell",
    ),
)


def check_kernel_test(breaks) -> Verdict:
    """06.kernel_test: the learner's test must tell each hidden kernel right from broken."""
    if not callable(breaks):
        return failed("give a function, e.g. def breaks(kernel): ...", type(breaks).__name__)
    for hidden in HIDDEN_KERNELS:
        runs: list[Run] = []
        try:
            got = breaks(_watched(hidden.kernel, runs))
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(
                f"on a hidden kernel that {hidden.does}, your test raised "
                f"{type(exc).__name__}: {exc}"
            )
        verdict = _truth(got)
        if verdict is None:
            return failed(
                f"your test returned {got!r}; return True (it breaks) or False (a tensor of "
                "many values, or a number? torch.equal gives a bool)",
                type(got).__name__,
                "bool",
            )
        got = verdict
        if got != hidden.breaks:
            return failed(_kernel_test_miss(hidden, got, runs), got, hidden.breaks)
    return passed(
        f"your test told all {len(HIDDEN_KERNELS)} hidden kernels apart: lost writes on every "
        "kind of non-contiguous output, an ignored offset or value, values 3% off or one bit off, "
        "a scramble, a swap no sum sees, a missing row or element and NaN garbage, and it never "
        "blamed a right kernel"
    )


def _truth(got: object) -> bool | None:
    """The yes or no a test returned: a bool, numpy's bool or a one-element bool tensor (what
    `(result != expected).any()` gives) all answer the question; anything else (a count, a
    tensor of many values) does not say which it means, so it is None."""
    if isinstance(got, bool | np.bool_):
        return bool(got)
    if isinstance(got, torch.Tensor) and got.dtype == torch.bool and got.numel() == 1:
        return bool(got)
    return None


def _watched(kernel, runs: list[Run]) -> Callable[[emps.KernelCall], None]:
    """The hidden kernel, noting each run (a new function: its name tells nothing)."""

    def hidden_kernel(call):
        run = Run.of(call)
        old, answer = call.output.cpu().clone(), _torch_answer(call)
        kernel(call)
        lost = answer is not None and torch.equal(call.output.cpu(), old)
        lost = lost and not answer.eq(old).any()
        runs.append(dataclasses.replace(run, lost=bool(lost)))

    return hidden_kernel


def _torch_answer(call: emps.KernelCall) -> torch.Tensor | None:
    """Torch's result of an in-place addcmul_/addcdiv_ call, from its inputs before the kernel
    runs (None for any other call)."""
    op = placeholder_lab.ADDC_FAMILIES.get(call.family)
    if op is None or not call.in_place or len(call.inputs) != 3 or len(call.arguments) != 1:
        return None
    old, t1, t2 = (t.cpu() for t in call.inputs)
    return op(old, t1, t2, value=call.arguments[0])


def _kernel_test_miss(hidden: HiddenKernel, got: bool, runs: list[Run]) -> str:
    said = "it breaks" if got else "it does not break"
    where = f"on a hidden kernel that {hidden.does}, your test said {said}"
    if not runs:
        return (
            f"{where} without running it: your test never ran the kernel it was given. A name "
            "or the function's identity says nothing about what a kernel does: run it "
            "(placeholder_lab.run_addcmul(kernel, output)) and compare"
        )
    needs = hidden.needs(runs)
    if needs is None and not got and any(r.lost for r in runs):
        return (
            f"{where}, yet it ran it on an output whose write it lost (every value old, none "
            "torch's): any comparison of the values sees that. Either your test never compares the "
            f"values ({COMPARE}), or it does not return True as soon as one output is wrong "
            "(a flag that the next output overwrites, all() instead of any(), a vote)"
        )
    return f"{where}: {needs or hidden.why}"


def _kernel_test_reference():
    def breaks(kernel):
        outputs = [
            *placeholder_lab.layouts(
                (4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset")
            ).values(),
            *placeholder_lab.layouts((2, 3, 4), ("permuted",)).values(),
        ]
        for output in outputs:
            result, expected, _ = placeholder_lab.run_addcmul(kernel, output, value=0.5)
            if not torch.equal(result, expected):
                return True
        return False

    return breaks


EVERY_LAYOUT = (  # (shape, layout names): what the reference's test tries
    ((4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset")),
    ((2, 3, 4), ("permuted",)),
)


def _kernel_test_variant(
    cases=EVERY_LAYOUT,
    value: float = 0.5,
    broken: Callable[..., object] = lambda result, expected, events, output: (
        not torch.equal(result, expected)
    ),
):
    """A learner's test: the kernel on `cases` ((shape, layout names), ...), judged by `broken`."""

    def breaks(kernel):
        for shape, names in cases:
            for output in layouts(shape, names).values():
                if broken(*run_addcmul(kernel, output, value=value), output):
                    return True
        return False

    return breaks


def _assert_close_fails(result, expected, events, output) -> bool:
    try:
        torch.testing.assert_close(result, expected)
    except AssertionError:
        return True
    return False


def _some_dim_sum_differs(result, expected, events, output) -> bool:
    """A learner's comparison of the sums along every dim (each row's, each column's...)."""
    return any(not torch.equal(result.sum(d), expected.sum(d)) for d in range(result.dim()))


def _last_output_decides():
    """A learner's loop whose flag each output overwrites: only the last output counts."""

    def breaks(kernel):
        broken = False
        for shape, names in EVERY_LAYOUT:
            for output in layouts(shape, names).values():
                result, expected, _ = run_addcmul(kernel, output)
                broken = not torch.equal(result, expected)
        return broken

    return breaks


def _every_output_must_differ():
    """A learner's all() where any() is meant: broken only if wrong on every output."""

    def breaks(kernel):
        wrong = [
            not torch.equal(*run_addcmul(kernel, output)[:2])
            for shape, names in EVERY_LAYOUT
            for output in layouts(shape, names).values()
        ]
        return all(wrong)

    return breaks


def _by_name():
    def breaks(kernel):
        return (
            kernel is emps.write_through_placeholder
            or kernel.__name__ == "write_through_placeholder"
        )

    return breaks


register(
    Exercise(
        name="06.kernel_test",
        prompt="Write `breaks(kernel) -> bool`: True when `out.addcmul_(t1, t2, value=v)` run "
        "with this kernel leaves anything but torch's result in `out`, for some output layout "
        "(contiguous, transposed, step-sliced, with a storage offset, permuted 3-d) or value. "
        "placeholder_lab.run_addcmul(kernel, output, value) runs one experiment.",
        checker=check_kernel_test,
        hint="Run the kernel on one output of every layout (placeholder_lab.layouts(shape, "
        "names) makes them; 'permuted' needs a 3-d shape) with a value other than 1, and "
        "compare each result with torch's bit for bit: torch.equal(result, expected).",
        reference=_kernel_test_reference,
        wrong_answers=(
            lambda: _kernel_test_variant((((4, 6), ("contiguous",)),)),
            _by_name,
            lambda: _kernel_test_variant((((4, 6), ("contiguous", "transposed")),)),
            lambda: _kernel_test_variant((((4, 6), ("contiguous", "transposed", "step-sliced")),)),
            lambda: _kernel_test_variant(
                (((4, 6), ("contiguous", "transposed", "step-sliced")), ((2, 3, 4), ("permuted",)))
            ),
            lambda: _kernel_test_variant(value=1.0),
            lambda: _kernel_test_variant(broken=lambda r, e, events, o: events[-1].lost_write),
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: not r.allclose(e, rtol=0.05)),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: (
                    not torch.equal(r.flatten().sort()[0], e.flatten().sort()[0])
                )
            ),
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: not torch.equal(r[0], e[0])),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: bool(((r - e).abs() > 0).any())
            ),
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: torch.equal(r, o)),
            lambda: lambda kernel: True,
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: not torch.allclose(r, e)),
            lambda: _kernel_test_variant(broken=_assert_close_fails),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not (r - e).abs().max() <= 1e-6
            ),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r[..., 0], e[..., 0])
            ),
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: not torch.equal(r[-1], e[-1])),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r.flatten()[::2], e.flatten()[::2])
            ),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r.flatten()[0], e.flatten()[0])
            ),
            lambda: _kernel_test_variant(value=0.0),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: r.shape != e.shape or r.dtype != e.dtype
            ),
            lambda: _kernel_test_variant(broken=lambda r, e, ev, o: ev[-1].temporaries > 0),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r.sum(), e.sum())
            ),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: (
                    not (torch.equal(r.mean(), e.mean()) and torch.equal(r.norm(), e.norm()))
                )
            ),
            lambda: _kernel_test_variant(
                (
                    ((4, 6), ("contiguous", "transposed", "storage-offset")),
                    ((2, 3, 4), ("permuted",)),
                )
            ),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r.sum(0), e.sum(0))
            ),
            lambda: _kernel_test_variant(
                broken=lambda r, e, ev, o: not torch.equal(r.double().mean(-1), e.double().mean(-1))
            ),
            lambda: _kernel_test_variant(broken=_some_dim_sum_differs),
            _last_output_decides,
            _every_output_must_differ,
        ),
    )
)
