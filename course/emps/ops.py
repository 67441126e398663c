"""Which path an aten op takes on the emulated device, worked out once per overload.

`EmulatedTensor.__torch_dispatch__` sees every aten call on the device. What it must do depends
only on the op's schema, so `route()` classifies each OpOverload the first time it is seen and
caches the answer: the per-call cost is one dictionary lookup (the dispatch path is hot: a
training step makes hundreds of calls).

Routes:
- "functional": writes nothing; runs the CPU kernel on the wrapped storage.
- "kernel": writes exactly one tensor (`x.op_()` or `op(..., out=x)`); goes to the emulated MPS
  kernel of the op's family. `written` is where that tensor sits *in the schema*: a position for
  in-place ops, a keyword for out= ops. Never look for the output among the arguments by
  identity: in `torch.add(c, b, out=c)` the output is also the first input.
- "direct": writes several tensors, or a list or optional one (batch norm's running stats,
  `max(..., out=(values, indices))`); runs on the wrapped storage, so the writes land as a
  correct kernel's would. No historical lost write is known for these, so none is emulated.
- "metadata": changes sizes or strides in place (`t_`, `as_strided_`, `resize_`): runs on the
  CPU memory, then the wrapper takes the new sizes, strides and storage.
- "foreach": `torch._foreach_*`; see `course.emps.optim_paths`.
- "fused": the fused optimizer kernels (`_fused_adam_`...); see `course.emps.optim_paths`.
- "composite": has a CompositeImplicitAutograd kernel; runs it, so its parts come back here.
  Such ops only reach the device when autograd is off (`torch.inference_mode()`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# In-place ops that change metadata, not data: the wrapper follows its memory's new metadata.
METADATA_INPLACE = frozenset(
    {
        "t_",
        "transpose_",
        "squeeze_",
        "unsqueeze_",
        "as_strided_",
        "resize_",
        "resize_as_",
        "set_",
        "swapdims_",
        "swapaxes_",
        "detach_",
    }
)
FUSED_OPTIMIZERS = frozenset({"_fused_adam", "_fused_adamw", "_fused_sgd", "_fused_adagrad"})


@dataclass(frozen=True)
class OpRoute:
    """How the device runs one overload (see the module docstring for the routes)."""

    route: str
    name: str  # schema name without namespace: "addcmul_"
    label: str = ""  # what a KernelEvent calls it: "aten::addcmul_", "aten::add.out"
    family: str = ""  # structured kernel family: "addcmul" for addcmul_ and addcmul.out
    written: int | str | None = None  # schema position (in-place) or keyword (out=)
    random: bool = False  # draws random numbers (torch's nondeterministic_seeded tag)


_ROUTES: dict[torch._ops.OpOverload, OpRoute] = {}


def route(func: torch._ops.OpOverload) -> OpRoute:
    """The cached route of an overload."""
    found = _ROUTES.get(func)
    if found is None:
        found = _ROUTES[func] = _classify(func)
    return found


def _classify(func: torch._ops.OpOverload) -> OpRoute:
    schema = func._schema
    name = schema.name.split("::")[-1]
    if name.startswith("_foreach_"):
        return OpRoute("foreach", name)
    if name.rstrip("_") in FUSED_OPTIMIZERS:
        return OpRoute("fused", name, family=name.strip("_").removeprefix("fused_"))
    written = [
        (index, argument)
        for index, argument in enumerate(schema.arguments)
        if argument.alias_info is not None and argument.alias_info.is_write
    ]
    if not written:
        if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CompositeImplicitAutograd"):
            return OpRoute("composite", name)
        return OpRoute("functional", name)
    if name in METADATA_INPLACE:
        return OpRoute("metadata", name)
    index, argument = written[0]
    if len(written) > 1 or not isinstance(argument.type, torch.TensorType):
        return OpRoute("direct", name)
    in_place = not argument.kwarg_only
    return OpRoute(
        "kernel",
        name,
        label=f"aten::{name}" if in_place else f"aten::{name}.{func._overloadname}",
        family=name.rstrip("_"),
        written=index if in_place else argument.name,
        random=torch.Tag.nondeterministic_seeded in func.tags,
    )
