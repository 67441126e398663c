"""The adam.py locator finds the story's lines by content, and fails clearly when they vanish."""

from __future__ import annotations

import importlib
import inspect
import textwrap
from pathlib import Path

import pytest
import torch

from course.adam.source import code_paths, locate, observed_path, read_rule
from course.errors import CourseError

ADAM = importlib.import_module("torch.optim.adam")
REAL = inspect.getsource(ADAM)

TINY = textwrap.dedent("""
    class Adam:
        def _init_group(self, group, state, p):
            state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            state["exp_avg_sq"] = torch.zeros_like(
                p, memory_format=torch.preserve_format
            )

    def _single_tensor_adam(params, exp_avg, exp_avg_sq, capturable, differentiable):
        for param in params:
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            if capturable or differentiable:
                param.addcdiv_(exp_avg, denom)  # not the default path
            else:
                param.addcdiv_(exp_avg, denom, value=-step_size)
""")


def test_the_file_is_named_from_the_installed_packages_not_this_machine():
    found = locate()
    machine = str(Path(torch.__file__).resolve().parents[1])
    assert found.shown_name == "torch/optim/adam.py"
    assert "<code>torch/optim/adam.py</code>" in found.html() and machine not in found.html()
    assert locate(TINY).shown_name == "<string>"


def test_installed_source_excerpts_have_real_line_numbers():
    found = locate()
    assert found.filename == inspect.getsourcefile(ADAM)
    file_lines = Path(found.filename).read_text(encoding="utf-8").splitlines()
    for row in found.rows():
        assert row["code"].splitlines()[0] in file_lines[row["line"] - 1]
    labels = [row["what"] for row in found.rows()]
    assert {
        "state['exp_avg']",
        "state['exp_avg_sq']",
        "lerp_",
        "mul_",
        "addcmul_",
        "addcdiv_",
    } <= set(labels)


def test_line_rows_show_each_excerpts_first_line_without_its_comment():
    found = locate()
    rows = found.line_rows()
    assert [r["what"] for r in rows] == [r["what"] for r in found.rows()]
    for row, excerpt in zip(rows, found.state + found.ops, strict=True):
        assert "\n" not in row["code"] and "  #" not in row["code"]
        assert row["code"] in excerpt.code and row["line"] == excerpt.lineno


def test_installed_default_path_ops_are_the_ones_the_story_quotes():
    ops = {e.label: e.code for e in locate().ops}
    assert "exp_avg.lerp_(grad" in ops["lerp_"]
    assert "exp_avg_sq.mul_(beta2).addcmul_(grad, grad" in ops["addcmul_"]
    assert "param.addcdiv_(exp_avg, denom, value=" in ops["addcdiv_"]
    assert len(locate().ops) == 4  # the differentiable/capturable branches are skipped


def test_tiny_source_lines_and_default_branch():
    found = locate(TINY)
    lines = {e.label: e.lineno for e in found.state + found.ops}
    assert lines == {
        "state['exp_avg']": 4,
        "state['exp_avg_sq']": 5,
        "lerp_": 11,
        "mul_": 12,
        "addcmul_": 12,
        "addcdiv_": 16,
    }
    assert found.state[1].end_lineno == 7


def test_html_highlights_and_numbers_the_lines():
    page = locate(TINY).html(context=0)
    assert "   16  " in page and "background:#fff3a8" in page
    assert "mul_, addcmul_" in page  # one block for the shared line
    assert "&quot;exp_avg&quot;" in page  # escaped


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("addcmul_(", "addcmul(", "addcmul_"),
        ("exp_avg.lerp_(", "exp_avg.lerp(", "lerp_"),
        ("memory_format=torch.preserve_format", "dtype=None", "preserve_format"),
        ("def _single_tensor_adam(", "def _renamed_adam(", "_single_tensor_adam"),
        ("class Adam", "class Adamax2", "Adam"),
    ],
)
def test_missing_lines_raise_a_clear_error(old, new, message):
    for source in (TINY, REAL):
        assert old in source
        with pytest.raises(CourseError, match=message):
            locate(source.replace(old, new))


def test_ops_only_in_non_default_branches_are_not_accepted():
    only_capturable = TINY.replace("param.addcdiv_(exp_avg, denom, value=-step_size)", "pass")
    with pytest.raises(CourseError, match="addcdiv_"):
        locate(only_capturable)


def test_bad_source_types():
    with pytest.raises(CourseError, match="parse"):
        locate("def broken(:\n")
    with pytest.raises(CourseError, match="module or a string"):
        locate(42)


def test_rule_read_from_torch():
    rule = read_rule()
    assert rule.adam_asks_for_fused is False
    assert torch.Tensor in rule.foreach_types
    assert rule.default_path("cpu") == "single-tensor"


def test_code_paths_match_traced_steps():
    rows = {(r["device"], r["parameter type"]): r["default path"] for r in code_paths()}
    assert rows[("cpu", "Tensor")] == observed_path("cpu") == "single-tensor"
    assert rows[("emps", "EmulatedTensor")] == observed_path("emps") == "single-tensor"
    assert observed_path("cpu", foreach=True) == "foreach"
    assert observed_path("cpu", fused=True) == "fused"
