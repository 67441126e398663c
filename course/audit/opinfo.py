"""PyTorch's own OpInfo checks, run against the emulated device: what they catch, what they miss.

PyTorch tests every operator through its OpInfo database
(`torch.testing._internal.common_methods_invocations.op_db`): sample inputs per op and dtype, and
generic tests instantiated once per device type. Two of them are about layouts, in
test/test_ops.py's `TestCommon`: `test_noncontiguous_samples` makes every *input*
non-contiguous and compares the out-of-place result, and `test_out` calls the `out=` variant
with an `out` poisoned with NaN and then with a non-contiguous `out`. No OpInfo test calls the
in-place variant on a non-contiguous `self` (pytorch#74544, pytorch#82660), which is the call
Adam makes.

The wheel ships the OpInfo database and the device-test machinery but not test/test_ops.py, so
`StoryChecks` below repeats those two tests' checks (the forward half of the first) and is
instantiated for the emulated PrivateUse1 device exactly as PyTorch's out-of-tree test backend
(openreg) instantiates its own: `instantiate_device_type_tests(cls, scope, only_for=(name,))`.
All of this is internal API: if it is missing, `opinfo_rows` says so instead of failing.
"""

from __future__ import annotations

import functools
import io
import logging
import unittest

import torch

from course.errors import CourseError
from course.tables import text_table

STORY_OPS = ("addcmul", "addcdiv")  # the OpInfo names of the story's ops
TESTS = ("test_noncontiguous_samples", "test_out")


@functools.cache
def _testing():
    """The internal modules, imported once (op_db takes seconds); CourseError if unavailable.

    A CUDA build of torch on a machine without CUDA logs "No CUDA runtime is found" from
    torch.utils.cpp_extension while these import: noise for the learner, so it is muted here.
    """
    quiet = logging.getLogger("torch.utils.cpp_extension")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        from torch.testing import make_tensor
        from torch.testing._internal import common_device_type as device_type
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.testing._internal.common_utils import TestCase
    except Exception as exc:  # missing expecttest, or the internal layout moved
        raise CourseError(
            f"PyTorch's internal test API is not available in torch {torch.__version__} "
            f"({type(exc).__name__}: {exc}); the OpInfo comparison is skipped"
        ) from exc
    finally:
        quiet.setLevel(level)
    return make_tensor, device_type, op_db, TestCase


def unavailable() -> str:
    """Why the OpInfo tests cannot run here ("" when they can)."""
    try:
        _testing()
    except CourseError as exc:
        return str(exc)
    return ""


def _story_checks(chosen: list, make_tensor, device_type, test_case) -> type:
    """The generic test class: the checks of TestCommon's two layout tests, per OpInfo."""

    class StoryChecks(test_case):
        @device_type.ops(chosen, allowed_dtypes=(torch.float32,))
        def test_noncontiguous_samples(self, device, dtype, op):
            for sample in op.sample_inputs(device, dtype):
                strided = sample.noncontiguous()
                expected = op(sample.input, *sample.args, **sample.kwargs)
                self.assertEqual(op(strided.input, *strided.args, **strided.kwargs), expected)

        @device_type.ops(chosen, allowed_dtypes=(torch.float32,))
        def test_out(self, device, dtype, op):
            if not op.supports_out:
                self.skipTest("no out= variant")
            for sample in op.sample_inputs(device, dtype):
                expected = op(sample.input, *sample.args, **sample.kwargs)
                poisoned = torch.full_like(expected, float("nan"))  # case 0
                strided = make_tensor(  # case 1: same shape, non-contiguous
                    expected.shape, dtype=dtype, device=expected.device, noncontiguous=True
                )
                for out in (poisoned, strided):
                    strides = out.stride()
                    op(sample.input, *sample.args, **sample.kwargs, out=out)
                    self.assertEqual(out, expected)
                    self.assertEqual(out.stride(), strides)

    return StoryChecks


def opinfo_rows(profile: str | None = None, ops: tuple[str, ...] = STORY_OPS) -> list[dict]:
    """Run the two tests for `ops` on the emulated device under `profile` (None: the story's);
    one row per test."""
    from course import emps

    make_tensor, device_type, op_db, test_case = _testing()
    profile = emps.get_profile(profile or emps.DEFAULT_PROFILE)  # unknown: a clear error, first
    chosen = [op for op in op_db if op.name in ops and not op.variant_test_name]
    missing = sorted(set(ops) - {op.name for op in chosen})
    if missing:
        raise CourseError(f"no OpInfo named {missing} in torch {torch.__version__}")
    if device_type.PrivateUse1TestBase not in device_type.device_type_test_bases:
        # imported before the emulated device registered itself: add the base it would have had
        device_type.device_type_test_bases.append(device_type.PrivateUse1TestBase)
    scope = {"StoryChecks": _story_checks(chosen, make_tensor, device_type, test_case)}
    # torch.emps.is_available() is False (emps is no accelerator), so the machinery does not
    # translate "emps" to its base's "privateuse1": name both
    name = torch._C._get_privateuse1_backend_name()
    device_type.instantiate_device_type_tests(
        scope["StoryChecks"], scope, only_for=(name, "privateuse1")
    )
    if not scope:
        raise CourseError("PyTorch's device-test machinery instantiated no test for 'emps'")
    (instantiated,) = scope.values()
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(instantiated)
    ids = [test.id() for test in suite]  # the runner empties the suite as it goes
    with emps.use_profile(profile):
        outcome = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
    return _rows(ids, outcome, chosen)


def _rows(ids: list[str], outcome, chosen) -> list[dict]:
    problems = {test.id(): ("FAILED", text) for test, text in outcome.failures + outcome.errors}
    problems |= {test.id(): ("skipped", why) for test, why in outcome.skipped}
    rows = []
    for test_id in ids:
        name = test_id.rsplit(".", 1)[1]
        which = next(t for t in TESTS if name.startswith(t))
        op = next(o.name for o in chosen if name.startswith(f"{which}_{o.name}_"))
        result, text = problems.get(test_id, ("passed", ""))
        rows.append({"test": which, "op": op, "result": result, "why": _first_line(text)})
    return sorted(rows, key=lambda row: (row["op"], row["test"]))


def _first_line(text: str) -> str:
    """The assertion's own message, not the traceback around it."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("AssertionError", "Exception:", "RuntimeError")):
            return line.split(": ", 1)[-1][:80]
    return lines[0][:80] if lines else ""


def opinfo_table(profile: str | None = None, ops: tuple[str, ...] = STORY_OPS) -> str:
    """The rows as a text table, or one clear line when the internal test API is missing."""
    missing = unavailable()
    if missing:
        return missing
    return text_table(opinfo_rows(profile, ops))
