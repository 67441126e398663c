"""Notebook 07's exercises and prediction: compiled kernels that must follow every layout.

The learner predicts the naive C++ kernel's scramble on paper (`07.predict_scramble`: committed
once, in the journal, and refused once the naive kernel has run in the notebook), writes a
compiled kernel that is right on every layout (`07.write_kernel`, built and run in a child
process by course.kernels.cpp.learner), and covers a matrix with tiles (`07.tiles`, whose every
write into `out` is recorded, so a loop that is one library call, walks rows or writes into a
copy is told so, whatever its values).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from course import journal
from course.errors import CourseError
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    not_attempted,
    passed,
    register,
    register_prediction,
)
from course.kernels.cpp import build, learner
from course.kernels.cpp.harness import naive_model, scramble_inputs
from course.kernels.cpp.learner import SKELETON
from course.layout.named import laid_out

# ---- 07.predict_scramble -------------------------------------------------------------------------


def scramble_case() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The exercise's inputs: a zero transposed (2, 3) output, t1 = 0..5, t2 = ones."""
    return scramble_inputs(2, 3)


def _known_mistakes() -> list[tuple[list[list[float]], str]]:
    """Grids a learner plausibly writes, and what each one shows they thought."""
    swapped = [[float(2 * r + c) for c in range(3)] for r in range(2)]
    return [
        (
            torch.addcmul(*scramble_case()).tolist(),
            "that is torch's (correct) answer; the naive kernel writes element i of t1 to "
            "memory slot i of the output, and reads nothing about strides",
        ),
        (
            swapped,
            "you put out[r][c] at memory slot r * 2 + c, as if its strides were (2, 1); they "
            "are (1, 2), so out[r][c] sits at slot r * 1 + c * 2",
        ),
        (
            [[0.0] * 3, [0.0] * 3],
            "the naive kernel does write: every memory slot of out gets a value (unlike 06's "
            "lost write, nothing is copied away); the question is which cell each slot is",
        ),
    ]


SCRAMBLE = "07.predict_scramble"


def _naive_result() -> list[list[float]]:
    """The naive kernel's result on the exercise's inputs; the checker's own run is not noted."""
    runs = len(build.NAIVE_RUNS)
    try:
        return naive_model(*scramble_case()).tolist()
    finally:
        del build.NAIVE_RUNS[runs:]


