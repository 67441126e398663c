"""Notebook 08's judge for a deterministic op: 'ok', 'silent-no-write' or 'wrong-values'.

`08.verdict` runs the learner's judge on hidden outputs, each a trap for one shortcut: a NaN
compared with ==, a tolerance that hides a 3% error, zeros taken for "never written".
"""

from __future__ import annotations

import torch

from course.audit.exercises.common import VerdictCase, judged
from course.exercises import Exercise, register


def _verdict_cases() -> dict[str, VerdictCase]:
    """label -> case: outputs a deterministic op left behind, each a trap for one shortcut."""
    values = torch.arange(1.0, 13.0).reshape(3, 4).T  # non-contiguous, non-zero, all distinct
    doubled = values * 2
    poison = torch.full((4, 3), float("nan"))
    sample = torch.linspace(0.1, 0.9, 12).reshape(4, 3)
    ramp = torch.linspace(-2.0, 2.0, 12).reshape(4, 3)
    clamped = ramp.clamp(-1, 1)  # the middle elements legitimately stay as they were
    logs = ramp.log()  # NaN for the negative inputs: the right answer contains NaN
    all_but_last = doubled.clone()
    all_but_last[-1, -1] = values[-1, -1]
    ints = torch.arange(1, 13).reshape(3, 4).T
    tiny = values * 1e-4  # Adam's exp_avg_sq is this small: an absolute tolerance sees nothing
    one_written = values.clone()
    one_written[0, 0] = doubled[0, 0]
    specks = values * 1e-7  # smaller still: an exp_avg_sq early in training
    inside = ramp * 0.4  # every value inside clamp_'s bounds: the right answer is the input itself
    rewritten = torch.where(ramp.abs() <= 1, 0.0, clamped)  # the in-range elements zeroed
    kept = "every element still holds exactly what it held before: nothing was written"
    return {
        "an output the op never wrote": VerdictCase(
            (values, values.clone(), doubled),
            "silent-no-write",
            f"{kept} (non-zero values: an unwritten output keeps what it held, it does not "
            "turn to zeros)",
        ),
        "an output overwritten with zeros": VerdictCase(
            (values, torch.zeros_like(values), doubled),
            "wrong-values",
            "zeros were written over non-zero values: a write happened, a wrong one",
        ),
        "a correctly written output": VerdictCase(
            (values, doubled.clone(), doubled), "ok", "it matches the expected values"
        ),
        "an output written only where its values exceed 6": VerdictCase(
            (values, torch.where(values > 6, doubled, values), doubled),
            "wrong-values",
            "some elements changed and some kept their old values: silent-no-write means "
            "*every* element kept its value",
        ),
        "a NaN-poisoned output the op never wrote": VerdictCase(
            (poison, poison.clone(), sample),
            "silent-no-write",
            f"{kept}; NaN == NaN is False, so an unwritten NaN looks changed to ==",
        ),
        "a NaN-poisoned output written correctly": VerdictCase(
            (poison, sample.clone(), sample), "ok", "it matches the expected values"
        ),
        "clamp_ written correctly (in-range elements stay put)": VerdictCase(
            (ramp, clamped.clone(), clamped),
            "ok",
            "it matches the expected values; that some elements kept their values is right here",
        ),
        "clamp_ never written": VerdictCase((ramp, ramp.clone(), clamped), "silent-no-write", kept),
        "log_ written correctly (NaN for negative inputs)": VerdictCase(
            (ramp, logs.clone(), logs),
            "ok",
            "the right answer itself has NaN here, so the comparison with expected must count "
            "NaN as equal to NaN",
        ),
        "an output 3% off everywhere": VerdictCase(
            (values, doubled * 1.03, doubled),
            "wrong-values",
            "every element is 3% off: a tolerance that lets that pass hides a wrong kernel "
            "(allclose's default rtol is 1e-5)",
        ),
        "the right values in the wrong places (a scramble)": VerdictCase(
            (values, doubled.flatten().flip(0).reshape(4, 3), doubled),
            "wrong-values",
            "the same values in other places: sorted values, sums and means cannot see a "
            "scramble, compare element by element",
        ),
        "an output written except its last element": VerdictCase(
            (values, all_but_last, doubled),
            "wrong-values",
            "only the last element kept its old value: comparing one element or the first "
            "rows misses it, compare every element",
        ),
        "an output overwritten with NaN garbage": VerdictCase(
            (values, torch.full_like(values, float("nan")), doubled),
            "wrong-values",
            "NaN was written over numbers: that is a write, not an unchanged output (only a "
            "NaN that *was* NaN before is unchanged)",
        ),
        "a correct output one rounding step from the float64 reference": VerdictCase(
            (values, torch.nextafter(doubled, torch.tensor(float("inf"))), doubled),
            "ok",
            "expected comes from another kernel, so a correct output may differ in its last "
            "bit: compare with allclose, not exact equality",
        ),
        "an integer output the op never wrote": VerdictCase(
            (ints, ints.clone(), ints * 2), "silent-no-write", f"{kept} (an int64 output)"
        ),
        "a NaN-poisoned output never written, whose right answer is all zeros": VerdictCase(
            (poison, poison.clone(), torch.zeros_like(poison)),
            "silent-no-write",
            f"{kept}: the NaN poison is still there. Turning NaN into 0 before comparing "
            "(nan_to_num) makes the poison look like the right answer wherever that is 0",
        ),
        "zeros (a fresh exp_avg_sq) overwritten with NaN garbage": VerdictCase(
            (torch.zeros_like(values), torch.full_like(values, float("nan")), doubled),
            "wrong-values",
            "NaN was written over zeros: a write, not an unchanged output. Turning NaN into 0 "
            "before comparing (nan_to_num) makes it look unchanged",
        ),
        "an output of tiny values (about 1e-4), each 40% off": VerdictCase(
            (tiny, tiny * 2 * 0.6, tiny * 2),
            "wrong-values",
            "every element is 40% off, but the values are about 1e-4: an absolute tolerance "
            "such as atol=1e-3 calls any two of them equal (allclose's default atol is 1e-8)",
        ),
        "an output 0.2% off everywhere": VerdictCase(
            (values, doubled * 1.002, doubled),
            "wrong-values",
            "every element is 0.2% off: a correct float32 kernel differs from expected by "
            "rounding, about 1e-7 relative, so a tolerance that lets 0.2% pass hides a wrong "
            "kernel (allclose's default rtol is 1e-5)",
        ),
        "an output one rounding step from its old values": VerdictCase(
            (values, torch.nextafter(values, torch.tensor(float("inf"))), doubled),
            "wrong-values",
            "every element differs from its old value in the last bit: something was written "
            "(a tiny wrong update), so it is not silent-no-write. 'Unchanged' means exactly "
            "unchanged: compare with before bit for bit, no tolerance",
        ),
        "an output holding its old values in other places": VerdictCase(
            (values, values.flatten().flip(0).reshape(4, 3), doubled),
            "wrong-values",
            "the old values, moved to other places: a write happened. Sums, means and sorted "
            "values of before cannot see that, compare element by element",
        ),
        "an output where a single element was written": VerdictCase(
            (values, one_written, doubled),
            "wrong-values",
            "one element changed: 'almost every element kept its value' is not 'nothing was "
            "written'; silent-no-write means not one element changed",
        ),
        "an output holding some NaN from an earlier log_, never written": VerdictCase(
            (logs, logs.clone(), logs * 2),
            "silent-no-write",
            f"{kept}, its NaN included: NaN == NaN is False for a NaN in some elements too, not "
            "only for a poison that fills the output, so compare NaN-aware element by element",
        ),
        "log_ that wrote 0.0 where the right answer is NaN": VerdictCase(
            (ramp, logs.nan_to_num(0.0), logs),
            "wrong-values",
            "where the right answer is NaN this output holds 0.0: a comparison that skips the "
            "elements where expected is NaN cannot see that; NaN must meet NaN (equal_nan=True)",
        ),
        "an output 0.05% off everywhere": VerdictCase(
            (values, doubled * 1.0005, doubled),
            "wrong-values",
            "every element is 0.05% off: rounding makes a correct float32 kernel differ by about "
            "1e-7 relative, so a tolerance such as rtol=1e-3 lets a wrong kernel pass "
            "(allclose's default rtol is 1e-5)",
        ),
        "an output of values about 1e-7, each 40% off": VerdictCase(
            (specks, specks * 2 * 0.6, specks * 2),
            "wrong-values",
            "every element is 40% off, but the values are about 1e-7 (an early exp_avg_sq): an "
            "absolute tolerance larger than the values, such as atol=1e-5 (torch.testing."
            "assert_close's default for float32) or a max difference under 1e-4, calls any two "
            "of them equal (allclose's default atol is 1e-8)",
        ),
        "clamp_ written correctly, every value already inside its bounds": VerdictCase(
            (inside, inside.clone(), inside.clone()),
            "ok",
            "it matches the expected values, which are what it held before: clamp_ on values "
            "inside its bounds rightly changes nothing. Ask whether it matches expected first; "
            "'unchanged' only tells a lost write from a wrong one once the output does not match",
        ),
        "clamp_ that also rewrote the elements inside its bounds": VerdictCase(
            (ramp, rewritten, clamped),
            "wrong-values",
            "the elements clamp_ must leave as they were now hold zeros: a judge that looks only "
            "at the elements the op should change cannot see that, compare every element with "
            "expected",
        ),
    }


register(
    Exercise(
        "08.verdict",
        "Write verdict(before, after, expected) -> 'ok' | 'silent-no-write' | 'wrong-values' for "
        "one output of a deterministic op (before: what the output held before the call, maybe "
        "a NaN poison; expected: the right answer from another kernel, so a correct output may "
        "differ from it in the last bit).",
        lambda judge: judged(
            judge, _verdict_cases(), "nothing written vs wrong values, NaN poison and rounding"
        ),
        "Compare `after` with `expected` first (allclose, every element); only then ask whether "
        "*every* element still holds its old value. NaN == NaN is False, so both comparisons "
        "must treat NaN specially.",
        minutes=10,
    )
)
