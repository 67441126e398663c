"""The kernels 06.kernel_test's checker hands the learner's test, each wrong in a way one kind of
careless test cannot see: only on some layouts, with an offset or a value other than 1, 3% or
one bit off, scrambled, two values swapped where no sum sees it, a row or an element short, NaN.

The swaps and the one-bit error are found for each output, not hoped for: a change is kept only
when every summary a test might compare (sums, means, norms; along a row or a column) is bit for
bit what it was, read back with the output's own strides as the learner's test reads it.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from course import emps
from course.layout.named import is_dense

Kernel = Callable[[emps.KernelCall], None]
SWAP_TRIES = 400  # candidate changes: on outputs of 15 elements or more, one was found within 70


def copy_back(call: emps.KernelCall, write: Callable[[torch.Tensor], object]) -> None:
    """Compute into a contiguous temporary, then `write(temporary)` into the output."""
    temporary = torch.empty(call.output.shape, dtype=call.output.dtype)
    call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
    write(temporary)


def column_major(out: torch.Tensor) -> bool:
    """A matrix stored column by column (w.t(), sliced or not): its rows are its fastest dim."""
    return out.dim() == 2 and not out.is_contiguous() and out.stride(0) == 1 and out.shape[0] > 1


def only_if(condition: Callable[[torch.Tensor], bool]) -> Kernel:
    """The working pattern where `condition(output)` holds, 2.2.1's kernel elsewhere."""

    def kernel(call):
        right = condition(call.output)
        (emps.gather_compute_scatter if right else emps.write_through_placeholder)(call)

    return kernel


def unless_contiguous(kernel: Kernel) -> Kernel:
    """`kernel` for a non-contiguous output, the working pattern for a contiguous one."""

    def chosen(call):
        (emps.gather_compute_scatter if call.output.is_contiguous() else kernel)(call)

    return chosen


def altered(alter: Callable[[torch.Tensor, torch.Tensor], None]) -> Kernel:
    """Torch's values, changed in place by `alter(temporary, output)` before they are copied
    back to every cell of a non-contiguous output."""

    def kernel(call):
        copy_back(call, lambda t: (alter(t, call.output), call.output.copy_(t)))

    return unless_contiguous(kernel)


def copy_back_unless_contiguous(call):
    """A contiguous temporary always, copied back only to a non-contiguous output: the author
    took "a contiguous output needs no copy" for "needs no copy back", so a contiguous output
    loses its write."""
    copy_back(call, lambda t: None if call.output.is_contiguous() else call.output.copy_(t))


def from_storage_start(call):
    out = call.output
    copy_back(call, lambda t: out.as_strided(out.shape, out.stride(), 0).copy_(t))


def value_one(call):
    temporary = torch.empty(call.output.shape, dtype=call.output.dtype)
    call.graph(temporary, [t.contiguous() for t in call.inputs], scalar=lambda v: 1.0)
    call.output.copy_(temporary)


def three_percent_off(call):
    emps.gather_compute_scatter(call)
    call.output.mul_(1.03)


def memory_order(call):
    out = call.output
    if not is_dense(out):
        emps.gather_compute_scatter(call)
        return
    flat = out.as_strided((out.numel(),), (1,), out.storage_offset())
    copy_back(call, lambda t: flat.copy_(t.flatten()))


def all_but_last_row(call):
    copy_back(call, lambda t: call.output[:-1].copy_(t[:-1]))


def all_but_one_element(call):
    out = call.output
    second = torch.unravel_index(torch.tensor(min(1, out.numel() - 1)), out.shape)
    cell = tuple(int(i) for i in second)
    old = out[cell].clone()
    copy_back(call, lambda t: (out.copy_(t), out[cell].copy_(old)))


