"""05.keys_that_run: hidden calls that vary the op, the tensor and the thread; each wrong walk
told its own mistake."""

from __future__ import annotations

import pytest

from course.dispatch.exercises import keys_that_run
from course.exercises import check
from tests.corpus import assert_told_its_cause, corpus_cases

CAUSES = {
    "05.keys_that_run": (
        "is a fallthrough runs no kernel",  # fallthroughs not skipped
        "this thread's keys",  # the tensor's own key set
        "went on past Python",  # no stop at Python
        "registered_kernels lists what was registered",  # the registrations, not the table
        "wrong order",  # reversed
        "read addcmul_'s table whatever the op",  # the notebook's op
        "keys of a plain CPU tensor whatever the tensor",  # a tensor of its own
        "the same on all",  # the path the notebook printed
        "called call_path, the course's own reader",
        "your walk stopped at AutogradCPU",  # stops at the first kernel
        "your walk stopped at AutogradCPU",  # ends at a key ending in "CPU"
        "the right keys in the wrong order",  # sorted
        "return a list of key names",  # a set
        "this thread includes the Autocast key",  # drops Autocast keys
        "requires_grad does not change the key set",  # autograd only when requires_grad
        "went on past Python",  # stops at Python only for a tensor subclass, not for a mode
        "went on past Python",  # never stops
        "torch.no_grad() does not change the key set",  # drops autograd under no_grad
        "a normal tensor (made outside the mode)",  # inference mode drops ADInplaceOrView too
        "not only for in-place ops",  # ADInplaceOrView kept for in-place ops only
        "more than matrix products",  # Autocast kept for matrix products only
    ),
}


@pytest.mark.parametrize(("name", "index", "cause"), corpus_cases(CAUSES))
def test_each_wrong_answer_is_told_its_cause(name, index, cause):
    assert_told_its_cause(name, index, cause)


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


def test_a_tuple_of_the_right_keys_passes_and_a_string_is_told_to_be_a_list():
    reference = keys_that_run._reference()
    assert check("05.keys_that_run", lambda op, t: tuple(reference(op, t))).passed
    assert "return a list of key names" in check("05.keys_that_run", lambda op, t: "CPU").message