def _in_a_notebook() -> bool:
    """Whether this process is an IPython kernel (a learner's notebook, not a test run)."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


def _grid(answer) -> list[list[float]] | Verdict:
    """The answer as 2 rows of 3 floats, or the verdict that says why it is not one."""
    if (
        isinstance(answer, torch.Tensor)
        and answer.stride() == scramble_case()[0].stride()
        and answer.tolist() == _naive_result()
    ):
        return failed(
            "that tensor has out's strides and the naive kernel's values: it was computed by "
            "the course's code (naive_model or the compiled kernel) or by a view laid out like "
            "out, not predicted. Work it out on paper: for each memory slot i, which cell "
            "out[r][c] sits there?",
            f"a tensor with stride {answer.stride()}",
            "your own nested list",
        )
    try:
        grid = torch.as_tensor(answer, dtype=torch.float32).tolist()
    except (TypeError, ValueError, RuntimeError):
        return failed("answer with a nested list of 2 rows of 3 numbers", answer, "2 rows of 3")
    if not (len(grid) == 2 and all(isinstance(r, list) and len(r) == 3 for r in grid)):
        return failed("answer with 2 rows of 3 numbers: out has shape (2, 3)", grid, "2 rows of 3")
    return grid


def check_scramble(answer) -> Verdict:
    """07.predict_scramble: a prediction, committed once (saved in the journal) and only before
    the naive kernel ran in this kernel; judged cell by cell, the full result never shown."""
    grid = _grid(answer)
    if isinstance(grid, Verdict):
        return grid
    earlier = journal.prediction(SCRAMBLE)
    if earlier is not None:
        return _judged_again(json.loads(earlier), grid)
    if build.NAIVE_RUNS and _in_a_notebook():
        return failed(
            f"the naive kernel already ran in this kernel ({build.NAIVE_RUNS[0]}), so its "
            "result may be on screen or in a variable: an answer now would not be a prediction. "
            "Restart the kernel, work the grid out on paper from out's strides, and answer "
            "before running the naive kernel.",
            "an answer after the experiment",
            "a prediction before it",
        )
    journal.record(SCRAMBLE, "predict", choice=json.dumps(grid))
    return _judged(grid)


def _judged_again(committed: list[list[float]], grid: list[list[float]]) -> Verdict:
    """A prediction is made once: the same answer again is judged as before, another one is
    refused with what the committed one got; neither is a new attempt."""
    verdict = _judged(committed)
    if grid != committed:
        verdict = Verdict(
            False,
            f"you committed {committed} for {SCRAMBLE} earlier, and a prediction is made once, "
            "before the experiment: that answer counts, not this one. It was "
            + ("right." if verdict.passed else f"not right: {verdict.message}"),
        )
    verdict.attempted = False  # judged and saved when it was committed
    return verdict


def _judged(yours: list[list[float]]) -> Verdict:
    expected = _naive_result()
    if yours == expected:
        return passed(
            "right: the values 0..5 were written in memory order, and a transposed "
            "output reads memory column by column"
        )
    for grid, cause in _known_mistakes():
        if yours == grid:
            return failed(cause, yours, "the naive kernel's result")
    if sorted(sum(yours, [])) != sorted(sum(expected, [])):
        return failed(
            "out starts at zeros and t2 is ones, so the naive kernel writes t1's six values, "
            "0.0 to 5.0, each exactly once, only in other cells; yours are not those six",
            sorted(sum(yours, [])),
            "0.0 to 5.0, each once, in some arrangement",
        )
    right = [
        [v if v == e else "?" for v, e in zip(r, er, strict=True)]
        for r, er in zip(yours, expected, strict=True)
    ]
    return failed(
        "not what the naive kernel writes (the cells you have right are shown below): for "
        "each memory slot i of out, find which logical cell out[r][c] sits there (its strides "
        "say), then put t1's slot i in it",
        yours,
        f"cells you have right: {right}",
    )


def _scramble_reference():
    # memory slot i gets i; out[r][c] sits in slot r + 2 * c
    return [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


register(
    Exercise(
        name=SCRAMBLE,
        prompt="out = torch.zeros(3, 2).t() (shape (2, 3), stride (1, 2)); "
        "t1 = arange(6).reshape(2, 3); t2 = ones. What does the naive kernel leave in "
        "out.tolist()? A prediction: your first answer is saved and counts, and it must come "
        "before the naive kernel runs.",
        checker=check_scramble,
        hint="Memory slot i of out gets t1's memory slot i (= i). Logical out[r][c] lives at "
        "memory slot r * 1 + c * 2.",
        reference=_scramble_reference,
        answer_words=("[0.0, 2.0, 4.0]", "[1.0, 3.0, 5.0]", "[0., 2., 4.]", "[1., 3., 5.]"),
        wrong_answers=(
            lambda: [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]],
            lambda: [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]],
            lambda: [[0.0, 2.0, 4.0], [1.0, 3.0, 6.0]],
            lambda: [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]],
            lambda: [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
            lambda: naive_model(*scramble_case()),
            lambda: [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]],
            lambda: [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]],
            lambda: torch.zeros(3, 2).t(),
            lambda: [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]],
        ),
    )
)


# ---- 07.write_kernel ---------------------------------------------------------------------------


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
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
    for (int64_t i = 0; i < n; ++i)
      out.data[out.offset + i] += value * a.data[a.offset + i] * b.data[b.offset + i];
    return;
  }
"""
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
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; ++d) n *= sizes[d];
    for (int64_t i = 0; i < n; ++i)
      out.data[out.offset + i] += value * a.data[a.offset + i] * b.data[b.offset + i];
    return;
  }
