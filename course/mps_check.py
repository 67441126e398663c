"""Does *this* PyTorch on *this* Mac still drop writes to non-contiguous outputs?

Standalone on purpose: it imports nothing from the course and uses only APIs that exist in
torch 2.2, so a Mac user can copy this one file into an old environment and run

    python mps_check.py            # or, inside the course: python -m course mps-check

Each check writes into a transposed (non-contiguous) output and compares with the same op on a
contiguous output. Elsewhere (no MPS device) it says so and exits cleanly.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys

import torch


def _ops():
    """(name, in-place call, is_random) for the ops the story found broken, plus two that work."""
    return [
        ("mul_", lambda out, a, b: out.mul_(a), False),
        ("lerp_", lambda out, a, b: out.lerp_(a, 0.5), False),
        ("addcmul_", lambda out, a, b: out.addcmul_(a, b, value=0.5), False),
        ("addcdiv_", lambda out, a, b: out.addcdiv_(a, b + 2.0, value=0.5), False),
        ("normal_", lambda out, a, b: out.normal_(), True),
        ("uniform_", lambda out, a, b: out.uniform_(2.0, 3.0), True),
        ("exponential_", lambda out, a, b: out.exponential_(), True),
        ("random_", lambda out, a, b: out.random_(1, 10), True),
        ("bernoulli_", lambda out, a, b: out.bernoulli_(0.5), True),
    ]


def check_op(device: str, name: str, call, is_random: bool, n: int = 64) -> dict:
    """Run one op into a transposed output on `device`; did every element get written?"""
    gen = torch.Generator().manual_seed(0)
    a = (torch.rand(n, n, generator=gen) + 0.5).to(device)
    b = (torch.rand(n, n, generator=gen) + 0.5).to(device)
    start = torch.full((n, n), -7.0)  # a poison value no op here produces
    out = start.clone().to(device).t()  # transposed: stride (1, n)
    contiguous = start.clone().to(device).t().contiguous()
    call(out, a, b)
    call(contiguous, a, b)
    result = out.cpu()
    untouched = bool((result == -7.0).all())
    if is_random:
        correct = not bool((result == -7.0).any())
    else:
        correct = bool(torch.allclose(result, contiguous.cpu(), rtol=1e-5, atol=1e-6))
    verdict = "ok" if correct else ("silent-no-write" if untouched else "wrong-values")
    return {"op": name, "verdict": verdict, "stride": list(out.stride())}


def run_checks(device: str) -> list[dict]:
    """Check every op on `device` (any device string torch understands)."""
    return [check_op(device, name, call, is_random) for name, call, is_random in _ops()]


def _unusable(device: str) -> str:
    """Why a device torch knows cannot run the checks here ("" if it can): no CUDA build,
    or a device without data (meta)."""
    try:
        torch.zeros(1, device=device).cpu()
    except Exception as exc:  # AssertionError, RuntimeError, NotImplementedError...
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:100]}"
    return ""


def environment() -> dict:
    """What a bug report needs: versions of torch, Python and macOS."""
    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "macos": platform.mac_ver()[0] or None,
        "mps_available": bool(torch.backends.mps.is_available()),
    }


def cli(argv: list[str]) -> int:
    """Print the checks for `mps` (or --device), or why they were skipped."""
    p = argparse.ArgumentParser(prog="mps-check", description=__doc__.splitlines()[0])
    p.add_argument("--device", default="mps", help="device to check (default: mps)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        torch.device(args.device)
    except RuntimeError:
        p.error(f"--device {args.device!r} is not a torch device; use mps, cpu or cuda")
    env = environment()
    if args.device == "mps" and not env["mps_available"]:
        print(
            "skipped: no MPS device on this machine (torch.backends.mps.is_available() is False). "
            "The course's emulated device reproduces the bug: python -m course plateau"
        )
        return 0
    unusable = _unusable(args.device)
    if unusable:
        p.error(
            f"--device {args.device!r} cannot hold data on this machine ({unusable}); "
            "use mps on a Mac, or cpu"
        )
    results = run_checks(args.device)
    broken = [r["op"] for r in results if r["verdict"] != "ok"]
    if args.json:
        print(json.dumps({"environment": env, "device": args.device, "results": results}, indent=2))
        return 0
    print(f"torch {env['torch']}, macOS {env['macos'] or '-'}, device {args.device}")
    for r in results:
        print(f"  {r['op']:<13} {r['verdict']}")
    print(
        "this stack still drops writes in: " + ", ".join(broken)
        if broken
        else "this stack has none of the bugs from the story"
    )
    return 0


if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:]))
