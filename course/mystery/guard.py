"""A fix changes the model, not torch or the device: what check_fix watches, and restores.

A "fix" that replaces `torch.Tensor.lerp_`, registers a kernel with `torch.library`, pushes a
dispatch mode, or edits the emulated device's kernels makes the scenario train, and fixes
nothing a user could ship; worse, it stays in the learner's process and quietly changes every
later experiment. So `Pristine` records, once, when the case module is imported, what torch's
and the device's Python surface looks like (the module and class dictionaries of the modules a
fix could reach, their global hook registries, the torch.library registrations), and
`changes()` lists what differs now. `restore()` puts everything back; `Watch` also pops
dispatch modes and unregisters library kernels that appeared while a fix ran.

Note [What counts as a change]
    An entry holding a function, class or descriptor that is replaced, added or deleted,
    compared by identity. Not changes: submodules imported later (they appear as attributes of
    their package), plain values (flags and counters torch updates itself), wrappers torch
    puts around its own functions (`functools.wraps`: torch._dynamo wraps `torch.manual_seed`,
    torch.optim wraps each optimizer class's `step` on first use), and what a torch module
    imported after the record installs as it loads (importing
    torch.testing._internal.common_utils, as lesson 08's OpInfo samples do, replaces
    `torch.ScriptMethod.__call__` with its own profiling wrapper). Mutable state kept in place
    (a cache dict) is not compared; only the global hook registries are, by their keys, and
    torch.library registrations for aten ops.
"""

from __future__ import annotations

import gc
import sys
import types
from dataclasses import dataclass, field

import torch

# Modules a fix could patch to dodge the device: torch's Python surface and the emulated device.
WATCHED = (
    "torch",
    "torch._tensor",
    "torch.functional",
    "torch.nn.functional",
    "torch.nn.parameter",
    "torch.nn.modules.",
    "torch.optim",
    "torch.optim.",
    "torch.autograd",
    "torch.autograd.",
    "torch.library",
    "course.emps",
    "course.emps.",
    "course.mystery",
    "course.mystery.",
)
_MISSING = object()


def _watched(name: str) -> bool:
    return any(name == p or (p.endswith(".") and name.startswith(p)) for p in WATCHED)


def _namespaces() -> dict[str, object]:
    """Every watched module, and every class defined in one, by a readable name."""
    found: dict[str, object] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not _watched(name):
            continue
        found[name] = module
        for value in list(vars(module).values()):
            # issubclass(type(v), type), not isinstance: no __class__ lookup on odd objects
            if issubclass(type(value), type) and value.__module__ == name:
                found[f"{name}.{value.__qualname__}"] = value
    return found


def _registries(namespaces: dict[str, object]) -> dict[str, dict]:
    """The global hook registries (`_global_*` dicts) of the watched modules."""
    return {
        f"{name}.{key}": value
        for name, space in namespaces.items()
        if isinstance(space, types.ModuleType)
        for key, value in vars(space).items()
        if key.startswith("_global_") and isinstance(value, dict)
    }