"""
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


# ---- 07.tiles ----------------------------------------------------------------------------------

TILE_CASES: tuple[tuple[tuple[int, int], int, str, float], ...] = (
    # (shape, tile, output layout, value)
    ((8, 8), 4, "contiguous", 0.5),
    ((64, 48), 16, "transposed", -1.25),
    ((7, 5), 3, "transposed", 2.0),
    ((1, 10), 4, "contiguous", 0.5),
    ((5, 5), 8, "transposed", -0.5),
    ((33, 17), 8, "step-sliced", 1.5),
)


OVERWRITES = {"copy_", "fill_", "zero_", "empty", "set_"}  # writes that ignore what was there


def _storage_key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


@dataclass
class Write:
    """One op's write: into which storage, and where (the written view's layout)."""

    op: str
    storage: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int


class WriteLog(TorchDispatchMode):
    """Every tensor an op writes while active (the schema's mutable arguments and out=)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[Write] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        written = [] if _copy_onto_itself(func, args) else _written(func, args, kwargs)
        result = func(*args, **kwargs)
        self.writes += [
            Write(
                func._schema.name.removeprefix("aten::"),
                _storage_key(t),
                tuple(t.shape),
                tuple(t.stride()),
                t.storage_offset(),
            )
            for t in written
        ]
        return result


def _copy_onto_itself(func, args: tuple) -> bool:
    """Whether this is `view.copy_(view)`: what `out[block] += x` does after its add_ (Python
    stores the updated view back into out[block]); each element gets its own value, no update."""
    if func is not torch.ops.aten.copy_.default or len(args) < 2:
        return False
    dst, src = args[0], args[1]
    return isinstance(src, torch.Tensor) and _layout_of(dst) == _layout_of(src)


def _layout_of(t: torch.Tensor) -> tuple:
    return (_storage_key(t), tuple(t.shape), t.stride(), t.storage_offset(), t.dtype)


def _written(func, args: tuple, kwargs: dict) -> list[torch.Tensor]:
    """The tensors an op's schema marks as written (`Tensor(a!)`)."""
    found = []
    for index, argument in enumerate(func._schema.arguments):
        info = argument.alias_info
        if info is None or not info.is_write:
            continue
        value = args[index] if index < len(args) else kwargs.get(argument.name)
        if isinstance(value, torch.Tensor):
            found.append(value)
    return found


def _slots(t: torch.Tensor, shape, stride, offset: int) -> list[int]:
    """The storage slots a view of t's storage with this layout covers, in its element order."""
    size = t.untyped_storage().nbytes() // t.element_size()
    return torch.arange(size).as_strided(shape, stride, offset).flatten().tolist()


def _cells(out: torch.Tensor) -> dict[int, tuple[int, int]]:
    """out's storage slot -> the (row, col) cell stored there."""
    slots = _slots(out, out.shape, out.stride(), out.storage_offset())
    cols = out.shape[1]
    return {slot: divmod(i, cols) for i, slot in enumerate(slots)}


def check_tiles(fn) -> Verdict:
    """07.tiles: the learner's loop updates out tile by tile, each element once, on hidden
    shapes, tiles, layouts and values; every write into out is recorded."""
    if not callable(fn):
        return failed("give a function, e.g. def tiled_addcmul_(out, t1, t2, value, tile): ...")
    gen = torch.Generator().manual_seed(3)
    for shape, tile, layout, value in TILE_CASES:
        out = laid_out(torch.randn(shape, generator=gen), layout)
        t1, t2 = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
        case = TileCase(shape, tile, layout, value, out, t1, t2)
        verdict = case.check(fn)
        if verdict is not None:
            return verdict
    return passed(
        f"right on {len(TILE_CASES)} shapes, tiles, layouts and values, ragged edges and tiles "
        "larger than the matrix included: every element updated exactly once, one tile finished "
        "before the next"
    )


@dataclass
class TileCase:
    """One hidden call of the learner's tiled loop, and what its recorded writes show."""

    shape: tuple[int, int]
    tile: int
    layout: str
    value: float
    out: torch.Tensor
    t1: torch.Tensor
    t2: torch.Tensor

    @property
    def where(self) -> str:
        return (
            f"on a {self.shape} {self.layout} output with tile {self.tile} and value {self.value}"
        )

    def check(self, fn) -> Verdict | None:
        """None when right; else a failed verdict naming the first problem the writes show."""
        before = self.out.clone()
        inputs = (self.t1.clone(), self.t2.clone())
        expected = torch.addcmul(before, self.t1, self.t2, value=self.value)
        log = WriteLog()
        try:
            with log:
                returned = fn(self.out, self.t1, self.t2, self.value, self.tile)
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(f"{self.where} your function raised {type(exc).__name__}: {exc}")
        if not (torch.equal(self.t1, inputs[0]) and torch.equal(self.t2, inputs[1])):
            return failed(
                f"{self.where} your function wrote into an input (t1 or t2): only out is updated"
            )
        mine = [w for w in log.writes if w.storage == _storage_key(self.out)]
        mine = [w for w in mine if 0 not in w.shape]  # an empty block writes nothing
        if not mine:
            return self._never_written(returned, before, log)
        cell_of = _cells(self.out)
        slots = [_slots(self.out, w.shape, w.stride, w.offset) for w in mine]
        if any(s not in cell_of for written in slots for s in written):
            return failed(f"{self.where} your function wrote outside out's elements")
        cells = [[cell_of[s] for s in written] for written in slots]
        return (
            self._twice_in_a_row(cells, [w.op for w in mine])
            or self._coverage(cells)
            or self._values(before, expected)
            or self._tiling(cells)
        )

    def _twice_in_a_row(self, cells: list[list[tuple[int, int]]], ops: list[str]) -> Verdict | None:
        """Two ops in turn on one block (addcmul_, then mul_ by value): each element is updated
        twice, and that is no overlap of tiles."""
        for i in range(len(cells) - 1):
            if cells[i] and sorted(cells[i]) == sorted(cells[i + 1]):
                return failed(
                    f"{self.where} each block is written by {ops[i]} and then {ops[i + 1]}, so "
                    "every element is updated twice: out += value * t1 * t2 is one op per "
                    "block, out[block].addcmul_(t1[block], t2[block], value=value)",
                    f"{ops[i]}, then {ops[i + 1]}",
                    "one addcmul_ per block",
                )
        return None

    def _never_written(self, returned, before: torch.Tensor, log: WriteLog) -> Verdict:
        if not torch.equal(self.out, before):
            return failed(
                f"{self.where} out changed, but through no torch op the checker can see (numpy, "
                "a raw pointer?): the checker records each torch write into out to see your "
                "tiles. Update out with torch: out[block].addcmul_(...)",
            )
        updated = [w.op for w in log.writes if w.op not in OVERWRITES]
        if updated:
            return failed(
                f"{self.where} your loop updated a copy of out, not out ({updated[0]} into "
                "another tensor): out.contiguous() or clone() of a non-contiguous out is a new "
                "tensor, and writes into it are lost, the Placeholder's bug again. Slice out "
                "itself: out[block].addcmul_(...)",
                "out unchanged",
                "out updated",
            )
        if isinstance(returned, torch.Tensor) and returned is not self.out:
            return failed(
                f"{self.where} you returned your results in a new tensor, but out itself never "
                "changed: the caller keeps out, so update it in place (out[block].addcmul_(...))",
                "out unchanged",
                "out updated",
            )
        return failed(f"{self.where} out never changed", "out unchanged", "out updated")

    def _coverage(self, cells: list[list[tuple[int, int]]]) -> Verdict | None:
        rows, cols = self.shape
        count = torch.zeros(self.shape, dtype=torch.int64)
        for written in cells:
            for r, c in written:
                count[r, c] += 1
        if (count > 1).any():
            r, c = (count > 1).nonzero()[0].tolist()
            return failed(
                f"{self.where} element ({r}, {c}) was updated {int(count[r, c])} times: do your "
                "tiles overlap? Step the loops by the tile size",
                f"{int((count > 1).sum())} elements updated twice or more",
                "every element updated exactly once",
            )
        if (count == 0).any():
            r, c = (count == 0).nonzero()[0].tolist()
            return failed(
                f"{self.where} element ({r}, {c}) was never updated: {self._missed(count == 0)}",
                f"{int((count == 0).sum())} of {count.numel()} elements never updated",
                "every element updated exactly once",
            )
        return None

    def _missed(self, missed: torch.Tensor) -> str:
        """Why these elements were never updated, read from which ones they are."""
        rows, cols = self.shape
        row = torch.arange(rows)[:, None].expand(rows, cols)
        col = torch.arange(cols)[None, :].expand(rows, cols)
        ragged_rows, ragged_cols = (
            row >= rows // self.tile * self.tile,
            col >= cols // self.tile * self.tile,
        )
        if any(missed.equal(m) for m in (ragged_rows, ragged_cols, ragged_rows | ragged_cols)):
            return (
                "do your tiles reach the last rows and columns when the size is not a "
                "multiple of the tile? (a slice past the end simply stops at the edge)"
            )
        last = self.tile - 1
        if self.tile > 1 and bool(
            ((row % self.tile == last) | (col % self.tile == last))[missed].all()
        ):
            return (
                "each tile's last row or column is missing: slice(r0, r0 + tile) already "
                "stops before r0 + tile, so a block needs no - 1"
            )
        return (
            "do your loops reach every tile, the last one included, and do your row loop and "
            "column loop each walk their own dimension (rows: range(0, out.shape[0], tile); "
            "columns: range(0, out.shape[1], tile))? out need not be square"
        )

    def _values(self, before: torch.Tensor, expected: torch.Tensor) -> Verdict | None:
        if torch.allclose(self.out, expected, atol=1e-5):
            return None
        if torch.allclose(self.out, expected - before, atol=1e-5):
            return failed(
                f"{self.where} your loop replaced out's blocks with value * t1 * t2 instead of "
                "adding it to what they held (copy_ or = where addcmul_ belongs): the update is "
                "out += value * t1 * t2",
            )
        product, added = (self.t1 * self.t2).flatten(), (self.out - before).flatten()
        used = float(added @ product / (product @ product))
        if abs(used - self.value) > 1e-3 and torch.allclose(added, used * product, atol=1e-4):
            return failed(
                f"{self.where} your loop used value {used:.3g}, not the value passed in",
                f"value {used:.3g}",
                f"value {self.value}",
            )
        return failed(
            f"{self.where} some elements got wrong values: each block of out gets value * t1 * t2 "
            "added, from the same block of t1 and of t2 (the same slices for all three)",
            "",
            "torch's addcmul_",
        )

    def _tiling(self, cells: list[list[tuple[int, int]]]) -> Verdict | None:
        rows, cols = self.shape
        one_tile = rows <= self.tile and cols <= self.tile
        if len(cells) == 1 and not one_tile:
            return failed(
                f"{self.where} your loop made one call on the whole matrix: that is not tiled. "
                "Cut out into tile x tile blocks and update one block per call",
                "1 call",
                "one call per tile",
            )
        visited: list[tuple[int, int]] = []
        for written in cells:
            tiles = {(r // self.tile, c // self.tile) for r, c in written}
            if len(tiles) > 1:
                in_rows = {r for r, _ in written}
                if len(in_rows) == 1:
                    return failed(
                        f"{self.where} your loop walks rows: one call covers row {in_rows.pop()} "
                        "across several tiles. A tiled loop finishes a tile x tile block before "
                        "the next",
                        "a row per call",
                        "a tile per call",
                    )
                if len({c for _, c in written}) == cols > self.tile:
                    return failed(
                        f"{self.where} one call covers whole rows, every column: a block is "
                        "out[r0:r0 + tile, c0:c0 + tile], both dims in one index (out[a:b][c:d] "
                        "slices the rows twice)",
                        "whole rows per call",
                        "a tile per call",
                    )
                return failed(
                    f"{self.where} one call covers parts of {len(tiles)} tiles: blocks must be "
                    "tile x tile, starting at multiples of the tile",
                )
            (here,) = tiles
            if visited and visited[-1] != here and here in visited:
                return failed(
                    f"{self.where} your loop leaves tile {here} and comes back to it later: "
                    "finish one tile x tile block before the next (are your blocks the size of "
                    "the tile argument? do you walk rows element by element?)",
                    "tiles revisited",
                    "each tile finished at once",
                )
            visited.append(here)
        return None


def _tiles_reference():
    def tiled_addcmul_(out, t1, t2, value, tile):
        rows, cols = out.shape
        for r0 in range(0, rows, tile):
            for c0 in range(0, cols, tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                out[block].addcmul_(t1[block], t2[block], value=value)
        return out

    return tiled_addcmul_


def _tiles_wrong(
    stop_short=False, overlap=False, swapped=False, fixed_value=None, fixed_tile=None, copy=False
):
    def tiled_addcmul_(out, t1, t2, value, tile):
        tile = fixed_tile or tile
        value = value if fixed_value is None else fixed_value
        work = out.contiguous() if copy else out
        rows, cols = work.shape
        step = tile - 1 if overlap and tile > 1 else tile
        row_end = rows // tile * tile if stop_short else rows
        col_end = cols // tile * tile if stop_short else cols
        for r0 in range(0, row_end, step):
            for c0 in range(0, col_end, step):
                rs, cs = slice(r0, r0 + tile), slice(c0, c0 + tile)
                block = (cs, rs) if swapped else (rs, cs)
                work[block].addcmul_(t1[block], t2[block], value=value)
        return work

    return tiled_addcmul_


def _one_call():
    def tiled_addcmul_(out, t1, t2, value, tile):
        return out.addcmul_(t1, t2, value=value)

    return tiled_addcmul_


def _walks_rows():
    def tiled_addcmul_(out, t1, t2, value, tile):
        for r in range(out.shape[0]):
            out[r].addcmul_(t1[r], t2[r], value=value)
        return out

    return tiled_addcmul_


def _new_tensor():
    def tiled_addcmul_(out, t1, t2, value, tile):
        result = torch.empty_like(out)
        for r0 in range(0, out.shape[0], tile):
            for c0 in range(0, out.shape[1], tile):
                block = (slice(r0, r0 + tile), slice(c0, c0 + tile))
                result[block] = torch.addcmul(out[block], t1[block], t2[block], value=value)
        return result

    return tiled_addcmul_


def _tiles_by(blocks, value_of=lambda value: value, second=None):
    """A tiled loop over the blocks `blocks(rows, cols, tile)` gives, with one slip in the value
    (`value_of`) or in which block of t2 it reads (`second`)."""

    def tiled_addcmul_(out, t1, t2, value, tile):
        for block in blocks(*out.shape, tile):
            other = block if second is None else second(block, tile)
            out[block].addcmul_(t1[block], t2[other], value=value_of(value))
        return out

    return tiled_addcmul_


def _square(rows, cols, tile):  # both loops bounded by the row count
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows, tile)
        for c in range(0, rows, tile)
    ]


def _one_short(rows, cols, tile):  # a block of tile - 1, as if the slice's end were included
    return [
        (slice(r, r + tile - 1), slice(c, c + tile - 1))
        for r in range(0, rows, tile)
        for c in range(0, cols, tile)
    ]


def _last_tile_dropped(rows, cols, tile):  # range(0, rows - tile, tile)
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows - tile, tile)
        for c in range(0, cols - tile, tile)
    ]


