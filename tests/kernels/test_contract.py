"""The device's contract on a learner's kernel: contiguous buffers only, placeholders only."""

from __future__ import annotations

import pytest

from course import emps
from course.errors import CourseError
from course.kernels import placeholder_lab
from course.kernels.contract import ContractViolation, KernelNotes, under_contract


def _run(kernel, layout="transposed", profile=placeholder_lab.BUGGY_PROFILE):
    notes = KernelNotes()
    output = placeholder_lab.layouts((4, 6), (layout,))[layout]
    result = placeholder_lab.run_addcmul(under_contract(kernel, notes), output, profile=profile)
    return result, notes


def test_the_working_kernels_keep_the_contract():
    for kernel in (emps.gather_compute_scatter, emps.output_placeholder):
        (result, expected, _), notes = _run(kernel)
        assert notes.violation == "" and result.allclose(expected)


def test_skipping_the_placeholder_is_refused_before_macos15_only():
    def skip(call):
        call.graph(call.output, call.inputs)

    with pytest.raises(ContractViolation, match="non-contiguous output buffer"):
        _run(skip)
    (result, expected, _), notes = _run(skip, profile="macos15")
    assert notes.violation == "" and result.allclose(expected)
    (result, expected, _), _ = _run(skip, layout="contiguous")
    assert result.allclose(expected)


def test_raw_tensors_and_odd_objects_get_a_message_not_an_attribute_error():
    def raw(call):
        call.run_graph(call.output, [call.placeholder(t) for t in call.inputs])

    with pytest.raises(CourseError, match="raw tensor as the output"):
        _run(raw)

    def not_a_list(call):
        call.run_graph(call.placeholder(call.output), call.placeholder(call.inputs[0]))

    with pytest.raises(CourseError, match="takes a list of placeholders"):
        _run(not_a_list)

    def wraps_a_list(call):
        call.placeholder(call.inputs)

    with pytest.raises(CourseError, match="wraps a tensor, not list"):
        _run(wraps_a_list)


def test_a_strided_temporary_is_noted():
    def clone_temporary(call):
        temporary = call.output.clone()
        call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
        call.output.copy_(temporary)

    (result, expected, _), notes = _run(clone_temporary)
    assert notes.strided_temporaries == [(1, 4)] and not result.allclose(expected)
    _, notes = _run(emps.gather_compute_scatter)
    assert notes.strided_temporaries == []


def test_a_strided_buffer_handed_to_run_graph_is_refused():
    """The emulator's own scratch copies must not hide a strided buffer from the contract."""

    class ClonePlaceholder:
        def __init__(self, tensor):
            self.tensor, self.buffer = tensor, tensor.clone()

    def kernel(call):
        call.run_graph(ClonePlaceholder(call.output), [call.placeholder(t) for t in call.inputs])

    with pytest.raises(ContractViolation, match="non-contiguous output buffer"):
        _run(kernel)
    _, notes = _run(kernel, profile="macos15")  # strided buffers: the graph may take it
    assert notes.violation == ""


def test_the_notes_say_what_the_kernel_did():
    def rebinds(call):
        temporary = call.output.contiguous()
        call.run_graph(call.placeholder(temporary), [call.placeholder(t) for t in call.inputs])
        call.output = temporary

    _, notes = _run(rebinds)
    assert notes.rebound == ["output"] and notes.graph_runs == 1
    assert not notes.placeholder_on_output and not notes.swapped
    _, notes = _run(emps.write_through_placeholder)
    assert notes.placeholder_on_output
    _, notes = _run(lambda call: call.output.zero_())
    assert notes.graph_runs == 0
