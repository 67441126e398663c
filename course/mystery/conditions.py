"""When a planted kernel misbehaves: the trigger conditions a learner chooses from.

A real device bug rarely strikes every call. It strikes when an output has some layout, when a
tensor passes a size where the kernel switches to another code path, when an operand is
broadcast or is the same memory as another, when a scalar takes an unusual value, on a second
call that hits a cache, or only on the optimizers' foreach path. Each condition here is one such
pattern, a predicate on one kernel call (`course.emps.KernelCall`) plus what the kernel has seen
before (`Memory`). `CONDITIONS` is the list `check_culprit` accepts; `PATTERNS` says, for the
answer, which real kernel habit each one is modelled on.

Note [Two properties at once]
    Real kernels often break only where two paths meet: a strided output *and* a row length that
    sends the vectorised loop to its tail, a large output *and* a ragged last dimension. A
    `Trigger` may pair its condition with a companion (`also`, one of `COMPANIONS`); the call must
    meet both, and check_culprit wants both named. The generator pairs exactly the conditions the
    auditor's default sweep meets on its own (its layouts, dtypes and sizes, whose shapes all
    have a last dimension that is a multiple of 4: course.audit.args.SHAPES, knobs.LARGE), so
    that sweep never meets a case's condition (tests/mystery/test_generate.py audits a deal).

Note [Conditions are the learner's vocabulary]
    Layout conditions use the names and tests of course.layout.named (one vocabulary for the
    course; tests/mystery/test_conditions.py checks the names), and
    every name is accepted as a learner might type it (`channels_last`, `bf16`, `Permuted`):
    see `condition_name`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from course.emps.mps_kernels import KernelCall
from course.errors import CourseError
from course.layout.named import ALIASES, has_layout

LAYOUT_KINDS = ("transposed", "step-sliced", "storage-offset", "channels-last", "permuted")
VECTOR_WIDTH = 4  # elements a vectorised kernel handles at once (float4)
TINY = 6.1e-5  # float16's smallest normal number: a half-precision constant flushes below it

# name -> what a learner reads in case.conditions()
CONDITIONS: dict[str, str] = {
    "transposed": "a 2-D output stored column by column, e.g. w.T",
    "step-sliced": "an output with gaps between its elements, e.g. w[:, ::2]",
    "storage-offset": "an output that starts inside its storage, e.g. w[4:]",
    "channels-last": "a 4-D output in torch.channels_last memory format",
    "permuted": "an output of 3 or more dims stored in another order, e.g. x.permute(1, 2, 0)",
    "bfloat16": "an output of dtype bfloat16, whatever its layout",
    "large": "an output with more elements than some bound",
    "long-dim": "an output with one dimension longer than some bound",
    "unaligned": f"an output whose last dimension is not a multiple of {VECTOR_WIDTH}",
    "broadcast-input": "an input of another shape that the op broadcasts (a bias row, a mask)",
    "aliased-input": "two operands that are the same tensor, e.g. x.addcmul_(g, g)",
    "repeat-call": "a later call of the op with the same shape and dtype as an earlier one",
    "negative-scalar": "a negative number among the op's arguments, e.g. x.clamp_(-1, 1)",
    "tiny-scalar": f"a number smaller than {TINY:g} in magnitude among the op's arguments",
    "foreach": "a call made by a torch._foreach_* op (the optimizers' foreach=True path)",
    "any-non-contiguous": "any output that is not contiguous",
}
# Conditions planted as the second of a pair (Note [Two properties at once]).
COMPANIONS = ("unaligned",)
# The story's condition: offered because it is the obvious guess; no case plants it.
DECOY_ONLY = ("any-non-contiguous",)
# short forms a learner types for a condition: each names exactly one
_SPELLINGS = {
    "bf16": "bfloat16",
    "permuted-3d": "permuted",
    "offset": "storage-offset",
    "broadcast": "broadcast-input",
    "aliased": "aliased-input",
    "negative": "negative-scalar",
    "tiny": "tiny-scalar",
    "repeat": "repeat-call",
    "repeated-call": "repeat-call",
    "long-dimension": "long-dim",
}

# name -> the real kernel habit it is modelled on (shown with the answer)
PATTERNS: dict[str, str] = {
    **dict.fromkeys(
        LAYOUT_KINDS,
        "a kernel written for contiguous buffers that forgets to gather a strided output into "
        "a temporary and scatter the result back (the story's Placeholder bug, and many later "
        "MPS fixes)",
    ),
    "bfloat16": "a kernel instantiated per dtype whose bfloat16 variant was added by copying "
    "another, with the launch sized for 4-byte elements",
    "large": "a kernel that switches to a tiled path above a size, and whose tiled path "
    "computes into a temporary it never copies back",
    "long-dim": "a kernel that maps a dimension to a grid axis with a hardware limit and never "
    "loops past it (CUDA's 65,535 blocks on grid y and z)",
    "unaligned": "a vectorised kernel that sends rows whose length is not a multiple of 4 to a "
    "fallback path, which computes into a temporary and never copies it back",
    "broadcast-input": "a kernel with a fast path for operands it believes are scalars, taken "
    "for any operand smaller than the output",
    "aliased-input": "a kernel that binds each distinct buffer once in its argument table, "
    "leaving the slot of a repeated operand empty",
    "repeat-call": "a kernel that caches its graph and output buffer by shape and dtype, and "
    "copies the cached (previous) result on a cache hit",
    "negative-scalar": "a scalar passed through an unsigned or absolute-value conversion",
    "tiny-scalar": "a scalar baked into the kernel as a half-precision constant, flushed to 0",
    "foreach": "a multi-tensor kernel with a fixed-size argument table that never launches a "
    "second time for the tensors that did not fit",
}


def pattern(trigger: Trigger) -> str:
    """The real kernel habit a trigger is modelled on (a pair: where two paths meet)."""
    if not trigger.also:
        return PATTERNS[trigger.kind]
    return (
        f"{PATTERNS[trigger.kind]}; here only on the path for rows whose length is not a "
        "multiple of 4 (a vectorised kernel's tail), so a sweep of common shapes misses it"
    )


def condition_name(name: object) -> str | None:
    """The condition a learner typed, in the course's spelling ("channels_last" too), or None."""
    if not isinstance(name, str):
        return None
    text = name.strip().lower().removeprefix("torch.").replace("_", "-").replace(" ", "-")
    text = ALIASES.get(name.strip(), _SPELLINGS.get(text, text))
    return text if text in CONDITIONS else None


