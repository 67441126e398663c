"""Errors during a backward pass on the device reach the caller (Note [An error in a backward
pass on the device] in course.emps.backward_errors). They used to end the process, so the
cases run in a child process: a regression must fail this test, not take pytest down."""

from __future__ import annotations

import textwrap

from tests import forked

SCRIPT = """
import torch
from course import emps


def boom(call):
    raise ValueError("a learner's kernel raised")


weight = torch.ones(3, 2, device="emps").t().requires_grad_()
(weight * 2).sum().backward()  # the first gradient is stored; the next one is added in place
with emps.use_backend(emps.Backend(emps.FIXED_MACOS14, overrides={"add": boom})):
    for _ in range(20):  # many times: CPython specialises code that runs often
        try:
            (weight * 2).sum().backward()
        except ValueError as error:
            message = str(error)
    print("kernel:", message)


def unpack(saved):
    raise KeyError("an unpack hook raised")


x = torch.ones(2, device="emps", requires_grad=True)
for _ in range(20):
    try:
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            y = (x * x).sum()
        y.backward()
    except KeyError as error:
        message = str(error)
print("hook:", message)
(x * 3).sum().backward()
print("after:", x.grad.cpu().tolist())
"""


def test_errors_in_a_backward_pass_are_raised_and_the_process_lives():
    done = forked.python(textwrap.dedent(SCRIPT), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "kernel: a learner's kernel raised" in lines
    assert "hook: 'an unpack hook raised'" in lines
    assert lines[-1] == "after: [3.0, 3.0]"