@dataclass
class Pristine:
    """Torch's and the device's Python surface as it was when recorded."""

    entries: dict[str, dict[str, object]] = field(default_factory=dict)
    namespaces: dict[str, object] = field(default_factory=dict)
    hooks: dict[str, set] = field(default_factory=dict)
    impls: frozenset[str] = frozenset()
    modules: frozenset[str] = frozenset()

    @classmethod
    def record(cls) -> Pristine:
        """Record the surface now."""
        namespaces = _namespaces()
        return cls(
            {name: dict(vars(space)) for name, space in namespaces.items()},
            namespaces,
            {name: set(registry) for name, registry in _registries(namespaces).items()},
            frozenset(torch.library._impls),
            frozenset(sys.modules),
        )

    def changes(self) -> list[str]:
        """What differs from the record, one readable line each (see Note [What counts...])."""
        found = []
        for name, before in self.entries.items():
            now = vars(self.namespaces[name])
            for key in before.keys() | now.keys():
                old, new = before.get(key, _MISSING), now.get(key, _MISSING)
                if old is not new and self._counts(old, new):
                    found.append(f"{name}.{key} was {_verb(old, new)}")
        for name, registry in _registries(self.namespaces).items():
            if self._added_hooks(name, registry):
                found.append(f"a hook was added to {name}")
        found += [f"torch.library registered a kernel: {k}" for k in self.new_impls()]
        found += _modes()
        return sorted(found)

    def _counts(self, old: object, new: object) -> bool:
        """`_counts`, less what a torch module loaded since the record put there itself."""
        origin = getattr(new, "__module__", None) or ""
        late_torch = origin.split(".")[0] == "torch" and origin not in self.modules
        return _counts(old, new) and not late_torch

    def _added_hooks(self, name: str, registry: dict) -> set:
        """Hooks added since the record, except the course's own instruments.

        Why the exception: lesson 02's bench logs every optimizer step through torch's global
        step hook, installed whenever a bench is first made, possibly after this record. It
        observes and changes nothing; removing it would blind lesson 02's checkers.
        """
        return {
            key
            for key in set(registry) - self.hooks.get(name, set())
            if not getattr(registry[key], "__module__", "").startswith("course.")
        }

    def new_impls(self) -> list[str]:
        """torch.library registrations for aten ops made since the record."""
        return sorted(k for k in set(torch.library._impls) - self.impls if k.startswith("aten/"))

    def restore(self, modes: bool = True) -> None:
        """Put every recorded entry back, remove added hooks, unregister new library kernels,
        and (unless `modes` is False: one the learner entered around the check) pop modes."""
        for name, before in self.entries.items():
            space = self.namespaces[name]
            for key in set(vars(space)) - set(before):
                if self._counts(_MISSING, vars(space)[key]):
                    delattr(space, key)
            for key, value in before.items():
                if self._counts(value, vars(space).get(key, _MISSING)):
                    setattr(space, key, value)
        for name, registry in _registries(self.namespaces).items():
            for key in self._added_hooks(name, registry):
                del registry[key]
        _unregister(self.new_impls())
        if modes:
            _pop_modes()


def _behaviour(value: object) -> bool:
    """A function, class or descriptor: something whose replacement changes what code does."""
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))


def _wraps(new: object, old: object) -> bool:
    """Whether `new` is a functools.wraps wrapper (of `old`, or of anything when old is missing)."""
    inner = getattr(new, "__wrapped__", _MISSING)
    for _ in range(8):
        if inner is _MISSING:
            return False
        if old is _MISSING or inner is old:
            return True
        inner = getattr(inner, "__wrapped__", _MISSING)
    return False


def _counts(old: object, new: object) -> bool:
    """Whether replacing `old` by `new` is a change (see Note [What counts as a change])."""
    if old is new or isinstance(new, types.ModuleType):
        return False
    if not (_behaviour(old) or _behaviour(new)):
        return False
    return not _wraps(new, old)


def _verb(old: object, new: object) -> str:
    return "deleted" if new is _MISSING else "patched"  # an override of an inherited one too


def _modes() -> list[str]:
    found = []
    if torch._C._len_torch_dispatch_stack():
        found.append("a TorchDispatchMode is active (it intercepts every op on every device)")
    if torch._C._len_torch_function_stack():
        found.append("a TorchFunctionMode is active (it intercepts every torch function)")
    return found


def _pop_modes() -> None:
    from torch.overrides import _pop_mode as pop_function_mode
    from torch.utils._python_dispatch import _pop_mode as pop_dispatch_mode

    while torch._C._len_torch_dispatch_stack():
        pop_dispatch_mode()
    while torch._C._len_torch_function_stack():
        pop_function_mode()


def _unregister(impls: list[str]) -> None:
    """Destroy the torch.library.Library objects that made these registrations."""
    if not impls:
        return
    for library in [o for o in gc.get_objects() if type(o) is torch.library.Library]:
        if set(getattr(library, "_op_impls", ())) & set(impls):
            library._destroy()
    torch.library._impls.difference_update(impls)


