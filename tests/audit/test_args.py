"""Discovery and argument building: ops from the registry, twins from schemas, scalars varied."""

from __future__ import annotations

import pytest
import torch

from course.audit.args import (
    DTYPES,
    build_call,
    discover,
    expected_values,
    find_dtypes,
    find_ops,
)
from course.errors import CourseError


def op(name: str):
    """The overload with exactly this name ("add_.Tensor", "random_")."""
    return next(o for o in discover() if o.name == f"aten::{name.removeprefix('aten::')}")


def test_ops_come_from_the_registry():
    names = {o.name for o in discover()}
    assert {"aten::addcmul_", "aten::mul_.Tensor", "aten::normal_", "aten::random_.from"} <= names
    assert not any(o.base == "aten::addmm_" for o in discover())  # not pointwise
    assert len(names) > 100


def test_functional_twins_and_out_variants_are_found_by_schema():
    add = op("add_.Tensor")
    assert str(add.functional._schema).startswith("aten::add.Tensor(")
    assert str(add.out._schema).startswith("aten::add.out(")
    assert str(op("mul_.Scalar").out._schema).startswith("aten::mul.Scalar_out(")
    assert op("addcmul_").out is not None and op("normal_").functional is None


def test_scalars_with_defaults_are_never_the_default():
    """A kernel that ignores alpha= or value= must give a different answer than the reference."""
    for name, key in [("add_.Tensor", "alpha"), ("addcdiv_", "value"), ("addcmul_", "value")]:
        call = build_call(op(name), torch.float32)
        assert call.kwargs[key] not in (1, 1.0), name
    call = build_call(op("add_.Tensor"), torch.int64)
    assert call.kwargs["alpha"] not in (1, True) and isinstance(call.kwargs["alpha"], int)
    hardtanh = build_call(op("hardtanh_"), torch.float32)
    assert hardtanh.args[0] < hardtanh.args[1]  # min < max still


def test_each_dtype_gets_its_own_observable_call():
    for dtype in (torch.float16, torch.int64, torch.bool):
        call = build_call(op("mul_.Tensor"), dtype)
        assert call.dtype == dtype and call.self_values.dtype == dtype
        assert not torch.equal(expected_values(op("mul_.Tensor"), call), call.self_values)
    assert isinstance(build_call(op("sqrt_"), torch.int64), str)  # sqrt of ints is not int
    assert "poisoned" in build_call(op("normal_"), torch.bool)


def test_random_ops_start_from_poison():
    call = build_call(op("uniform_"), torch.float32)
    assert call.self_values.isnan().all()
    ints = build_call(op("aten::random_"), torch.int64)
    assert (ints.self_values == torch.iinfo(torch.int64).min).all()


def test_expanded_inputs_repeat_one_row():
    call = build_call(op("mul_.Tensor"), torch.float32).expanded()
    (other,) = call.args
    assert torch.equal(other, other[:1].expand_as(other)) and other.is_contiguous()


def test_bad_names_are_course_errors():
    with pytest.raises(CourseError, match="not an in-place"):
        find_ops(["addmm_"])
    with pytest.raises(CourseError, match="123"):
        find_ops([123])
    with pytest.raises(CourseError, match="unknown dtype 'float8'"):
        find_dtypes(["float8"])
    with pytest.raises(CourseError, match="non-empty"):
        find_dtypes([])
    assert find_dtypes("int64") == [torch.int64] and len(find_dtypes(None)) == len(DTYPES)
