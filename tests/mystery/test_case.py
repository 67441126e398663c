"""open_case and the three checks: a symptom on every sampled case, fixes that must change the
model (never torch or the device), and a culprit that is found, not guessed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import course.mystery.case as case_module
from course import catalog, emps, journal
from course.errors import CourseError
from course.exercises import instructor_mode
from course.mystery import CONDITIONS, guard, hint, models, open_case
from course.mystery.bugs import bug_free_backend
from course.mystery.case import EXERCISES, TRIES
from course.mystery.generate import generate
from course.mystery.hints import STEPS
from tests.mystery.runs import spec_for, untrained_case

# A sample that trains fast: four conditions, two families; each trains twice when opened.
SAMPLE = (14, 19, 28, 34)
CAUSE_WORDS = set(CONDITIONS) | {"transpos", "contiguous", "stride", "foreach", "lerp", "addc"}


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """A private journal and no progress on any case."""
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path))
    monkeypatch.setattr(case_module, "_PROGRESS", {})
    for seed in SAMPLE:  # the fix checks below judge patches; the order has its own test
        _culprit_passed(seed)


def _culprit_passed(seed: int) -> None:
    journal.record(EXERCISES[1], "check", passed=True, case=seed)


@pytest.fixture(scope="module")
def cases():
    return {seed: open_case(seed) for seed in SAMPLE}


@pytest.mark.parametrize("seed", SAMPLE)
def test_each_sampled_case_shows_a_symptom_on_its_first_draw(cases, seed):
    found = case_module.measured(seed)
    assert found.findings and found.spec == generate(seed)
    text = (cases[seed].describe() + cases[seed].title).lower()
    assert f"(seed {seed})" in text
    assert not [word for word in CAUSE_WORDS if word in text], text


@pytest.mark.parametrize("seed", SAMPLE)
def test_the_reference_fix_passes_and_no_fix_fails(cases, seed):
    case = cases[seed]
    verdict = case.check_fix(case._spec.fix_function())
    assert verdict.passed, verdict
    assert "still met its condition" in case.check_fix(lambda model: model).message


def _tensor_method(model):
    torch.Tensor.addcdiv_ = lambda self, *args, **kwargs: self
    return model


def _torch_function(model):
    original = torch.nn.functional.linear
    torch.nn.functional.linear = lambda *args, **kwargs: original(*args, **kwargs)
    return model


def _library(model):
    library = torch.library.Library("aten", "IMPL")
    library.impl("addcdiv_", lambda self, *a, **k: self, "AutogradPrivateUse1")
    _library.kept = library
    return model


class _Skip(torch.utils._python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _mode(model):
    _Skip().__enter__()
    return model


def _device_kernel(model):
    emps.current_backend().overrides.kernel.__class__.__call__ = lambda self, call: None
    return model


def _bug_list_emptied(model):
    emps.current_backend().overrides.kernel._bugs = ()  # an instance: no module or class changes
    return model


def _overrides_swapped(model):
    object.__setattr__(emps.current_backend(), "overrides", {})  # a frozen dataclass, forced
    return model


@pytest.mark.parametrize(
    "patch, names",
    [
        (_bug_list_emptied, "PlantedKernel._bugs was changed"),
        (_overrides_swapped, "Backend.overrides was changed"),
        (_tensor_method, "torch.Tensor.addcdiv_"),
        (_torch_function, "torch.nn.functional.linear"),
        (_library, "torch.library registered a kernel"),
        (_mode, "TorchDispatchMode"),
        (_device_kernel, "PlantedKernel.__call__"),
    ],
)
def test_a_fix_that_patches_torch_or_the_device_is_refused_and_undone(cases, patch, names):
    verdict = cases[14].check_fix(patch)
    assert not verdict.passed and "not torch or the device" in verdict.message, verdict
    assert names in verdict.message and "put everything back" in verdict.message
    assert guard.pristine().changes() == []


class _OutOfPlace(torch.utils._python_dispatch.TorchDispatchMode):
    """Every in-place op as its out-of-place form plus copy_: no diagnosis at all."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        base = func._schema.name.removeprefix("aten::")
        if base.endswith("_") and not base.startswith("_") and base != "copy_":
            packet = getattr(torch.ops.aten, base[:-1], None)
            overload = getattr(packet, func._overloadname, None) if packet else None
            if overload is not None:
                return args[0].copy_(overload(*args, **kwargs))
        return func(*args, **kwargs)


