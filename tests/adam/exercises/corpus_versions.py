"""03.lost_ops's test data: the notebook's lost_ops and the wrong ones a learner writes, each
keyed by its flaw with the words its feedback must contain. The notebook's lost_ops calls the
learner's own isolate_op; here that is the reference experiment (`isolate_op` below), or one of
03.isolate_op's wrong experiments, to see that lost_ops is told where its experiment failed.
"""

from __future__ import annotations

from collections.abc import Callable

from course import emps
from course.adam import op_isolation
from course.adam.op_isolation import OPS, on_profile
from tests.adam.exercises import corpus_isolating
from tests.corpus import Corpus

isolate_op = corpus_isolating.reference()  # the notebook's lost_ops calls the learner's own


def reference():
    def lost_ops(profile):
        return {
            op
            for op in OPS
            if on_profile(profile, isolate_op, op, "transposed", "contiguous") == "lost"
        }

    return lost_ops


def _with_experiment(experiment: Callable):
    """The reference lost_ops, measuring with another experiment."""

    def lost_ops(profile):
        return {
            op
            for op in OPS
            if on_profile(profile, experiment, op, "transposed", "contiguous") == "lost"
        }

    return lost_ops


def _measured(
    keep: Callable[[str], bool],
    ops: tuple[str, ...] = OPS,
    profile_in_force: bool = False,
    layout: str = "transposed",
    inputs: str = "contiguous",
):
    """lost_ops from the reference experiment, with one flaw: the ops kept, the profile, the
    output layout, the inputs' layout."""

    def lost_ops(profile):
        def one(op):
            if profile_in_force:
                return isolate_op(op, layout, inputs)
            return on_profile(profile, isolate_op, op, layout, inputs)

        return {op for op in ops if keep(one(op))}

    return lost_ops


def _kept_to_the_suspects():
    """All four measured, but only the story's two suspects ever reported."""
    found = _measured(lambda verdict: verdict == "lost")

    def lost_ops(profile):
        return found(profile) & {"addcmul_", "addcdiv_"}

    return lost_ops


def _read_from_the_profile(attribute: str):
    def lost_ops(profile):
        if attribute == "name":
            return {"addcmul_", "addcdiv_"} if profile.name.startswith("2.2.1") else set()
        return {op for op in OPS if op.rstrip("_") in profile.broken}

    return lost_ops


def _by_name():

    def lost_ops(profile):
        found = {
            op: on_profile(profile.name, isolate_op, op, "transposed", "contiguous") for op in OPS
        }
        return {op for op, verdict in found.items() if verdict == "lost"}

    return lost_ops


def _remembered():
    """The sets measured once, for the profiles the notebook lists, and looked up after."""
    measured = {
        p.label: {
            op for op in OPS if on_profile(p, isolate_op, op, "transposed", "contiguous") == "lost"
        }
        for p in emps.PROFILES.values()
    }

    def lost_ops(profile):
        return measured.get(profile.label, set())

    return lost_ops


def _the_story_pair_if_any():
    """Measured, but any loss is taken for the story's two ops."""
    found = _measured(lambda verdict: verdict == "lost")

    def lost_ops(profile):
        return {"addcmul_", "addcdiv_"} if found(profile) else set()

    return lost_ops


def _with_the_course():
    def lost_ops(profile):
        return {op for op in OPS if op_isolation.isolate(op, profile=profile).verdict != "updates"}

    return lost_ops


def _as_a_dict():

    def lost_ops(profile):
        return {op: on_profile(profile, isolate_op, op, "transposed", "contiguous") for op in OPS}

    return lost_ops


def _kept(verdict: str, **flaw) -> Callable:
    """lost_ops from the reference experiment, keeping the ops it finds `verdict`, with a flaw."""
    return lambda: _measured(lambda found: found == verdict, **flaw)


CORPORA = (
    Corpus(
        "03.lost_ops",
        reference,
        wrong={
            "the story's set written down": (
                lambda: lambda profile: {"addcmul_", "addcdiv_"},
                "on every profile: a set written down",
            ),
            "read from the profile's name": (
                lambda: _read_from_the_profile("name"),
                "read from it",
            ),
            "read from the profile's broken families": (
                lambda: _read_from_the_profile("broken"),
                "read from it",
            ),
            "measures the profile in force": (
                _kept("lost", profile_in_force=True),
                "on_profile(profile, isolate_op",
            ),
            "a contiguous output": (
                _kept("lost", layout="contiguous"),
                "never wrote into a transposed output",
            ),
            "only the two suspects measured": (
                _kept("lost", ops=("addcmul_", "addcdiv_")),
                "never measured lerp_",
            ),
            "the ops that update": (_kept("updates"), "those are the ops that update"),
            "the course's own experiment": (_with_the_course, "the course's own experiment"),
            "a dict of verdicts": (_as_a_dict, "returned a dict"),
            "the profile looked up by name": (
                _by_name,
                "looked up the profile 'hidden-addcmul-only' by name",
            ),
            "the sets remembered from the listed profiles": (
                _remembered,
                "remembered from an earlier run",
            ),
            "an isolate_op run on the CPU": (
                lambda: _with_experiment(corpus_isolating.isolate_with("cpu")),
                "ran only on the CPU",
            ),
            "transposed inputs too": (
                _kept("lost", inputs="transposed"),
                "never with contiguous inputs",
            ),
            "all four measured, two kept": (_kept_to_the_suspects, "not only the story's suspects"),
            "an isolate_op from zeros: a lost mul_ unseen": (
                lambda: _with_experiment(corpus_isolating.isolate_comparing("from zeros")),
                "start from non-zero values",
            ),
            "any loss taken for the story's pair": (
                _the_story_pair_if_any,
                "found the CPU's answer in the output, yet your set names them",
            ),
            "a number": (lambda: lambda profile: 42, "return a set of op names, not int 42"),
            "one op's name": (
                lambda: lambda profile: "addcmul_",
                "return a set of op names, not str 'addcmul_'",
            ),
            "kernel families, not op names": (
                lambda: lambda profile: {"addcmul"},
                "'addcmul' is not one of OPS",
            ),
        },
        right={"a loop that adds to a set": lambda: _loop_into_a_set},
    ),
)


def _loop_into_a_set(profile):
    """lost_ops written as a loop, each op measured on the profile and added when it lost."""
    lost = set()
    for op in OPS:
        outcome = on_profile(profile, isolate_op, op, "transposed", "contiguous")
        if outcome == "lost":
            lost.add(op)
    return lost
