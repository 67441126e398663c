"""06.kernel_test's test data: the notebook's test, right tests written other ways, and tests each
blind to one kind of broken kernel, with the words their feedback must contain."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from course import emps
from course.kernels import placeholder_lab
from course.kernels.placeholder_lab import layouts, run_addcmul
from tests.corpus import Corpus


def kernel_test():
    def breaks(kernel):
        outputs = [
            *placeholder_lab.layouts(
                (4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset")
            ).values(),
            *placeholder_lab.layouts((2, 3, 4), ("permuted",)).values(),
        ]
        for output in outputs:
            result, expected, _ = placeholder_lab.run_addcmul(kernel, output, value=0.5)
            if not torch.equal(result, expected):  # bit for bit, every element
                return True
        return False

    return breaks


EVERY_LAYOUT = (  # (shape, layout names): what the reference's test tries
    ((4, 6), ("contiguous", "transposed", "step-sliced", "storage-offset")),
    ((2, 3, 4), ("permuted",)),
)
Broken = Callable[[torch.Tensor, torch.Tensor, list, torch.Tensor], object]


def _differs(result, expected, events, output) -> bool:
    return not torch.equal(result, expected)


def variant(cases=EVERY_LAYOUT, value: float = 0.5, broken: Broken = _differs):
    """A factory of a learner's test: the kernel on `cases` ((shape, layout names), ...), judged
    by `broken(result, expected, events, output)`."""

    def make():
        def breaks(kernel):
            for shape, names in cases:
                for output in layouts(shape, names).values():
                    if broken(*run_addcmul(kernel, output, value=value), output):
                        return True
            return False

        return breaks

    return make


def comparing(broken: Broken):
    """A test of every layout whose comparison is `broken`."""
    return variant(broken=broken)


def _assert_close_fails(result, expected, events, output) -> bool:
    try:
        torch.testing.assert_close(result, expected)
    except AssertionError:
        return True
    return False


def _some_dim_sum_differs(result, expected, events, output) -> bool:
    """A learner's comparison of the sums along every dim (each row's, each column's...)."""
    return any(not torch.equal(result.sum(d), expected.sum(d)) for d in range(result.dim()))


def _outputs():
    return [output for shape, names in EVERY_LAYOUT for output in layouts(shape, names).values()]


def _last_output_decides():
    """A learner's loop whose flag each output overwrites: only the last output counts."""

    def breaks(kernel):
        broken = False
        for output in _outputs():
            result, expected, _ = run_addcmul(kernel, output)
            broken = not torch.equal(result, expected)
        return broken

    return breaks


def _every_output_must_differ():
    """A learner's all() where any() is meant: broken only if wrong on every output."""

    def breaks(kernel):
        wrong = [not torch.equal(*run_addcmul(kernel, output)[:2]) for output in _outputs()]
        return all(wrong)  # every output run, then all() asked

    return breaks


def _by_name():
    def breaks(kernel):
        return (
            kernel is emps.write_through_placeholder
            or kernel.__name__ == "write_through_placeholder"
        )

    return breaks


def _own_views():
    """Layouts made by hand (not placeholder_lab.layouts) and exact comparison are as good."""

    def breaks(kernel):
        base = torch.randn(8, 12, generator=torch.Generator().manual_seed(5))
        outputs = [base[:4, :6], base[:6, :4].t(), base[:4, ::2], base[3:7, 1:7], base[2:6]]
        outputs.append(torch.randn(4, 2, 3).permute(1, 2, 0))
        for output in outputs:
            result, expected, _ = placeholder_lab.run_addcmul(kernel, output, value=-2.0)
            if not torch.equal(result, expected):
                return True
        return False

    return breaks


def _non_contiguous_only():
    """Every kind of non-contiguous output (one with an offset too), none contiguous: "the bug
    needs a non-contiguous output, so the others need no test"."""

    def breaks(kernel):
        base = torch.randn(9, 12, generator=torch.Generator().manual_seed(5))
        outputs = [base[:6, :4].t(), base[:4, ::2], base[1:7, 2:6].t()]
        outputs.append(torch.randn(4, 2, 3).permute(1, 2, 0))
        for output in outputs:
            result, expected, _ = placeholder_lab.run_addcmul(kernel, output, value=-2.0)
            if not torch.equal(result, expected):
                return True
        return False

    return breaks


def _same_bits(result: torch.Tensor, expected: torch.Tensor) -> bool:
    return torch.equal(result.view(torch.int32), expected.view(torch.int32))


def _same_or_both_nan(result: torch.Tensor, expected: torch.Tensor) -> bool:
    return bool(((result == expected) | (result.isnan() & expected.isnan())).all())


def bit_for_bit(same: Callable[[torch.Tensor, torch.Tensor], object]):
    """A test of every layout with `same(result, expected)`: any exact comparison passes."""

    def make():
        def breaks(kernel):
            return any(
                not same(*run_addcmul(kernel, output, value=-1.5)[:2]) for output in _outputs()
            )

        return breaks

    return make


def answered_as(verdict: Callable[[list], object]):
    """A test of every layout that answers with `verdict(differences)`: a one-element bool
    tensor or numpy's bool says yes or no as well as a bool."""

    def make():
        def breaks(kernel):
            results = [run_addcmul(kernel, output, 0.5) for output in _outputs()]
            return verdict([(result != expected).any() for result, expected, _ in results])

        return breaks

    return make


