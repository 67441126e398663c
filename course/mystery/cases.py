"""The pool of mystery cases, registered in one place.

Each case is a scenario, one planted bug, the symptom a user would report (the brief names
nothing of the cause), and the answer: the culprit op and layout condition, a reference repro
and a reference fix. Each case also names a *decoy*: a different planted bug that produces the
same symptom in the same scenario. The repro checker runs the learner's repro on the decoy's
device too, so a copy of the scenario (which cannot tell the two apart) fails, while a repro
that isolates the op and the layout passes.

Cases come in pairs that are each other's decoy: the same brief can have two causes, which is
exactly why the symptom alone never names the culprit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from course.errors import CourseError
from course.mystery import fixes, repros
from course.mystery.bugs import PlantedBug
from course.mystery.scenarios import Patch, ScenarioReport


@dataclass(frozen=True)
class Symptom:
    """What the brief claims, as a test on a run (given the bug-free run for comparison)."""

    description: str
    shows: Callable[[ScenarioReport, ScenarioReport], bool]


def frozen(parameter: str) -> Symptom:
    """One parameter does not change at all."""
    return Symptom(f"{parameter} never changes", lambda run, clean: parameter in run.frozen())


BLOWS_UP = Symptom(
    "the loss blows up (NaN, inf or 1000x its start)", lambda run, clean: run.blew_up
)
ACCURACY_DROP = Symptom(
    "held-out accuracy at least 20 points below the bug-free run",
    lambda run, clean: run.metric <= clean.metric - 0.2,
)
HALF_FROZEN = Symptom(
    "in every parameter only 30-70% of the elements ever change",
    lambda run, clean: all(0.3 <= moved <= 0.7 for moved in run.moved.values()),
)


def worse_loss(factor: float) -> Symptom:
    """The held-out loss ends `factor` times the bug-free run's, or worse."""
    return Symptom(
        f"held-out loss at least {factor}x the bug-free run's",
        lambda run, clean: not run.metric < factor * clean.metric,
    )


@dataclass(frozen=True)
class CaseSpec:
    """One case of the pool: everything the learner is asked for, and how it is judged."""

    id: str
    title: str
    scenario: str
    bug: PlantedBug
    decoy: PlantedBug
    symptom: Symptom
    brief: str
    repro: Callable[[], bool]
    fix: Patch


FROZEN_MIDDLE = """\
My three-layer MLP classifier (Adam, lr 1e-2) trains, but worse than it does on a colleague's
machine. Comparing the weights before and after training: the middle layer's weight matrix is
exactly what it was at initialisation, to the last bit. Its bias trains, the other layers train.
No NaNs, no errors, and changing the learning rate changes nothing about that layer."""

FROZEN_FILTERS = """\
Our small CNN for striped images (two 3x3 convolutions, then a linear classifier; Adam) ends
far below the accuracy it reaches on a CPU. The second convolution's filters are exactly their
initial values after training; the first convolution and the classifier train normally. No NaNs,
no errors."""

NAN_REVIEWS = """\
Our review scorer (word counts times pretrained word vectors, then a linear head, Adam) blows
up within a few steps: the loss turns into NaN. The inputs are clean (no NaN, no inf), and a
smaller learning rate does not help. The same script runs fine on a CPU."""

WEAK_CNN = """\
Our small CNN for striped images (two 3x3 convolutions, then a linear classifier; Adam) learns
far less than it should: its held-out accuracy ends 25 to 60 points below what the same script
reaches on a CPU. The loss does go down; every weight changes; no NaNs, no errors."""

WORSE_ATTENTION = """\
We fine-tune a one-head attention regressor loaded from a checkpoint (AdamW). Its held-out loss
ends more than ten times higher than the same run on a CPU. Every parameter changes during training,
nothing is NaN, and we have double-checked the data and the learning rate."""

HALF_TRAINED = """\
Our MLP classifier trains far more slowly than expected. Comparing each weight and bias before
and after training, only about half of its elements ever change; the other half keep their
initial values exactly. No NaNs, no errors, and a higher learning rate does not change the
split."""

WORSE_HEADS = """\
Our two-head attention regressor learns, but its held-out loss ends about four times as high as
the same training on a CPU. Every parameter changes, nothing is NaN, and the data loader is fine."""


def _pair(family_a: str, family_b: str, condition: str, effect: str) -> tuple[PlantedBug, ...]:
    return PlantedBug(family_a, condition, effect), PlantedBug(family_b, condition, effect)