def round_toward_zero(call):
    """Torch's values rounded toward zero instead of to the nearest float: 1 ulp off on about
    half the elements (the exact sum, in float64, is rounded once, the wrong way)."""
    out, t1, t2 = (t.double() for t in call.inputs)  # read before the output is written
    exact = out + call.arguments[0] * t1 * t2
    nearest = exact.to(call.output.dtype)
    away = nearest.double().abs() > exact.abs()
    call.output.copy_(
        torch.where(away, torch.nextafter(nearest, torch.zeros_like(nearest)), nearest)
    )


def nan_garbage(call):
    call.output.fill_(float("nan"))


def summary_blind_swap(line: int | None = None) -> Kernel:
    """Torch's values with two of them swapped, where no summary sees it (with `line`, two values
    of one line along that dim, so that the sums along it cannot see it either). Where no such
    pair exists (as on some outputs of 8 elements), the closest two values are swapped anyway."""

    def alter(values: torch.Tensor, out: torch.Tensor) -> None:
        flat = values.view(-1)
        near = ([] if line is None else _line_pairs(values, line)) + _near_pairs(values)
        pairs = [p for p in near if flat[p[0]] != flat[p[1]]] or [(0, 0)]
        i, j = _unseen(values, out, pairs, _swapped, lambda x: _summaries(x, line))
        flat[[i, j]] = flat[[j, i]]

    return altered(alter)


def one_bit_off_unsummed() -> Kernel:
    """Torch's values with one of them a bit off: one whose change no float32 sum sees (the
    smallest values first: their last bit is the likeliest to vanish in a sum's rounding)."""

    def alter(values: torch.Tensor, out: torch.Tensor) -> None:
        flat = values.view(-1)
        cells = flat.abs().argsort().tolist()
        cell = _unseen(values, out, cells, _one_bit_off, _sums_in_dtype)
        flat[cell] = _one_bit_away(flat[cell])

    return altered(alter)


def _swapped(flat: torch.Tensor, pair: tuple[int, int]) -> None:
    flat[list(pair)] = flat[list(pair[::-1])]


def _one_bit_off(flat: torch.Tensor, cell: int) -> None:
    flat[cell] = _one_bit_away(flat[cell])


def _one_bit_away(value: torch.Tensor) -> torch.Tensor:
    """The next float away from zero: the last bit of `value` changed."""
    return torch.nextafter(value, value * 2 if value != 0 else torch.ones_like(value))


def _unseen(values, out, candidates: list, change, summaries):
    """The first of `candidates` whose `change(flat values, candidate)` leaves every one of
    `summaries` bit for bit as it was, taken on a copy with the output's own strides and offset
    (what the learner reads back); the first candidate where none does."""
    spans = ((size - 1) * step for size, step in zip(values.shape, out.stride(), strict=True))
    like = torch.zeros(out.storage_offset() + sum(spans) + 1, dtype=values.dtype)
    like = like.as_strided(values.shape, out.stride(), out.storage_offset())
    like.copy_(values)
    before = summaries(like)
    for candidate in candidates[:SWAP_TRIES]:
        changed = values.reshape(-1).clone()
        change(changed, candidate)
        like.copy_(changed.view(values.shape))
        if all(map(torch.equal, summaries(like), before)):
            return candidate
    return candidates[0]


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
    found = []
    for y in (x, x.contiguous()):
        found += [y.sum(), y.mean(), y.abs().sum(), y.square().sum(), torch.linalg.vector_norm(y)]
        found += [y.double().sum(), y.double().mean()]
        found += [f(d) for d in along for f in (y.sum, y.mean, y.double().sum, y.double().mean)]
    return found


def _sums_in_dtype(x: torch.Tensor) -> list[torch.Tensor]:
    """Sums and means in the tensor's own dtype, whole and along each dim, in memory order and
    in logical order (a float64 sum of float32 values is exact: it would see one bit)."""
    dims = range(x.dim()) if x.dim() > 1 else ()
    found = []
    for y in (x, x.contiguous()):
        found += [y.sum(), y.mean(), *(f(d) for d in dims for f in (y.sum, y.mean))]
    return found
