"""03.adam_step's hidden problems, and what a wrong value on one of them says."""

from __future__ import annotations

import torch

from course.adam.exercises import problems, stepping
from tests.adam.exercises.corpus_stepping import flawed_step, reference


def test_every_hidden_problem_passes_the_reference_and_varies_a_named_parameter():
    hidden = problems.PROBLEMS
    for problem in hidden:
        assert stepping.run_problem(reference(), problem) is None
    assert len({p.lr for p in hidden}) >= 3 and len({p.eps for p in hidden}) >= 3
    assert len({p.betas for p in hidden}) >= 3 and len({len(p.shape) for p in hidden}) == 3
    assert {"contiguous", "transposed", "step-sliced", "permuted"} <= {p.layout for p in hidden}
    assert any(p.grad_layout and p.grad_layout != p.layout for p in hidden)


def test_eps_placement_matters_on_the_zero_gradient_problem():
    """Exact zeros and eps = 1e-3 make eps inside the sqrt wrong by far more than rounding."""
    verdict = stepping.run_problem(flawed_step("eps inside the sqrt"), problems.PROBLEMS[3])
    assert verdict is not None and "eps is inside the square root" in verdict.message


def test_the_first_difference_names_the_element_with_every_digit():
    want = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    mine = want.clone()
    mine[1, 0] = torch.nextafter(mine[1, 0], torch.tensor(10.0))
    yours, torchs = problems.first_difference("p", mine, want)
    assert yours == "p[1, 0] = 3.00000024" and torchs == "p[1, 0] = 3"
