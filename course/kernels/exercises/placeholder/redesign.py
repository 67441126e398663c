"""06.output_placeholder: the learner's output placeholder, in every kernel family at once.

Every family's kernel is written against the learner's class and run on hidden outputs; around
the `with` block the checker watches the placeholder: did the result reach the tensor when the
block ended (not later, in __del__), was an attribute rebound instead of copied into, did the
copy go the wrong way, was a contiguous output copied for nothing. A graph that fails halfway
must raise through the block (not be swallowed by an __exit__ returning True) and leave the
tensor as it was.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from course import emps
from course.emps.mps_kernels import same_bits
from course.errors import CourseError
from course.exercises import (
    Exercise,
    Verdict,
    failed,
    is_scaffold,
    not_attempted,
    passed,
    ready_made,
    register,
    untouched,
)
from course.kernels import placeholder_lab
from course.kernels.contract import KernelNotes, under_contract
from course.kernels.exercises.placeholder.outputs import described, hidden_output
from course.kernels.placeholder_lab import BUGGY_PROFILE, FAMILY_CALLS

REDESIGN_LAYOUTS = (  # the non-contiguous ones first: a lost write is the worse mistake
    "transposed",
    "step-sliced",
    "row-sliced",
    "permuted 3-d",
    "4-d, two dims swapped",
    "channels-last 4-d",
    "step-sliced 1-d",
    "transposed with a storage offset",
    "storage-offset",
    "contiguous",
    "contiguous 3-d",
)
REDESIGN_FAMILIES = ("lerp", "addcmul", "normal")  # a working, an Adam and a random family
# MPS has float16 and bfloat16 tensors, and a graph is built for its tensors' dtypes: a buffer
# must take the tensor's. Tried after every float32 output, so each of those says its cause first.
LOW_PRECISION: tuple[tuple[torch.dtype, str], ...] = (
    (torch.float16, "transposed"),
    (torch.bfloat16, "step-sliced"),
)
# The course's own output placeholder: an answer that hands it the work wrote nothing itself.
COURSE_PLACEHOLDER = {
    "OutputPlaceholder.__enter__": emps.OutputPlaceholder.__enter__,
    "OutputPlaceholder.__exit__": emps.OutputPlaceholder.__exit__,
}


class GraphFailed(RuntimeError):
    """The checker's stand-in for an MPSGraph that failed halfway (the buffer is garbage)."""


@dataclass
class BlockLog:
    """What happened around the learner's `with` block in one kernel call."""

    fail: bool = False  # the checker makes the graph fail inside the block
    wasted: bool = False  # a contiguous output got a copy anyway
    misplaced: bool = False  # the buffer is the output's own memory, but not where it starts
    arrived: bool = True  # the tensor held the graph's result right after the block
    rebound: tuple[str, ...] = ()  # attributes that held the tensor and hold something else now
    buffer_overwritten: bool = False  # the buffer lost the graph's result during __exit__
    block_ended: bool = False  # code after the block ran (with `fail`: the error was swallowed)
    swapped: bool = False  # the tensor object got other memory (`.data = ...`, `set_`)
    borrowed: bool = False  # the course's OutputPlaceholder did the work


def redesign_outputs() -> list[tuple[str, torch.Tensor]]:
    """The hidden outputs a placeholder is tried on: (layout, output), float32 ones first."""
    low = [(layout, hidden_output(layout, dtype=dtype)) for dtype, layout in LOW_PRECISION]
    return [(layout, hidden_output(layout)) for layout in REDESIGN_LAYOUTS] + low


@functools.cache
def _expected_values(family: str, layout: str, dtype: torch.dtype) -> torch.Tensor:
    """What the family's call leaves in the output on a profile without lost writes."""
    fixed = emps.Backend(emps.FIXED_MACOS14)
    return placeholder_lab.family_call_on(fixed, family, hidden_output(layout, dtype=dtype))[0]


