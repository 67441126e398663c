"""01.loss_floor and 01.floor: each wrong answer is rejected, and told the mistake it makes."""

from __future__ import annotations

from course.exercises import check
from course.model.data import make_data
from course.model.runs import dataset
from course.story.exercises import floor
from tests.corpus import corpus_tests
from tests.story.exercises.corpus_floor import CORPORA, best_possible_loss, error

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_every_mistake_differs_from_the_floor_on_the_course_data():
    """A mistake that happened to give the floor could never be named: none does."""
    want = floor.best_possible_loss(dataset())
    assert all(not floor._close(m(dataset()).item(), want) for _, m in floor.MISTAKES)


def test_the_checkers_truth_is_the_notebooks_answer():
    assert all(
        floor.best_possible_loss(data) == best_possible_loss(data)
        for data in floor._floor_cases().values()
    )


def test_the_floor_is_kept_as_it_comes_summation_order_aside():
    """Rounded to 4 decimals is what a printout shows (0.0383): typed in, it must not pass."""
    want = floor.best_possible_loss(dataset())
    for places in (2, 3, 4, 5, 6):
        verdict = check("01.floor", round(want, places))
        assert not verdict.passed and f"rounded to {places} decimals" in verdict.message


def test_a_cell_that_changes_the_course_data_changes_only_its_copy():
    """dataset() hands out copies: `data.x -= ...` in one cell cannot skew a later check."""
    dataset().x.mul_(2)
    want = floor.best_possible_loss(dataset())
    assert check("01.floor", want).passed and check("01.loss_floor", best_possible_loss).passed


def test_a_miss_on_the_course_data_does_not_show_its_floor():
    """That number is 01.floor's answer: a failed 01.loss_floor must not print it."""
    want = floor.best_possible_loss(dataset())
    verdict = check("01.loss_floor", lambda data: error(data)[:256].pow(2).sum(-1).mean().item())
    shown = str(verdict)
    assert not verdict.passed and "the course's data" in shown and "expected: 01.floor" in shown
    assert f"{want:.4f}" not in shown and repr(want) not in shown


def test_the_course_data_are_what_make_data_makes():
    assert floor.changed_field(dataset(), make_data()) is None


def test_the_hidden_datasets_include_one_without_noise():
    assert floor.best_possible_loss(floor._floor_cases()["data without noise"]) == 0.0


def test_the_offset_data_tell_the_variance_from_the_floor():
    """Centred noise hides a variance-based rule; the offset dataset must not."""
    data = floor._other_data()["data whose noise is not centred (a 0.03 offset in every dimension)"]
    variance = (error(data).var() * data.x.shape[1]).item()
    assert not floor._close(variance, floor.best_possible_loss(data))
