"""Building the course's C++ kernels: the compiler probe, the cache, stale locks, rebuilds."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import pytest

from course.kernels.cpp import CompilerMissing, compiler_status, load, sources
from course.kernels.cpp.build import OP_NAMES, build_dir, clear_stale_lock


def test_compiler_status_reports_a_missing_compiler(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    status = compiler_status()
    assert not status.ok and "C++ compiler" in status.message()
    with pytest.raises(CompilerMissing, match="missing a C\\+\\+ compiler"):
        load(force=True)


def test_a_stale_build_lock_is_removed_and_a_fresh_one_kept(tmp_path):
    lock = tmp_path / "lock"
    lock.touch()
    assert not clear_stale_lock(tmp_path) and lock.exists()
    os.utime(lock, (0, 0))
    assert clear_stale_lock(tmp_path) and not lock.exists()


@pytest.mark.compile
def test_compiler_is_found_here():
    assert compiler_status().ok, compiler_status().message()


# An edited naive kernel (2 * v), alone in its file: it compiles in half the time of the shipped
# file's four kernels, and re-registering one op is what the test is about.
EDITED_NAIVE = """
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <torch/library.h>

namespace {
at::Tensor& addcmul_naive_(at::Tensor& self, const at::Tensor& t1, const at::Tensor& t2,
                           const at::Scalar& value) {
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "addcmul_naive_", [&] {
    scalar_t* out = self.data_ptr<scalar_t>();
    const scalar_t* a = t1.const_data_ptr<scalar_t>();
    const scalar_t* b = t2.const_data_ptr<scalar_t>();
    const scalar_t v = value.to<scalar_t>();
    for (int64_t i = 0; i < self.numel(); ++i) out[i] += 2 * v * a[i] * b[i];
  });
  return self;
}
}  // namespace

TORCH_LIBRARY_IMPL(course_kernels, CPU, m) { m.impl("addcmul_naive_", TORCH_FN(addcmul_naive_)); }
"""


@pytest.fixture
def edited_source_dir():
    """A folder holding EDITED_NAIVE, kept in the build cache and named by its hash.

    Its build lands in <folder>/build as a learner's would, and the next test session finds it
    there (ninja sees nothing changed: ~10 s of compiling torch's headers saved per run). The
    source is written only when missing, so its time stamp never forces a rebuild.
    """
    digest = hashlib.sha256(EDITED_NAIVE.encode()).hexdigest()[:16]
    folder = build_dir() / f"test-edited-{digest}"
    source = folder / "addcmul_kernels.cpp"
    if not source.exists() or source.read_text() != EDITED_NAIVE:
        folder.mkdir(parents=True, exist_ok=True)
        source.write_text(EDITED_NAIVE)
    return folder


@pytest.mark.compile
def test_an_edited_kernel_rebuilds_in_the_same_process(edited_source_dir):
    """The FIELD_NOTES pitfall: a rebuilt extension must re-register, not abort the process.

    Loading the edited library over the shipped one in one process is the pitfall; its compile
    is cached across sessions by the source's hash (the first session compiles it)."""
    script = textwrap.dedent(f"""
        import torch
        from course.kernels.cpp import load, op
        load()
        load(source_dir={str(edited_source_dir)!r})
        x = torch.zeros(3)
        op("naive")(x, torch.ones(3), torch.ones(3))
        print(x.tolist())
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[2.0, 2.0, 2.0]"


def test_every_kernel_in_the_source_has_a_schema():
    text = sources()[0].read_text()
    for name in OP_NAMES:
        assert f'm.impl("{name}"' in text