def _placeholder_kernel(placeholder_class, notes: KernelNotes, log: BlockLog):
    """Every kernel written against the learner's output placeholder, watched."""

    def kernel(call):
        memory = call.output.data_ptr()
        with ready_made(COURSE_PLACEHOLDER) as seen:
            _block(call, placeholder_class, notes, log)
        log.borrowed = log.borrowed or bool(seen)
        log.swapped = call.output.data_ptr() != memory

    return kernel


def _block(call, placeholder_class, notes: KernelNotes, log: BlockLog) -> None:
    """One kernel written against the learner's class, as the notebook's example writes it."""
    placeholder = placeholder_class(call.output)
    log.borrowed = isinstance(placeholder, emps.Placeholder)
    holders = [k for k, v in _attributes(placeholder).items() if v is call.output]
    with placeholder as output:
        if output is None or isinstance(output, torch.Tensor):
            bound = "None" if output is None else "a tensor (the buffer?)"
            raise CourseError(
                f"`with MyOutputPlaceholder(t) as output` bound {bound}: __enter__ must return "
                "the placeholder itself (return self), which run_graph takes"
            )
        buffer = getattr(output, "buffer", None)
        if call.output.is_contiguous() and isinstance(buffer, torch.Tensor):
            log.wasted = buffer.data_ptr() != call.output.data_ptr()
            log.misplaced = log.wasted and _same_storage(buffer, call.output)
        call.run_graph(output, [call.placeholder(t) for t in call.inputs])
        if log.fail:
            output.buffer.fill_(float("nan"))
            raise GraphFailed("the checker's graph failed halfway (its buffer is garbage)")
    log.block_ended = True
    result = notes.graph_result
    log.arrived = same_bits(call.output, result)
    log.rebound = tuple(k for k in holders if getattr(placeholder, k, None) is not call.output)
    log.buffer_overwritten = not same_bits(output.buffer, result)


def _attributes(instance: object) -> dict[str, object]:
    """The instance's attributes, kept in its __dict__ or in __slots__: a class that declares
    __slots__ is as right a placeholder as one that does not."""
    names = set(getattr(instance, "__dict__", ()))
    for klass in type(instance).__mro__:
        slots = vars(klass).get("__slots__", ())
        names.update((slots,) if isinstance(slots, str) else slots)
    return {name: getattr(instance, name) for name in names if hasattr(instance, name)}


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def check_output_placeholder(placeholder_class) -> Verdict:
    """06.output_placeholder: every family and layout, no lost write, no wasted copy, and a
    failing graph's error reaches the caller with the tensor untouched."""
    if not callable(placeholder_class):
        return failed("give your class, e.g. class MyOutputPlaceholder: ...", placeholder_class)
    if isinstance(placeholder_class, type) and issubclass(placeholder_class, emps.Placeholder):
        return failed(
            f"{placeholder_class.__name__} is the course's own placeholder (or built on it), not "
            "yours: write MyOutputPlaceholder from scratch, with its own buffer and copy back",
            placeholder_class.__name__,
            "your own class",
        )
    if _written_nothing(placeholder_class):
        return not_attempted("MyOutputPlaceholder's __init__ and __exit__ are still empty.")
    kept: list[str] = []  # non-contiguous layouts whose writes arrived so far
    for layout, output in redesign_outputs():
        for family in REDESIGN_FAMILIES:
            verdict = _redesign_case(placeholder_class, family, (layout, output), kept)
            if verdict is not None:
                return verdict
        if not output.is_contiguous():
            kept.append(layout)
    verdict = _failing_graph_case(placeholder_class)
    if verdict is not None:
        return verdict
    return passed(
        "every kernel written with your placeholder keeps its write, in every family and layout "
        f"({len(REDESIGN_LAYOUTS)} of them, 1-d to 4-d; float32, float16 and bfloat16), a "
        "contiguous output costs no copy, and "
        "a failing graph's error reaches the caller with the tensor untouched: no kernel author "
        "can forget the copy back now"
    )


