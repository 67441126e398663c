"""Hints for a mystery case, in steps: each points to a method of the course, never to an answer.

The steps are the same for every case on purpose: they are the story's investigation, in order,
and a hint that depended on the case would leak which case it is.
"""

from __future__ import annotations

from course.errors import require_int

STEPS: tuple[str, ...] = (
    "Turn the brief into a number. Run case.run_scenario() and case.run_scenario(device='cpu'): "
    "the CPU is your working sibling (notebooks 01-02). Which parameter or metric differs, and "
    "from which step on? A measurable symptom beats 'it trains badly'.",
    "Read the user's code (case.source()) and look at metadata before values (notebooks 04 and "
    "09): build the model with case.model(), take one step with case.step(model, optimizer), "
    "then print dtype, shape, stride(), storage_offset() and is_contiguous() of each "
    "parameter and optimizer state tensor. The forward pass makes tensors too: which ones are "
    "written in place, and how are they shaped?",
    "List the suspects. Record one training step on the case's device: with case.use_device(), "
    "emps.record() as log: case.step(model, optimizer). Each event is one kernel call, with its "
    "op and the shape and strides of the tensor it wrote (notebooks 05-06). Which ops write the "
    "tensors that misbehave, and what is unusual about those calls?",
    "Form a hypothesis and test it with one variable at a time: notebook 03's isolation pattern "
    "(non-constant values, the same op on the CPU as the reference, compared exactly). "
    "case.conditions() lists what a kernel can trip over: layouts, sizes, operands, scalars, "
    "repeated calls, the foreach path. The auditor sweeps layouts and dtypes by default "
    "(audit(backend=case.backend)); its knobs shape=, scalars= and inputs= (notebook 08) test "
    "other hypotheses, and an experiment of your own tests anything. If no single property "
    "shows the bug, try two that one call had at once: some kernels break only where two "
    "paths meet.",
    "Write the repro as that one experiment: a function that returns True when the op's result on "
    "case.device differs from the CPU's. case.check_repro(repro) runs it on other devices too "
    "(no bug; other ops broken the same way; the same op broken another way), and it must stay "
    "quiet there. The culprit is what your passing repro isolates.",
    "Fix the model, not the device: find where the triggering property comes from in the user's "
    "code (an init, a view, a memory format, an op done in place, the optimizer's options) and "
    "change it there. Write patch(model) -> model, try case.run_scenario(patch=patch), then "
    "case.check_fix(patch).",
)


def hint_text(step: int) -> str:
    """The hint for step 1..len(STEPS), numbered."""
    require_int("step", step, 1, len(STEPS))
    return f"Hint {step}/{len(STEPS)}: {STEPS[step - 1]}"
