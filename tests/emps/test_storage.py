"""Device memory on the emulated device: addresses, storages and checkpoints behave as on a GPU."""

from __future__ import annotations

import io
import textwrap

import torch

from course import emps
from tests import forked


def roundtrip(obj, **load_kwargs):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, **load_kwargs)


def test_data_pointers_are_distinct_and_follow_views():
    base = torch.arange(12.0, device=emps.DEVICE).reshape(3, 4)
    other = torch.zeros(3, 4, device=emps.DEVICE)
    assert base.data_ptr() != 0 and other.data_ptr() != base.data_ptr()
    assert base.t().data_ptr() == base.data_ptr()
    assert base[1:].data_ptr() == base.data_ptr() + 4 * base.element_size()
    assert base[:, 2].data_ptr() == base.data_ptr() + 2 * base.element_size()
    assert base.clone().data_ptr() != base.data_ptr()


def test_a_view_and_its_base_report_one_storage():
    base = torch.arange(6.0, device=emps.DEVICE)
    view = base[2:]
    storage = base.untyped_storage()
    assert storage.device == torch.device(emps.DEVICE) and storage.nbytes() == 24
    assert view.untyped_storage().data_ptr() == storage.data_ptr() == base.data_ptr()
    assert torch.frombuffer(bytearray(storage.cpu()), dtype=torch.float32).tolist() == [
        0.0,
        1.0,
        2.0,
        3.0,
        4.0,
        5.0,
    ]


def test_save_and_load_keep_a_view_sharing_its_base():
    base = torch.arange(12.0, device=emps.DEVICE).reshape(3, 4)
    loaded = roundtrip({"base": base, "row": base[1], "column": base.t()[2]})
    new_base, row, column = loaded["base"], loaded["row"], loaded["column"]
    assert new_base.device.type == row.device.type == "emps"
    assert row.data_ptr() == new_base.data_ptr() + 4 * 4 and column.stride() == (4,)
    new_base[1, 2] = 100.0
    assert row.cpu().tolist() == [4.0, 5.0, 100.0, 7.0] and column.cpu()[1] == 100.0
    assert base[1, 2].item() == 6.0  # the original is untouched
    on_cpu = roundtrip({"base": base, "row": base[1]}, map_location="cpu")
    assert on_cpu["row"].data_ptr() == on_cpu["base"].data_ptr() + 16


STORAGE_CALLS = """
import warnings

import torch
from course import emps
from course.errors import CourseError

warnings.simplefilter("ignore")  # TypedStorage's deprecation notice
x = torch.arange(6.0, device="emps")
made = torch.UntypedStorage(8, device="emps")
print("new", made.device, made.nbytes())
print("typed", torch.TypedStorage(3, device="emps", dtype=torch.float32).device)
print("storage()", x.storage()[1])
print("cpu", list(x.untyped_storage().cpu())[4:8])
print("to", torch.arange(2.0).untyped_storage().to(device="emps").device)
print("set_", torch.empty(0, device="emps").set_(x.untyped_storage(), 1, (2,), (1,)).tolist())
for refused in (
    lambda: torch.UntypedStorage(8, device="emps:1"),
    lambda: torch.UntypedStorage(4, device="emps").resize_(8),
    lambda: torch.UntypedStorage(4, device="emps").pin_memory(),
    lambda: torch.empty(0).set_(x.untyped_storage()),
):
    try:
        refused()
    except (CourseError, RuntimeError, TypeError, NotImplementedError) as error:
        print("refused", type(error).__name__, str(error).splitlines()[0][:60])
print("done")
"""


def test_storage_calls_work_or_refuse_and_never_crash():
    """In a child process: a crash (a segfault before this was fixed) must not take pytest."""
    done = forked.python(textwrap.dedent(STORAGE_CALLS), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "new emps:0 8" in lines and "typed emps:0" in lines
    assert "storage() 1.0" in lines and "cpu [0, 0, 128, 63]" in lines
    assert "to emps:0" in lines and "set_ [1.0, 2.0]" in lines
    refusals = [line for line in lines if line.startswith("refused")]
    assert len(refusals) == 4 and "'emps:1' does not exist" in refusals[0]
    assert lines[-1] == "done"