def _around_forward(context):
    """A patch that runs the model's own forward inside `context()`, and nothing else."""

    def patch(model):
        forward = model.forward

        def wrapped(*args, **kwargs):
            with context():
                return forward(*args, **kwargs)

        model.forward = wrapped
        return model

    return patch


def _tensor_method_inside_forward():
    """torch.Tensor's in-place ops replaced while forward runs, and put back after."""
    import contextlib

    @contextlib.contextmanager
    def patched():
        saved = {name: getattr(torch.Tensor, name) for name in ("mul_", "add_", "addcdiv_")}
        for name in saved:
            setattr(torch.Tensor, name, lambda self, *a, **k: self)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(torch.Tensor, name, value)

    return patched()


@pytest.mark.parametrize(
    "context, names",
    [
        (_Skip, "_Skip (a dispatch mode) was active inside the run"),
        (_OutOfPlace, "_OutOfPlace (a dispatch mode)"),
        (lambda: emps.use_backend(emps.Backend(emps.FIXED_MACOS14)), "backend (or profile)"),
        (lambda: emps.use_profile("fixed-macos14"), "backend (or profile)"),
        (_tensor_method_inside_forward, "was replaced while the run was inside it"),
    ],
)
def test_the_fixed_run_is_sealed_against_changes_made_and_undone_inside_forward(
    cases, context, names
):
    """Issue 36: a mode, a backend or a patch entered inside forward and left before it
    returns is gone when the run ends; the seal sees it while it is in force."""
    verdict = cases[14].check_fix(_around_forward(context))
    assert not verdict.passed and "not torch or the device" in verdict.message, verdict
    assert names in verdict.message, verdict.message
    assert guard.pristine().changes() == []


def test_the_fix_waits_for_the_culprit_and_a_restart_keeps_it(cases, tmp_path, monkeypatch):
    monkeypatch.setenv(journal.ENV_DIR, str(tmp_path / "fresh"))
    case = cases[14]
    right = case._spec.fix_function()
    assert "first name the culprit" in case.check_fix(right).message
    journal.record("10.culprit", "check", passed=False, case=case.seed)
    assert "first name the culprit" in case.check_fix(right).message
    journal.record("10.culprit", "check", passed=True, case=case.seed)
    assert case.check_fix(right).passed


def test_failing_repros_run_out_and_a_restart_does_not_refill_them(monkeypatch):
    spec = spec_for("large")
    case = untrained_case(spec)
    for _ in range(case_module.REPRO_TRIES):
        assert not case.check_repro(lambda: False).passed
    stopped = case.check_repro(spec.repro_function())
    assert not stopped.passed and "stops judging" in stopped.message
    monkeypatch.setattr(case_module, "_PROGRESS", {})
    again = untrained_case(spec)
    assert "stops judging" in again.check_repro(spec.repro_function()).message


def test_a_patch_made_before_the_check_is_refused_and_undone(cases):
    original = torch.Tensor.lerp_
    torch.Tensor.lerp_ = lambda self, *args: self
    verdict = cases[14].check_fix(lambda model: model)
    assert "Before the check: torch.Tensor.lerp_ was patched" in verdict.message
    assert torch.Tensor.lerp_ is original


def test_a_fix_made_in_the_users_class_is_refused_and_told_where_it_belongs(cases):
    """Changing the user's class changes every model, the compared CPU run included."""
    original = models.BagOfWords.forward

    def in_the_class(model):
        models.BagOfWords.forward = lambda self, counts: original(self, counts)
        return model

    verdict = cases[14].check_fix(in_the_class)
    assert not verdict.passed and "BagOfWords.forward was patched" in verdict.message
    assert "user's code for every model" in verdict.message and "model.<method>" in verdict.message
    assert models.BagOfWords.forward is original


def _output_through_the_host(model):
    forward = model.forward
    model.forward = lambda x: forward(x).cpu().to(x.device)
    return model


def _item_in_forward(model):
    forward = model.forward
    model.forward = lambda x: forward(x) * (1.0 + 0.0 * x.abs().max().item())
    return model


def _through_a_list(model):
    forward = model.forward

    def through_python(x):  # the values from the host, the gradient from the device
        out = forward(x)
        return out + (torch.tensor(out.tolist()).to(x.device) - out).detach()

    model.forward = through_python
    return model


def _gradient_through_the_host(model):
    def hook(module, args, output):
        if output.requires_grad:
            output.register_hook(lambda grad: grad.cpu().to(grad.device))

    model = case_module.generate(14).fix_function()(model)  # fixed, and a backward detour
    model.register_forward_hook(hook)
    return model


