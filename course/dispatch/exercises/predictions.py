"""Notebook 05's predictions: each reveal runs the experiment on the installed torch.

Where the Python source of a method is, which kernel addcmul_ reaches on MPS (read from this
torch's registry, so it follows 2.13 to 2.15), the order the dispatch keys' kernels run in, and
what one Adam step does when addcmul_'s CPU kernel loses its writes as 2.2.1's MPS kernel did.
`override_experiment` is that last experiment, which the notebook runs and prints.
"""

from __future__ import annotations

import inspect

import torch

from course.dispatch.registration import override_kernel, placeholder_addcmul_
from course.dispatch.registry import kernel_entry, lookup
from course.dispatch.tables import call_path, key_summary
from course.exercises import Prediction, register_prediction


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
        answer_words=("generated",),
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
        answer_words=("structured_delegate",),
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
        answer_words=("highest-priority", "re-dispatches"),
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
        answer_words=("explodes",),
    )
)
