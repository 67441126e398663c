"""08.lost_writes' test data: the notebook's answer, right answers written other ways, and wrong
answers keyed by their slip, with the words the feedback must contain."""

from __future__ import annotations

from functools import partial

from course.audit.core import audit
from course.audit.judge import BUGS
from course.audit.report import summary
from course.emps.profiles import RANDOM_FAMILIES
from tests.corpus import Corpus


def reference():
    def lost_writes(backend):
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        lost = [r for r in results if r.verdict in ("silent-no-write", "wrong-values")]
        return {r.op.split(".")[0] for r in lost}

    return lost_writes


STORY_OPS = ("addcmul_", "addcdiv_", *(f"{family}_" for family in RANDOM_FAMILIES))


def lost_writes_with(
    layout: str = "transposed",
    bugs: tuple[str, ...] = ("silent-no-write", "wrong-values"),  # their own: not BUGS itself
    overloads: bool = False,
    device: str = "emulated",
    given: bool = True,
    dtype: str = "float32",
    ops: tuple[str, ...] | None = None,
    borrow: str = "",
    minus_control: bool = False,
):
    """The reference with one slip: the layout, dtype or ops audited, which verdicts count, the
    names, the backend, or the report's own filter (`borrow`) in place of the verdicts."""

    def lost_writes(backend):
        target = {"backend": backend} if given else {}
        chosen = {"ops": list(ops)} if ops else {}
        results = audit(device, layouts=layout, dtypes=dtype, **target, **chosen)
        if borrow == "summary":
            return set(summary(results)["flagged"])
        if borrow == "flagged":
            return {r.op.split(".")[0] for r in results if r.flagged}
        if minus_control:  # "a layout bug is what fails strided and not contiguous"
            control = audit(device, layouts="contiguous", dtypes=dtype, **target, **chosen)
            wrong = {r.op.split(".")[0] for r in control if r.verdict in bugs}
            return {r.op.split(".")[0] for r in results if r.verdict in bugs} - wrong
        return {r.op if overloads else r.op.split(".")[0] for r in results if r.verdict in bugs}

    return lost_writes


def bugs_borrowed():
    def lost_writes(backend):  # the auditor's own answer to "which verdicts are lost writes"
        results = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return {r.op.split(".")[0] for r in results if r.verdict in BUGS}

    return lost_writes


def _from_the_profile():
    def lost_writes(backend):  # reads the profile's list instead of running anything
        return {f"aten::{family}_" for family in backend.profile.broken}

    return lost_writes


def _results_not_names():
    def lost_writes(backend):
        found = audit("emulated", layouts="transposed", dtypes="float32", backend=backend)
        return [r for r in found if r.verdict in ("silent-no-write", "wrong-values")]

    return lost_writes


def _slip(cause: str, **how):
    return partial(lost_writes_with, **how), cause


CONTIGUOUS = "every output your audit wrote was contiguous"
WRONG = {
    "the 2.4 set, as printed in the notebook": (
        lambda: lambda backend: {f"aten::{op}_" for op in RANDOM_FAMILIES},
        "written down",
    ),
    "backend.profile.broken": (_from_the_profile, "read from the profile"),
    "only silent-no-write counted": _slip(
        "wrong values are a lost write too", bugs=("silent-no-write",)
    ),
    "overload names kept": _slip("overload names", overloads=True),
    "errors counted": _slip("aten::mul_ (error)", bugs=(*BUGS, "error")),
    "everything but ok counted": _slip("(skipped)", bugs=(*BUGS, "error", "skipped")),
    "contiguous layout": _slip(CONTIGUOUS, layout="contiguous"),
    "storage-offset layout, contiguous too": _slip(CONTIGUOUS, layout="storage-offset"),
    "backend not passed to audit": _slip("default profile (2.2.1)", given=False),
    "the CPU audited": _slip("nothing ran on the emulated device", device="cpu", given=False),
    "int64, which addcdiv_ has no kernel for": _slip("never ran aten::addcdiv_", dtype="int64"),
    "only the story's ops audited": _slip("never ran aten::lerp_", ops=STORY_OPS),
    "the report's summary": _slip("summary(...)['flagged']", borrow="summary"),
    "each result's flagged property": _slip("result.flagged", borrow="flagged"),
    "expanded layout, strided inputs only": _slip(CONTIGUOUS, layout="expanded"),
    "ops that also fail on a contiguous output left out": _slip(
        "the contiguous one too", minus_control=True
    ),
    "float64, which the emulated MPS refuses": _slip("it has no float64", dtype="float64"),
    "r.verdict in the auditor's BUGS": (bugs_borrowed, "reads the auditor's own BUGS"),
    "the set itself, not a function": (lambda: {"aten::normal_"}, "pass your function"),
    "a string, not a set": (lambda: lambda backend: "normal_", "returned str 'normal_'"),
    "results, not names": (_results_not_names, "returned AuditResult objects, not names"),
}


# Right answers in other styles than the reference's
def _bare_names(backend):
    return {op.removeprefix("aten::") for op in reference()(backend)}


def _sorted_list_partitioned(backend):
    results = audit("emulated", layouts=["transposed"], dtypes=["float32"], backend=backend)
    lost = {"silent-no-write", "wrong-values"}
    return sorted({r.op.partition(".")[0] for r in results if r.verdict in lost})


def _neither_ok_nor_error_nor_skipped(backend):
    found = set()
    for r in audit("emulated", layouts="transposed", dtypes="float32", backend=backend):
        if r.verdict not in ("ok", "error", "skipped"):
            found.add(r.op.split(".", 1)[0])
    return found


def _two_strided_layouts(backend):
    layouts = ["transposed", "out=transposed"]
    results = audit("emulated", layouts=layouts, dtypes="float32", backend=backend)
    return {r.op.split(".")[0] for r in results if r.verdict in ("silent-no-write", "wrong-values")}


RIGHT = {
    "names without the aten:: prefix": lambda: _bare_names,
    "a sorted list, overload partitioned off": lambda: _sorted_list_partitioned,
    "neither ok nor error nor skipped": lambda: _neither_ok_nor_error_nor_skipped,
    "two strided layouts": lambda: _two_strided_layouts,
}

CORPORA = (Corpus("08.lost_writes", reference, WRONG, RIGHT),)