@pytest.mark.parametrize(
    "patch, first",
    [
        (_output_through_the_host, ".to('cpu')"),
        (_item_in_forward, ".item()"),
        (_through_a_list, "torch.tensor(...) made from Python values"),
        (_gradient_through_the_host, ".to('cpu')"),
    ],
)
def test_a_fix_that_computes_on_the_cpu_is_refused(cases, patch, first):
    verdict = cases[14].check_fix(patch)
    assert not verdict.passed and "takes the compute off the device" in verdict.message
    assert f"first: {first}" in verdict.message and "kernel under test" in verdict.message


def test_the_op_under_test_run_on_the_cpu_inside_forward_is_refused():
    """The realistic detour: ReLU done in place, but on a CPU copy of the activation."""

    class HostReLU(torch.nn.Module):
        def forward(self, h):
            return h.cpu().relu_().to(h.device)

    def patch(model):
        model.act = HostReLU()
        return model

    spec = generate(1)
    assert spec.design.habit == "inplace-relu"
    _culprit_passed(spec.seed)
    verdict = untrained_case(spec).check_fix(patch)  # refused before any comparison of runs
    assert not verdict.passed and "takes the compute off the device" in verdict.message


def _fused(model):  # the notebook's printed fix, copied into another case
    model.fused = True
    return model


def _sgd(model):
    model.configure_optimizer = lambda: torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model


@pytest.mark.parametrize("patch", [_fused, _sgd])
def test_a_recipe_change_that_routes_around_a_stored_trigger_fails_with_the_users_recipe(
    cases, patch
):
    """Case 14's weight is imported transposed: another optimizer path trains, but the weight
    still trips the kernel. Case 28's trigger is a size no fix can remove: there the recipe is
    the fix."""
    verdict = cases[14].check_fix(patch)
    assert not verdict.passed and "hidden variant" in verdict.message
    assert "user's own recipe" in verdict.message and "still met its condition" in verdict.message
    assert cases[28]._spec.design.habit == "vocab" and cases[28].check_fix(_fused).passed


def _no_clip(model):
    model.clip_activations = lambda h: h
    return model


def _no_border(model):
    model.mask_border = lambda h: h
    return model


def _hardtanh_clip(model):
    """Out of place through another op with the same values: a right fix."""
    model.clip_activations = lambda h: torch.nn.functional.hardtanh(h, -model.clip, model.clip)
    return model


def _full_size_border(model):
    """Still in place, but the mask expanded to the activation's shape: nothing is broadcast."""
    model.mask_border = lambda h: h.masked_fill_(model.border.expand_as(h), 0.0)
    return model


@pytest.mark.parametrize(
    "seed, habit, patch, right",
    [(17, "clip", _no_clip, _hardtanh_clip), (3, "border-mask", _no_border, _full_size_border)],
)
def test_a_fix_that_drops_the_step_that_meets_the_bug_is_refused(seed, habit, patch, right):
    """Without its clip (or border mask) the model trains healthily and never meets the
    condition, but it is another model. The reference fix passes, and so does a right fix
    written another way."""
    case = open_case(seed)
    _culprit_passed(seed)
    assert case._spec.design.habit == habit
    verdict = case.check_fix(patch)
    assert not verdict.passed and "changes what the model computes" in verdict.message
    assert case.check_fix(case._spec.fix_function()).passed
    assert case.check_fix(right).passed


def test_weights_trained_elsewhere_are_refused(cases):
    def borrowed(model):
        with torch.no_grad():
            next(model.parameters()).add_(0.01)
        return model

    assert "initial values" in cases[14].check_fix(borrowed).message


# --- right fixes written another way: each must pass ------------------------------------------


def _clone_in_the_default_format(model):
    model.vectors = torch.nn.Parameter(
        model.vectors.detach().clone(memory_format=torch.contiguous_format)
    )
    return model


def _every_strided_parameter_by_data(model):
    """A learner's helper: whichever parameter is not stored row by row, its data re-stored."""
    for parameter in model.parameters():
        if not parameter.is_contiguous():
            parameter.data = parameter.data.contiguous()
    return model


def _through_the_host_once(model):
    """Re-stored through the CPU while patching (not during training): no detour."""
    weight = model.vectors.detach()
    model.vectors = torch.nn.Parameter(weight.cpu().contiguous().to(weight.device))
    return model


def _own_optimizer(**options):
    """The user's optimizer and its settings, written out by hand, with one option added."""

    def patch(model):
        def configure():
            kind = getattr(torch.optim, model.optimizer)
            settings = {"lr": model.lr, "weight_decay": model.weight_decay, "eps": model.eps}
            return kind(model.parameters(), **settings, **options)

        model.configure_optimizer = configure
        return model

    return patch