def _written_nothing(placeholder_class) -> bool:
    """A class whose __init__ and __exit__ (the learner copy's blanks) are only `pass` or
    `...`: nothing written yet, so Run All records nothing."""
    own = [vars(placeholder_class).get(name) for name in ("__init__", "__exit__")]
    own = [method for method in own if method is not None]
    return isinstance(placeholder_class, type) and bool(own) and all(map(untouched, own))


def _redesign_backend(placeholder_class, notes: KernelNotes, log: BlockLog) -> emps.Backend:
    kernel = under_contract(_placeholder_kernel(placeholder_class, notes, log), notes)
    return emps.Backend(BUGGY_PROFILE, overrides=dict.fromkeys(FAMILY_CALLS, kernel))


def _redesign_case(
    placeholder_class, family: str, hidden: tuple[str, torch.Tensor], kept: list[str] = ()
) -> Verdict | None:
    """One family's call on one hidden (layout, output): a failed Verdict, or None."""
    notes, log = KernelNotes(), BlockLog()
    layout, output = hidden
    where = f"{family} on {described(layout, output)}"
    try:
        values, _ = placeholder_lab.family_call_on(
            _redesign_backend(placeholder_class, notes, log), family, output
        )
    except Exception as exc:
        if is_scaffold(exc):
            return not_attempted("your class still raises NotImplementedError.")
        if notes.violation:
            return _violated(where, notes)
        return failed(f"{where}: your placeholder raised {type(exc).__name__}: {exc}")
    if log.borrowed:
        return failed(
            f"{where}: your placeholder hands the work to the course's own OutputPlaceholder "
            "(emps.OutputPlaceholder): it is the answer, so it passes everywhere and tests "
            "nothing you wrote. Write the buffer and the copy back yourself",
            "emps.OutputPlaceholder",
            "your own class",
        )
    if not same_bits(values, _expected_values(family, layout, output.dtype)):
        return failed(
            f"{where}: {_redesign_lost(notes, log, kept)}", "old values", "the output updated"
        )
    if not log.arrived:
        return failed(
            f"{where}: the result reached the tensor only after the with block, when Python "
            "garbage-collected your placeholder (a copy back in __del__?). Python makes no "
            "promise when, or whether, __del__ runs (later, never in a reference cycle); the "
            "code after the block would read old values. The copy back belongs in __exit__",
            "copied when collected",
            "copied when the block ends",
        )
    if log.misplaced:
        return failed(
            f"{where}: your buffer is a view of the tensor's own storage, but it does not start "
            "where the tensor does (a storage offset ignored?): the graph wrote over memory that "
            "may belong to other tensors. A contiguous tensor is its own buffer: the tensor "
            "itself, offset and all",
            "memory elsewhere in the storage",
            "the tensor itself",
        )
    if log.wasted:
        return failed(
            f"{where}: your placeholder copied an output that was contiguous already: a wasted "
            "copy on every call (the graph can write into such a tensor directly)",
            "a copy",
            "the tensor itself",
        )
    return None


def _violated(where: str, notes: KernelNotes) -> Verdict:
    """The contract the buffer broke: a dtype other than the tensor's, or strides."""
    if notes.shown != KernelNotes().shown:  # the contract named what it got and what is due
        return failed(f"{where}: {notes.violation}", *notes.shown)
    return failed(
        f"{where}: {notes.violation}. (clone() and empty_like() keep the tensor's "
        "layout: notebook 04; and a last stride of 1 does not make a tensor contiguous.)",
        "a strided buffer",
        "contiguous ones",
    )


