"""Notebook 08's checkers: the messages name the case that went wrong, never the answer."""

from __future__ import annotations

import torch

from course.exercises import check, get, predict, reveal


def test_a_nan_unaware_judge_fails_on_the_poisoned_output():
    def naive(before, after, expected):
        if torch.allclose(after, expected, equal_nan=True):
            return "ok"
        return "silent-no-write" if torch.equal(after, before) else "wrong-values"

    verdict = check("08.verdict", naive)
    assert not verdict.passed and "NaN-poisoned output the op never wrote" in verdict.message


def test_a_judge_that_calls_untouched_elements_lost_fails_on_clamp():
    def eager(before, after, expected):
        if (after == before).any():
            return "silent-no-write"
        return "ok" if torch.allclose(after, expected, equal_nan=True) else "wrong-values"

    verdict = check("08.verdict", eager)
    assert not verdict.passed and "silent-no-write" in verdict.yours


def test_a_string_is_not_read_as_letters():
    verdict = check("08.broken_on_2_4", "normal_")
    assert not verdict.passed and "not str 'normal_'" in verdict.message
    assert "aten::n" not in verdict.message


def test_a_wrong_set_is_told_what_is_missing_without_the_answer():
    verdict = check("08.broken_on_2_4", {"aten::addcmul_"})
    assert not verdict.passed and "5 op(s)" in verdict.message
    assert "normal_" not in str(verdict)


def test_the_layout_prediction_runs_the_real_audit():
    assert get("08.broken_on_2_4").reference() >= {"aten::normal_"}
    predict("08.which_layouts", "every layout")
    assert "the experiment says 'every non-contiguous output'" in reveal("08.which_layouts")
