"""07.write_kernel: the learner's C++ kernel on every layout and value, and its solution."""

from __future__ import annotations

import pytest

from course import journal
from course.exercises import check, get, instructor_mode, solution
from course.kernels.cpp import learner
from course.kernels.exercises.compiled import write_kernel
from tests.corpus import assert_told_its_cause, corpus_cases

KERNEL_CAUSES = {
    "07.write_kernel": (
        "as if a and b were laid out like out",  # flat, with offsets
        "as if a and b were laid out like out",  # the output's strides for all three
        "an output with a storage offset",  # no offsets
        "inputs with a storage offset",  # the output's offset only
        "a permuted 3-d output",  # two dims only
        "a 4-d output",  # up to three dims
        "used value 0.5",  # value hard-coded
        "ignored `value`",  # value ignored
        "overwrote out",  # = instead of +=
        "wrote into an input",  # a.data[x] += ...
        "a transposed a and a b with a storage offset",  # b read through a's strides
        "a transposed a and a b with a storage offset",  # b read at a's index
        "a transposed a and a b with a storage offset",  # a's and b's offsets swapped
        "must be copied back",  # results left in a temporary
        "into the wrong elements of out",  # the temporary copied back in memory order
        "does not reach every index",  # sizes[0] for both dims
        "a 5-d output",  # up to four dims, hard-coded
        "used value 0.25",  # value * value
        "a 6-d output",  # five nested loops, as many dims as the notebook names
        "laid out alike that is right only when the elements have no gaps",  # naive if alike
        "an empty (4, 0) output",  # do { ... } while (++i < n): one body on no elements
        "left a 0-d output unchanged",  # an inner loop over sizes[ndim - 1]
        "an expanded (stride 0) input",  # stride[ndim - 1] == 1 taken for contiguous
        "keep the skeleton's signature",  # double value
    ),
}


@pytest.fixture(scope="module")
def kernels_run_together():
    """The wrong kernels checked in one child process: one torch import, not one per kernel."""
    learner.run_together([answer() for answer in get("07.write_kernel").wrong_answers])


@pytest.mark.compile
@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(KERNEL_CAUSES))
def test_each_wrong_kernel_is_told_its_cause(kernels_run_together, name, index, cause):
    assert_told_its_cause(name, index, cause)


def test_the_solution_shows_the_kernel_itself():
    instructor_mode(True)
    try:
        shown = solution("07.write_kernel")
    finally:
        instructor_mode(False)
    assert 'extern "C" void my_addcmul_' in shown and "lambda" not in shown
    assert write_kernel.REFERENCE_KERNEL in shown


# Right kernels in styles other than the reference's: each must pass.
RIGHT_KERNELS = {
    "recursion over dims, pointers passed down": r"""
static void walk(int64_t d, int64_t ndim, const int64_t* sizes, float* o, const int64_t* os,
                 const float* x, const int64_t* xs, const float* y, const int64_t* ys, float v) {
  if (d == ndim) { *o += v * *x * *y; return; }
  for (int64_t k = 0; k < sizes[d]; ++k)
    walk(d + 1, ndim, sizes, o + k * os[d], os, x + k * xs[d], xs, y + k * ys[d], ys, v);
}
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  walk(0, ndim, sizes, out.data + out.offset, out.stride, a.data + a.offset, a.stride,
       b.data + b.offset, b.stride, value);
}
""",
    "an index array incremented like an odometer": r"""
#include <vector>
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  for (int64_t d = 0; d < ndim; ++d) if (sizes[d] == 0) return;
  std::vector<int64_t> idx(ndim, 0);
  while (true) {
    int64_t o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = 0; d < ndim; ++d) {
      o += idx[d] * out.stride[d]; x += idx[d] * a.stride[d]; y += idx[d] * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
    int64_t d = ndim - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}
""",
    "precomputed contiguous strides of the shape": r"""
#include <vector>
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  std::vector<int64_t> cstride(ndim);
  int64_t n = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) { cstride[d] = n; n *= sizes[d]; }
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = 0; d < ndim; ++d) {
      int64_t k = (i / cstride[d]) % sizes[d];
      o += k * out.stride[d]; x += k * a.stride[d]; y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
}
""",
    "pointer arithmetic from each offset": r"""
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  float* const po = out.data + out.offset;
  const float* const pa = a.data + a.offset;
  const float* const pb = b.data + b.offset;
  for (int64_t i = 0; i < n; ++i) {
    const float *x = pa, *y = pb;
    float* o = po;
    int64_t rest = i;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d]; x += k * a.stride[d]; y += k * b.stride[d];
    }
    *o += value * *x * *y;
  }
}
""",
    "size_t loops": r"""
#include <cstddef>
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  size_t n = 1;
  for (size_t d = 0; d < (size_t)ndim; ++d) n *= (size_t)sizes[d];
  for (size_t i = 0; i < n; ++i) {
    size_t rest = i;
    int64_t o = out.offset, x = a.offset, y = b.offset;
    for (size_t d = ndim; d-- > 0;) {
      int64_t k = (int64_t)(rest % (size_t)sizes[d]);
      rest /= (size_t)sizes[d];
      o += k * out.stride[d]; x += k * a.stride[d]; y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
}
""",
    "an address() helper of its own": r"""
static int64_t address(const View& v, const int64_t* idx, int64_t ndim) {
  int64_t at = v.offset;
  for (int64_t d = 0; d < ndim; ++d) at += idx[d] * v.stride[d];
  return at;
}
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  int64_t idx[64];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t d = ndim - 1; d >= 0; --d) { idx[d] = rest % sizes[d]; rest /= sizes[d]; }
    out.data[address(out, idx, ndim)] +=
        value * a.data[address(a, idx, ndim)] * b.data[address(b, idx, ndim)];
  }
}
""",
    "int loops, long long, a double intermediate": r"""
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  long long n = 1;
  for (int d = 0; d < ndim; d++) n = n * sizes[d];
  for (long long i = 0; i < n; i++) {
    long long rest = i, o = 0, x = 0, y = 0;
    for (int d = (int)ndim - 1; d >= 0; d--) {
      long long k = rest % sizes[d];
      rest = rest / sizes[d];
      o += k * out.stride[d]; x += k * a.stride[d]; y += k * b.stride[d];
    }
    double r = (double)out.data[out.offset + o] +
               (double)value * a.data[a.offset + x] * b.data[b.offset + y];
    out.data[out.offset + o] = (float)r;
  }
}
""",
    "the printed prelude pasted above the kernel": learner.PRELUDE + write_kernel.REFERENCE_KERNEL,
}


@pytest.mark.compile
def test_right_kernels_in_other_styles_pass(tmp_path, monkeypatch):
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    learner.run_together(list(RIGHT_KERNELS.values()))
    for style, source in RIGHT_KERNELS.items():
        verdict = check("07.write_kernel", source)
        assert verdict.passed, (style, verdict.message)
