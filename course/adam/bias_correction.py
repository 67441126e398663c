"""Why Adam divides by 1 - beta**t: a widget on a seeded noisy gradient stream.

The running means start at zero, so for the first steps they are too small: after one step
exp_avg is (1 - beta1) * g, a tenth of the gradient at beta1 = 0.9. Dividing by 1 - beta1**t
undoes exactly that shrinkage. The story's author ruled bias correction out (changing betas, even
beta2 = 0, changed nothing); this widget shows what it does do, so the red herring is recognised.
The moments are computed with course.adam.scratch's own `update_moments` and `bias_corrections`.
"""

from __future__ import annotations

import torch

from course.adam.scratch import MAX_ADAM_STEPS, bias_corrections, update_moments
from course.errors import CourseError, require_int
from course.figures import (
    PALETTE,
    REFERENCE_LINE,
    describe,
    fitted_figure,
    integer_ticks,
    series_style,
)
from course.markup import html_table
from course.ui import Drawing, Panel, number_slider

MEAN, NOISE = 1.0, 0.5  # the stream's true mean and spread: what the moments should estimate
# The sliders' largest betas: the last step below 1, which `check_betas` (and torch's Adam)
# refuse, so a slider never offers a value its panel then turns down.
BETA1_MAX, BETA2_MAX = 0.99, 0.999


def gradient_stream(
    steps: int, mean: float = 1.0, noise: float = 0.5, seed: int = 0
) -> torch.Tensor:
    """`steps` scalar gradients scattered around `mean` (seeded: the same stream every run)."""
    require_int("steps", steps, 1, MAX_ADAM_STEPS)
    gen = torch.Generator().manual_seed(seed)
    return mean + noise * torch.randn(steps, generator=gen)


def check_betas(beta1: float, beta2: float) -> None:
    """Both betas must lie in [0, 1): at 1 the correction 1 - beta**t is zero for every t."""
    for name, beta in (("beta1", beta1), ("beta2", beta2)):
        if not isinstance(beta, (int, float)) or not 0 <= beta < 1:
            raise CourseError(
                f"{name}={beta!r} is not allowed: choose 0 <= {name} < 1 "
                f"(at {name} = 1, 1 - {name}**t is 0 and nothing can be corrected)"
            )


def check_steps(first: int, last: int) -> None:
    """The step range to plot: at least two steps, within 1..MAX_ADAM_STEPS."""
    if not (1 <= first < last <= MAX_ADAM_STEPS):
        raise CourseError(
            f"step range ({first}, {last}) is not allowed: choose "
            f"1 <= first < last <= {MAX_ADAM_STEPS} (at least two steps)"
        )


def moments(grads: torch.Tensor, beta1: float, beta2: float) -> dict[str, torch.Tensor]:
    """Adam's running means over a gradient stream, raw and bias-corrected, one value per step."""
    check_betas(beta1, beta2)
    m, v = torch.zeros(()), torch.zeros(())
    rows = []
    for step, grad in enumerate(grads, start=1):
        update_moments(m, v, grad, beta1, beta2)
        c1, c2 = bias_corrections(beta1, beta2, step)
        rows.append((m.item(), v.item(), m.item() / c1, v.item() / c2, 1 / c1, 1 / c2))
    columns = torch.tensor(rows, dtype=torch.float64).T  # (6, steps)
    names = ("m", "v", "m_hat", "v_hat", "factor1", "factor2")
    return dict(zip(names, columns, strict=True))


def draw(beta1: float, beta2: float, step_range: tuple[int, int], seed: int = 0) -> Drawing:
    """Correction factors, then raw vs corrected first and second moments over the range."""
    check_betas(beta1, beta2)
    first, last = step_range
    check_steps(first, last)
    grads = gradient_stream(last, mean=MEAN, noise=NOISE, seed=seed)
    result = moments(grads, beta1, beta2)
    steps = range(first, last + 1)
    window = slice(first - 1, last)
    fig = fitted_figure(height_px=300)
    factors, first_moment, second_moment = fig.subplots(1, 3)
    solid, dashed = series_style(0), series_style(1)  # raw/beta1 and corrected/beta2 alike
    factors.semilogy(steps, result["factor1"][window], label="1 / (1 - beta1**t)", **solid)
    factors.semilogy(steps, result["factor2"][window], label="1 / (1 - beta2**t)", **dashed)
    factors.set_title("correction factors:\n1 / (1 - beta**t)", fontsize=10)
    factors.set(xlabel="step t")
    first_moment.plot(
        steps, grads[window], ".", color=PALETTE["sky blue"], markersize=4, label="gradient"
    )
    first_moment.axhline(MEAN, **REFERENCE_LINE, label="true mean")
    first_moment.set_title("first moment:\nm vs m_hat", fontsize=10)
    first_moment.set(xlabel="step t")
    second_moment.axhline((MEAN**2 + NOISE**2) ** 0.5, **REFERENCE_LINE, label="true RMS")
    second_moment.set_title("second moment:\nsqrt(v) vs sqrt(v_hat)", fontsize=10)
    second_moment.set(xlabel="step t")
    for ax, raw, corrected in (
        (first_moment, result["m"], result["m_hat"]),
        (second_moment, result["v"].sqrt(), result["v_hat"].sqrt()),
    ):
        ax.plot(steps, raw[window], label="raw", **solid)
        ax.plot(steps, corrected[window], label="corrected", **dashed)
    for ax in (factors, first_moment, second_moment):
        ax.legend()
        integer_ticks(ax)
    describe(
        fig,
        f"Three line plots over steps {first} to {last} for beta1={beta1}, beta2={beta2}: the "
        "two correction factors, then the raw and bias-corrected first and second moments "
        "beside their true values",
    )
    return Drawing(fig, html_table(summary_rows(result, first, last)))


def summary_rows(result: dict[str, torch.Tensor], first: int, last: int) -> list[dict[str, object]]:
    """The numbers at the two ends of the range, rounded for display."""
    rows = []
    for t in (first, last):
        at = {name: values[t - 1].item() for name, values in result.items()}
        rows.append(
            {
                "step": t,
                "1/(1-beta1^t)": round(at["factor1"], 3),
                "m": round(at["m"], 3),
                "m_hat": round(at["m_hat"], 3),
                "sqrt(v)": round(at["v"] ** 0.5, 3),
                "sqrt(v_hat)": round(at["v_hat"] ** 0.5, 3),
            }
        )
    return rows


def bias_correction_widget() -> Panel:
    """Sliders for beta1, beta2 and the step range; redraws on every change."""
    controls = {
        "beta1": number_slider("beta1", 0.9, 0.0, BETA1_MAX, step=0.01),
        "beta2": number_slider("beta2", 0.999, 0.0, BETA2_MAX, step=0.001),
        "step_range": number_slider("steps", (1, 100), 1, MAX_ADAM_STEPS),
    }
    return Panel(controls, draw, title="Bias correction: why Adam divides by 1 - beta**t")