LEAST = "cannot see one lost element"
TOLERANCE = "no tolerance sees a last-bit error"
SUMMARY = "a summary of the output cannot see"
CORPORA = (
    Corpus(
        "06.kernel_test",
        kernel_test,
        wrong={
            "contiguous outputs only": (
                variant((((4, 6), ("contiguous",)),)),
                "only ran it on contiguous outputs",
            ),
            "judged by the kernel's name": (_by_name, "never ran the kernel"),
            "contiguous and transposed only": (
                variant((((4, 6), ("contiguous", "transposed")),)),
                "other than a 2-d transpose",
            ),
            "matrices only": (
                variant((((4, 6), ("contiguous", "transposed", "step-sliced")),)),
                "more than 2 dims",
            ),
            "no output with a storage offset": (
                variant(
                    (
                        ((4, 6), ("contiguous", "transposed", "step-sliced")),
                        ((2, 3, 4), ("permuted",)),
                    )
                ),
                "storage offset",
            ),
            "value=1 throughout": (variant(value=1.0), "always used value=1"),
            "reads the recorder instead of the values": (
                comparing(lambda r, e, events, o: events[-1].lost_write),
                "lost_write flag",
            ),
            "allclose(rtol=0.05)": (
                comparing(lambda r, e, ev, o: not r.allclose(e, rtol=0.05)),
                "tolerance",
            ),
            "compares sorted values": (
                comparing(
                    lambda r, e, ev, o: (
                        not torch.equal(r.flatten().sort()[0], e.flatten().sort()[0])
                    )
                ),
                "sorted values",
            ),
            "compares the first row": (
                comparing(lambda r, e, ev, o: not torch.equal(r[0], e[0])),
                "the first rows",
            ),
            "(diff > 0).any(), which NaN never is": (
                comparing(lambda r, e, ev, o: bool(((r - e).abs() > 0).any())),
                "NaN",
            ),
            "unchanged taken for broken, changed for right": (
                comparing(lambda r, e, ev, o: torch.equal(r, o)),
                "'did it change?'",
            ),
            "always True": (lambda: lambda kernel: True, "never ran the kernel"),
            "allclose with its default tolerance": (
                comparing(lambda r, e, ev, o: not torch.allclose(r, e)),
                TOLERANCE,
            ),
            "torch.testing.assert_close": (comparing(_assert_close_fails), TOLERANCE),
            "max |difference| <= 1e-6": (
                comparing(lambda r, e, ev, o: not (r - e).abs().max() <= 1e-6),
                TOLERANCE,
            ),
            "the first column only": (
                comparing(lambda r, e, ev, o: not torch.equal(r[..., 0], e[..., 0])),
                LEAST,
            ),
            "the last row only": (
                comparing(lambda r, e, ev, o: not torch.equal(r[-1], e[-1])),
                LEAST,
            ),
            "every other element": (
                comparing(lambda r, e, ev, o: not torch.equal(r.flatten()[::2], e.flatten()[::2])),
                LEAST,
            ),
            "the first element only": (
                comparing(lambda r, e, ev, o: not torch.equal(r.flatten()[0], e.flatten()[0])),
                "one element cannot see a scramble",
            ),
            "value=0, where a lost write is invisible": (variant(value=0.0), "value=0"),
            "shape and dtype only": (
                comparing(lambda r, e, ev, o: r.shape != e.shape or r.dtype != e.dtype),
                "compare the output after the call with torch's result",
            ),
            "made a temporary taken for broken": (
                comparing(lambda r, e, ev, o: ev[-1].temporaries > 0),
                "a temporary (the recorder counts them)",
            ),
            "compares sums": (
                comparing(lambda r, e, ev, o: not torch.equal(r.sum(), e.sum())),
                SUMMARY,
            ),
            "compares means and norms": (
                comparing(
                    lambda r, e, ev, o: (
                        not (torch.equal(r.mean(), e.mean()) and torch.equal(r.norm(), e.norm()))
                    )
                ),
                SUMMARY,
            ),
            "every layout but step-sliced": (
                variant(
                    (
                        ((4, 6), ("contiguous", "transposed", "storage-offset")),
                        ((2, 3, 4), ("permuted",)),
                    )
                ),
                "gaps between its elements",
            ),
            "compares the column sums": (
                comparing(lambda r, e, ev, o: not torch.equal(r.sum(0), e.sum(0))),
                "a summary of each column cannot see",
            ),
            "compares the row means, in float64": (
                comparing(
                    lambda r, e, ev, o: not torch.equal(r.double().mean(-1), e.double().mean(-1))
                ),
                "a summary of each row cannot see",
            ),
            "compares the sums along every dim": (
                comparing(_some_dim_sum_differs),
                "sums along every dim are still a summary",
            ),
            "only the last output decides": (
                _last_output_decides,
                "a flag that the next output overwrites",
            ),
            "non-contiguous outputs only": (
                _non_contiguous_only,
                "never tried a contiguous output",
            ),
            "no 2-d transposed output": (
                variant(
                    (
                        ((4, 6), ("contiguous", "step-sliced", "storage-offset")),
                        ((2, 3, 4), ("permuted",)),
                    )
                ),
                "never tried a 2-d transposed output",
            ),
            "broken only when wrong on every output": (
                _every_output_must_differ,
                "all() instead of any()",
            ),
        },
        right={
            "its own views": _own_views,
            "torch.equal": bit_for_bit(torch.equal),
            "not any differs": bit_for_bit(lambda r, e: not (r != e).any()),
            "int32 bits": bit_for_bit(_same_bits),
            "NaN-aware": bit_for_bit(_same_or_both_nan),
            "numpy": bit_for_bit(lambda r, e: np.array_equal(r.numpy(), e.numpy())),
            "lists": bit_for_bit(lambda r, e: r.flatten().tolist() == e.flatten().tolist()),
            "a one-element bool tensor": answered_as(lambda differs: torch.stack(differs).any()),
            "numpy's bool": answered_as(lambda differs: np.any([bool(d) for d in differs])),
        },
    ),
)