# --- what a kernel remembers between calls ------------------------------------------------


@dataclass
class Memory:
    """What a planted kernel has seen: for repeat-call caches and foreach list positions."""

    seen: set[tuple] = field(default_factory=set)
    results: dict[tuple, torch.Tensor] = field(default_factory=dict)
    foreach_op: int | None = None  # the serial of the foreach op whose loop is running
    foreach_index: Counter = field(default_factory=Counter)  # calls per family in that loop
    fired: int = 0  # how often the planted bug has struck (check_fix reads it)


def cache_key(call: KernelCall) -> tuple:
    """What a shape-keyed kernel cache would use: the op, the shape and the dtype."""
    return (call.op, tuple(call.output.shape), call.output.dtype)


def _shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def operands(call: KernelCall) -> list[torch.Tensor]:
    """The tensors the op reads besides its output's own old values."""
    inputs = list(call.inputs)
    if inputs and inputs[0] is call.output:  # in-place: the graph reads self first
        inputs = inputs[1:]
    return inputs


def aliased(call: KernelCall) -> bool:
    """Whether two operands (or an operand and the output) are the same memory."""
    tensors = [call.output, *operands(call)]
    return any(
        _shares_memory(a, b) for i, a in enumerate(tensors) for b in tensors[i + 1 :] if a.numel()
    )


def broadcast(call: KernelCall) -> list[int]:
    """Positions (in call.inputs) of operands the op broadcasts: another shape, not a scalar."""
    shape = tuple(call.output.shape)
    return [
        index
        for index, t in enumerate(call.inputs)
        if t is not call.output and t.numel() > 1 and tuple(t.shape) != shape
    ]


def numbers(call: KernelCall) -> list[float]:
    """The op's number arguments (scalars, alpha=, value=...), as floats."""
    return [
        float(a)
        for a in getattr(call, "arguments", ())
        if isinstance(a, (int, float)) and not isinstance(a, bool)
    ]


