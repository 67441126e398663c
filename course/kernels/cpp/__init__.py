"""Notebook 07: C++ addcmul_ kernels, compiled on the learner's machine.

    from course.kernels.cpp import load, apply, compiler_status
    load()                                   # compiles once (~30-60 s), then cached
    torch.ops.course_kernels.addcmul_iterator_(out, t1, t2, value=0.5)

`build` compiles and registers the ops, `harness` runs, models and checks them, `bench` times them
against torch's own addcmul_, `learner` compiles and checks the kernel a learner writes.
"""

from __future__ import annotations

from course.kernels.cpp.build import (
    NAMESPACE,
    CompilerMissing,
    CompilerStatus,
    build_dir,
    compiler_status,
    is_cached,
    load,
    op,
    sources,
)
from course.kernels.cpp.harness import (
    KERNEL_NAMES,
    LAYOUTS,
    apply,
    correctness_rows,
    cpp_source,
    dispatcher_entry,
    naive_model,
    random_output,
    scramble_inputs,
)

__all__ = [
    "KERNEL_NAMES",
    "LAYOUTS",
    "NAMESPACE",
    "CompilerMissing",
    "CompilerStatus",
    "apply",
    "build_dir",
    "compiler_status",
    "correctness_rows",
    "cpp_source",
    "dispatcher_entry",
    "is_cached",
    "load",
    "random_output",
    "naive_model",
    "op",
    "scramble_inputs",
    "sources",
]
