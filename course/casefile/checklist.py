"""The story's debugging checklist as a function: what to look at before blaming hyperparameters.

The investigation lost days to a bug that tensor *metadata* gave away at once: the encoder
weight (and so Adam's state for it) had stride (1, 1536) on an MPS device with a torch known to
drop writes to non-contiguous outputs. `checklist(model, optimizer)` looks at exactly those
things: library versions against the known MPS bugs, contiguity of parameters and optimizer
state, and dtype or device surprises. Each check yields a `Finding` with a severity.
"""

from __future__ import annotations

import itertools
import platform
import re
import sys
import textwrap
from dataclasses import dataclass

import torch
from torch import nn

from course import emps
from course.errors import CourseError
from course.markup import html_table
from course.model.runs import dataset
from course.model.sae import TopKSAE

COLOURS = {"ok": "#d8f0d8", "warn": "#f9dfb5", "fail": "#f6c7c7"}
MPS_LIKE = ("mps", emps.torch_device().type)  # the real Apple GPU and our emulation of it


@dataclass(frozen=True)
class KnownBug:
    """A known MPS bug: which kernel families drop writes, up to which torch, and where to read."""

    families: frozenset[str]
    broken_through: tuple[int, int]  # the last torch (major, minor) known to have it
    fixed: tuple[int, int] | None  # the first torch with the fix, None if not pinned down
    fixed_in: str  # in words: a torch version, or where to check
    references: tuple[str, ...]


def _references(keyword: str) -> tuple[str, ...]:
    """The references of every emulated profile that mention `keyword` (deduplicated by issue)."""
    found: dict[str, str] = {}
    for profile in emps.PROFILES.values():
        for ref in profile.references:
            if keyword in ref:
                found.setdefault(ref.split(" ")[0], ref)
    return tuple(found.values())


KNOWN_MPS_BUGS = (
    KnownBug(emps.ADAM_FAMILIES, (2, 3), (2, 4), "torch 2.4", _references("addc")),
    KnownBug(
        emps.RANDOM_FAMILIES,
        (2, 10),
        None,
        "a release after torch 2.10 (pytorch#165267)",
        _references("random"),
    ),
)


@dataclass(frozen=True)
class Finding:
    """One check's outcome on one target (a parameter, a state tensor, the versions)."""

    check: str
    target: str
    severity: str
    message: str


def version_tuple(version: str) -> tuple[int, int]:
    """(major, minor) from a version string such as "2.2.1", "2.13.0+cpu" or "14.5".

    "" means "no such thing here" (platform.mac_ver() off a Mac) and gives (0, 0).
    """
    if version == "":
        return (0, 0)
    match = re.match(r"(\d+)\.(\d+)", version) if isinstance(version, str) else None
    if match is None:
        raise CourseError(f"cannot read a version from {version!r}; expected e.g. '2.2.1'")
    return (int(match[1]), int(match[2]))


def _bug_status(bug: KnownBug, torch_version: str) -> tuple[str, str]:
    """(severity, message) for one known bug under one torch version (on macOS < 15)."""
    version = version_tuple(torch_version)
    if bug.fixed is not None and version >= bug.fixed:
        return "ok", f"fixed in {bug.fixed_in}"
    if version <= bug.broken_through:
        refs = "; ".join(bug.references)
        return "fail", f"drop writes to non-contiguous outputs; fixed in {bug.fixed_in} ({refs})"
    return "warn", (
        f"newer than the last torch known broken, fix in {bug.fixed_in}: confirm "
        "with `python -m course audit --device mps`"
    )


def version_findings(
    device_type: str, torch_version: str | None = None, macos: str | None = None
) -> list[Finding]:
    """Check your versions first: torch and macOS against the known MPS bugs."""
    torch_version = torch_version or torch.__version__
    macos = platform.mac_ver()[0] if macos is None else macos
    where = f"torch {torch_version}" + (f", macOS {macos}" if macos else "")
    findings = [Finding("versions", "torch", "ok", f"{where}, device type {device_type}")]
    if device_type == emps.torch_device().type:
        findings.append(_emulated_profile_finding(emps.current_profile()))
        return findings
    if device_type != "mps":
        return findings
    if version_tuple(macos) >= (15, 0):
        findings.append(
            Finding(
                "versions",
                "macOS",
                "ok",
                "macOS >= 15: MPSGraph takes strided "
                "arrays, so the known lost-write bugs do not apply",
            )
        )
        return findings
    for bug in KNOWN_MPS_BUGS:
        families = ", ".join(f"{f}_" for f in sorted(bug.families))
        findings.append(Finding("versions", families, *_bug_status(bug, torch_version)))
    return findings


