"""Live dispatch tables and call paths, read from this process's dispatcher."""

from __future__ import annotations

import pytest
import torch

from course import emps
from course.dispatch.registration import qualified
from course.dispatch.tables import (
    active_keys,
    backend_key,
    call_path,
    computed_table,
    dispatch_keys,
    path_rows,
    registered_kernels,
)
from course.errors import CourseError


def test_registered_kernels_name_the_generated_files():
    kernels = {k.key: k for k in registered_kernels("addcmul_") if k.active}
    assert kernels["CPU"].file.startswith("RegisterCPU") and kernels["CPU"].language == "C++"
    assert kernels["ADInplaceOrView"].file.startswith("ADInplaceOrViewType")
    assert "Autograd[alias]" in kernels


def test_computed_table_marks_fallthroughs():
    table = computed_table("aten::addcmul_")
    assert table["AutogradCPU"].kind == "autograd kernel"
    assert table["AutocastCPU"].fallthrough and not table["CPU"].fallthrough


def test_unknown_ops_get_did_you_mean():
    with pytest.raises(CourseError, match="Did you mean: aten::addcmul_"):
        qualified("addcmull_")
    with pytest.raises(CourseError, match="no operator 'nosuchns::op'"):
        registered_kernels("nosuchns::op")


def test_key_sets_of_cpu_grad_and_emulated_tensors():
    cpu, grad = torch.zeros(2), torch.zeros(2, requires_grad=True)
    assert dispatch_keys(cpu) == dispatch_keys(grad)  # autograd's key is there either way
    assert dispatch_keys(cpu)[-1] == "CPU" and "AutogradCPU" in dispatch_keys(cpu)
    keys = dispatch_keys(torch.zeros(2, device=emps.DEVICE))
    assert {"PrivateUse1", "Python", "AutogradPrivateUse1"} <= set(keys)
    assert keys.index("Python") < keys.index("PrivateUse1")  # the subclass sees calls first
    assert "AutocastCPU" not in active_keys(cpu)  # excluded unless autocast is on


def test_call_paths():
    grad = torch.zeros(2, 3, requires_grad=True)
    assert [s.key for s in call_path("addcmul_", grad)] == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    emulated = [s.key for s in call_path("addcmul_", torch.zeros(2, device=emps.DEVICE))]
    assert emulated[-1] == "Python" and "AutogradPrivateUse1" in emulated
    assert call_path("addcmul_", torch.zeros(2, device="meta"))[-1].key == "Meta"


def test_backend_key_names_where_a_call_ends():
    assert backend_key(torch.zeros(1)) == "CPU"
    assert backend_key(torch.zeros(1, device="meta")) == "Meta"
    assert backend_key(torch.zeros(1, device=emps.DEVICE)) == "PrivateUse1"
    with pytest.raises(CourseError, match="needs a tensor, not list"):
        backend_key([1])


def test_checked_outputs_hide_shard_numbers_of_generated_files():
    cpu = next(k for k in registered_kernels("addcmul_") if k.key == "CPU")
    assert cpu.stable_file == "RegisterCPU_N.cpp" and cpu.file.startswith("RegisterCPU_")
    rows = path_rows(call_path("addcmul_", torch.zeros(2, requires_grad=True)))
    assert [r["file"] for r in rows][-1] == "RegisterCPU_N.cpp"


def test_path_table_prints_the_keys_and_the_path_within_a_cells_width():
    from course.dispatch.tables import path_table

    text = path_table("addcmul_", torch.zeros(2, 3, requires_grad=True))
    lines = text.splitlines()
    assert lines[0].endswith("AutocastCPU, AutogradCPU, ADInplaceOrView, CPU")
    assert [line.split()[0] for line in lines[3:]] == ["AutogradCPU", "ADInplaceOrView", "CPU"]
    assert max(map(len, lines)) <= 96 and "_N.cpp" in text
