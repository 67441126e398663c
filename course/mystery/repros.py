"""Reference reproductions, written out as the code a learner would write.

Each is notebook 03's isolation pattern reduced to one function: make *non-constant* values on
the CPU, give the output the property the condition needs (a layout, a size, a broadcast
operand, a negative scalar...), run the one op on the device and on the CPU, and compare
exactly. The CPU is the working sibling: the emulated kernels run the CPU's own arithmetic, so
on a healthy device the two agree bit for bit. Inputs are made on the CPU and moved with
`.to(DEVICE)`, so no other device kernel runs (see check_repro's decoy device).

`reference_repro(op, trigger)` returns the source of `repro() -> bool`; an instructor reads it
in `case.answer()`, and the case runs it (compiled once) in its tests.
"""

from __future__ import annotations

import textwrap

from course.mystery.conditions import LAYOUT_KINDS, Trigger

# family -> (extra CPU inputs: name -> expression of SHAPE, the call on `out` with {name}s)
_CALLS: dict[str, tuple[dict[str, str], str]] = {
    "lerp": ({"end": "torch.randn(SHAPE)"}, "out.lerp_({end}, 0.1)"),
    "addcdiv": (
        {"t1": "torch.randn(SHAPE)", "t2": "torch.rand(SHAPE) + 1"},
        "out.addcdiv_({t1}, {t2}, value=0.5)",
    ),
    "addcmul": (
        {"t1": "torch.randn(SHAPE)", "t2": "torch.randn(SHAPE)"},
        "out.addcmul_({t1}, {t2}, value=0.3)",
    ),
    "add": ({"other": "torch.randn(SHAPE)"}, "out.add_({other})"),
    "mul": ({}, "out.mul_(0.5)"),
    "relu": ({}, "out.relu_()"),
    "masked_fill": ({"mask": "torch.rand(SHAPE) < 0.5"}, "out.masked_fill_({mask}, 0.0)"),
    "clamp": ({}, "out.clamp_(0.5, 2.5)"),
}
FAMILIES = tuple(_CALLS)  # the ops a reference repro (and a scripted experiment) can call
# calls that need something else under some conditions
_SPECIAL: dict[tuple[str, str], tuple[dict[str, str], str]] = {
    ("add", "broadcast-input"): ({"bias": "torch.randn(COLS)"}, "out.add_({bias})"),
    ("mul", "broadcast-input"): ({"gain": "torch.randn(COLS)"}, "out.mul_({gain})"),
    ("masked_fill", "broadcast-input"): (
        {"mask": "torch.arange(COLS) % 3 == 0"},
        "out.masked_fill_({mask}, 0.0)",
    ),
    ("addcmul", "aliased-input"): (
        {"g": "torch.randn(SHAPE)"},
        "out.addcmul_({g}, {g}, value=0.3)",
    ),
    ("masked_fill", "negative-scalar"): (
        {"mask": "torch.rand(SHAPE) < 0.5"},
        "out.masked_fill_({mask}, -5.0)",
    ),
    ("clamp", "negative-scalar"): ({}, "out.clamp_(-1.0, 1.0)"),
    ("add", "tiny-scalar"): ({}, "out.add_(1e-08)"),
}
# 3-D and 4-D outputs: every last dimension a multiple of 4, unless the trigger pairs "unaligned"
_SHAPES = {"permuted": (3, 4, 8), "channels-last": (2, 3, 4, 8)}
_RAGGED_SHAPES = {"permuted": (3, 4, 5), "channels-last": (2, 3, 4, 5)}
_FOREACH_SCALARS = {"mul": "0.5"}  # foreach ops whose only extra argument is a number