def _case_profile() -> emps.Profile | None:
    """The device profile of the mystery case opened in this session (notebook 10), if any.
    Looked up, never imported from here, so lessons 00-09 load nothing of the mystery package."""
    mystery = sys.modules.get("course.mystery.case")
    case = mystery.opened() if mystery is not None else None
    return None if case is None else case.backend.profile


def _emulated_profile_finding(profile: emps.Profile) -> Finding:
    """The emulated device's profile. Outside `case.use_device()` that is the session's profile
    (the story's, by default), not the case's device: reported as a fail there, it would send a
    learner after the story's bug instead of their case's, so the finding says which it is."""
    case = _case_profile()
    if case is not None and profile is case:
        return Finding("versions", "emulated profile", "ok", f"{case.label}: {case.description}")
    if case is not None:
        return Finding(
            "versions",
            "emulated profile",
            "warn",
            f"this checks the session's profile ({profile.label}), not your case's device: the "
            "case's device is used only inside `with case.use_device():`; build the model and "
            "run the checklist there",
        )
    severity = "fail" if profile.broken else "ok"
    return Finding("versions", "emulated profile", severity, profile.description)


def _not_contiguous(
    check: str, target: str, tensor: torch.Tensor, mps_like: bool, advice: str
) -> Finding:
    """A fail on an MPS-like device (writes get lost there), a warning elsewhere (only slower)."""
    layout = f"shape {list(tensor.shape)} stride {list(tensor.stride())}"
    return Finding(
        check, target, "fail" if mps_like else "warn", f"not contiguous ({layout}): {advice}"
    )


def parameter_findings(model: nn.Module, mps_like: bool) -> list[Finding]:
    """Non-contiguous parameters and buffers, float64 on an MPS-like device, mixed devices/dtypes.

    Buffers count too: the model writes them in place (BatchNorm's running statistics), so a
    non-contiguous buffer can lose its updates exactly like a parameter.
    """
    params = dict(model.named_parameters())
    tensors = {**params, **dict(model.named_buffers())}
    findings = []
    for name, t in tensors.items():
        if not t.is_contiguous():
            advice = "make it contiguous at init: w.T.clone(memory_format=torch.contiguous_format)"
            if name not in params:
                advice = "register a contiguous copy, e.g. buffer.contiguous()"
            findings.append(_not_contiguous("contiguity", name, t, mps_like, advice))
        if t.dtype == torch.float64 and mps_like:
            findings.append(
                Finding(
                    "dtype",
                    name,
                    "fail",
                    "float64 on an MPS-like device: MPS "
                    "has no float64, so a 'fix' via float64 moves you to the CPU",
                )
            )
    devices = {str(p.device) for p in params.values()}
    if len(devices) > 1:
        findings.append(Finding("device", "parameters", "fail", f"mixed devices {sorted(devices)}"))
    dtypes = {str(p.dtype).replace("torch.", "") for p in params.values()}
    if len(dtypes) > 1:
        findings.append(Finding("dtype", "parameters", "warn", f"mixed dtypes {sorted(dtypes)}"))
    if not findings:
        where = f"on {', '.join(sorted(devices))}, {', '.join(sorted(dtypes))}" if params else ""
        buffers = len(tensors) - len(params)
        message = f"{len(params)} parameters and {buffers} buffers, contiguous {where}".strip()
        findings.append(Finding("parameters", "all", "ok", message))
    return findings


