"""Which path each aten op takes on the emulated device, read from its schema once."""

from __future__ import annotations

import pytest
import torch

from course.emps import ops

aten = torch.ops.aten


@pytest.mark.parametrize(
    ("overload", "route", "written", "family"),
    [
        (aten.addcmul_.default, "kernel", 0, "addcmul"),
        (aten.addcmul.out, "kernel", "out", "addcmul"),
        (aten.normal_.default, "kernel", 0, "normal"),
        (aten.mm.default, "functional", None, ""),
        (aten.max.dim_max, "direct", None, ""),
        (aten.t_.default, "metadata", None, ""),
        (aten._foreach_add_.List, "foreach", None, ""),
        (aten._fused_adam_.default, "fused", None, "adam"),
    ],
)
def test_routes_come_from_the_schema(overload, route, written, family):
    found = ops.route(overload)
    assert (found.route, found.written, found.family) == (route, written, family)


def test_labels_name_the_overload_of_out_variants_only():
    assert ops.route(aten.addcmul_.default).label == "aten::addcmul_"
    assert ops.route(aten.add.out).label == "aten::add.out"


def test_a_route_is_worked_out_once():
    assert ops.route(aten.mul_.Tensor) is ops.route(aten.mul_.Tensor)