@pytest.mark.parametrize(
    "seed, patch",
    [
        (14, _clone_in_the_default_format),
        (14, _every_strided_parameter_by_data),
        (14, _through_the_host_once),
        (19, _own_optimizer(foreach=False)),
        (28, _own_optimizer(fused=True)),
    ],
)
def test_right_fixes_written_another_way_pass(cases, seed, patch):
    verdict = cases[seed].check_fix(patch)
    assert verdict.passed, verdict


# --- the culprit --------------------------------------------------------------------------


def _unlocked(kind):
    case = untrained_case(spec_for(kind))
    assert case.check_repro(spec_for(kind).repro_function()).passed
    return case


def test_the_culprit_waits_for_a_passing_repro():
    spec = spec_for("large")
    case = untrained_case(spec)
    assert "first show the bug" in case.check_culprit(spec.bug.op, "large").message


@pytest.mark.parametrize("spelling", ["{op}", "aten::{op}", "{name}", "torch.Tensor.{op}"])
def test_the_right_culprit_passes_however_it_is_spelled(spelling):
    case = _unlocked("large")
    op = case._spec.bug.op
    named = spelling.format(op=op, name=op.rstrip("_"))
    assert case.check_culprit(named, "large+unaligned").passed


def test_a_pair_needs_both_halves_and_nothing_more():
    """A case planted on two properties at once: either half alone, or a third one added, is a
    wrong pair (and costs a try); both, in either order, pass."""
    case = _unlocked("large")
    op = case._spec.bug.op
    assert case._spec.bug.trigger.kinds == ("large", "unaligned")
    assert not case.check_culprit(op, "large").passed
    assert not case.check_culprit(op, "unaligned").passed
    assert case.check_culprit(op, ("unaligned", "large")).passed


def test_a_foreach_case_may_name_the_foreach_op():
    case = _unlocked("foreach")
    assert case.check_culprit(f"torch._foreach_{case._spec.bug.op}", "foreach").passed


def test_torchs_spelling_of_channels_last_is_accepted():
    case = _unlocked("channels-last")
    assert case.check_culprit(case._spec.bug.op, ("channels_last", "unaligned")).passed


def test_a_wrong_pair_never_says_which_half_was_right_and_three_tries_end_it():
    case = _unlocked("large")
    op = case._spec.bug.op
    other = "mul_" if op != "mul_" else "add_"
    right_op = case.check_culprit(op, "long-dim").message.split(":")[0]
    right_condition = case.check_culprit(other, "large").message
    assert "1 try left" in right_condition and "2 tries left" in right_op
    for message in (right_op, right_condition):
        assert "op is right" not in message and "condition is right" not in message
    case.check_culprit(other, "transposed")
    stopped = case.check_culprit(op, ("large", "unaligned"))  # even the right one: guessing is over
    assert not stopped.passed and f"{TRIES} answers" in stopped.message


@pytest.mark.parametrize(
    "op, condition, says",
    [
        ("torch.lerp", "large", "out-of-place function"),
        ("frobnicate_", "large", "not one of the suspects"),
        ("lerp_", "diagonal", "case.conditions() lists them"),
        (3, "large", "give the op's name as a string"),
    ],
)
def test_odd_answers_are_a_not_yet_without_costing_a_try(op, condition, says):
    case = _unlocked("large")
    verdict = case.check_culprit(op, condition)
    assert not verdict.passed and says in verdict.message
    assert case._progress.wrong_culprits == 0


def test_a_restarted_kernel_keeps_the_passing_repro_and_the_tries_used(monkeypatch):
    case = _unlocked("large")
    op = case._spec.bug.op
    other = "mul_" if op != "mul_" else "add_"
    for condition in ("long-dim", "transposed"):
        case.check_culprit(other, condition)
    monkeypatch.setattr(case_module, "_PROGRESS", {})  # a new kernel: the session forgets
    again = untrained_case(spec_for("large"))
    assert again._progress.repro_passed and again._progress.wrong_culprits == 2
    assert "0 tries left" in again.check_culprit(other, "large").message
    stopped = again.check_culprit(op, "large")
    assert not stopped.passed and f"{TRIES} answers" in stopped.message
    monkeypatch.setattr(case_module, "_PROGRESS", {})
    other_seed = untrained_case(spec_for("transposed"))  # tries are counted per case
    assert other_seed._progress.wrong_culprits == 0 and not other_seed._progress.repro_passed