def optimizer_findings(model: nn.Module, optimizer: torch.optim.Optimizer) -> list[Finding]:
    """Does the optimizer update this model? Tensors of another model, or parameters left out."""
    mine = {id(p): name for name, p in model.named_parameters()}
    held = [p for group in optimizer.param_groups for p in group["params"]]
    foreign = [p for p in held if id(p) not in mine]
    findings = []
    if foreign:
        findings.append(
            Finding(
                "optimizer",
                "param_groups",
                "fail",
                f"{len(foreign)} of its {len(held)} tensors are not this model's parameters: "
                "it was built for another model, so step() never updates this one",
            )
        )
    held_ids = {id(p) for p in held}
    left_out = [n for n, p in model.named_parameters() if p.requires_grad and id(p) not in held_ids]
    if left_out:
        shown = ", ".join(left_out[:3]) + (", ..." if len(left_out) > 3 else "")
        findings.append(
            Finding(
                "optimizer",
                f"{len(left_out)} parameters",
                "warn",
                f"not in the optimizer, so never updated: {shown}",
            )
        )
    return findings


def state_findings(
    model: nn.Module, optimizer: torch.optim.Optimizer, mps_like: bool
) -> list[Finding]:
    """Optimizer state that is non-contiguous or lives on another device than its parameter."""
    names = {p: name for name, p in model.named_parameters()}
    findings, checked = [], 0
    for p, state in optimizer.state.items():
        for key, value in state.items():
            if not isinstance(value, torch.Tensor) or value.dim() == 0:
                continue  # Adam's `step` is a 0-dim CPU tensor by design
            checked += 1
            target = f"{names.get(p, '?')} {key}"
            if not value.is_contiguous():
                advice = "zeros_like preserved the parameter's layout"
                findings.append(_not_contiguous("optimizer state", target, value, mps_like, advice))
            if value.device != p.device:
                findings.append(
                    Finding(
                        "optimizer state",
                        target,
                        "fail",
                        f"on {value.device}, its parameter on {p.device}",
                    )
                )
    if not findings:
        findings.append(
            Finding(
                "optimizer state",
                "all",
                "ok",
                f"{checked} state tensors, contiguous, on their parameters' devices"
                if checked
                else "no state yet: run one optimizer step, then check again",
            )
        )
    return findings


def checklist(model: nn.Module, optimizer: torch.optim.Optimizer | None = None) -> list[Finding]:
    """Run every check of the story's checklist on a model (and its optimizer, after a step)."""
    if not isinstance(model, nn.Module):
        raise CourseError(f"checklist(model, ...) needs an nn.Module, not {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
        raise CourseError(
            "checklist(model, optimizer): optimizer must be a torch.optim.Optimizer such as "
            f"torch.optim.Adam(model.parameters()), not {optimizer!r}"
        )
    first = next(itertools.chain(model.parameters(), model.buffers()), None)
    device_type = first.device.type if first is not None else "cpu"
    mps_like = device_type in MPS_LIKE
    findings = version_findings(device_type) + parameter_findings(model, mps_like)
    if optimizer is not None:
        findings += optimizer_findings(model, optimizer) + state_findings(
            model, optimizer, mps_like
        )
    return findings


def problems(findings: list[Finding]) -> list[Finding]:
    """The findings that need action (warn or fail)."""
    return [f for f in findings if f.severity != "ok"]


def checklist_html(findings: list[Finding]) -> str:
    """The findings as a colour table (fail red, warn orange, ok green)."""
    rows = [
        {"severity": f.severity, "check": f.check, "target": f.target, "message": f.message}
        for f in findings
    ]
    return html_table(rows, COLOURS)


def report(findings: list[Finding], width: int = 100) -> str:
    """The findings as plain text, one per finding, wrapped at spaces to fit a notebook cell.

    Wrapped here (never mid-word, never at a hyphen) because a browser would otherwise break
    long lines wherever it likes, "non-con|tiguous" included.
    """
    return "\n".join(
        textwrap.fill(
            f"[{f.severity:>4}] {f.check}: {f.target}: {f.message}",
            width,
            subsequent_indent=" " * 7,
            break_long_words=False,
            break_on_hyphens=False,
        )
        for f in findings
    )


def sae_after_one_step(
    init: str = "transposed", device: str = emps.DEVICE, n_features: int = 1536
) -> tuple[TopKSAE, torch.optim.Adam]:
    """The story's SAE on a device with one Adam step taken, so its optimizer state exists."""
    model = TopKSAE(n_features=n_features, init=init, seed=0).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = dataset().x[:64].to(device)
    (model(batch) - batch).pow(2).sum(-1).mean().backward()
    optimizer.step()
    return model, optimizer