_RECORDED: list[Pristine] = []


def pristine() -> Pristine:
    """The record, made on the first call (course.mystery.case calls it when it is imported)."""
    if not _RECORDED:
        _RECORDED.append(Pristine.record())
    return _RECORDED[0]


# --- the seal: what check_fix's own runs refuse while they run --------------------------------


def _sealed_spaces() -> list[object]:
    """The namespaces whose entries a run checks at every checkpoint (cheap: identity only).

    Why these: where an op's Python entry lives (torch.Tensor and its C base class, torch,
    torch.nn.functional, nn.Module's call machinery, the optimizer base), and the emulated
    device and planted bug (their dispatch, handlers, kernels and backend state)."""
    from course.emps import backend, device, mps_kernels
    from course.mystery import bugs, detours

    return [
        torch.Tensor,
        torch._C.TensorBase,
        torch,
        torch.nn.functional,
        torch.nn.Module,
        torch.optim.Optimizer,
        device,
        device.EmulatedTensor,
        device._HANDLERS,
        device._SPECIAL,
        backend,
        mps_kernels,
        bugs,
        bugs.PlantedKernel,
        detours,
        detours.Detours,
    ]


def _entries(space: object) -> dict:
    return space if isinstance(space, dict) else vars(space)


class Seal:
    """Watches a fix's run from inside it: at every module call (before and after), every
    optimizer step (before and after), and every op on the device, it checks that no dispatch
    or function mode of the learner's is active, that the device's backend is the one the check
    made, and that no op's Python entry was replaced. A change made and undone inside
    `forward`, a hook or the optimizer is seen while it is in force, which the record taken
    after the run (`Pristine.changes`) cannot see.

        seal = Seal(backend)
        with seal:
            ...            # the fixed run
        seal.broken        # what it saw, one readable line each (first occurrence of each)
    """

    def __init__(self, backend: object, own_modes: tuple[type, ...] = ()) -> None:
        self.backend = backend
        self.own_modes = own_modes
        self.broken: list[str] = []
        self._spaces = [(space, dict(_entries(space))) for space in _sealed_spaces()]
        self._handles: list = []

    def _note(self, what: str) -> None:
        if what not in self.broken:
            self.broken.append(what)

    def check_backend(self, *_: object) -> None:
        """The cheap check, run on every op on the device: the backend is the check's own."""
        from course import emps

        if emps.current_backend() is not self.backend:
            self._note("the device's backend (or profile) was swapped for another while it ran")

    def check(self, *_: object) -> None:
        """The full check, at every module call and optimizer step."""
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

        self.check_backend()
        modes = [m for m in _get_current_dispatch_mode_stack() if not isinstance(m, self.own_modes)]
        if modes:
            self._note(
                f"a {type(modes[-1]).__name__} (a dispatch mode) was active inside the run: it "
                "intercepts every op on every device"
            )
        if torch._C._len_torch_function_stack():
            self._note("a TorchFunctionMode was active inside the run (it intercepts every call)")
        for space, before in self._spaces:
            now = _entries(space)
            if len(now) == len(before) and all(
                now.get(k, _MISSING) is v for k, v in before.items()
            ):
                continue
            name = getattr(space, "__qualname__", getattr(space, "__name__", "a dispatch table"))
            for key in before.keys() | now.keys():
                if _counts(before.get(key, _MISSING), now.get(key, _MISSING)):
                    self._note(f"{name}.{key} was replaced while the run was inside it")

    def __enter__(self) -> Seal:
        from torch.nn.modules import module
        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        self._handles = [
            module.register_module_forward_pre_hook(self.check),
            module.register_module_forward_hook(self.check),
            register_optimizer_step_pre_hook(self.check),
            register_optimizer_step_post_hook(self.check),
        ]
        self.check()
        return self

    def __exit__(self, *exc: object) -> None:
        self.check()
        for handle in self._handles:
            handle.remove()
        self._handles = []