def _every_tile(rows, cols, tile):
    return [
        (slice(r, r + tile), slice(c, c + tile))
        for r in range(0, rows, tile)
        for c in range(0, cols, tile)
    ]


def _tiles_doing(update):
    """A tiled loop over every tile whose update of one block, update(out_block, t1_block,
    t2_block, value), is not out += value * t1 * t2."""

    def tiled_addcmul_(out, t1, t2, value, tile):
        for block in _every_tile(*out.shape, tile):
            update(out[block], t1[block], t2[block], value)
        return out

    return tiled_addcmul_


def _first_block_of_t2(block, tile):  # t2's first tile, cut to the block's size
    rows, cols = (s.stop - s.start for s in block)
    return (slice(0, rows), slice(0, cols))


def _chained_slices():
    def tiled_addcmul_(out, t1, t2, value, tile):
        for r0 in range(0, out.shape[0], tile):
            for c0 in range(0, out.shape[1], tile):  # [r0:..][c0:..] slices the rows twice
                rows, cols = slice(r0, r0 + tile), slice(c0, c0 + tile)
                out[rows][cols].addcmul_(t1[rows][cols], t2[rows][cols], value=value)
        return out

    return tiled_addcmul_


def _through_numpy():
    def tiled_addcmul_(out, t1, t2, value, tile):
        mine, a, b = out.numpy(), t1.numpy(), t2.numpy()
        for block in _every_tile(*out.shape, tile):
            mine[block] += value * a[block] * b[block]
        return out

    return tiled_addcmul_


