"""The auditor's knobs: the sizes, scalars and inputs a hypothesis needs, when the default won't do.

The default sweep writes tensors of 1,536 elements (`course.audit.args.SHAPES`), passes each op
fresh inputs of the output's own shape, and scalars that are not the schema's defaults. A kernel
that breaks only above a size, on a long or odd-sized dimension, on an operand it broadcasts, on
an operand that is the output itself, or on a particular scalar passes that sweep. `Knobs`
changes exactly those, so a hypothesis ("relu_ breaks on large outputs") becomes one audit:

    audit(backend=case.backend, ops="relu_", shape=(300, 70))      # sizes
    audit(backend=case.backend, ops="clamp_", scalars=(-1.0, 1.0))  # scalar values
    audit(backend=case.backend, ops="mul_", inputs="broadcast")     # one row, broadcast by the op
    audit(backend=case.backend, ops="addcmul_", inputs="aliased")   # the output as an operand

`shape` is the shape of every tensor the op writes and reads (the values repeat the default
sweep's, so every layout sees the same numbers); layouts of another rank (`permuted` is 3-D,
`channels-last` 4-D) are left out unless the shape has their rank. `scalars` replace the number
arguments in order, cycling. `inputs="broadcast"` passes each tensor operand as one row, which
the op broadcasts; `inputs="aliased"` passes the output itself wherever an operand has its
shape and dtype. Random ops take `shape` only (their parameters define the distribution judged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from course.audit.args import SELF, SHAPES, AuditOp, Call
from course.errors import CourseError, require_shape
from course.layout.named import DIMS

INPUTS = {
    "fresh": "inputs of the output's shape, made fresh (the default)",
    "broadcast": "each tensor operand is one row, which the op broadcasts to the output",
    "aliased": "the output itself is passed as every operand of its shape and dtype",
}
# The default sweep's size above the usual thresholds: 71,680 elements, past a 64K-element
# cache or grid limit, a 4,096- or 16,384-element vectorised path, and 448 > 256 columns; its
# random draws also test distributions 7 times finer (course.audit.distributions.detectable).
LARGE = (160, 448)
MAX_AUDIT_ELEMENTS = 1 << 22  # 4M per tensor: large enough for a size bug, bounded for a typo
MAX_SCALARS = 8


@dataclass(frozen=True)
class Knobs:
    """What a learner changes about the audit's calls (see the module docstring)."""

    shape: tuple[int, ...] | None = None
    scalars: tuple[float, ...] | None = None
    inputs: str = "fresh"

    @classmethod
    def of(cls, shape: object = None, scalars: object = None, inputs: object = "fresh") -> Knobs:
        """Knobs from a learner's values, each checked with a message naming what is allowed."""
        if shape is not None:
            shape = require_shape("shape", shape, max_elements=MAX_AUDIT_ELEMENTS)
            if not shape:
                raise CourseError("shape=(): give at least one dimension, e.g. shape=(300, 70)")
        if scalars is not None:
            scalars = _numbers(scalars)
        if inputs not in INPUTS:
            raise CourseError(
                f"inputs={inputs!r} is not allowed; choose one of: {', '.join(INPUTS)}"
            )
        return cls(shape, scalars, inputs)

    @property
    def default(self) -> bool:
        """Whether nothing is changed (the default sweep)."""
        return self == Knobs()

    def shape_for(self, layout: str) -> tuple[int, ...] | None:
        """The shape a layout writes: the knob's (None if it has another rank than the layout;
        and for the default sweep's `large` layout, which a shape of one's own replaces)."""
        if layout == "large":
            return LARGE if self.shape is None else None
        if self.shape is None:
            return SHAPES[DIMS.get(layout, 2)]
        rank = DIMS.get(layout)
        return None if rank is not None and rank != len(self.shape) else self.shape

    def apply(self, op: AuditOp, call: Call) -> Call:
        """A call built (with this knobs' scalars: see `build_call`), given its sizes and inputs."""
        if self.shape is not None:
            call = call.map_tensors(lambda t: tiled(t, self.shape), self_too=True)
        if op.kind == "pointwise" and self.inputs == "aliased":
            call = _aliased(call)
        if op.kind != "pointwise":  # random ops take `shape` only: their operands define the law
            return replace(call, knobs=replace(self, inputs="fresh"))
        return replace(call, knobs=self)

    def flags(self) -> str:
        """The same knobs as command-line flags (for a reproduction line)."""
        parts = []
        if self.shape is not None:
            parts.append(f"--shape {','.join(map(str, self.shape))}")
        parts += [f"--scalar {value:g}" for value in self.scalars or ()]
        if self.inputs != "fresh":
            parts.append(f"--inputs {self.inputs}")
        return " ".join(parts)


def broadcast_inputs(call: Call) -> Call:
    """Every tensor operand as its first row, which the op broadcasts to the output's shape."""
    return call.map_tensors(lambda t: t[(0,) * (t.dim() - 1)].clone(), self_too=False)


def _numbers(values: object) -> tuple[float, ...]:
    values = (values,) if isinstance(values, (int, float)) else values
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= MAX_SCALARS:
        raise CourseError(
            f"scalars={values!r}: give a number or a list of 1 to {MAX_SCALARS} numbers, "
            "e.g. scalars=(-1.0, 1.0)"
        )
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, (int, float))]
    if bad or not all(math.isfinite(v) for v in values):
        raise CourseError(f"scalars={values!r}: every scalar must be a finite number")
    return tuple(values)


def tiled(t: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """The same values, repeated or cut to fill `shape` (the default sweep's domain and mix)."""
    count = math.prod(shape)
    flat = t.reshape(-1)
    return flat.repeat(-(-count // flat.numel()))[:count].reshape(shape)


def _aliased(call: Call) -> Call:
    def same(value: object) -> object:
        alike = isinstance(value, torch.Tensor) and value.shape == call.self_values.shape
        return SELF if alike and value.dtype == call.dtype else value

    return replace(
        call,
        args=tuple(same(a) for a in call.args),
        kwargs={k: same(v) for k, v in call.kwargs.items()},
    )
