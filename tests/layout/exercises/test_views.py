"""04.view_rules: each wrong rule in the corpus is told its own cause, naming the rule."""

from __future__ import annotations

from course.exercises import check, solution
from tests.corpus import (
    corpus_tests,
    reference,
)
from tests.layout.exercises.corpus_views import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def _calls_a_blank(*args):
    raise NotImplementedError("your code here")


def test_view_rules_need_all_three_functions():
    assert "dict of your three functions" in check("04.view_rules", lambda *a: a).message
    rules = reference("04.view_rules")
    assert check("04.view_rules", rules).passed
    blank = {**rules, "permute": lambda *a: _calls_a_blank()}
    verdict = check("04.view_rules", blank)
    assert "not attempted" in verdict.message and "'permute' rule" in verdict.message


def test_the_solution_shows_all_three_rules(monkeypatch):
    from course import exercises

    monkeypatch.setitem(exercises._INSTRUCTOR, "on", True)
    shown = solution("04.view_rules")
    assert "def after_T" in shown and "def step_slice" in shown and "def permute" in shown
