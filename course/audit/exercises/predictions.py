"""Notebook 08's prediction: which of the audit's layouts lose addcmul_'s result on 2.2.1.

`08.which_layouts` is answered by running the real audit on the emulated 2.2.1 profile.
"""

from __future__ import annotations

from course import emps
from course.audit.core import LAYOUTS, audit
from course.exercises import Prediction
from course.exercises import register_prediction as register_choice

NON_CONTIGUOUS_OUTPUTS = {
    "transposed",
    "step-sliced",
    "permuted",
    "channels-last",
    "out=transposed",
}
LAYOUT_CHOICES = (
    "only transposed",
    "every non-contiguous output",
    "every layout",
    "none",
    "some other mix",
)


def _which_layouts() -> str:
    results = audit(f"emulated:{emps.TORCH_2_2_1.name}", ops="addcmul_", dtypes="float32")
    flagged = {r.layout for r in results if r.flagged}
    named = {
        frozenset(): "none",
        frozenset({"transposed"}): "only transposed",
        frozenset(NON_CONTIGUOUS_OUTPUTS): "every non-contiguous output",
        frozenset(LAYOUTS): "every layout",
    }
    return named.get(frozenset(flagged), "some other mix")


register_choice(
    Prediction(
        "08.which_layouts",
        f"On the 2.2.1 profile, which of the audit's layouts ({', '.join(LAYOUTS)}) lose "
        "addcmul_'s result?",
        LAYOUT_CHOICES,
        _which_layouts,
        "The Placeholder copies any output that is not contiguous (transposed, step-sliced, "
        "permuted, channels_last, and a non-contiguous out= tensor), and the copy is dropped. "
        "A storage offset leaves the output contiguous, and expanded (stride-0) tensors are "
        "only ever inputs, which the Placeholder copies correctly: those layouts are fine.",
        answer_words=(
            "any output that is not contiguous",
            "a storage offset is harmless",
            "storage-offset is contiguous",
            "only ever inputs",
            "only copies what is not contiguous",
        ),
    )
)
