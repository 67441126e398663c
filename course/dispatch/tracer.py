"""A dispatch-level op tracer: every aten op a piece of code runs, with its output's layout.

It is a `TorchDispatchMode`, the hook PyTorch calls for every op below autograd, so it sees what
`optimizer.step()` really executes (not what adam.py seems to say) on any device, the emulated
one included. Naming tensors lets a table say "exp_avg_sq" instead of an anonymous shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


@dataclass(frozen=True)
class OpRecord:
    """One aten op call and the layout of the tensor it returned."""

    op: str  # e.g. "aten::addcmul_" or "aten::add_.Tensor"
    output: str  # the name given to the output tensor, or "" if unnamed
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    contiguous: bool
    device: str
    in_place: bool

    def as_row(self) -> dict[str, object]:
        """A flat dict for tables."""
        return asdict(self)


def op_name(func: torch._ops.OpOverload) -> str:
    """The full aten name with overload, as the dispatcher knows it: "aten::add_.Tensor"."""
    overload = func._overloadname
    base = func._schema.name
    return base if overload == "default" else f"{base}.{overload}"


class OpTracer(TorchDispatchMode):
    """Records an OpRecord per op while active; `names` maps labels to tensors to look out for."""

    def __init__(
        self,
        names: Mapping[str, torch.Tensor] | None = None,
        skip_prefixes: tuple[str, ...] = ("profiler::",),
    ) -> None:
        super().__init__()
        self.names = {id(t): name for name, t in (names or {}).items()}
        self.skip_prefixes = skip_prefixes
        self.records: list[OpRecord] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        name = op_name(func)
        if not name.startswith(self.skip_prefixes):
            self._record(name, func, args, result)
        return result

    def _record(self, name: str, func, args, result) -> None:
        tensors = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor)]
        if not tensors:
            self.records.append(OpRecord(name, "", (), (), True, "", False))
            return
        out = tensors[0]
        in_place = bool(args) and out is args[0] and func._schema.name.endswith("_")
        self.records.append(
            OpRecord(
                op=name,
                output=self.names.get(id(out), ""),
                shape=tuple(out.shape),
                stride=tuple(out.stride()),
                contiguous=out.is_contiguous(),
                device=str(out.device),
                in_place=in_place,
            )
        )


def trace(
    fn: Callable[[], object], names: Mapping[str, torch.Tensor] | None = None
) -> list[OpRecord]:
    """Run `fn()` and return every aten op it dispatched, in order."""
    with OpTracer(names) as tracer:
        fn()
    return tracer.records


def optimizer_state_names(
    optimizer: torch.optim.Optimizer, params: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Labels for a traced step: each named parameter and its optimizer state tensors."""
    names: dict[str, torch.Tensor] = {}
    for pname, param in params.items():
        names[pname] = param
        for key, value in optimizer.state.get(param, {}).items():
            if isinstance(value, torch.Tensor) and value.dim() > 0:
                names[f"{pname}.{key}"] = value
    return names
