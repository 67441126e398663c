"""The registry reader against the installed torch's own native_functions.yaml."""

from __future__ import annotations

import dataclasses

import pytest

from course.dispatch import registry
from course.errors import CourseError


def test_the_yaml_is_found_inside_torchgen():
    path = registry.yaml_path()
    assert path.name == "native_functions.yaml" and "torchgen" in path.parts


def test_addcmul_inplace_delegates_to_the_out_kernel():
    entry = registry.lookup("addcmul_")
    assert entry.structured_delegate == "addcmul.out"
    assert entry.variants == ("method",) and "pointwise" in entry.tags
    assert entry.schema.startswith("addcmul_(Tensor(a!) self")
    out = registry.kernel_entry("addcmul_")
    assert out.name == "addcmul.out" and out.structured
    kernels = out.backend_kernels()
    assert kernels["CPU"] == kernels["CUDA"] == "addcmul_out"
    # MPS's own kernel up to 2.14, the shared one from 2.15 (mps_kernel_history says why)
    assert kernels["MPS"] in ("addcmul_out_mps", "addcmul_out")
    assert registry.backend_kernel("addcmul_", "MPS") == kernels["MPS"]


def test_a_delegates_own_row_wins_for_the_backends_it_names():
    """add.Tensor delegates to add.out, but names its own sparse kernel (as torchgen registers)."""
    assert registry.lookup("add.Tensor").structured_delegate == "add.out"
    assert registry.backend_kernel("add.Tensor", "SparseCPU") == "add_sparse"
    assert registry.backend_kernel("add.Tensor", "MPS") == "add_out_mps"
    assert registry.backend_kernel("addmm", "SparseCPU") == "addmm_sparse_dense_cpu"


def test_one_out_kernel_serves_the_whole_structured_family():
    assert registry.structured_family("addcmul_") == ["addcmul", "addcmul.out", "addcmul_"]
    assert registry.structured_family("addcmul.out") == ["addcmul", "addcmul.out", "addcmul_"]


def test_names_are_normalised():
    for name in ("aten::addcmul_", "addcmul_.default", " addcmul_ "):
        assert registry.lookup(name).name == "addcmul_"
    assert registry.lookup("add_.Tensor").structured_delegate == "add.out"


def test_unknown_names_get_did_you_mean():
    with pytest.raises(CourseError, match="Did you mean: addcmul_"):
        registry.lookup("addcmull_")
    with pytest.raises(CourseError, match="add_.Scalar, add_.Tensor"):
        registry.lookup("add_")
    with pytest.raises(CourseError, match="non-empty string"):
        registry.lookup("")


def test_ops_without_dispatch_are_composite():
    assert "CompositeImplicitAutograd" in registry.backend_kernel("dropout", "MPS")


def test_missing_backend_is_a_clear_error():
    with pytest.raises(CourseError, match="has no 'XLA' kernel"):
        registry.backend_kernel("addcmul_", "XLA")


def test_op_names_cover_the_registry_and_are_sorted():
    names = registry.op_names()
    assert names == sorted(names) and len(names) > 2000
    assert {"addcmul_", "addcdiv_", "lerp_.Scalar", "mul_.Tensor"} <= set(names)


def test_a_missing_yaml_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(registry, "YAML_IN_TORCHGEN", registry.Path("nowhere.yaml"))
    with pytest.raises(CourseError, match="layout changed"):
        registry.yaml_path()


def _registry_with(monkeypatch, mps_row: dict[str, str]) -> None:
    """The live registry, with addcmul.out's dispatch rows replaced (another torch's file)."""
    table = dict(registry.entries())
    table["addcmul.out"] = dataclasses.replace(table["addcmul.out"], dispatch=mps_row)
    monkeypatch.setattr(registry, "entries", lambda: table)


@pytest.mark.parametrize(
    "rows, now, own",
    [
        ({"CPU, CUDA, MTIA": "addcmul_out", "MPS": "addcmul_out_mps"}, "addcmul_out_mps", True),
        ({"CPU, CUDA, MPS, MTIA, XPU": "addcmul_out"}, "addcmul_out", False),
    ],
    ids=["2.4-2.14: MPS's own", "2.15: shared"],
)
def test_the_mps_kernel_history_follows_the_registry(monkeypatch, rows, now, own):
    _registry_with(monkeypatch, rows)
    history = registry.mps_kernel_history("addcmul_")
    assert (history.op, history.then, history.now) == ("addcmul.out", "addcmul_out_mps", now)
    assert history.own_kernel is own
    text = str(history)
    assert "torch 2.2.1 (the story): addcmul_out_mps, MPS's own" in text
    assert f"(yours): {now}" in text and all(len(line) < 100 for line in text.splitlines())
    if own:
        assert "still has its own" in text and "notebook 06's question" in text
    else:
        assert "shared with CPU, CUDA, MTIA, XPU" in text and "Metal" in text
    # printed in notebook 05, before 06 asks how a kernel loses a write: no cause, no fix
    assert not any(w in text for w in ("Placeholder", "lost the write", "copies back"))


def test_the_history_reads_the_installed_torch():
    history = registry.mps_kernel_history("addcdiv_")
    assert history.op == "addcdiv.out" and history.then == "addcdiv_out_mps"
    assert history.now == registry.backend_kernel("addcdiv_", "MPS")
    assert history.torch_version == registry.torch.__version__.split("+")[0]


def test_the_history_covers_only_the_story_ops():
    with pytest.raises(CourseError, match="try 'addcmul_' or 'addcdiv_'"):
        registry.mps_kernel_history("mul_.Tensor")
