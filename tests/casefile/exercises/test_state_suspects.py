"""09.state_suspects: each known wrong rule fails with its cause, on hidden optimizers; right rules
written other ways pass."""

from __future__ import annotations

from course.casefile.exercises.state_suspects import STATE_CASES
from course.exercises import check
from tests.casefile.exercises.corpus_state_suspects import CORPORA
from tests.corpus import corpus_tests

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def _made(label_start: str):
    """The hidden (model, optimizer) whose label starts so."""
    return next(
        make for label, (make, _, _) in STATE_CASES.items() if label.startswith(label_start)
    )()


def test_the_before_the_first_step_case_really_has_no_state_yet():
    model, optimizer = _made("the story's SAE before its first Adam step")
    assert not optimizer.state and not model.encoder.weight.is_contiguous()


def test_the_hidden_optimizers_are_what_their_labels_say():
    model, optimizer = _made("Adam on a 3-D per-head projection")
    state = optimizer.state[model.heads]["exp_avg"]
    assert state.stride()[-1] == 1 and not state.is_contiguous()
    model, optimizer = _made("the story's SAE, its encoder weight made contiguous")
    weight = model.encoder.weight
    assert weight.grad.is_contiguous() and not optimizer.state[weight]["exp_avg"].is_contiguous()
    model, optimizer = _made("the story's SAE with Adagrad, before its first step")
    weight = model.encoder.weight
    assert weight.grad is None and not optimizer.state[weight]["sum"].is_contiguous()
    model, optimizer = _made("Adam on a Linear whose weight is a [:, :2] slice")
    assert not model.weight.is_contiguous()
    assert all(value.is_contiguous() for value in optimizer.state[model.weight].values())
    model, _ = _made("Adam on a square SAE whose encoder weight is a view of the decoder's")
    encoder, decoder = model.encoder.weight, model.decoder.weight
    assert encoder.shape == decoder.shape and encoder.data_ptr() == decoder.data_ptr()


def test_an_answer_that_raises_is_told_on_which_model():
    def state_suspects(model, optimizer):  # looks up Adam's keys, which SGD's state does not have
        return [
            (name, key)
            for name, p in model.named_parameters()
            if p in optimizer.state
            for key in ("exp_avg", "exp_avg_sq")
            if not optimizer.state[p][key].is_contiguous()
        ]

    message = check("09.state_suspects", state_suspects).message
    assert "for SGD with momentum" in message and "raised KeyError" in message
    assert "instead of expecting Adam's" in message
