"""Optional: the contiguity bug in a GPU kernel (Triton), run only where a CUDA GPU is present.

Nothing in the course depends on this: without CUDA (or without Triton) `triton_demo` returns a
message saying why it skipped. `TRITON_INTERPRET=1` (set before Triton is imported) runs the same
kernel on CPU tensors in Triton's interpreter, for anyone curious without a GPU.
"""

from __future__ import annotations

import importlib.util
import os

import torch

from course.kernels.cpp.harness import naive_model, scramble_inputs


def triton_device() -> str | None:
    """Where the Triton demo can run ("cuda", "cpu" under TRITON_INTERPRET=1), or None."""
    if importlib.util.find_spec("triton") is None:
        return None
    if torch.cuda.is_available():
        return "cuda"
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else None


def triton_demo(rows: int = 3, cols: int = 4) -> str:
    """torch's addcmul_ vs the naive Triton kernel on a transposed output, or why it skipped."""
    device = triton_device()
    if device is None:
        reason = (
            "no CUDA GPU here (torch.cuda.is_available() is False)"
            if not torch.cuda.is_available()
            else "Triton is not installed (pip install triton)"
        )
        return f"skipping the optional Triton section: {reason}."
    from course.kernels.cpp.triton_naive import addcmul_naive_

    out, t1, t2 = (t.to(device) for t in scramble_inputs(rows, cols))
    expected = torch.addcmul(out, t1, t2)
    result = addcmul_naive_(out.clone(memory_format=torch.preserve_format), t1, t2)
    same_as_model = torch.equal(result.cpu(), naive_model(*scramble_inputs(rows, cols)))
    return (
        f"on {device}, out stride {tuple(out.stride())}\ntorch addcmul_:\n{expected.cpu()}\n"
        f"naive Triton kernel:\n{result.cpu()}\n"
        f"scrambled exactly as naive_model predicts: {same_as_model}"
    )
