"""Torch as the oracle for layout rules: random layouts, smallest first, and every mismatch.

Notebook 04's learner writes the core of the layout calculator (an element's address, torch's
contiguity rule, the layout after `.T`, a step slice and a permute). A few hand-picked examples
would let a half-right rule through, so each checker draws a few hundred random layouts from a
seeded generator (never the learner's global RNG), asks real torch for every answer, and reports
the *smallest* layout where the learner's function disagrees: the easiest case to redo by hand.
Layouts of every kind are drawn: contiguous, storage-offset, permuted, step-sliced, size-1 dims
with odd strides, empty tensors, expanded (stride 0) and arbitrary strides, with 0 to 5 dims (so
a rule written for three named dims fails); the address rule also meets a few layouts whose
addresses pass 2^31, too large to allocate, answered by torch on its meta device. Each is a
`course.layout.calculator.Layout`, the one layout type of the course. The case lists never
change, so each is built once per process.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from course.exercises import is_scaffold
from course.layout.calculator import Layout
from course.layout.view_or_copy import contiguous_strides

# the kinds of random layout drawn; the first four are course.layout.named's names
KINDS = (
    "contiguous",
    "storage-offset",
    "permuted",
    "step-sliced",
    "size-1",
    "empty",
    "expanded",
    "any",
)
MAX_HIDDEN_DIMS = 5  # more than the three dims a learner might name one by one
SCALAR_KINDS = ("contiguous", "storage-offset")  # all a 0-dim layout can be


def size_key(layout: Layout) -> tuple[int, ...]:
    """What "smallest" means: fewer dims, then non-empty before empty (an empty tensor is the
    easiest case to get right by accident and the hardest to picture), then fewer elements,
    smaller strides and offset."""
    return (len(layout.shape), not layout.numel, layout.numel, sum(layout.stride), layout.offset)


def _sizes(rng: random.Random, ndim: int, empty: bool = False) -> list[int]:
    sizes = [rng.choice((1, 2, 2, 3, 3, 4)) for _ in range(ndim)]
    if empty:
        sizes[rng.randrange(ndim)] = 0
    return sizes


def random_layout(rng: random.Random, kind: str, ndim: int) -> Layout:
    """One random layout of the given kind (see KINDS) with `ndim` dims (0 dims: SCALAR_KINDS)."""
    shape = _sizes(rng, ndim, empty=kind == "empty")
    stride = list(contiguous_strides(tuple(shape)))
    offset = rng.randint(1, 6) if kind in ("storage-offset", "any") else 0
    if kind == "permuted":
        order = rng.sample(range(ndim), ndim)
        shape, stride = [shape[d] for d in order], [stride[d] for d in order]
    elif kind == "step-sliced":
        dim = rng.randrange(ndim)  # every other element of a twice-as-long dim
        wide = tuple(2 * s if d == dim else s for d, s in enumerate(shape))
        stride = list(contiguous_strides(wide))
        stride[dim] *= 2
    elif kind in ("size-1", "empty"):
        stride = [rng.randint(1, 9) if s <= 1 else st for s, st in zip(shape, stride, strict=True)]
    elif kind == "expanded":
        stride[rng.randrange(ndim)] = 0
    elif kind == "any":
        stride = [rng.randint(0, 12) for _ in range(ndim)]
    return Layout.strided(tuple(shape), tuple(stride), offset)


def random_layouts(
    count: int = 300, seed: int = 0, ndims: tuple[int, int] = (1, MAX_HIDDEN_DIMS), kinds=KINDS
) -> list[Layout]:
    """`count` distinct random layouts (a private generator: the global RNG is untouched)."""
    rng = random.Random(seed)
    found: dict[Layout, None] = {}
    for _ in range(count * 4):
        ndim = rng.randint(*ndims)
        kind = rng.choice(kinds if ndim else SCALAR_KINDS)
        found.setdefault(random_layout(rng, kind, ndim))
        if len(found) == count:
            break
    return sorted(found, key=size_key)


@dataclass(frozen=True)
class Case:
    """One hidden variant: the arguments the learner's function gets, and torch's answer."""

    layout: Layout
    args: tuple
    expected: object
    label: str  # the arguments in words, for messages


@dataclass(frozen=True)
class Mismatch:
    """A case where a learner's function disagreed with torch."""

    case: Case
    yours: object

    def __str__(self) -> str:
        return f"on {self.case.label}: yours {self.yours}, torch {self.case.expected}"

    @property
    def raised(self) -> bool:
        """Whether the learner's function raised on this case (`yours` is then the error)."""
        return isinstance(self.yours, Raised)


class Raised(str):
    """What a learner's function raised, as text: "raised IndexError: ..."."""


# Layouts whose last element lies past 2^31 and 2^32 (a float32 storage of 8 or 16 GiB has such
# slots): torch keeps offsets, strides and addresses in 64 bits, so a rule that wraps, masks or
# clamps at 32 bits (a C int, numpy int32) is wrong there. 0 to 3 dims: a miss here is not read as
# "a rule that names three dims".
FAR_LAYOUTS = (
    Layout.strided((), (), 2**32 + 5),
    Layout.strided((3,), (2**31 + 1,), 7),
    Layout.strided((2, 3), (2**32, 1), 2**31 - 2),
    Layout.strided((2, 2, 3), (6, 3, 2**30 + 3), 11),
)


