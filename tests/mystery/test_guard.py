"""What counts as changing torch or the device, and that it is all put back."""

from __future__ import annotations

import functools
import sys
import types

import pytest
import torch
from torch.optim.optimizer import register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import course.emps.mps_kernels as kernels
from course.mystery import guard
from course.mystery.bugs import PlantedKernel
from tests import forked


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class Functions(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.fixture
def record():
    record = guard.pristine()
    assert record.changes() == []
    yield record
    record.restore()
    assert record.changes() == []


def _patch_lerp():
    torch.Tensor.lerp_ = lambda self, *args: self


def _patch_function():
    torch.nn.functional.relu = lambda x, inplace=False: x


def _register_kernel():
    library = torch.library.Library("aten", "IMPL")
    library.impl("lerp_.Scalar", lambda *a, **k: a[0], "AutogradPrivateUse1")
    _patch_function.library = library  # kept alive, as a learner's cell would


def _dispatch_mode():
    PassThrough().__enter__()


def _function_mode():
    Functions().__enter__()


def _device_kernel():
    kernels.gather_compute_scatter = lambda call: None


def _planted_kernel():
    PlantedKernel.__call__ = lambda self, call: None


def _optimizer_hook():
    register_optimizer_step_pre_hook(lambda *a: None)


PATCHES = {
    "torch.Tensor.lerp_": _patch_lerp,
    "torch.nn.functional.relu": _patch_function,
    "aten/lerp_.Scalar/AutogradPrivateUse1": _register_kernel,
    "TorchDispatchMode": _dispatch_mode,
    "TorchFunctionMode": _function_mode,
    "course.emps.mps_kernels.gather_compute_scatter": _device_kernel,
    "course.mystery.bugs.PlantedKernel.__call__": _planted_kernel,
    "a hook was added": _optimizer_hook,
}


@pytest.mark.parametrize("name", PATCHES)
def test_each_kind_of_patch_is_seen_and_undone(record, name):
    PATCHES[name]()
    assert any(name in line for line in record.changes()), record.changes()
    record.restore()
    assert record.changes() == []


def test_after_restore_torch_and_the_device_work_again(record):
    _patch_lerp()
    _device_kernel()
    record.restore()
    x = torch.ones(2)
    x.lerp_(torch.zeros(2), 0.5)
    assert torch.equal(x, torch.full((2,), 0.5))
    assert kernels.gather_compute_scatter.__module__ == "course.emps.mps_kernels"


def test_what_torch_does_to_itself_is_not_a_change(record):
    torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=0.1)  # wraps AdamW.step once
    torch.manual_seed(0)
    wrapped = functools.wraps(torch.manual_seed)(lambda seed: None)
    assert guard._counts(torch.manual_seed, wrapped) is False
    assert record.changes() == []


def test_the_courses_own_step_log_is_not_a_fix_and_survives_a_restore(record):
    from course.isolation import experiments

    experiments.bench(device="cpu", d_model=8, n_features=16, k=2, batch_size=4)  # installs the log
    assert record.changes() == []
    record.restore()
    registry = sys.modules["torch.optim.optimizer"]._global_optimizer_pre_hooks
    assert experiments._log_step in registry.values()


def test_what_a_torch_module_loaded_later_installs_is_torch_changing_itself(record):
    """torch.testing._internal.common_utils replaces torch.ScriptMethod.__call__ as it loads
    (lesson 08's OpInfo samples import it): not a fix. The same replacement made by a learner's
    own function is one."""
    original = torch.ScriptMethod.__call__
    late = types.ModuleType("torch._course_loaded_after_the_record")

    def wrapper(*args, **kwargs):
        return original(*args, **kwargs)

    wrapper.__module__ = late.__name__
    sys.modules[late.__name__] = late
    try:
        torch.ScriptMethod.__call__ = wrapper
        assert record.changes() == []
        torch.ScriptMethod.__call__ = lambda *args, **kwargs: original(*args, **kwargs)
        assert record.changes() == ["torch.ScriptMethod.__call__ was patched"]
    finally:
        torch.ScriptMethod.__call__ = original
        del sys.modules[late.__name__]


def test_importing_torchs_test_utilities_after_the_record_is_not_a_change():
    """The order CI met: the record first, then lesson 08's OpInfo import (a fresh process, so
    that nothing has loaded torch's test utilities before the record; it says so first)."""
    script = (
        "import sys\n"
        "print('torch.testing._internal.common_utils' in sys.modules)\n"
        "from course.mystery import guard\n"
        "record = guard.pristine()\n"
        "import torch.testing._internal.common_utils\n"
        "print(record.changes())\n"
    )
    out = forked.python(script, timeout=600)
    assert out.returncode == 0 and out.stdout.split("\n")[:2] == ["False", "[]"], (
        out.stdout + out.stderr
    )
