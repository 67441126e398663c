"""The learner's random stream is the learner's: no course call reseeds, restores or draws from it.

Notebook 04's timing experiment once called `torch.manual_seed`, resetting the learner's global
stream (issue 26). Course code draws from private `torch.Generator`s instead. Two checks:

- statically, no module of the course calls a function that reseeds or restores torch's (or
  Python's) global RNG: `torch.manual_seed`, `torch.seed`, `torch.set_rng_state`,
  `torch.random.fork_rng`, `torch.default_generator...`, `random.seed`, `numpy.random.seed`;
- dynamically, each public entry point below leaves torch's global RNG state exactly as it was
  (bit for bit: no reseed, no restore, no draw), while those functions are spied on.
"""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
import torch

from course import emps, exercises
from tests.corpus import reference
from tests.known_failures import listed

COURSE = Path(__file__).resolve().parents[1] / "course"
RESEEDING = {
    "torch.manual_seed",
    "torch.seed",
    "torch.set_rng_state",
    "torch.random.manual_seed",
    "torch.random.seed",
    "torch.random.set_rng_state",
    "torch.random.fork_rng",
    "random.seed",
    "np.random.seed",
    "numpy.random.seed",
}
KNOWN_MODULES: set[str] = set()  # known offenders: strict xfails, a list that can only shrink


