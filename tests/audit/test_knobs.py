"""The auditor's knobs: sizes, scalars and inputs find what the default sweep cannot, and every
finding's reproduction line carries them (on a backend the command line cannot rebuild, as plain
PyTorch on the emulated device)."""

from __future__ import annotations

import contextlib
import io

import pytest

from course import emps
from course.audit.cli import cli
from course.audit.core import audit
from course.audit.knobs import Knobs
from course.errors import CourseError
from course.mystery.bugs import PlantedBug, planted_backend
from course.mystery.conditions import Trigger


def _flagged(bug, **knobs):
    results = audit(backend=planted_backend(bug), dtypes="float32", **knobs)
    return [r for r in results if r.flagged]


def _reproduces(bug, line):
    """Run a reproduction line where the bug is planted; how many elements it says differ."""
    printed = io.StringIO()
    with emps.use_backend(planted_backend(bug)), contextlib.redirect_stdout(printed):
        exec(line.replace("; ", "\n"), {})
    return int(printed.getvalue().split(":")[1].split()[0])


@pytest.mark.parametrize(
    "bug, knobs, text",
    [
        (
            PlantedBug(("relu",), Trigger("large", 4096), "lost-write"),
            {"shape": (100, 70)},
            "(100, 70)",
        ),
        (PlantedBug(("relu",), Trigger("unaligned"), "lost-write"), {"shape": (8, 30)}, "(8, 30)"),
        (
            PlantedBug(("masked_fill",), Trigger("negative-scalar"), "sign-dropped"),
            {"scalars": -5.0},
            "-5.0",
        ),
        (
            PlantedBug(("mul",), Trigger("broadcast-input"), "first-element"),
            {"inputs": "broadcast"},
            "torch.rand(48,)",
        ),
        (
            PlantedBug(("addcmul",), Trigger("aliased-input"), "empty-slot"),
            {"inputs": "aliased"},
            "(y, y, y,",
        ),
    ],
)
def test_a_knob_finds_what_the_default_sweep_cannot_and_its_line_reproduces_it(bug, knobs, text):
    op = f"{bug.families[0]}_"
    default = _flagged(bug, ops=op)
    # the default sweep's `large` layout (71,680 elements) finds a size bug itself (issue 36)
    assert [r.layout for r in default] == (["large"] if bug.trigger.kind == "large" else [])
    found = _flagged(bug, ops=op, **knobs)
    assert found, knobs
    line = found[0].reproduction
    assert text in line and "'emps:0'" in line  # the case's device, not a profile by name
    assert _reproduces(bug, line) > 0


def test_a_shape_leaves_out_the_layouts_of_another_rank():
    results = audit("cpu", ops="relu_", dtypes="float32", shape=(300, 70))
    assert {r.layout for r in results} == {
        "contiguous",
        "transposed",
        "step-sliced",
        "storage-offset",
        "out=transposed",
    }
    assert all(r.verdict == "ok" for r in results)


def test_a_registered_profile_gets_the_command_line_with_the_knobs():
    results = audit(
        "emulated:2.2.1-macos14",
        ops="addcmul_",
        layouts="transposed",
        dtypes="float32",
        shape=(40, 30),
        scalars=0.25,
    )
    (result,) = results
    assert result.reproduction.endswith("--layout transposed --shape 40,30 --scalar 0.25")
    assert (
        cli(
            [
                "--device",
                "emulated:2.2.1-macos14",
                "--op",
                "addcmul_",
                "--layout",
                "transposed",
                "--dtype",
                "float32",
                "--shape",
                "40,30",
                "--scalar",
                "0.25",
            ]
        )
        == 0
    )


@pytest.mark.parametrize(
    "knobs, says",
    [
        ({"shape": (0, 3)}, "shape=(0, 3)"),
        ({"shape": (5000, 5000)}, "at most"),
        ({"shape": "300,70"}, "shape='300,70'"),
        ({"shape": ()}, "at least one dimension"),
        ({"scalars": "1"}, "scalars='1'"),
        ({"scalars": (float("nan"),)}, "finite"),
        ({"inputs": "shared"}, "choose one of: fresh, broadcast, aliased"),
    ],
)
def test_bad_knobs_are_refused_with_what_is_allowed(knobs, says):
    with pytest.raises(CourseError, match=says.replace("(", r"\(").replace(")", r"\)")):
        Knobs.of(**knobs)


@pytest.mark.parametrize(
    ("device", "knobs"),
    [
        ("cpu", {"inputs": "broadcast"}),
        ("emulated:fixed-macos14", {"inputs": "broadcast"}),
        ("emulated:macos15", {"inputs": "broadcast"}),
        ("emulated:fixed-macos14", {"inputs": "aliased"}),
        ("emulated:fixed-macos14", {"shape": (70, 90)}),
        ("emulated:fixed-macos14", {"scalars": (-1.5, 0.25)}),
    ],
)
def test_no_knob_invents_a_bug_on_the_cpu_or_a_fixed_profile(device, knobs):
    """Issue 36: broadcast inputs on the `expanded` layout were passed as their first element
    repeated, so a clean backend and the CPU flagged 27 ops (mul_ among them) that their own
    reproduction lines found right. Every op, every layout, float32 and int64."""
    results = audit(device, dtypes=["float32", "int64"], **knobs)
    known = {("aten::gelu_", "out=transposed")} if device == "cpu" else set()  # torch's own
    assert {(r.op, r.layout) for r in results if r.flagged} <= known
    assert not [r for r in results if r.verdict == "error"]


def test_notebook_08s_broadcast_example_flags_nothing_on_the_cpu():
    results = audit("cpu", ops="mul_.Tensor", inputs="broadcast")
    assert results and not [r for r in results if r.flagged]
