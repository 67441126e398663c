"""The compiled addcmul_ kernels from Python: run them, model them, check them against torch.

`naive_model` is the naive C++ kernel re-told in Python, memory slot by memory slot: it predicts
the scrambled result without a compiler (the prediction "07.predict_scramble" reveals it) and
it is the oracle the tests hold the compiled naive kernel to.
"""

from __future__ import annotations

import re

import torch

from course.errors import CourseError, require_choice
from course.kernels.cpp.build import NAMESPACE, SOURCE_DIR, op, sources
from course.layout.named import laid_out

KERNEL_NAMES = ("naive", "strided", "iterator", "tiled")
LAYOUTS = ("contiguous", "transposed", "step-sliced", "storage-offset")  # course.layout.named


def random_output(
    shape: tuple[int, ...], layout: str, gen: torch.Generator | None = None
) -> torch.Tensor:
    """Random values of logical `shape`, stored in a named layout (course.layout.named)."""
    return laid_out(torch.randn(shape, generator=gen), layout)


def _memory(t: torch.Tensor, n: int) -> torch.Tensor:
    """The first n elements of t's memory, from its first element on, ignoring its strides."""
    return t.as_strided((n,), (1,), t.storage_offset())


def naive_model(
    out: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor, value: float = 1.0
) -> torch.Tensor:
    """What the naive kernel leaves in a copy of `out`: slot i += value * t1[i] * t2[i]."""
    n = out.numel()
    slots = out.untyped_storage().nbytes() // out.element_size()
    storage = torch.as_strided(out, (slots,), (1,), 0).clone()  # a private copy of out's memory
    storage[out.storage_offset() : out.storage_offset() + n] += (
        value * _memory(t1, n) * _memory(t2, n)
    )
    return storage.as_strided(out.shape, out.stride(), out.storage_offset())


def apply(
    kernel: str, out: torch.Tensor, t1: torch.Tensor, t2: torch.Tensor, value: float = 1.0
) -> torch.Tensor:
    """Run a kernel ("native" = torch's addcmul_, or a compiled one) on a copy of `out`."""
    require_choice("kernel", kernel, ("native", *KERNEL_NAMES))
    result = torch.empty_strided(out.shape, out.stride(), dtype=out.dtype)
    result.copy_(out)
    if kernel == "native":
        return result.addcmul_(t1, t2, value=value)
    return op(kernel)(result, t1, t2, value=value)


def scramble_inputs(
    rows: int = 3, cols: int = 4
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A zero transposed (rows, cols) output, t1 = 0, 1, 2, ... in reading order, t2 = ones."""
    out = torch.zeros(cols, rows).t()
    return out, torch.arange(float(rows * cols)).reshape(rows, cols), torch.ones(rows, cols)


def correctness_rows(shape: tuple[int, ...] = (64, 48), seed: int = 0) -> list[dict[str, object]]:
    """Each compiled kernel vs torch on each output layout: right or not, and the max error."""
    gen = torch.Generator().manual_seed(seed)
    t1, t2 = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
    rows = []
    for layout in LAYOUTS:
        out = random_output(shape, layout, gen)
        expected = apply("native", out, t1, t2, value=0.5)
        for kernel in KERNEL_NAMES:
            error = (apply(kernel, out, t1, t2, value=0.5) - expected).abs().max().item()
            rows.append(
                {
                    "kernel": kernel,
                    "output layout": layout,
                    "stride": tuple(out.stride()),
                    "matches torch": "yes" if error < 1e-5 else "no",
                    "max error": round(error, 3),
                }
            )
    return rows


def cpp_source(kernel: str) -> str:
    """One kernel's C++ code, cut from the shipped .cpp file at its `// ---- kernel` marker."""
    require_choice("kernel", kernel, KERNEL_NAMES)
    text = "\n".join(path.read_text() for path in sources())
    pieces = re.split(r"^// ---- kernel \d+: (\w+) ----$", text, flags=re.M)
    found = dict(zip(pieces[1::2], pieces[2::2], strict=True))
    if kernel not in found:
        raise CourseError(f"no '// ---- kernel N: {kernel} ----' marker in {SOURCE_DIR}/*.cpp")
    body = found[kernel].split("\n}  // namespace")[
        0
    ]  # the last kernel runs up to the namespace end
    return f"// kernel: {kernel}{body.rstrip()}\n"


def dispatcher_entry(kernel: str) -> dict[str, object]:
    """The dispatcher's record of a compiled op: its schema, the keys with a kernel, the dump."""
    require_choice("kernel", kernel, KERNEL_NAMES)
    op(kernel)
    dump = torch._C._dispatch_dump(f"{NAMESPACE}::addcmul_{kernel}_")
    lines = dump.splitlines()
    schema = next(
        (line.removeprefix("schema: ") for line in lines if line.startswith("schema:")), ""
    )
    keys = [
        line.split(":")[0]
        for line in lines
        if ": registered at" in line and not line.startswith("debug")
    ]
    if not schema:
        raise CourseError(
            f"torch's dispatcher dump for {kernel} has no 'schema:' line; did it change?"
        )
    return {"schema": schema, "keys": keys, "dump": dump}