def _shape(trigger: Trigger) -> tuple[int, ...]:
    """An output shape that meets the trigger's conditions (both of a pair) and nothing else
    unusual: a last dimension of 62, 30 or 6 where "unaligned" is one of them."""
    ragged = "unaligned" in trigger.kinds
    if trigger.kind == "large":
        columns = 62 if ragged else 64
        return (trigger.bound // columns + 16, columns)
    if trigger.kind == "long-dim":
        return (trigger.bound + 16, 6 if ragged else 8)
    layout = next((kind for kind in trigger.kinds if kind in _SHAPES), "")
    if ragged:
        return _RAGGED_SHAPES.get(layout, (6, 30))
    return _SHAPES.get(layout, (6, 8))


def _call(family: str, kind: str) -> tuple[dict[str, str], str]:
    return _SPECIAL.get((family, kind), _CALLS[family])


def _values(family: str, trigger: Trigger, shape: tuple[int, ...]) -> str:
    """The output's starting values: non-zero (a lost write shows), both signs for relu."""
    if trigger.kind == "tiny-scalar":
        return f"torch.zeros{shape}"  # where an epsilon matters: exactly zero
    text = f"torch.randn{shape}" if family in ("relu", "clamp") else f"torch.randn{shape} + 2"
    return f"({text}).to(torch.bfloat16)" if "bfloat16" in trigger.kinds else text


def _inputs(inputs: dict[str, str], shape: tuple[int, ...], bf16: bool) -> list[str]:
    lines = []
    for name, expression in inputs.items():
        text = expression.replace("SHAPE", repr(shape)[1:-1]).replace("COLS", str(shape[-1]))
        if bf16 and name != "mask":
            text = f"({text}).to(torch.bfloat16)"
        lines.append(f"{name} = {text}")
    return lines


def reference_repro(family: str, trigger: Trigger) -> str:
    """The source of `repro() -> bool` for `family`'s in-place op under `trigger`."""
    if trigger.kind == "foreach":
        return _foreach_repro(family, trigger)
    shape = _shape(trigger)
    inputs, call = _call(family, trigger.kind)
    on_cpu = call.format(**{name: name for name in inputs})
    on_device = call.format(**{name: f"d_{name}" for name in inputs})
    layout = next((kind for kind in trigger.kinds if kind in LAYOUT_KINDS), "contiguous")
    body = [
        f"values = {_values(family, trigger, shape)}",
        *_inputs(inputs, shape, "bfloat16" in trigger.kinds),
        f'expected = laid_out(values, "{layout}")  # the CPU: the working sibling',
        on_cpu.replace("out.", "expected.", 1),
        *(f"d_{name} = {name}.to(DEVICE)" for name in inputs),
    ]
    if "repeat-call" in trigger.kinds:  # a first call of the same shape fills the kernel's cache
        body += [
            "first = (torch.randn_like(values) + 2).to(DEVICE)",
            on_device.replace("out.", "first.", 1),
        ]
    body += [
        f'out = laid_out(values, "{layout}", DEVICE)',
        on_device,
        "return not torch.equal(out.cpu(), expected)",
    ]
    return _function(f"{family}_ on {trigger.describe(family + '_')}", body)


def _foreach_repro(family: str, trigger: Trigger) -> str:
    count = trigger.bound + 2
    inputs, call = _CALLS[family]
    lists = [
        f"{name}s = [{expr.replace('SHAPE', '4, 8')} for _ in range({count})]"
        for name, expr in inputs.items()
    ]
    if family in _FOREACH_SCALARS:
        arguments = _FOREACH_SCALARS[family]
    else:
        scalar = [call.rpartition(", ")[2].rstrip(")")] if ", " in call else []
        arguments = ", ".join([*(f"[t.to(DEVICE) for t in {name}s]" for name in inputs), *scalar])
    per_tensor = call.replace("out.", "o.", 1).format(**{name: f"{name}s[i]" for name in inputs})
    body = [
        f"values = [torch.randn(4, {8}) + 2 for _ in range({count})]",
        *lists,
        "expected = [v.clone() for v in values]",
        "for i, o in enumerate(expected):  # the CPU, one tensor at a time",
        f"    {per_tensor}",
        "outs = [v.to(DEVICE) for v in values]",
        f"torch._foreach_{family}_(outs, {arguments})",
        "return any(not torch.equal(o.cpu(), e) for o, e in zip(outs, expected))",
    ]
    return _function(f"torch._foreach_{family}_ on a list of {count} tensors", body)


def _function(what: str, body: list[str]) -> str:
    doc = textwrap.wrap(f"The device against the CPU, exactly: {what}.", 88)
    doc[0] = f'"""{doc[0]}'
    doc[-1] += '"""'
    lines = ["def repro() -> bool:", *(f"    {line}" for line in doc)]
    return "\n".join([*lines, *(f"    {line}" for line in body)])