register(
    Exercise(
        name="07.tiles",
        prompt="Write tiled_addcmul_(out, t1, t2, value, tile): out += value * t1 * t2 for a 2-d "
        "out, in place, one tile x tile block at a time (finish a block before the next), every "
        "element exactly once.",
        checker=check_tiles,
        hint="Two loops over the tiles' top-left corners, range(0, rows, tile) and "
        "range(0, cols, tile); a slice past the end simply stops at the edge. Update the block "
        "of out itself: out[block].addcmul_(t1[block], t2[block], value=value).",
        reference=_tiles_reference,
        wrong_answers=(
            lambda: _tiles_wrong(stop_short=True),
            lambda: _tiles_wrong(overlap=True),
            lambda: _tiles_wrong(swapped=True),
            _one_call,
            _walks_rows,
            lambda: _tiles_wrong(copy=True),
            _new_tensor,
            lambda: _tiles_wrong(fixed_value=0.5),
            lambda: _tiles_wrong(fixed_tile=2),
            lambda: _tiles_by(_square),
            lambda: _tiles_by(_one_short),
            lambda: _tiles_by(_last_tile_dropped),
            lambda: _tiles_by(_every_tile, value_of=abs),
            lambda: _tiles_by(_every_tile, second=_first_block_of_t2),
            _chained_slices,
            _through_numpy,
            lambda: _tiles_doing(lambda out, a, b, value: out.copy_(value * a * b)),
            lambda: _tiles_doing(lambda out, a, b, value: out.addcmul_(a, b).mul_(value)),
            lambda: _tiles_doing(lambda out, a, b, value: out.add_(a * b + value)),
        ),
    )
)


# ---- predictions for 07 -------------------------------------------------------------------------


def _cache_lines_outcome() -> str:
    transposed = torch.zeros(1024, 1024).t()  # the story's layout: stride (1, 1024)
    addresses = [transposed[0, j].data_ptr() for j in range(16)]  # 16 steps along a row
    lines = len({address // 64 for address in addresses})  # 64-byte cache lines
    return "1: they share one line" if lines == 1 else f"{lines}: one line per element"


register_prediction(
    Prediction(
        "07.cache_lines",
        "Reading 16 consecutive elements along a row of a transposed (1024, 1024) float32 "
        "matrix: how many 64-byte cache lines does the CPU fetch?",
        ("1: they share one line", "16: one line per element"),
        _cache_lines_outcome,
        "Along a row of a transposed matrix consecutive elements are 1024 floats (4 kB) apart, "
        "so each one sits in its own cache line, and the other 15 floats of that line are "
        "wasted unless the line is still in cache when the loop comes back for them.",
    )
)