@functools.cache
def address_cases(seed: int = 1) -> tuple[Case, ...]:
    """address(index, stride, offset): one random element of each non-empty layout (0-5 dims),
    and the last element of each of FAR_LAYOUTS."""
    rng, cases = random.Random(seed), []
    for layout in random_layouts(seed=seed, ndims=(0, MAX_HIDDEN_DIMS)):
        if not layout.numel:
            continue
        index = tuple(rng.randrange(size) for size in layout.shape)
        slot = layout.tensor()[index].item()  # the value *is* the address (storage = arange)
        cases.append(_address_case(layout, index, slot))
    for layout in FAR_LAYOUTS:
        index = tuple(size - 1 for size in layout.shape)
        cases.append(_address_case(layout, index, far_address(layout, index)))
    return tuple(cases)


def _address_case(layout: Layout, index: tuple[int, ...], slot: int) -> Case:
    label = f"index {index} of a tensor with {layout}"
    return Case(layout, (index, layout.stride, layout.offset), slot, label)


def far_address(layout: Layout, index: tuple[int, ...]) -> int:
    """Torch's address of an element of a layout too large to allocate: on the meta device a
    tensor has shape, strides and a storage offset but no memory, and indexing it gives the
    element's view, whose storage offset is the address."""
    storage = torch.empty(layout.storage_size, device="meta")
    return storage.as_strided(layout.shape, layout.stride, layout.offset)[index].storage_offset()


@functools.cache
def contiguity_cases(seed: int = 2) -> tuple[Case, ...]:
    """is_contiguous(shape, stride), as torch's Tensor.is_contiguous() answers it (0-5 dims)."""
    return tuple(
        Case(layout, (layout.shape, layout.stride), layout.tensor().is_contiguous(), str(layout))
        for layout in random_layouts(seed=seed, ndims=(0, MAX_HIDDEN_DIMS))
    )


@functools.cache
def transpose_cases(seed: int = 3) -> tuple[Case, ...]:
    """.T of 2-d layouts (torch deprecates .T on other ranks): (shape, stride, offset) after."""
    layouts = random_layouts(count=120, seed=seed, ndims=(2, 2))
    return tuple(
        _layout_case(v, (v.shape, v.stride, v.offset), v.tensor().T, str(v)) for v in layouts
    )


@functools.cache
def step_slice_cases(seed: int = 4) -> tuple[Case, ...]:
    """x[..., start:stop:step] on one dim, with 0 <= start <= stop <= size and step >= 1.

    Half of them slice a dim made 5 to 9 long (same strides), so that start, stop and step
    all change how many elements stay."""
    rng, cases = random.Random(seed), []
    for drawn in random_layouts(count=200, seed=seed):
        dim = rng.randrange(len(drawn.shape))
        layout = drawn
        if rng.random() < 0.5:
            shape = tuple(rng.randint(5, 9) if d == dim else n for d, n in enumerate(drawn.shape))
            layout = Layout.strided(shape, drawn.stride, drawn.offset)
        size = layout.shape[dim]
        start = rng.randint(0, size)
        stop, step = rng.randint(start, size), rng.randint(1, 4)
        index = (slice(None),) * dim + (slice(start, stop, step),)
        label = f"{layout}, sliced [{start}:{stop}:{step}] along dim {dim}"
        args = (layout.shape, layout.stride, layout.offset, dim, start, stop, step)
        cases.append(_layout_case(layout, args, layout.tensor()[index], label))
    return tuple(cases)


@functools.cache
def permute_cases(seed: int = 5) -> tuple[Case, ...]:
    """x.permute(dims) for a random order of the dims (2-5 dims)."""
    rng, cases = random.Random(seed), []
    for layout in random_layouts(count=150, seed=seed, ndims=(2, MAX_HIDDEN_DIMS)):
        dims = tuple(rng.sample(range(len(layout.shape)), len(layout.shape)))
        args = (layout.shape, layout.stride, layout.offset, dims)
        cases.append(
            _layout_case(layout, args, layout.tensor().permute(dims), f"{layout}, permute{dims}")
        )
    return tuple(cases)


def _layout_case(layout: Layout, args: tuple, result: torch.Tensor, label: str) -> Case:
    after = Layout.of(result)
    return Case(layout, args, (after.shape, after.stride, after.offset), label)


def as_ints(value: object) -> object:
    """A learner's answer with lists, torch.Size and numpy ints turned into plain tuples/ints.

    Anything that is not a (nested) sequence of whole numbers comes back unchanged, so the
    comparison fails and the message shows what was returned.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) or (hasattr(value, "__index__") and not hasattr(value, "shape")):
        return int(value.__index__()) if not isinstance(value, int) else value
    if isinstance(value, (tuple, list, torch.Size)):
        return tuple(as_ints(v) for v in value)
    return value


def first_mismatch(cases: Sequence[Case], fn: Callable[..., object]) -> Mismatch | None:
    """Run `fn` on the cases, smallest first; the first disagreement, or None if all agree.

    A learner's exception on a case counts as a disagreement (shown as the error), except the
    learner copy's scaffold `NotImplementedError("your code here")`, which means "not attempted
    yet" and is passed on.
    """
    return next(_disagreements(cases, fn), None)


def mismatches(cases: Sequence[Case], fn: Callable[..., object]) -> list[Mismatch]:
    """Every disagreement, smallest first: a checker reads the pattern in them (only layouts
    with an offset, only 4 dims or more, only empty tensors) to name the cause."""
    return list(_disagreements(cases, fn))


def _disagreements(cases: Sequence[Case], fn: Callable[..., object]) -> Iterator[Mismatch]:
    for case in sorted(cases, key=lambda c: size_key(c.layout)):
        try:
            yours = as_ints(fn(*case.args))
        except Exception as exc:  # the learner's code: any error is feedback, not a crash
            if is_scaffold(exc):
                raise  # "not attempted yet": the checker says so, not a mismatch
            yield Mismatch(case, Raised(f"raised {type(exc).__name__}: {exc}"))
            continue
        if type(yours) is not type(case.expected) or yours != case.expected:
            yield Mismatch(case, yours)
