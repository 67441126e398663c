"""07.write_kernel's test data: the notebook's kernel, right kernels written in other styles,
and kernels each wrong in one way, with the words their feedback must contain."""

from __future__ import annotations

from course.kernels.cpp import learner
from tests.corpus import Corpus


def write_kernel():
    my_kernel = r"""
extern "C" void my_addcmul_(View out, View a, View b, const int64_t* sizes, int64_t ndim,
                            float value) {
  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = ndim - 1; d >= 0; rest /= sizes[d--]) {  // i -> index, last dim fastest
      const int64_t k = rest % sizes[d];
      o += k * out.stride[d], x += k * a.stride[d], y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
}
"""
    return my_kernel


REFERENCE_KERNEL = write_kernel()


def _kernel_variant(body: str) -> str:
    """A kernel of the skeleton's signature around `body`."""
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
    "offsets in 32-bit ints": _INDEX.replace(
        "int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;",
        "int64_t rest = i;\n    int o = out.offset, x = a.offset, y = b.offset;",
    )
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "offsets in unsigned ints": _INDEX.replace(
        "int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;",
        "int64_t rest = i;\n    unsigned o = out.offset, x = a.offset, y = b.offset;",
    )
    + "    out.data[o] += value * a.data[x] * b.data[y];\n  }\n",
    "a fixed-size index array of 6 dims": """  int64_t n = 1;
  for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
  int64_t idx[6];  // "tensors have at most 6 dims"
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      idx[d] = rest % sizes[d];
      rest /= sizes[d];
    }
    int64_t o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = 0; d < ndim; ++d) {
      o += idx[d] * out.stride[d];
      x += idx[d] * a.stride[d];
      y += idx[d] * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
""",
    "sizes copied into an array of 6, the rest taken as 1": """  int64_t s[6] = {1, 1, 1, 1, 1, 1};
  for (int64_t d = 0; d < ndim && d < 6; ++d) s[d] = sizes[d];
  int64_t n = s[0] * s[1] * s[2] * s[3] * s[4] * s[5];
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = out.offset, x = a.offset, y = b.offset;
    for (int64_t d = (ndim < 6 ? ndim : 6) - 1; d >= 0; --d) {
      const int64_t k = rest % s[d];
      rest /= s[d];
      o += k * out.stride[d];
      x += k * a.stride[d];
      y += k * b.stride[d];
    }
    out.data[o] += value * a.data[x] * b.data[y];
  }
""",
    "value cast through int (to quarters)": _INDEX
    + "    out.data[o] += ((float)(int)(value * 4) / 4) * a.data[x] * b.data[y];\n  }\n",
    "value rounded to two decimals": _INDEX
    + "    const float cents = value * 100 + (value < 0 ? -0.5f : 0.5f);\n"
    "    out.data[o] += ((float)(long)cents / 100) * a.data[x] * b.data[y];\n  }\n",
}


# Right kernels in styles other than the reference's.
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
    "the printed prelude pasted above the kernel": learner.PRELUDE + REFERENCE_KERNEL,
}

CAUSES = {  # flaw: the words its feedback must contain
    "with offsets, still flat": "as if a and b were laid out like out",
    "the output's strides for all three": "as if a and b were laid out like out",
    "no offsets": "an output with a storage offset",
    "the output's offset only": "inputs with a storage offset",
    "two dims only": "a permuted 3-d output",
    "up to three dims": "a 4-d output",
    "value hard-coded": "used value 0.5",
    "value ignored": "ignored `value`",
    "overwrites": "overwrote out",
    "writes into an input": "wrote into an input",
    "b through a's strides": "a transposed a and a b with a storage offset",
    "b at a's index": "a transposed a and a b with a storage offset",
    "a's and b's offsets swapped": "a transposed a and a b with a storage offset",
    "a temporary never copied back": "must be copied back",
    "copied back in memory order": "into the wrong elements of out",
    "square: sizes[0] for both dims": "does not reach every index",
    "up to four dims": "a 5-d output",
    "value squared": "used value 0.25",
    "up to five dims (the notebook names 5-d)": "a 6-d output",
    "the naive loop when all strides agree": (
        "laid out alike that is right only when the elements have no gaps"
    ),
    "the body before the bound is checked": "an empty (4, 0) output",
    "an inner loop over sizes[ndim - 1]": "left a 0-d output unchanged",
    "contiguous taken to mean a last stride of 1": "an expanded (stride 0) input",
    "offsets in 32-bit ints": "lost track of offsets past 2^32",
    "offsets in unsigned ints": "lost track of offsets past 2^32",
    "a fixed-size index array of 6 dims": "index past the end of a fixed-size array",
    "sizes copied into an array of 6, the rest taken as 1": "a 7-d output",
    "value cast through int (to quarters)": "used value 2.5, not the `value` passed in",
    "value rounded to two decimals": "used value 2.72, not the `value` passed in",
}
CORPORA = (
    Corpus(
        "07.write_kernel",
        write_kernel,
        wrong={
            **{
                flaw: ((lambda body=body: _kernel_variant(body)), CAUSES[flaw])
                for flaw, body in WRONG_KERNELS.items()
            },
            "a double value": (
                lambda: REFERENCE_KERNEL.replace("float value", "double value"),
                "keep the skeleton's signature",
            ),
        },
        right={style: (lambda source=source: source) for style, source in RIGHT_KERNELS.items()},
    ),
)
