"""Hints for a mystery case, in steps: each points to a method of the course, never to an answer.

The steps are the same for every case on purpose: they are the story's investigation, in order,
and a hint that depended on the case would leak which case it is.
"""

from __future__ import annotations

from course.errors import require_range

STEPS: tuple[str, ...] = (
    "Turn the brief into a number. Run case.run_scenario() and case.run_scenario(device='cpu'): "
    "the CPU is your working sibling (notebooks 01-02). Which parameter or metric differs? "
    "A measurable symptom beats 'it trains badly'.",
    "Look at metadata before values (notebooks 04 and 09). Build the model with case.model(), "
    "take one step with case.step(model, optimizer) and run checklist(model, optimizer). Then "
    "look further than the checklist does: for each parameter and optimizer state tensor print "
    "dtype, shape, stride(), storage_offset() and is_contiguous(). The forward pass makes "
    "tensors too.",
    "List the suspects. Record one training step on the case's device: with case.use_device(), "
    "emps.record() as log: case.step(model, optimizer). Each event is one kernel call with its "
    "op and the layout of the tensor it wrote (notebooks 05-06). Which ops write the tensors "
    "that misbehave, and which of those layouts are unusual?",
    "Test one suspect at a time, with the output's layout as the only variable: notebook 03's "
    "isolation pattern (non-zero values, the same op on the CPU as the reference, compare "
    "exactly). Try the layout conditions one by one (case.layouts()). The auditor "
    "(audit(backend=case.backend), notebook 08) sweeps many ops over four layouts at once, but "
    "not every layout or dtype.",
    "Write the repro as that one experiment: a function that returns True when the op's result on "
    "case.device differs from the CPU's. Do not pick the device's bugs yourself: "
    "case.check_repro(repro) runs it on other devices too, and it must stay quiet there.",
    "Fix the model, not the device: find where the triggering layout comes from (an init, a "
    "slice, a memory format, a view in forward) and change it there. Write patch(model) -> model, "
    "try case.run_scenario(patch=patch), then case.check_fix(patch).",
)


def hint_text(step: int) -> str:
    """The hint for step 1..len(STEPS), numbered."""
    require_range("step", step, 1, len(STEPS))
    return f"Hint {step}/{len(STEPS)}: {STEPS[step - 1]}"
