"""Notebook 08's judge for a random op: every element written, then the distribution.

`08.random_verdict` runs the learner's judge on hidden outputs of random ops (floats and ints,
contiguous and transposed, fully, partly or not written), where a correct output never equals
its sample: only a KS distance tells a right draw from a wrong one.
"""

from __future__ import annotations

import torch

from course.audit.exercises.common import VerdictCase, judged
from course.exercises import Exercise, register

RANDOM_SHAPE = (32, 48)  # 1536 samples: same-distribution draws give a KS distance near 0.03


def _both(fill, dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """`fill` drawn into a contiguous output, then into a transposed one."""
    rows, cols = RANDOM_SHAPE
    contiguous = fill(torch.empty(RANDOM_SHAPE, dtype=dtype))
    return contiguous, fill(torch.empty(cols, rows, dtype=dtype).T)


def _draws(seed: int) -> dict[str, torch.Tensor]:
    """Correct draws of several random ops, contiguous and into a transposed output."""
    gen = torch.Generator().manual_seed(seed)
    normal, normal_t = _both(lambda t: t.normal_(generator=gen))
    uniform, uniform_t = _both(lambda t: t.uniform_(generator=gen))
    exponential, exponential_t = _both(lambda t: t.exponential_(generator=gen))
    ints, ints_t = _both(lambda t: t.random_(0, 10, generator=gen), torch.int64)
    return {
        "normal": normal,
        "normal, transposed": normal_t,
        "uniform": uniform,
        "uniform, transposed": uniform_t,
        "exponential": exponential,
        "exponential, transposed": exponential_t,
        "int": ints,
        "int, transposed": ints_t,
    }


def _random_cases() -> dict[str, VerdictCase]:
    """label -> case for a random op: `expected` is a correct sample, never the same numbers."""
    draw = _draws(seed=5)
    poison = torch.full(RANDOM_SHAPE, float("nan"))
    int_poison = torch.full(RANDOM_SHAPE, torch.iinfo(torch.int64).min)
    normal, sample = draw["normal, transposed"], _draws(seed=6)["normal"]
    half = torch.where(
        torch.arange(RANDOM_SHAPE[0])[:, None] < RANDOM_SHAPE[0] // 2, normal, poison
    )
    one_left = normal.clone()
    one_left[-1, -1] = float("nan")
    int_one_left = draw["int, transposed"].clone()
    int_one_left[-1, -1] = int_poison[-1, -1]
    int32_poison = torch.full(RANDOM_SHAPE, torch.iinfo(torch.int32).min, dtype=torch.int32)
    first_row = torch.where(torch.arange(RANDOM_SHAPE[0])[:, None] == 0, normal, poison)
    coin = torch.where(normal < 0, -1.0, 1.0)  # mean 0 and spread 1, like the sample, yet ±1
    gen = torch.Generator().manual_seed(7)
    signed, signed_t = _both(lambda t: t.random_(-5, 5, generator=gen), torch.int64)
    poisoned = "still holds the poison it held before the call"
    return {
        "a normal_ output never written (NaN poison)": VerdictCase(
            (poison, poison.clone(), sample),
            "silent-no-write",
            f"every element {poisoned}; NaN == NaN is False, so an unwritten NaN looks changed "
            "to ==",
        ),
        "normal_ drawn correctly into a transposed output": VerdictCase(
            (poison, normal, sample),
            "ok",
            "same distribution, other numbers: with one seed a strided output draws in another "
            "order than a contiguous one (pytorch#166856), so compare distributions (KS), not "
            "values, sorted or not",
        ),
        "uniform_ drawn correctly into a transposed output": VerdictCase(
            (poison, draw["uniform, transposed"], draw["uniform"]),
            "ok",
            "every element written, same distribution as `sample`: a uniform one, so a test "
            "against the normal law (mean 0 and standard deviation 1, or a normal draw of "
            "your own) is not the test: compare with sample",
        ),
        "exponential_ drawn correctly into a transposed output": VerdictCase(
            (poison, draw["exponential, transposed"], draw["exponential"]),
            "ok",
            "every element written, same distribution as the sample (an exponential one)",
        ),
        "an int64 random_ output never written": VerdictCase(
            (int_poison, int_poison.clone(), draw["int"]),
            "silent-no-write",
            f"every element {poisoned}: an integer output's poison is its smallest value, not "
            "NaN, so compare after with before",
        ),
        "random_(0, 10) drawn correctly into a transposed int64 output": VerdictCase(
            (int_poison, draw["int, transposed"], draw["int"]),
            "ok",
            "every element written, same distribution (whole numbers 0 to 9, with ties)",
        ),
        "a normal_ output written in its first half only": VerdictCase(
            (poison, half, sample),
            "wrong-values",
            {
                "silent-no-write": "half the elements were written: 'silent-no-write' means "
                "none was",
                "ok": "half the elements still hold the poison: 'ok' needs every element "
                "written (the written half alone has the right distribution)",
            },
        ),
        "a normal_ output written except its last element": VerdictCase(
            (poison, one_left, sample),
            "wrong-values",
            "one element still holds the poison: every element must be written",
        ),
        "a normal_ output filled with ones": VerdictCase(
            (poison, torch.ones(RANDOM_SHAPE), sample),
            "wrong-values",
            "every element was written, all with 1.0: coverage alone is not enough, the values "
            "must follow the sample's distribution",
        ),
        "normal_ with its mean shifted by 0.8": VerdictCase(
            (poison, normal + 0.8, sample),
            "wrong-values",
            "a shifted distribution (KS about 0.33): a threshold that lets this pass is too "
            "loose; same-distribution samples of this size stay under 0.06",
        ),
        "normal_ with the right mean and a third of the spread": VerdictCase(
            (poison, normal * 0.3, sample),
            "wrong-values",
            "the mean matches, the spread does not (KS about 0.27, well above the prompt's "
            "0.1): compare the whole distribution, not its mean, and keep the threshold at 0.1",
        ),
        "an int32 random_ output never written": VerdictCase(
            (int32_poison, int32_poison.clone(), draw["int"].to(torch.int32)),
            "silent-no-write",
            f"every element {poisoned}: for int32 that is -2**31, not int64's smallest value, "
            "so compare after with before rather than with a number of your own",
        ),
        "an int64 random_ output written except its last element": VerdictCase(
            (int_poison, int_one_left, draw["int"]),
            "wrong-values",
            "one element still holds the poison, the smallest int64: an integer has no NaN, so "
            "look for unwritten elements by comparing after with before, not with isnan",
        ),
        "a normal_ output written in its first row only": VerdictCase(
            (poison, first_row, sample),
            "wrong-values",
            {
                "silent-no-write": "one row was written and the rest still hold the poison: "
                "'silent-no-write' means not one element was written, however few were",
                "ok": "only one row was written: 'ok' needs every element written",
            },
        ),
        "a normal_ output of only -1 and 1 (the right mean and spread)": VerdictCase(
            (poison, coin, sample),
            "wrong-values",
            "mean 0 and standard deviation 1, like the sample, but only two values (KS about "
            "0.34): a mean and a spread are not a distribution, compare the whole of it (KS)",
        ),
        "random_(0, 10) into an int64 output that drew only 0 to 4": VerdictCase(
            (int_poison, draw["int, transposed"] // 2, draw["int"]),
            "wrong-values",
            "every element written, but only whole numbers 0 to 4 where the sample has 0 to 9 "
            "(KS about 0.5): an integer output needs the distribution test too, ties and all",
        ),
        "random_(-5, 5) drawn correctly into a transposed int64 output": VerdictCase(
            (int_poison, signed_t, signed),
            "ok",
            "every element written, same distribution, half of it negative: a negative draw is "
            "no poison, only what `before` held is (compare after with before)",
        ),
        "normal_ with its mean shifted by 0.3": VerdictCase(
            (poison, normal + 0.3, sample),
            "wrong-values",
            "a shifted distribution (KS about 0.13, above the prompt's 0.1): a looser threshold "
            "(0.15, 0.2) lets it pass. Keep the threshold the prompt names; same-distribution "
            "samples of this size stay under 0.06",
        ),
    }


register(
    Exercise(
        "08.random_verdict",
        "Write random_verdict(before, after, sample) -> 'ok' | 'silent-no-write' | "
        "'wrong-values' for one output of a random op (before: the poison it held, NaN or the "
        "integer minimum; sample: a correct draw of the same op into a contiguous tensor). "
        "'ok' means every element written and the sample's distribution (KS distance < 0.1).",
        lambda judge: judged(
            judge, _random_cases(), "every element written, then the distribution"
        ),
        "First count the elements that still hold the poison (NaN-aware, as in your judge): "
        "all of them, some, or none. Only a fully written output gets the distribution test: "
        "the KS distance (ks_distance) between the written values and `sample`, both "
        "flattened to 1-d float64, below 0.1.",
        minutes=10,
    )
)