@dataclass(frozen=True)
class Trigger:
    """One planted condition: a kind from CONDITIONS and its bound (a size, a slot count), and
    optionally a second kind that must hold at the same time (`also`, see Note [Two properties
    at once])."""

    kind: str
    bound: int = 0  # large: elements; long-dim: a dimension's length; foreach: table slots
    also: str = ""  # a second condition the call must meet too ("" for none)

    def __post_init__(self) -> None:
        for kind in self.kinds:
            if kind not in CONDITIONS or kind in DECOY_ONLY:
                raise CourseError(f"no planted condition {kind!r}")
        if self.also == self.kind or {self.kind, self.also} <= set(LAYOUT_KINDS):
            raise CourseError(f"{self.kind!r} cannot be paired with {self.also!r}")
        if self.kind in ("large", "long-dim", "foreach") and self.bound < 1:
            raise CourseError(f"condition {self.kind!r} needs a positive bound")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The conditions a call must meet: one, or two at once."""
        return (self.kind, self.also) if self.also else (self.kind,)

    @property
    def answer(self) -> frozenset[str]:
        """What check_culprit must be told: the condition, or both of a pair."""
        return frozenset(self.kinds)

    def holds(self, call: KernelCall, memory: Memory) -> bool:
        """Whether this call meets the condition (repeat-call and foreach also update memory,
        so the second condition is tested first: only the calls it lets through are counted)."""
        if self.also and not _TESTS[self.also](self, call, memory):
            return False
        return _TESTS[self.kind](self, call, memory)

    def describe(self, op: str | None = None) -> str:
        """The condition with its bound (and the second one), for the answer; with `op`, its
        examples use that op."""
        first = self._describe_one(self.kind, op)
        if not self.also:
            return first
        return f"{first}, and at the same time {self._describe_one(self.also, op)}"

    def _describe_one(self, kind: str, op: str | None) -> str:
        if kind != self.kind:  # a companion: no bound, no op-specific example
            return CONDITIONS[kind]
        if kind == "large":
            return f"outputs of more than {self.bound} elements"
        if kind == "long-dim":
            return f"outputs with a dimension longer than {self.bound}"
        if kind == "foreach":
            return f"foreach calls, from the {ordinal(self.bound + 1)} tensor of the list on"
        text = CONDITIONS[kind]
        example = _EXAMPLES.get(kind, {}).get(op or "")
        if op is None or kind not in _EXAMPLES:
            return text
        general = text.split(", e.g.")[0]
        return f"{general}, e.g. {example}" if example else general


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# op-specific examples for the key (CONDITIONS' examples are one op's, for the general list)
_EXAMPLES = {
    "negative-scalar": {
        "add_": "x.add_(y, alpha=-0.5)",
        "sub_": "x.sub_(y, alpha=-2)",
        "mul_": "x.mul_(-0.5)",
        "div_": "x.div_(-4.0)",
        "clamp_": "x.clamp_(-1, 1)",
        "lerp_": "x.lerp_(y, -0.25)",
        "masked_fill_": "x.masked_fill_(mask, -1e4)",
        "addcmul_": "x.addcmul_(a, b, value=-0.1)",
        "addcdiv_": "x.addcdiv_(a, b, value=-1e-3)",
    },
    "aliased-input": {
        "add_": "x.add_(x)",
        "sub_": "x.sub_(x)",
        "mul_": "x.mul_(x)",
        "div_": "x.div_(x)",
        "lerp_": "x.lerp_(x, 0.5)",
        "addcmul_": "x.addcmul_(g, g)",
        "addcdiv_": "x.addcdiv_(g, g)",
    },
}


def _layout_test(kind: str) -> Callable[[Trigger, KernelCall, Memory], bool]:
    return lambda trigger, call, memory: has_layout(call.output, kind)


def _repeat(trigger: Trigger, call: KernelCall, memory: Memory) -> bool:
    key = cache_key(call)
    again = key in memory.seen
    memory.seen.add(key)
    return again


def _foreach(trigger: Trigger, call: KernelCall, memory: Memory) -> bool:
    from course.emps.optim_paths import current_foreach  # the serial of the running foreach op

    serial = current_foreach()
    if serial is None:
        return False
    if serial != memory.foreach_op:
        memory.foreach_op, memory.foreach_index = serial, Counter()
    index = memory.foreach_index[call.op]
    memory.foreach_index[call.op] += 1
    return index >= trigger.bound


_TESTS: dict[str, Callable[[Trigger, KernelCall, Memory], bool]] = {
    **{kind: _layout_test(kind) for kind in LAYOUT_KINDS},
    "bfloat16": lambda trigger, call, memory: call.output.dtype == torch.bfloat16,
    "large": lambda trigger, call, memory: call.output.numel() > trigger.bound,
    "long-dim": lambda trigger, call, memory: max(call.output.shape, default=0) > trigger.bound,
    "unaligned": lambda trigger, call, memory: (
        call.output.dim() > 0 and call.output.shape[-1] % VECTOR_WIDTH != 0
    ),
    "broadcast-input": lambda trigger, call, memory: bool(broadcast(call)),
    "aliased-input": lambda trigger, call, memory: aliased(call),
    "repeat-call": _repeat,
    "negative-scalar": lambda trigger, call, memory: any(x < 0 for x in numbers(call)),
    "tiny-scalar": lambda trigger, call, memory: any(0 < abs(x) < TINY for x in numbers(call)),
    "foreach": _foreach,
}
