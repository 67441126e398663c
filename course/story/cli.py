"""`python -m course plateau`: the story's run and its contiguous twin, with a verdict.

python -m course plateau                      # 2.2.1 profile, transposed init (the story)
python -m course plateau --profile 2.4-macos14 --json
python -m course plateau --plot plateau.png
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from course import emps
from course.errors import CourseError
from course.model.runs import Run, run
from course.model.sae import INITS
from course.progressbar import bar
from course.story.plateau import change_figure, loss_figure

PLATEAU_RATIO = 1.5  # "plateau": final loss at least this many times the contiguous run's
# The default comparison: a 512-feature SAE (the story's has 1536) with larger batches, so both
# runs finish in about 10 s on 2 cores and the contiguous run is already well below the
# plateau (ratio about 1.7). `--features 1536 --batch-size 128 --lr 3e-3 --steps 200` is the
# story's own configuration (about three times longer).
QUICK = {"features": 512, "batch_size": 256, "lr": 5e-3, "steps": 120}


def parser() -> argparse.ArgumentParser:
    """The command's options."""
    p = argparse.ArgumentParser(
        prog="python -m course plateau", description=__doc__.splitlines()[0]
    )
    p.add_argument("--profile", default=emps.DEFAULT_PROFILE, choices=list(emps.PROFILES))
    p.add_argument("--init", default="transposed", choices=INITS)
    p.add_argument("--steps", type=int, default=QUICK["steps"])
    p.add_argument("--features", type=int, default=QUICK["features"], help="hidden size")
    p.add_argument("--batch-size", type=int, default=QUICK["batch_size"])
    p.add_argument("--lr", type=float, default=QUICK["lr"])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="save loss and weight-change plots")
    return p


def check_plot_path(path: str) -> None:
    """Refuse a plot path before training, not after: a .png in a folder that exists and that we
    may write to (the change plot goes beside it, as FILE_change.png)."""
    target = Path(path)
    if target.suffix.lower() != ".png":
        raise CourseError(f"--plot {path!r}: the plots are PNG images; give a file ending in .png")
    folder = target.parent
    if not folder.is_dir():
        raise CourseError(f"--plot {path!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise CourseError(f"--plot {path!r}: the folder {str(folder)!r} is not writable")


def verdict(main: Run, reference: Run) -> dict[str, object]:
    """The comparison's figures, under stable keys."""
    ratio = main.history.final_loss / reference.history.final_loss
    summary = main.summary()
    return {
        "run": summary,
        "reference": reference.summary(),
        "loss_ratio": ratio,
        "plateau": bool(summary["encoder_frozen"] and ratio >= PLATEAU_RATIO),
    }


def report(figures: dict[str, object]) -> str:
    """A readable account of the comparison."""
    r, ref = figures["run"], figures["reference"]
    lines = [
        f"profile {r['profile']}, init {r['init']}, {r['steps']} steps on {r['device']}, "
        f"encoder weight stride {r['encoder_stride']}",
        f"  encoder weight bitwise equal to its init: {r['encoder_frozen']}",
        f"  encoder max exp_avg:    {r['encoder_max_exp_avg']:.3g}",
        f"  encoder max exp_avg_sq: {r['encoder_max_exp_avg_sq']:.3g}",
        f"  decoder max |change|:   {r['decoder_max_change']:.3g}",
        f"  final loss {r['final_loss']:.4g} vs {ref['final_loss']:.4g} with contiguous init "
        f"(ratio {figures['loss_ratio']:.2f})",
        "verdict: "
        + (
            "PLATEAU - the encoder never trained"
            if figures["plateau"]
            else "no plateau - the model trains"
        ),
    ]
    return "\n".join(lines)


def save_plot(path: str, main: Run, reference: Run) -> None:
    """Loss curves and the weight-change plot, stacked in one PNG."""
    from course.figures import figure_png

    with open(path, "wb") as out:
        out.write(
            figure_png(loss_figure({f"{main.init} init": main, "contiguous init": reference}))
        )
    with open(str(Path(path).with_suffix("")) + "_change.png", "wb") as out:
        out.write(figure_png(change_figure(main)))


def cli(argv: list[str]) -> int:
    """Run the comparison and print it."""
    args = parser().parse_args(argv)
    try:
        if args.plot:
            check_plot_path(args.plot)
        options = {
            "n_features": args.features,
            "batch_size": args.batch_size,
            "lr": args.lr,
            "steps": args.steps,
        }
        main = run(args.profile, args.init, progress=bar(f"{args.init:>11}"), **options)
        reference = (
            main
            if args.init == "contiguous"
            else run(args.profile, "contiguous", progress=bar(" contiguous"), **options)
        )
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    figures = verdict(main, reference)
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    if args.plot:
        save_plot(args.plot, main, reference)
        print(f"plots written to {args.plot}", file=sys.stderr)
    return 0
