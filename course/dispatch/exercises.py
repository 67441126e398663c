"""Notebook 05's exercises and predictions, checked against the live tables of the installed torch.

The learner builds two readers of the dispatcher's machinery (which C++ kernel the registry names
for an op on a backend; which dispatch keys run a kernel for a call) and one operator of their
own. Each checker runs the learner's function on variants the notebook never shows (other ops,
backends, tensors, dispatch modes, autocast, inference mode) and compares with the course's own
readers (`backend_kernel`, `call_path`), which read this process's registry and tables: nothing
is hard-coded, so the answers follow the torch that is installed.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator

import torch

from course.dispatch.registration import define_op, override_kernel, placeholder_addcmul_
from course.dispatch.registry import entries, kernel_entry, lookup
from course.dispatch.tables import call_path, key_summary
from course.dispatch.tracer import OpTracer
from course.exercises import (
    Exercise,
    Prediction,
    Verdict,
    failed,
    is_scaffold,
    not_attempted,
    passed,
    register,
    register_prediction,
)


def _first_line(exc: BaseException) -> str:
    """An exception's first line, without opcheck's pointer to a stack trace nobody sees."""
    return str(exc).split(" (scroll up")[0].strip().splitlines()[0] if str(exc) else ""


# ---- 05.kernel_for: follow the registry from an op to a backend's kernel ----------------------

# Candidates for the hidden variants; only those the installed registry names explicitly are used.
KERNEL_FOR_CANDIDATES = (
    ("addcdiv_", "MPS"),
    ("addcmul_", "CPU"),
    ("mul_.Tensor", "MPS"),
    ("lerp_.Scalar", "CPU"),
    ("add.out", "MPS"),
    ("masked_fill_.Scalar", "MPS"),
    ("masked_fill_.Scalar", "CPU"),
    ("sqrt_", "CUDA"),
    ("addmm", "CPU"),
)


def kernel_for_variants() -> list[tuple[str, str]]:
    """(op, backend) pairs whose kernel the live registry names in a `dispatch:` row of its own.

    Some ops are structured delegates (addcdiv_), some carry their own table (masked_fill_),
    one is an out= kernel itself (add.out): a rule that handles only one of those fails.
    """
    table = entries()
    usable = []
    for op, backend in KERNEL_FOR_CANDIDATES:
        if op in table and backend in kernel_entry(op).backend_kernels():
            usable.append((op, backend))
    return usable


def _check_kernel_for(fn) -> Verdict:
    if not callable(fn):
        return failed("give a function, e.g. def kernel_for(op, backend): return ...", fn)
    variants = kernel_for_variants()
    for op, backend in variants:
        expected = kernel_entry(op).backend_kernels()[backend]
        try:
            yours = fn(op, backend)
        except Exception as exc:
            if is_scaffold(exc):
                raise
            return failed(
                f"kernel_for({op!r}, {backend!r}) raised {type(exc).__name__}: {exc}. "
                + _kernel_for_nudge(op),
                f"raised {type(exc).__name__}",
                "the name of a C++ kernel function",
            )
        if yours != expected:
            return failed(
                f"kernel_for({op!r}, {backend!r}) is not the kernel the registry names. "
                + _kernel_for_nudge(op, yours),
                yours,
                "the name in a `dispatch:` row",
            )
    return passed(
        f"right on {len(variants)} ops and backends: an op without a dispatch table of its own "
        "runs its structured delegate's kernel"
    )


def _kernel_for_nudge(op: str, yours: object = None) -> str:
    entry = lookup(op)
    if yours is not None and yours == entry.structured_delegate:
        return "That is the overload it delegates to; you want that overload's kernel."
    if entry.structured_delegate:
        return f"{op} has no `dispatch:` of its own: its structured_delegate has one."
    return f"{op} is not a structured delegate: its own entry has the `dispatch:` table."


def _kernel_for_reference():
    def kernel_for(op, backend):
        entry = lookup(op)
        if entry.structured_delegate:
            entry = lookup(entry.structured_delegate)
        return entry.backend_kernels()[backend]

    return kernel_for


register(
    Exercise(
        "05.kernel_for",
        "Write kernel_for(op, backend): the C++ kernel the registry names for `op` on `backend`.",
        _check_kernel_for,
        "lookup(op) gives the registry entry. If it has a structured_delegate, the kernel is in "
        "that entry's dispatch table; entry.backend_kernels() maps each backend to a kernel.",
        _kernel_for_reference,
        (
            lambda: lambda op, backend: lookup(op).backend_kernels()[backend],
            lambda: lambda op, backend: lookup(op).structured_delegate,
            lambda: (
                lambda op, backend: lookup(lookup(op).structured_delegate).backend_kernels()[
                    backend
                ]
            ),
            lambda: lambda op, backend: kernel_entry(op).backend_kernels()["CPU"],
        ),
    )
)


# ---- 05.keys_that_run: which dispatch keys run a kernel, in order ------------------------------


@contextlib.contextmanager
def _inference() -> Iterator[None]:
    with torch.inference_mode():
        yield


@contextlib.contextmanager
def _autocast() -> Iterator[None]:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


@contextlib.contextmanager
def _tracing() -> Iterator[None]:
    with OpTracer():
        yield


def _nothing() -> contextlib.AbstractContextManager:
    return contextlib.nullcontext()


def _emulated() -> torch.Tensor:
    from course import emps

    return torch.zeros(2, 3, device=emps.DEVICE)


# (what the learner is told when this variant fails, op, tensor maker, context)
KEY_VARIANTS: tuple[tuple[str, str, Callable[[], torch.Tensor], Callable], ...] = (
    ("a CPU tensor", "addcmul_", lambda: torch.zeros(2, 3), _nothing),
    (
        "a CPU tensor that requires grad",
        "mul_.Tensor",
        lambda: torch.zeros(2, 3).requires_grad_(),
        _nothing,
    ),
    ("a CPU tensor, out-of-place add", "add.Tensor", lambda: torch.zeros(2, 3), _nothing),
    ("a meta tensor", "addcmul_", lambda: torch.zeros(2, 3, device="meta"), _nothing),
    ("an emulated-MPS tensor (a tensor subclass)", "addcmul_", _emulated, _nothing),
    (
        "a CPU tensor inside a dispatch mode (the tracer)",
        "addcmul_",
        lambda: torch.zeros(2, 3),
        _tracing,
    ),
    ("a CPU tensor under torch.autocast('cpu')", "mm", lambda: torch.zeros(2, 3), _autocast),
    (
        "an inference tensor inside torch.inference_mode()",
        "addcmul_",
        lambda: torch.zeros(2, 3),
        _inference,
    ),
)


def _check_keys_that_run(fn) -> Verdict:
    if not callable(fn):
        return failed("give a function, e.g. def keys_that_run(op, tensor): return [...]", fn)
    for label, op, make, context in KEY_VARIANTS:
        with context():
            tensor = make()
            expected = [step.key for step in call_path(op, tensor)]
            try:
                yours = fn(op, tensor)
            except Exception as exc:
                if is_scaffold(exc):
                    raise
                return failed(f"on {label} ({op}) your function raised {type(exc).__name__}: {exc}")
        if not isinstance(yours, (list, tuple)) or list(yours) != expected:
            return failed(
                f"on {label} ({op}) your keys differ from the ones that really run: "
                + _keys_nudge(yours, expected),
                yours,
                f"{len(expected)} keys",
            )
    return passed(
        f"right on all {len(KEY_VARIANTS)} calls: the tensors' keys plus this thread's, "
        "highest priority first, fallthroughs skipped, down to the backend (or to Python)"
    )


def _keys_nudge(yours: object, expected: list[str]) -> str:
    if not isinstance(yours, (list, tuple)):
        return "return a list of key names"
    if sorted(yours) == sorted(expected):
        return "the right keys in the wrong order (highest priority runs first)"
    extra = [k for k in yours if k not in expected]
    if extra:
        return (
            f"{extra} run no kernel here (a fallthrough, a key this thread excludes, or past "
            "the end of the path)"
        )
    return f"some keys are missing: {len(yours)} of {len(expected)} (this thread adds keys too)"


def _keys_that_run_reference():
    from course.dispatch.tables import active_keys, backend_key, computed_table

    def keys_that_run(op, tensor):
        table = computed_table(op)
        keys = []
        for key in active_keys(tensor):
            kernel = table.get(key)
            if kernel is None or kernel.fallthrough:
                continue  # no kernel here: the dispatcher skips the key
            keys.append(key)
            if key in (backend_key(tensor), "Python"):
                break  # the backend computes, or a tensor subclass / mode takes over
        return keys

    return keys_that_run


def _keys_wrong(*, thread=True, skip=True, python_ends=True, reverse=False):
    """A plausible wrong keys_that_run: forgets this thread's keys, fallthroughs, the Python
    stop, or the order."""
    from course.dispatch.tables import active_keys, backend_key, computed_table, dispatch_keys

    def keys_that_run(op, tensor):
        table, found = computed_table(op), []
        ends = {backend_key(tensor)} | ({"Python"} if python_ends else set())
        for key in (active_keys if thread else dispatch_keys)(tensor):
            kernel = table.get(key)
            if kernel is None or (skip and kernel.fallthrough):
                continue
            found.append(key)
            if key in ends:
                break
        return found[::-1] if reverse else found

    return keys_that_run


register(
    Exercise(
        "05.keys_that_run",
        "Write keys_that_run(op, tensor): the dispatch keys whose kernels a call of `op` on "
        "`tensor` runs, in the order they run.",
        _check_keys_that_run,
        "active_keys(tensor) lists the candidates in priority order (the tensor's keys plus this "
        "thread's). computed_table(op)[key] is the entry each key would run: skip missing ones "
        "and fallthroughs, and stop at backend_key(tensor) or at 'Python'.",
        _keys_that_run_reference,
        (
            lambda: _keys_wrong(skip=False),
            lambda: _keys_wrong(thread=False),
            lambda: _keys_wrong(python_ends=False),
            lambda: _keys_wrong(reverse=True),
        ),
    )
)


# ---- 05.custom_op: an operator of your own, with a fake kernel ---------------------------------

EMA_SQ_SCHEMA = "course05_check::ema_sq(Tensor avg_sq, Tensor grad, float beta) -> Tensor"


def _check_custom_op(answer) -> Verdict:
    if not (isinstance(answer, tuple) and len(answer) == 2 and all(map(callable, answer))):
        return failed(
            "answer with a pair of functions: (cpu_kernel, fake_kernel)",
            answer,
            "(cpu_kernel, fake_kernel)",
        )
    custom = define_op(EMA_SQ_SCHEMA, answer[0], answer[1])
    try:
        return _ema_sq_verdict(custom.op)
    except Exception as exc:
        if is_scaffold(exc):
            return not_attempted("a kernel still raises NotImplementedError.")
        return failed(f"calling your op raised {type(exc).__name__}: {_first_line(exc)}")
    finally:
        custom.remove()


def _layout(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.stride(), t.dtype


def _ema_sq_verdict(op) -> Verdict:
    gen = torch.Generator().manual_seed(0)  # seeded, without touching the global RNG
    samples = (
        ("contiguous", torch.rand(3, 4, generator=gen)),
        ("transposed", torch.rand(4, 3, generator=gen).t()),
    )
    for layout, avg_sq in samples:
        grad, before = torch.randn(3, 4, generator=gen), avg_sq.clone()
        result = op(avg_sq, grad, 0.9)
        natural = 0.9 * before + 0.1 * grad * grad  # what the formula gives, in torch's layout
        if not torch.equal(avg_sq, before):
            return failed(
                "your CPU kernel changed avg_sq in place, but the schema "
                "`Tensor avg_sq` (no `(a!)`) promises it is only read",
                "avg_sq modified",
                "avg_sq unchanged, a new tensor returned",
            )
        if result is avg_sq or result.shape != natural.shape or not torch.allclose(result, natural):
            return failed(
                f"wrong values on a {layout} avg_sq",
                [round(v, 4) for v in result.flatten()[:3].tolist()],
                "beta * avg_sq + (1 - beta) * grad * grad",
            )
        verdict = _fake_verdict(op, avg_sq, grad, result, natural, layout)
        if verdict is not None:
            return verdict
    return _opcheck_verdict(op, gen)


def _fake_verdict(op, avg_sq, grad, result, natural, layout) -> Verdict | None:
    meta_in = torch.empty_strided(avg_sq.shape, avg_sq.stride(), device="meta")
    fake = op(meta_in, torch.empty(grad.shape, device="meta"), 0.9)
    if fake is meta_in:
        return failed(
            "your fake kernel returned its input avg_sq itself; the schema `-> Tensor` promises "
            "a new tensor, as your CPU kernel makes, so the fake must allocate one",
            "the input",
            "a new tensor",
        )
    if fake.device.type != "meta":
        return failed(
            f"your fake kernel made a tensor on {fake.device}; a fake kernel allocates where its "
            "inputs are (here: meta), which holds no data",
            fake.device,
            "meta",
        )
    if _layout(fake) == _layout(result):
        return None
    if _layout(result) != _layout(natural):
        why = (
            f"your CPU kernel returns stride {result.stride()}, not the layout its formula "
            f"gives ({natural.stride()}): a .contiguous() or a fresh allocation changed it, "
            "and your fake kernel must say exactly what the real one returns"
        )
    else:
        why = (
            f"the real output keeps avg_sq's layout, stride {result.stride()}, but your fake "
            f"kernel promises {fake.stride()}: allocate it like avg_sq"
        )
    return failed(
        f"on a {layout} avg_sq, fake and real disagree: {why}",
        _layout(fake),
        "the real output's (shape, stride, dtype)",
    )


def _opcheck_verdict(op, gen: torch.Generator) -> Verdict:
    # Only the tests that concern a custom op's own registrations: the aot_dispatch tests also
    # poke every registered device, and the emulated one has no RNG state to save.
    try:
        torch.library.opcheck(
            op,
            (torch.rand(4, 3, generator=gen).t(), torch.randn(3, 4, generator=gen), 0.9),
            test_utils=("test_schema", "test_autograd_registration", "test_faketensor"),
        )
    except Exception as exc:  # opcheck's message points at a stack trace the learner cannot see
        return failed(f"torch.library.opcheck found a problem: {_first_line(exc)}")
    return passed(
        "torch.library.opcheck agrees: schema, CPU kernel and fake kernel are "
        "consistent, on contiguous and transposed inputs."
    )


def _custom_op_reference():
    def cpu_kernel(avg_sq, grad, beta):
        return beta * avg_sq + (1 - beta) * grad * grad

    def fake_kernel(avg_sq, grad, beta):
        return torch.empty_like(avg_sq)

    return cpu_kernel, fake_kernel


def _formula(a, g, b):
    return b * a + (1 - b) * g * g


register(
    Exercise(
        "05.custom_op",
        f"Write a CPU kernel and a fake kernel for `{EMA_SQ_SCHEMA}` (Adam's second moment, "
        "beta * avg_sq + (1 - beta) * grad**2, as a pure op). Answer (cpu_kernel, fake_kernel).",
        _check_custom_op,
        "The CPU kernel must return a new tensor (no in-place ops on avg_sq); the fake kernel only "
        "allocates an output with the real output's shape, dtype and strides.",
        _custom_op_reference,
        (
            lambda: (
                lambda a, g, b: a.mul_(b).addcmul_(g, g, value=1 - b),
                lambda a, g, b: torch.empty_like(a),
            ),
            lambda: (lambda a, g, b: b * a + g * g, lambda a, g, b: torch.empty_like(a)),
            lambda: (_formula, lambda a, g, b: a.new_empty(a.shape)),
            lambda: (
                lambda a, g, b: _formula(a, g, b).contiguous(),
                lambda a, g, b: torch.empty_like(a),
            ),
            lambda: (_formula, lambda a, g, b: a),
        ),
    )
)


# ---- Predictions --------------------------------------------------------------------------------


def _binding_outcome() -> str:
    try:
        inspect.getsource(torch.Tensor.addcmul_)
    except TypeError:
        return "nowhere: it is generated C++"
    return "in a .py file inside torch"


def _mps_kernel_outcome() -> str:
    if lookup("addcmul_").dispatch:
        return "a kernel of its own, for addcmul_ only"
    if kernel_entry("addcmul_").name == "addcmul.out":
        return "addcmul.out's kernel, shared with addcmul"
    return "mul_'s kernel"


def _call_order_outcome() -> str:
    keys = [s.key for s in call_path("addcmul_", torch.zeros(2, 3, requires_grad=True))]
    orders = {
        ("AutogradCPU", "ADInplaceOrView", "CPU"): "AutogradCPU, ADInplaceOrView, then CPU",
        ("CPU", "ADInplaceOrView", "AutogradCPU"): "CPU first, then ADInplaceOrView, AutogradCPU",
        ("CPU",): "CPU only: autograd lives in Python",
    }
    return orders.get(tuple(keys), ", ".join(keys))


def override_experiment() -> dict[str, object]:
    """One fresh Adam step on a transposed weight with addcmul_'s CPU kernel replaced by the
    2.2.1-MPS-style one (lost writes to non-contiguous outputs): exp_avg_sq, and the change."""
    gen = torch.Generator().manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(6, 4, generator=gen).t().clone())
    adam = torch.optim.Adam([weight], lr=1e-3)
    weight.grad, start = torch.randn(4, 6, generator=gen), weight.detach().clone()
    with override_kernel("addcmul_", placeholder_addcmul_, "CPU") as replaced:
        during = key_summary("addcmul_", "CPU")
        adam.step()
    return {
        "CPU kernels during": during,
        "calls": replaced.calls,
        "max exp_avg_sq": adam.state[weight]["exp_avg_sq"].max().item(),
        "max |change|": (weight - start).abs().max().item(),
    }


def _override_outcome() -> str:
    change = override_experiment()["max |change|"]
    if change == 0:
        return "nothing: the weight stays frozen"
    return "a huge jump" if change > 1 else "a normal small step (about lr)"


register_prediction(
    Prediction(
        "05.binding",
        "Where is the Python source of torch.Tensor.addcmul_?",
        ("in a .py file inside torch", "nowhere: it is generated C++"),
        _binding_outcome,
        "Tensor.addcmul_ is a method_descriptor of the C++ class TensorBase, generated at build "
        "time from native_functions.yaml: inspect (and your editor) find no Python behind it.",
    )
)
register_prediction(
    Prediction(
        "05.mps_kernel",
        "Which kernel does addcmul_ reach on MPS?",
        (
            "a kernel of its own, for addcmul_ only",
            "addcmul.out's kernel, shared with addcmul",
            "mul_'s kernel",
        ),
        _mps_kernel_outcome,
        "addcmul_ has no dispatch table: it is a structured_delegate of addcmul.out, whose one "
        "out= kernel serves addcmul, addcmul_ and addcmul.out. A bug there breaks all three.",
    )
)
register_prediction(
    Prediction(
        "05.call_order",
        "x.addcmul_(a, b) with x a CPU tensor that requires grad: in which order do kernels run?",
        (
            "CPU first, then ADInplaceOrView, AutogradCPU",
            "AutogradCPU, ADInplaceOrView, then CPU",
            "CPU only: autograd lives in Python",
        ),
        _call_order_outcome,
        "The highest-priority key runs first: autograd records the backward graph, "
        "ADInplaceOrView bumps the version counter, and each re-dispatches down to the CPU kernel.",
    )
)
register_prediction(
    Prediction(
        "05.override",
        "addcmul_'s CPU kernel replaced by one that, like 2.2.1's MPS kernel, loses writes to "
        "non-contiguous outputs. One fresh Adam step on a transposed weight does what?",
        (
            "nothing: the weight stays frozen",
            "a huge jump",
            "a normal small step (about lr)",
        ),
        _override_outcome,
        "exp_avg_sq is never written, so it stays exactly 0 and the update lr * exp_avg / "
        "(sqrt(0) + eps) explodes. On the real MPS backend addcdiv_ lost its write too, so the "
        "explosion never landed and the encoder froze: the second bug masked the first.",
    )
)
