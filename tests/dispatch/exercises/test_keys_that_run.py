"""05.keys_that_run: hidden calls that vary the op, the tensor and the thread; each wrong walk
told its own mistake."""

from __future__ import annotations

from course.dispatch.exercises import keys_that_run
from tests.corpus import corpus_tests
from tests.dispatch.exercises.corpus_keys_that_run import CORPORA

(
    test_each_wrong_answer_is_told_its_cause,
    test_a_right_answer_written_another_way_passes,
) = corpus_tests(CORPORA)


def test_calls_vary_the_op_the_tensor_and_the_thread():
    calls = keys_that_run.CALLS
    assert len({call.op for call in calls}) >= 4
    labels = " ".join(call.label for call in calls)
    for kind in (
        "meta",
        "emulated",
        "requires grad",
        "dispatch mode",
        "autocast",
        "inference",
        "no_grad",
    ):
        assert kind in labels
    contexts = {call.context for call in calls}
    assert len(contexts) >= 4
    assert [c.op for c in calls if "autocast" in c.label] == ["mm", "addcmul_", "mse_loss"]