LERP_T, ADDCDIV_T = _pair("lerp", "addcdiv", "transposed", "lost-write")
ADDCDIV_CL, LERP_CL = _pair("addcdiv", "lerp", "channels-last", "lost-write")
ADD_T, ADDCMUL_T = _pair("add", "addcmul", "transposed", "lost-write")
RELU_CL, MASKED_FILL_CL = _pair("relu", "masked_fill", "channels-last", "scrambled")
LERP_CL_S, ADDCDIV_CL_S = _pair("lerp", "addcdiv", "channels-last", "scrambled")
MUL_OFF, ADDCDIV_OFF = _pair("mul", "addcdiv", "storage-offset", "offset-ignored")
LERP_BF, ADDCDIV_BF = _pair("lerp", "addcdiv", "bfloat16", "half-written")
ADD_P, MUL_P = _pair("add", "mul", "permuted", "scrambled")

POOL: tuple[CaseSpec, ...] = (
    CaseSpec(
        "case-01",
        "The layer that never moved",
        "ortho-mlp",
        LERP_T,
        ADDCDIV_T,
        frozen("mid.weight"),
        FROZEN_MIDDLE,
        repros.lerp_on_transposed,
        fixes.contiguous_middle,
    ),
    CaseSpec(
        "case-02",
        "Filters frozen in place",
        "border-cnn",
        ADDCDIV_CL,
        LERP_CL,
        frozen("conv2.weight"),
        FROZEN_FILTERS,
        repros.addcdiv_on_channels_last,
        fixes.contiguous_format,
    ),
    CaseSpec(
        "case-03",
        "NaN after a few steps",
        "bag-of-words",
        ADD_T,
        ADDCMUL_T,
        BLOWS_UP,
        NAN_REVIEWS,
        repros.add_on_transposed,
        fixes.contiguous_vectors,
    ),
    CaseSpec(
        "case-04",
        "A CNN that should do better",
        "border-cnn",
        RELU_CL,
        MASKED_FILL_CL,
        ACCURACY_DROP,
        WEAK_CNN,
        repros.relu_on_channels_last,
        fixes.out_of_place_relu,
    ),
    CaseSpec(
        "case-05",
        "A CNN that should do better",
        "border-cnn",
        MASKED_FILL_CL,
        RELU_CL,
        ACCURACY_DROP,
        WEAK_CNN,
        repros.masked_fill_on_channels_last,
        fixes.contiguous_format,
    ),
    CaseSpec(
        "case-06",
        "A CNN that should do better",
        "border-cnn",
        LERP_CL_S,
        ADDCDIV_CL_S,
        ACCURACY_DROP,
        WEAK_CNN,
        repros.lerp_on_channels_last,
        fixes.contiguous_format,
    ),
    CaseSpec(
        "case-07",
        "Attention that fits worse than it should",
        "fused-qkv",
        MUL_OFF,
        ADDCDIV_OFF,
        worse_loss(3.0),
        WORSE_ATTENTION,
        repros.mul_on_offset,
        fixes.own_storage,
    ),
    CaseSpec(
        "case-08",
        "Attention that fits worse than it should",
        "fused-qkv",
        ADDCDIV_OFF,
        MUL_OFF,
        worse_loss(3.0),
        WORSE_ATTENTION,
        repros.addcdiv_on_offset,
        fixes.own_storage,
    ),
    CaseSpec(
        "case-09",
        "Half a model",
        "half-mlp",
        LERP_BF,
        ADDCDIV_BF,
        HALF_FROZEN,
        HALF_TRAINED,
        repros.lerp_on_bfloat16,
        fixes.float32_weights,
    ),
    CaseSpec(
        "case-10",
        "Half a model",
        "half-mlp",
        ADDCDIV_BF,
        LERP_BF,
        HALF_FROZEN,
        HALF_TRAINED,
        repros.addcdiv_on_bfloat16,
        fixes.float32_weights,
    ),
    CaseSpec(
        "case-11",
        "Two heads, too much loss",
        "biased-heads",
        ADD_P,
        MUL_P,
        worse_loss(2.0),
        WORSE_HEADS,
        repros.add_on_permuted,
        fixes.contiguous_heads,
    ),
    CaseSpec(
        "case-12",
        "Two heads, too much loss",
        "biased-heads",
        MUL_P,
        ADD_P,
        worse_loss(2.0),
        WORSE_HEADS,
        repros.mul_on_permuted,
        fixes.contiguous_heads,
    ),
)
CASES: dict[str, CaseSpec] = {spec.id: spec for spec in POOL}


def get_case(case_id: str) -> CaseSpec:
    """A case of the pool by id ("case-01" ...)."""
    if case_id not in CASES:
        raise CourseError(f"no mystery case {case_id!r}; the pool has: {', '.join(CASES)}")
    return CASES[case_id]
