"""`python -m course doctor`: is this machine ready for each notebook, and if not, why?

It checks what the course depends on (Python, torch and its build, devices, a C++ toolchain for
notebook 07, the widget stack) and turns that into one verdict per notebook, so a learner knows
before starting which cells will run and which will skip with a reason.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import platform
import sys
import sysconfig
from dataclasses import asdict, dataclass
from pathlib import Path

from course.catalog import LESSONS
from course.markup import html_table
from course.requirements import TORCH_FLOOR, TORCH_FLOOR_TEXT


@dataclass
class Check:
    """One line of the report."""

    name: str
    ok: bool
    detail: str


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_checks() -> list[Check]:
    try:
        import torch
    except Exception as exc:  # a broken torch install is exactly what the doctor is for
        return [Check("torch", False, f"cannot import torch: {exc}")]
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    build = "CUDA " + torch.version.cuda if torch.version.cuda else "CPU"
    mps_built = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_built()
    if mps_built:
        build += " + MPS"
    checks = [
        Check(
            "torch",
            version >= TORCH_FLOOR,
            f"{torch.__version__} ({build} build); the course needs >= {TORCH_FLOOR_TEXT}",
        )
    ]
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append(f"cuda x{torch.cuda.device_count()} ({torch.cuda.get_device_name(0)})")
    if mps_built and torch.backends.mps.is_available():
        devices.append("mps")
    checks.append(Check("devices", True, ", ".join(devices)))
    checks.append(_emulated_check())
    return checks


def _emulated_check() -> Check:
    try:
        from course import emps

        x = __import__("torch").ones(2, 2, device=emps.DEVICE).t()
        x.mul_(2)
        return Check("emulated MPS", bool((x.cpu() == 2).all()), f"{emps.DEVICE} works")
    except Exception as exc:
        return Check("emulated MPS", False, f"unavailable: {exc}")


def compiler_status() -> Check:
    """Whether notebook 07 can build its kernels: the C++ build's probe plus Python's headers."""
    try:
        from course.kernels.cpp.build import compiler_status as probe

        status = probe()
    except Exception as exc:  # a broken torch must not stop the rest of the report
        return Check("C++ compiler", False, f"cannot probe the toolchain: {exc}")
    if not status.ok:
        return Check("C++ compiler", False, status.message())
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.exists():
        return Check("C++ compiler", False, f"Python headers are missing ({headers})")
    return Check("C++ compiler", True, status.message())


def _os_check() -> Check:
    mac = platform.mac_ver()[0]
    detail = f"macOS {mac}" if mac else f"{platform.system()} {platform.release()}"
    return Check("OS", True, f"{detail} ({platform.machine()})")


def _widget_check() -> Check:
    """The widget stack's versions, and whether ipywidgets imports: an install this Python
    cannot import (broken, or another environment's) leaves every panel blank."""
    versions = {p: _version(p) for p in ("ipywidgets", "jupyterlab", "jupyterlab_widgets")}
    missing = [p for p, v in versions.items() if v is None]
    detail = ", ".join(f"{p} {v}" for p, v in versions.items() if v)
    if missing:
        return Check("widgets", False, f"{detail}; missing: {', '.join(missing)}")
    try:
        importlib.import_module("ipywidgets")
    except Exception as exc:
        return Check("widgets", False, f"{detail}; cannot import ipywidgets: {exc}")
    return Check("widgets", True, detail)


def _sources_check() -> Check:
    """Notebook 06's PyTorch kernel sources: cached by `make fetch-sources`, else shown as links."""
    from course.kernels import upstream

    missing = upstream.missing_sources()
    if missing:
        names = ", ".join(f"{s.function} ({s.version})" for s in missing)
        return Check(
            "kernel sources",
            False,
            f"not cached: {names}; notebook 06 shows links instead until `make fetch-sources` "
            f"runs once while online (cache: {upstream.cache_dir()})",
        )
    return Check("kernel sources", True, f"cached in {upstream.cache_dir()}")


def checks() -> list[Check]:
    """Every environment check, in report order."""
    python_ok = sys.version_info >= (3, 10)
    return [
        Check("Python", python_ok, platform.python_version()),
        _os_check(),
        *_torch_checks(),
        compiler_status(),
        _widget_check(),
        _sources_check(),
    ]


def verdicts(found: list[Check]) -> list[dict[str, str]]:
    """One verdict per notebook, from what its catalogue entry needs."""
    by_name = {c.name: c for c in found}
    torch_ok = by_name["torch"].ok and by_name.get("emulated MPS", Check("", False, "")).ok
    rows = []
    for lesson in LESSONS:
        if not torch_ok and lesson.filename != "00_start_here.ipynb":
            verdict = "not ready: " + (
                by_name["torch"].detail
                if not by_name["torch"].ok
                else by_name["emulated MPS"].detail
            )
        elif "compiler" in lesson.needs and not by_name["C++ compiler"].ok:
            verdict = f"will skip the C++ cells because {by_name['C++ compiler'].detail}"
        elif "sources" in lesson.needs and not by_name["kernel sources"].ok:
            verdict = "ready, but shows links instead of PyTorch's kernel source: run "
            verdict += "`make fetch-sources` once while online"
        else:
            verdict = "ready"
        rows.append({"notebook": lesson.filename, "verdict": verdict})
    return rows


def report() -> dict[str, object]:
    """The whole report as data (what --json prints)."""
    found = checks()
    return {"checks": [asdict(c) for c in found], "notebooks": verdicts(found)}


def report_text(data: dict[str, object]) -> str:
    """The report for a terminal."""
    lines = ["Environment"]
    lines += [
        f"  [{'ok' if c['ok'] else '!!'}] {c['name']:<13} {c['detail']}" for c in data["checks"]
    ]
    lines += ["", "Notebooks"]
    lines += [f"  {row['notebook']:<32} {row['verdict']}" for row in data["notebooks"]]
    return "\n".join(lines)


def report_html(data: dict[str, object] | None = None) -> str:
    """The report as two HTML tables (the top of 00_start_here.ipynb)."""
    data = data or report()
    env_rows = [
        {"check": c["name"], "status": "ok" if c["ok"] else "problem", "detail": c["detail"]}
        for c in data["checks"]
    ]
    colours = {"ok": "#d6f5dd", "problem": "#ffd6d6", "ready": "#d6f5dd"}
    return html_table(env_rows, colours) + "<br>" + html_table(data["notebooks"], colours)


def cli(argv: list[str]) -> int:
    """Print the report; exit 1 if something a notebook needs to run is missing (a notebook that
    runs but shows less, "ready, but ...", does not count)."""
    p = argparse.ArgumentParser(prog="python -m course doctor", description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true", help="machine-readable output")
    args = p.parse_args(argv)
    data = report()
    print(json.dumps(data, indent=2) if args.json else report_text(data))
    return 0 if all(row["verdict"].startswith("ready") for row in data["notebooks"]) else 1
