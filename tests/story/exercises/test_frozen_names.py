"""01.frozen_names: each wrong answer fails on the run that exposes it, told why; the hand-made
runs hide below every tolerance."""

from __future__ import annotations

import pytest
import torch

from course.exercises import check
from course.story.exercises import frozen_names
from tests.corpus import corpus_tests
from tests.story.exercises import corpus_frozen
from tests.story.exercises.corpus_frozen import by_gradients, frozen_by_loop

CORPORA = tuple(c for c in corpus_frozen.CORPORA if c.name == "01.frozen_names")
CASES = {case.what: case for case in frozen_names.CASES}


(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_the_cases_disagree_so_no_constant_passes():
    answers = {frozen_names.expected(i) for i in range(len(frozen_names.CASES))}
    assert {(), ("encoder.weight",), ("encoder.bias", "encoder.weight")} <= answers


@pytest.mark.parametrize("index", [i for i, c in enumerate(frozen_names.CASES) if c.subtle])
def test_each_subtle_run_moves_exactly_one_tensor_or_every_one(index):
    """The edits change one tensor, invisibly to partial comparisons; lr 1e-8 moves all."""
    case = frozen_names.CASES[index]
    moved = 4 - len(frozen_names.expected(index))
    assert moved == (4 if "lr = 1e-8" in case.what else 1)


def _edited(what: str, tensor: str) -> tuple[torch.Tensor, torch.Tensor]:
    """One tensor of a small CPU model before and after the hand-made run named `what`."""
    case = next(case for name, case in CASES.items() if name.startswith(what))
    model = case.make()
    before = model.get_parameter(tensor).detach().clone()
    case.train(model)
    return before, model.get_parameter(tensor).detach()


def test_the_tiny_and_the_one_step_edits_hide_below_any_tolerance():
    """1e-38 from 0 passes every absolute tolerance, one step of the largest weight rtol=1e-6."""
    bias, tiny = _edited("a run that moved one value of encoder.bias from 0", "encoder.bias")
    decoder, step = _edited("a run that moved decoder.weight's largest", "decoder.weight")
    assert 0 < (tiny - bias).abs().max().item() < 1e-30
    assert torch.allclose(step, decoder, rtol=1e-6, atol=0)
    assert not step.equal(decoder) and not tiny.equal(bias)


def test_the_sum_keeping_edit_keeps_the_sum_bitwise():
    before, after = _edited("a run that moved encoder.bias up by 0.5", "encoder.bias")
    assert after.sum().item() == before.sum().item() == 0.0 and not after.equal(before)


def test_the_swap_keeps_the_sorted_values_and_the_first_element():
    before, after = _edited("a run that swapped two values", "encoder.weight")
    assert after.flatten().sort()[0].equal(before.flatten().sort()[0])
    assert after[0, 0] == before[0, 0] and not after.equal(before)


def test_a_miss_on_the_story_profile_does_not_name_what_froze():
    """The story profile's frozen names are 01.frozen's answer: a failed check hides them."""
    shown = str(check("01.frozen_names", by_gradients()))
    assert "the story's profile" in shown and "encoder.weight" not in shown


def test_the_pass_message_does_not_give_the_story_run_away():
    """01.frozen measures the story's run next: the frozen_names pass must not name it."""
    verdict = check("01.frozen_names", frozen_by_loop)
    assert verdict.passed and "encoder.weight" not in verdict.message
