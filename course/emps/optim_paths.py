"""The optimizer's other paths on the emulated device: `foreach=True` and `fused=True`.

What the real MPS stack did, per profile (sources read for this module):

foreach (`torch._foreach_*`, `Adam(foreach=True)`): MPS never had foreach kernels of its own.
    In native_functions.yaml the `_foreach_*` ops have a `CompositeExplicitAutograd` "slow"
    kernel (`foreach_tensor_addcmul_scalar_slow_`...) plus CUDA/MTIA ones, and no MPS entry; that
    holds in the torch installed here (torchgen/packaged/ATen/native/native_functions.yaml, whose
    only MPS foreach entry is `_amp_foreach_non_finite_check_and_unscale_`). The slow kernels
    loop over the list and call the per-tensor op (`tensors1[i].add_(tensors2[i])`, ATen's
    ForeachOpsKernels.cpp), so on a Mac `foreach=True` reaches the same per-tensor MPS kernels,
    bugs included. MPS was also never in `_get_foreach_kernels_supported_devices()`
    (torch/utils/_foreach_utils.py: cuda, xpu, privateuse1), so foreach was never the default.
    Emulated on every profile: the op is redispatched to PrivateUse1, where the composite slow
    kernel runs and its per-tensor calls come back to the emulated kernels.

fused (`Adam(fused=True)`...): torch 2.2/2.3 listed only cuda, xpu and privateuse1 in
    `_get_fused_kernels_supported_devices()`, so `Adam(fused=True)` on MPS params raised at
    construction ("`fused=True` requires all the params to be floating point Tensors of supported
    devices: [...]"; the same text is quoted from a pre-2.4 build in deepmodeling/deepmd-kit#4667).
    Fused Adam/AdamW for MPS came with pytorch#127242 (opened 2024-05-27), after which the
    list reads mps, cuda, xpu, cpu, privateuse1 (quoted in pytorch#148666); fused SGD for MPS
    with pytorch#129350 (opened 2024-06-24). The profiles assume the first shipped in 2.4 and
    the second only later (dates of the PRs against the 2.4 release; not checked against a 2.4
    wheel). `_fused_adagrad_` has CPU and CUDA kernels only (native_functions.yaml), so on MPS
    it hits the "not currently implemented for the MPS device" error. The fused kernels are
    Metal kernels over raw buffers, not Placeholder-based MPSGraph kernels: no lost write is
    emulated for them.
    Differences from the real stack: the 2.2.1 refusal comes at the first `step()`, not at
    construction; a supported fused op runs PyTorch's CPU fused kernel on the wrapped storage.
"""

from __future__ import annotations

import torch

from course.emps.profiles import Profile

_PRIVATEUSE1 = torch._C.DispatchKeySet(torch._C.DispatchKey.PrivateUse1)
_PRE_2_4_FUSED_DEVICES = "['cuda', 'xpu', 'privateuseone']"


_FOREACH = {"serial": 0, "running": None}  # which foreach op's per-tensor loop is running


def current_foreach() -> int | None:
    """The serial number of the foreach op whose per-tensor loop runs now (None outside one).

    A kernel sees one tensor of the list at a time; this tells it that it was called from a
    list op, and which one (course.mystery plants bugs on the foreach path only).
    """
    return _FOREACH["running"]


def run_foreach(func: torch._ops.OpOverload, args, kwargs):
    """Run a `_foreach_*` op the way MPS did: its per-tensor loop, one emulated kernel each."""
    _FOREACH["serial"] += 1
    outer, _FOREACH["running"] = _FOREACH["running"], _FOREACH["serial"]
    try:
        return func.redispatch(_PRIVATEUSE1, *args, **kwargs)
    finally:
        _FOREACH["running"] = outer


def check_fused(profile: Profile, name: str, family: str) -> None:
    """Raise what the profile's real stack raised for a fused optimizer kernel it lacked."""
    if not profile.fused_optimizers:
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {_PRE_2_4_FUSED_DEVICES}. (emulated {profile.name}: torch before 2.4 had "
            "no fused optimizers for MPS and refused this at construction; use fused=False)"
        )
    if family not in profile.fused_optimizers:
        raise NotImplementedError(
            f"The operator 'aten::{name}' is not currently implemented for the MPS device. "
            f"(emulated {profile.name}: fused kernels here: "
            f"{', '.join(sorted(profile.fused_optimizers))}; use fused=False)"
        )