def test_a_counter_reset_in_the_session_hands_out_no_new_tries():
    case = _unlocked("large")
    op = case._spec.bug.op
    other = "mul_" if op != "mul_" else "add_"
    for condition in ("long-dim", "transposed", "unaligned"):
        case.check_culprit(other, condition)
    case._progress.wrong_culprits = 0  # what a learner finds with vars(case._progress)
    stopped = case.check_culprit(op, "large")
    assert not stopped.passed and f"{TRIES} answers" in stopped.message


def test_checks_are_journaled_and_carry_the_hint_line_until_a_hint_is_seen():
    case = _unlocked("large")
    message = case.check_culprit("mul_" if case._spec.bug.op != "mul_" else "add_", "large").message
    assert "from course.mystery import hint; hint()" in message
    assert hint().startswith("Hint 1/")
    assert "hint()" not in case.check_culprit(case._spec.bug.op, "long-dim").message
    names = [(e.exercise, e.event) for e in journal.load()]
    assert ("10.repro", "check") in names and ("10.culprit", "check") in names
    assert ("10.culprit", "hint") in names


def test_blank_answers_are_not_attempted_yet():
    case = untrained_case(spec_for("large"))
    for verdict in (case.check_culprit(..., ...), case.check_repro(...), case.check_fix(...)):
        assert "not attempted yet" in verdict.message
    assert journal.load()[len(SAMPLE) :] == []  # past the culprits the fixture records


# --- opening a case ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "3", True])
def test_bad_seeds_are_refused(seed):
    with pytest.raises(CourseError, match="seed"):
        open_case(seed)


def test_use_device_plants_the_bug_only_inside_the_block(cases):
    case = cases[14]
    repro = case._spec.repro_function()
    with case.use_device():
        assert repro()
    with emps.use_backend(bug_free_backend()):
        assert not repro()
    model = case.model()
    assert model.vectors.device.type == "emps" and not model.vectors.is_contiguous()
    assert case.step(model, case.optimizer(model)) > 0


def test_hints_come_in_steps_and_the_answer_is_for_instructors(cases):
    case = cases[19]
    assert case.hint().startswith("Hint 1/") and case.hint(len(STEPS)).startswith(
        f"Hint {len(STEPS)}/"
    )
    instructor_mode(False)
    with pytest.raises(CourseError, match="instructor"):
        case.answer()
    instructor_mode(True)
    try:
        text = str(case.answer())
    finally:
        instructor_mode(False)
    assert "def repro() -> bool:" in text and "def patch(model):" in text and "modelled on" in text


def test_the_answer_needs_the_instructors_install_as_well_as_instructor_mode(monkeypatch, tmp_path):
    """Instructor mode is one call away for anyone: without the reference notebooks (a student
    release) the answer is refused in it too; COURSE_SOLUTIONS pointed at them opens it."""
    case = untrained_case(spec_for("large"))
    references = catalog.NOTEBOOK_DIR
    monkeypatch.setattr(catalog, "NOTEBOOK_DIR", tmp_path / "no-notebooks")
    monkeypatch.delenv("COURSE_SOLUTIONS", raising=False)
    instructor_mode(True)
    try:
        with pytest.raises(CourseError, match="instructor's install") as refused:
            case.answer()
        assert "COURSE_SOLUTIONS" in str(refused.value) and "--key" in str(refused.value)
        monkeypatch.setenv("COURSE_SOLUTIONS", str(tmp_path))  # a folder without notebook 10
        with pytest.raises(CourseError, match="instructor's install"):
            case.answer()
        monkeypatch.setenv("COURSE_SOLUTIONS", str(references))
        assert "reference repro:" in str(case.answer())
    finally:
        instructor_mode(False)


def test_in_a_student_release_the_answer_is_refused_even_in_instructor_mode(tmp_path):
    """The real release tree (`make release`), in a fresh process with COURSE_INSTRUCTOR=1."""
    from tests.test_learner_copies import release

    top = release()
    code = (
        "from course.errors import CourseError\n"
        "from course.mystery.case import Case, Measured\n"
        "from course.mystery.generate import generate\n"
        "case = Case(Measured(generate(19), None, None, ()))\n"
        "try:\n"
        "    print(case.answer())\n"
        "except CourseError as exc:\n"
        "    print('refused:', exc)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "COURSE_SOLUTIONS"}
    env |= {"PYTHONPATH": str(top), "COURSE_INSTRUCTOR": "1", journal.ENV_DIR: str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=top, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:") and "instructor's install" in done.stdout
