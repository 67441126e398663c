"""Notebook 07's compiled kernel: my_addcmul_ in C++, right on every layout and value.

`07.write_kernel` builds the learner's source and runs it on hidden calls in a child process
(course.kernels.cpp.learner): transposed, sliced, offset, permuted, 0-d to 6-d, empty and
broadcast tensors, each found through its own strides and offset.
"""

from __future__ import annotations

from course.errors import CourseError
from course.exercises import Exercise, Verdict, failed, not_attempted, passed, register
from course.kernels.cpp import learner
from course.kernels.cpp.learner import SKELETON


def _write_kernel_reference():
    my_kernel = r"""
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = ndim - 1; d >= 0; --d) {  // i -> its index, last dim fastest
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d];  // notebook 04's address(), once per tensor
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
}
"""
    return my_kernel


REFERENCE_KERNEL = _write_kernel_reference()


def check_write_kernel(source) -> Verdict:
    """07.write_kernel: compile the learner's C++ and run it on hidden layouts (child process).

    Without a compiler the check is skipped, not failed, and the skeleton as given is not
    attempted yet: neither is journaled."""
    if isinstance(source, str) and _squeezed(source) in {
        _squeezed(SKELETON),
        _squeezed(learner.PRELUDE + SKELETON),
    }:
        return not_attempted(
            "that is the skeleton as printed (the naive loop): change it so that each tensor's "
            "elements are found through its own strides and offset, then run the cell."
        )
    try:
        report = learner.check_source(source)
    except learner.NoCompiler as exc:
        return Verdict(False, str(exc), attempted=False)
    except CourseError as exc:  # not a kernel, or a compile error: say which
        return failed(str(exc))
    if report.passed:
        return passed(
            f"right on all {len(learner.VARIANTS)} hidden calls (transposed, step-sliced, "
            "offset, permuted 3-d, 4-d to 6-d, 1-d and 0-d, empty, mixed, offset and broadcast "
            "inputs, a and b in different layouts, all three alike with gaps, another value): "
            "each element found through its own strides and offset, in every tensor"
        )
    nudge = _kernel_nudge(report.problem)
    return failed(
        f"on {report.variant} your kernel {report.problem}. {nudge}".strip(),
        report.yours,
        report.expected or "torch's addcmul_",
    )


def _squeezed(source: str) -> str:
    """The source without whitespace: the skeleton re-indented is still the skeleton."""
    return "".join(source.split())


def _kernel_nudge(problem: str) -> str:
    if any(said in problem for said in ("unchanged", "wrong elements", "no elements", "no gaps")):
        return ""  # the problem already says where the results went, or what to follow
    if "crashed" in problem or "outside" in problem:
        return "Check that every index stays below its size, and each tensor uses its own strides."
    if "`value`" in problem or "used value" in problem or "overwrote" in problem:
        return "The kernel computes out[idx] += value * a[idx] * b[idx], with the value passed in."
    if "input" in problem:
        return "Only out is written; a and b are read."
    return "Element idx of a tensor lives at offset + sum(idx[d] * stride[d]), per tensor."


def _kernel_variant(body: str) -> str:
    head = (
        'extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes,\n'
        "                            int64_t ndim, float value) {\n"
    )
    return head + body + "}\n"


# The body of a shortcut some wrong kernels take: one flat walk over every element, as if the
# three tensors were laid out alike without gaps.
_FLAT_SHORTCUT = """    int64_t n = 1;
    for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
    for (int64_t i = 0; i < n; ++i)
      out.data[out.offset + i] += value * a.data[a.offset + i] * b.data[b.offset + i];
    return;
  }
"""


_INDEX = """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d];
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
"""
WRONG_KERNELS = {
    "with offsets, still flat": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i)
    out.data[out.offset + i] += value * a.data[a.offset + i] * b.data[b.offset + i];