def _redesign_lost(notes: KernelNotes, log: BlockLog, kept: list[str] = ()) -> str:
    """Why the graph's result never reached the tensor."""
    if log.swapped:
        return (
            "`self.tensor.data = ...` (or self.tensor.set_(...)) swapped the buffer's memory "
            "into the tensor object: the output's own storage, which every other view of it "
            "shares (Adam's exp_avg_sq, a parameter), never changed. Copy into it: "
            "self.tensor.copy_(self.buffer)"
        )
    if log.rebound:
        return (
            f"your __exit__ rebound self.{log.rebound[0]} (to the buffer?) instead of copying "
            "into the tensor: rebinding an attribute changes what the name points at, never the "
            f"caller's tensor. Copy: self.{log.rebound[0]}.copy_(self.buffer)"
        )
    if log.buffer_overwritten:
        return (
            "after the block the buffer no longer holds the graph's result: your copy went the "
            "wrong way (the tensor into the buffer). Copy the buffer into the tensor"
        )
    if kept:
        return (
            f"the write never reached the output, yet on a {kept[0]} output it did: your "
            "__exit__ copies the buffer back only for some tensors. Every non-contiguous tensor "
            "needs it, whatever its number of dims, strides or storage offset"
        )
    return (
        "the write never reached the output: nothing copied the buffer into the tensor after "
        "the graph wrote it. The graph writes into your placeholder's .buffer; when does that "
        "buffer's content get into the tensor?"
    )


def _failing_graph_case(placeholder_class) -> Verdict | None:
    """A graph that fails halfway: the error must reach the caller, the tensor keep its values."""
    notes, log = KernelNotes(), BlockLog(fail=True)
    output = hidden_output("transposed")
    where = "when the graph failed halfway (addcmul on a transposed output)"
    target, storage = placeholder_lab.emulated_in_storage(output)
    x = torch.ones(output.shape, device=emps.DEVICE)
    try:
        with emps.use_backend(_redesign_backend(placeholder_class, notes, log)):
            FAMILY_CALLS["addcmul"](target, x)
    except GraphFailed:
        pass
    except Exception as exc:
        return failed(f"{where} your placeholder raised {type(exc).__name__}: {exc}")
    if log.block_ended:
        return failed(
            f"{where}, its error never reached the caller: your __exit__ returned True, which "
            "tells Python the exception was handled, so the error was swallowed. A failed op "
            "that reports nothing is the silent bug all over again: return None (or False)",
            "the error swallowed",
            "the error raised",
        )
    after = placeholder_lab.read_back(storage, output)
    if same_bits(after, output):
        return None
    if not after.isnan().any():  # the checker's failing graph leaves NaN in the buffer
        return failed(
            f"{where}, your __exit__ changed the tensor anyway (reset it?): an op that fails "
            "must leave its output as it was, old values and all. __exit__(exc_type, exc_value, "
            "traceback) is told about the error: when exc_type is not None, touch nothing",
            "the tensor changed",
            "the old values kept",
        )
    return failed(
        f"{where}, your __exit__ still copied the buffer back, so the tensor now holds the "
        "failed graph's garbage. __exit__(exc_type, exc_value, traceback) is told about the "
        "error: copy back only when exc_type is None",
        "garbage copied in",
        "the old values kept",
    )


register(
    Exercise(
        name="06.output_placeholder",
        prompt="Write MyOutputPlaceholder(tensor): a context manager whose .buffer the graph "
        "writes into, and which makes sure the result ends up in `tensor` when the with block "
        "ends, whatever the tensor's layout and dtype (float32, float16 or bfloat16). A "
        "contiguous tensor costs no copy; if the graph raises inside the block, the error "
        "reaches the caller and `tensor` keeps its old values.",
        checker=check_output_placeholder,
        hint="The buffer must be contiguous (the graph's contract) and must not cost a copy when "
        "the tensor already is (tensor.contiguous() is the tensor itself then); the copy back "
        "belongs in __exit__, after the graph ran, and only when exc_type is None. Return None "
        "from __exit__ so errors propagate.",
        minutes=20,
    )
)