def dotted(node: ast.AST) -> str:
    """ "torch.random.fork_rng" for the expression torch.random.fork_rng ("" if not a name)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


# A device's own RNG API (`torch.emps.manual_seed(...)`, and what torch.manual_seed and
# torch.random.fork_rng call on every device module): it runs because the learner asked to seed,
# save or restore, never on the course's own initiative.
DEVICE_RNG_API = {"manual_seed", "manual_seed_all", "seed", "get_rng_state", "set_rng_state"}


def reseeding_calls(path: Path) -> list[str]:
    calls = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exempt = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name in DEVICE_RNG_API
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in exempt:
            name = dotted(node.func)
            if name in RESEEDING or name.startswith("torch.default_generator"):
                calls.append(f"line {node.lineno}: {name}")
    return calls


MODULES = sorted(str(p.relative_to(COURSE)) for p in COURSE.rglob("*.py"))


@pytest.mark.parametrize("module", listed(MODULES, KNOWN_MODULES, "reseeds the global RNG"))
def test_no_module_reseeds_or_restores_the_global_rng(module):
    assert reseeding_calls(COURSE / module) == []


def test_the_scan_sees_a_reseeding_call(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import torch\n"
        "gen = torch.Generator().manual_seed(0)\n"  # private: fine
        "text = 'torch.manual_seed(0)'\n"  # a string (a reproduction line): fine
        "with torch.random.fork_rng():\n"
        "    torch.manual_seed(1)\n"
    )
    assert reseeding_calls(sample) == ["line 4: torch.random.fork_rng", "line 5: torch.manual_seed"]


@pytest.fixture
def spied(monkeypatch) -> list[str]:
    """The names of reseeding functions called while the test runs (they still work)."""
    calls: list[str] = []
    for name in sorted(RESEEDING):
        module_name, _, attribute = name.rpartition(".")
        module = {"torch": torch, "torch.random": torch.random}.get(module_name)
        if module is None:
            continue

        monkeypatch.setattr(module, attribute, _spy(getattr(module, attribute), name, calls))
    return calls


def _spy(original, name: str, calls: list[str]):
    def spy(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    return spy


def _checkpoint_loader():
    buffer = io.BytesIO()
    torch.save(torch.nn.Linear(3, 2).state_dict(), buffer)  # the test's own draw, before
    buffer.seek(0)
    return lambda: torch.load(buffer, map_location="emps")


def _entry_points():
    """(name, call) for the public entry points a learner reaches, with small arguments."""
    from course.adam import bias_correction, op_isolation, scratch, switchboard
    from course.audit import core as audit
    from course.audit import distributions
    from course.casefile import checklist
    from course.dispatch import exercises as dispatch_exercises
    from course.dispatch import explorer, tables
    from course.isolation import experiments
    from course.kernels import placeholder_lab
    from course.layout import calculator, named, opchain, timing
    from course.model import encoder_layout, runs, sae
    from course.mystery import open_case

    model = runs.fresh_model(n_features=64, k=4)  # built at collection: not what is measured

    return [
        ("timing.compare_layouts", lambda: timing.compare_layouts(n=16, repeats=1)),
        ("timing.stride_sweep", lambda: timing.stride_sweep(count=1024, strides=(1, 4), repeats=1)),
        ("named.laid_out", lambda: named.laid_out(torch.zeros(2, 3), "transposed", emps.DEVICE)),
        (
            "calculator.apply_chain",
            lambda: calculator.apply_chain(
                calculator.Layout.contiguous((3, 4)), opchain.parse_chain("T; [:, ::2]")
            ),
        ),
        ("emps.use_profile + record", _profile_and_record),
        ("torch.load onto emps", _checkpoint_loader()),
        (
            "audit cpu",
            lambda: audit.audit(
                "cpu", ops=["normal_", "bernoulli_", "mul_.Tensor"], dtypes="float32"
            ),
        ),
        (
            "audit emulated",
            lambda: audit.audit("emulated:2.4-macos14", ops="uniform_", dtypes="float32"),
        ),
        ("audit panel", lambda: audit.audit_panel("2.4-macos14", "transposed")),
        (
            "distributions.misfits",
            lambda: distributions.misfits(
                torch.zeros(64), distributions.law_of("aten::random_.to", {"to": 7}, torch.float32)
            ),
        ),
        ("sae.TopKSAE", lambda: sae.TopKSAE(d_model=8, n_features=16, k=2)),
        ("runs.dataset", lambda: runs.dataset(d_model=16, seed=3)),
        ("runs.run", lambda: runs.run(steps=2, batch_size=8, n_features=64, k=4)),
        ("runs.fresh_model", lambda: runs.fresh_model(n_features=64, k=4)),
        ("encoder_layouts", lambda: encoder_layout.encoder_layouts(d_model=8, n_features=16)),
        ("scratch.compare_with_torch", lambda: scratch.compare_with_torch(steps=2)),
        ("scratch.traced_step", lambda: scratch.traced_step()),
        ("op_isolation.isolate", lambda: op_isolation.isolate("addcmul_")),
        (
            "switchboard.run_case",
            lambda: switchboard.run_case(switchboard.find_case(True, False), steps=2, batch_size=8),
        ),
        ("bias_correction.draw", lambda: bias_correction.draw(0.9, 0.999, (1, 10))),
        ("checklist", lambda: checklist.checklist(*checklist.sae_after_one_step(n_features=64))),
        ("dispatch.override_experiment", dispatch_exercises.override_experiment),
        ("dispatch.call_path", lambda: tables.call_path("addcmul_", torch.zeros(2, 3))),
        ("dispatch_explorer", lambda: explorer.dispatch_explorer()),
        (
            "placeholder_lab.redesign_rows",
            lambda: placeholder_lab.redesign_rows(),
        ),
        ("placeholder_lab.lost_write_rows", lambda: placeholder_lab.lost_write_rows()),
        ("experiments.bench", lambda: experiments.bench(n_features=64, k=4, batch_size=8)),
        ("experiments.metadata_rows", lambda: experiments.metadata_rows(model)),
        ("mystery.open_case", lambda: open_case(seed=1)),
    ]


def _profile_and_record():
    with emps.use_profile("2.2.1-macos14"), emps.record():
        x = torch.zeros(4, 3, device=emps.DEVICE).t()
        x.addcmul_(x, x)
        x.normal_(generator=torch.Generator().manual_seed(0))
    return x


ENTRY_POINTS = _entry_points()
KNOWN_ENTRY_POINTS: set[str] = set()


def _leaves_the_rng_alone(call, spied: list[str]) -> None:
    torch.manual_seed(1234)
    seed, state = torch.initial_seed(), torch.get_rng_state()
    spied.clear()
    call()
    assert spied == [], f"reseeded or restored the global RNG: {spied}"
    assert torch.initial_seed() == seed, "reseeded torch's global RNG"
    assert torch.equal(torch.get_rng_state(), state), "drew from torch's global RNG"


@pytest.mark.parametrize(
    ("name", "call"),
    listed(ENTRY_POINTS, KNOWN_ENTRY_POINTS, "touches the global RNG", name=lambda e: e[0]),
    ids=[name for name, _ in ENTRY_POINTS],
)
def test_an_entry_point_leaves_the_global_rng_alone(name, call, spied):
    _leaves_the_rng_alone(call, spied)


CHECKERS = sorted(exercises.all_exercises())


@pytest.mark.parametrize("name", CHECKERS)
def test_a_checker_leaves_the_global_rng_alone(name, spied):
    """check(...) runs the learner's answer on hidden variants: with private generators only."""
    answer = reference(name)
    _leaves_the_rng_alone(lambda: exercises.check(name, answer), spied)