""",
    "the output's strides for all three": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      o += (rest % sizes[d]) * out.stride[d];
      rest /= sizes[d];
    }
    out.data[out.offset + o] += value * a.data[a.offset + o] * b.data[b.offset + o];
  }
""",
    "no offsets": _INDEX.replace(
        "o = out.offset, x = a.offset, y = b.offset", "o = 0, x = 0, y = 0"
    )
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "the output's offset only": _INDEX.replace("x = a.offset, y = b.offset", "x = 0, y = 0")
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "two dims only": """  for (int64_t r = 0; r < sizes[0]; ++r)
    for (int64_t c = 0; c < sizes[1]; ++c)
      out.data[out.offset + r * out.stride[0] + c * out.stride[1]] +=
          value * a.data[a.offset + r * a.stride[0] + c * a.stride[1]] *
          b.data[b.offset + r * b.stride[0] + c * b.stride[1]];
""",
    "up to three dims": """  const int64_t s0 = sizes[0], s1 = ndim > 1 ? sizes[1] : 1;
  const int64_t s2 = ndim > 2 ? sizes[2] : 1;
  auto st = [&](const View& v, int64_t d) { return d < ndim ? v.stride[d] : 0; };
  for (int64_t i = 0; i < s0; ++i)
    for (int64_t j = 0; j < s1; ++j)
      for (int64_t k = 0; k < s2; ++k) {
        const int64_t o = out.offset + i * st(out, 0) + j * st(out, 1) + k * st(out, 2);
        const int64_t x = a.offset + i * st(a, 0) + j * st(a, 1) + k * st(a, 2);
        const int64_t y = b.offset + i * st(b, 0) + j * st(b, 1) + k * st(b, 2);
        out.data[o] += value * a.data[x] * b.data[y];
      }
""",
    "value hard-coded": _INDEX + "    out.data[o] += 0.5f * a.data[x] * b.data[y];\n  }\n",
    "value ignored": _INDEX + "    out.data[o] += a.data[x] * b.data[y];\n  }\n",
    "overwrites": _INDEX + "    out.data[o] = value * a.data[x] * b.data[y];\n  }\n",
    "writes into an input": _INDEX + "    a.data[x] += value * out.data[o] * b.data[y];\n  }\n",
    "b through a's strides": _INDEX.replace("k * b.stride[d]", "k * a.stride[d]")
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "b at a's index": _INDEX + "    out.data[o] += value * a.data[x] * b.data[x];\n  }\n",
    "a's and b's offsets swapped": _INDEX.replace(
        "x = a.offset, y = b.offset", "x = b.offset, y = a.offset"
    )
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "a temporary never copied back": _INDEX.replace(
        "  for (int64_t i", "  float* tmp = new float[n];\n  for (int64_t i", 1
    )
    + "    tmp[i] = out.data[o] + value * a.data[x] * b.data[y];\n  }\n  delete[] tmp;\n",
    "copied back in memory order": _INDEX.replace(
        "  for (int64_t i", "  float* tmp = new float[n];\n  for (int64_t i", 1
    )
    + "    tmp[i] = out.data[o] + value * a.data[x] * b.data[y];\n  }\n"
    "  for (int64_t i = 0; i < n; ++i) out.data[out.offset + i] = tmp[i];\n  delete[] tmp;\n",
    "square: sizes[0] for both dims": """  for (int64_t r = 0; r < sizes[0]; ++r)
    for (int64_t c = 0; c < sizes[0]; ++c)
      out.data[out.offset + r * out.stride[0] + c * out.stride[1]] +=
          value * a.data[a.offset + r * a.stride[0] + c * a.stride[1]] *
          b.data[b.offset + r * b.stride[0] + c * b.stride[1]];
""",
    "up to four dims": """  int64_t s[4] = {1, 1, 1, 1};
  for (int64_t d = 0; d < ndim && d < 4; ++d) s[d] = sizes[d];
  auto st = [&](const View& v, int64_t d) { return d < ndim ? v.stride[d] : 0; };
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < s[2]; ++k)
        for (int64_t l = 0; l < s[3]; ++l) {
          const int64_t o = out.offset + i * st(out, 0) + j * st(out, 1) + k * st(out, 2) +
                            l * st(out, 3);
          const int64_t x = a.offset + i * st(a, 0) + j * st(a, 1) + k * st(a, 2) + l * st(a, 3);
          const int64_t y = b.offset + i * st(b, 0) + j * st(b, 1) + k * st(b, 2) + l * st(b, 3);
          out.data[o] += value * a.data[x] * b.data[y];
        }
""",
    "value squared": _INDEX + "    out.data[o] += value * value * a.data[x] * b.data[y];\n  }\n",
    "up to five dims (the notebook names 5-d)": """  int64_t s[5] = {1, 1, 1, 1, 1};
  for (int64_t d = 0; d < ndim && d < 5; ++d) s[d] = sizes[d];
  auto at = [&](const View& v, const int64_t* i) {
    int64_t where = v.offset;
    for (int64_t d = 0; d < ndim && d < 5; ++d) where += i[d] * v.stride[d];
    return where;
  };
  for (int64_t i0 = 0; i0 < s[0]; ++i0)
    for (int64_t i1 = 0; i1 < s[1]; ++i1)
      for (int64_t i2 = 0; i2 < s[2]; ++i2)
        for (int64_t i3 = 0; i3 < s[3]; ++i3)
          for (int64_t i4 = 0; i4 < s[4]; ++i4) {
            const int64_t i[5] = {i0, i1, i2, i3, i4};
            out.data[at(out, i)] += value * a.data[at(a, i)] * b.data[at(b, i)];
          }
""",
    "the naive loop when all strides agree": """  bool alike = true;
  for (int64_t d = 0; d < ndim; ++d)
    alike = alike && a.stride[d] == out.stride[d] && b.stride[d] == out.stride[d];
  if (alike) {  // laid out alike: element i at slot i of each, from its offset
"""
    + _FLAT_SHORTCUT
    + _INDEX
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "the body before the bound is checked": _INDEX.replace(
        "  for (int64_t i = 0; i < n; ++i) {", "  int64_t i = 0;\n  do {"
    )
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  } while (++i < n);\n",
    "an inner loop over sizes[ndim - 1]": """  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < ndim; ++d) rows *= sizes[d];
  const int64_t last = ndim - 1, cols = sizes[last];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = last - 1; d >= 0; --d) {
      const int64_t k = rest % sizes[d];
      rest /= sizes[d];
      o += k * out.stride[d];
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
    for (int64_t c = 0; c < cols; ++c)
      out.data[o + c * out.stride[last]] +=
          value * a.data[x + c * a.stride[last]] * b.data[y + c * b.stride[last]];
  }
""",
    "contiguous taken to mean a last stride of 1": """  const int64_t last = ndim - 1;
  if (out.stride[last] == 1 && a.stride[last] == 1 && b.stride[last] == 1) {
"""
    + _FLAT_SHORTCUT
    + _INDEX
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
}


register(
    Exercise(
        name="07.write_kernel",
        prompt="Write my_addcmul_ in C++ (start from the skeleton, course.kernels.cpp.learner."
        "SKELETON, and keep its signature): out += value * a * b, right for every layout of "
        "every tensor (any number of dims, storage offsets, strides, broadcast inputs) and "
        "every value.",
        checker=check_write_kernel,
        hint="For each flat position i, turn i into an index (last dim fastest: k = rest % "
        "sizes[d], rest /= sizes[d]) and add k * stride[d] to each tensor's own offset.",
        reference=_write_kernel_reference,
        wrong_answers=(
            *((lambda body=body: _kernel_variant(body)) for body in WRONG_KERNELS.values()),
            lambda: REFERENCE_KERNEL.replace("float value", "double value"),
        ),
    )
)
