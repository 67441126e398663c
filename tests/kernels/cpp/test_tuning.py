"""The tiled kernel's tile shape: chosen from the cache sizes given, tuned once per machine key
and cached, used by the compiled kernel with results identical to torch's on every shape.
No timing is asserted: the tests give the tuner made-up times."""

from __future__ import annotations

import json

import pytest
import torch

from course.errors import CourseError
from course.kernels.cpp.bench import CacheSizes
from course.kernels.cpp.harness import LAYOUTS, apply, random_output
from course.kernels.cpp.tuning import (
    Tile,
    autotune,
    candidates,
    cpu_model,
    machine_key,
    tile_for,
    tuning_size,
    use,
)

EPYC = CacheSizes(32 << 10, 512 << 10, 32 << 20, "sysfs")


def caches(l2: int | None, llc: int | None = 32 << 20) -> CacheSizes:
    return CacheSizes(32 << 10, l2, llc, "test")


@pytest.mark.parametrize(
    "l2, tile",
    [
        (512 << 10, Tile(64, 256)),  # the built-in tile: what a 512 KiB L2 gets
        (None, Tile(64, 256)),  # unknown: the same default
        (256 << 10, Tile(32, 256)),
        (1 << 20, Tile(64, 512)),
        (2 << 20, Tile(128, 512)),
        (32 << 10, Tile(16, 64)),
        (64 << 20, Tile(256, 4096)),
    ],
)
def test_the_tile_follows_the_l2_size(l2, tile):
    assert tile_for(caches(l2)) == tile


def test_a_larger_l2_never_gets_a_smaller_tile():
    tiles = [tile_for(caches(16 << 10 << k)) for k in range(9)]
    areas = [tile.i * tile.j for tile in tiles]
    assert areas == sorted(areas) and len(set(areas)) > 5


def test_candidates_start_with_the_rule_and_stay_valid():
    found = candidates(Tile(16, 64))
    assert found[0] == Tile(16, 64)
    assert Tile(8, 32) in found and Tile(32, 256) in found and Tile(32, 512) not in found
    assert all(t.i % 4 == 0 and t.j % 4 == 0 and min(t.i, t.j) >= 4 for t in found)
    assert len(found) == len(set(found)) == 12


def test_the_tuning_size_outgrows_the_last_level_cache():
    for llc in (8 << 20, 32 << 20, 64 << 20):
        numel = tuning_size(caches(512 << 10, llc))
        assert 3 * numel * 4 >= 2 * llc and numel % 1024 == 0
    assert tuning_size(caches(512 << 10, 1 << 40)) == 1 << 25  # capped at the largest size


class Timer:
    """Made-up seconds: the candidate `best` is fastest; records every call."""

    def __init__(self, best: Tile):
        self.best, self.calls = best, []

    def __call__(self, tiles, numel):
        self.calls.append((tuple(tiles), numel))
        return {tile: 1.0 if tile == self.best else 2.0 + tile.i / 1e4 for tile in tiles}


def test_autotune_times_the_candidates_once_then_uses_the_cache(tmp_path):
    path = tmp_path / "tiles.json"
    timer = Timer(Tile(32, 1024))
    first = autotune(EPYC, path=path, timer=timer, model="CPU A")
    assert (first.tile, first.how) == (Tile(32, 1024), "autotuned")
    assert timer.calls == [(tuple(candidates(Tile(64, 256))), tuning_size(EPYC))]
    assert first.seconds[Tile(32, 1024)] == 1.0
    again = autotune(EPYC, path=path, timer=Timer(Tile(64, 256)), model="CPU A")
    assert (again.tile, again.how, again.seconds) == (Tile(32, 1024), "cached", {})
    assert json.loads(path.read_text()) == {first.key: {"i": 32, "j": 1024}}


@pytest.mark.parametrize(
    "other",
    [
        {"model": "CPU B"},
        {"caches": CacheSizes(32 << 10, 256 << 10, 32 << 20, "sysfs")},
        {"caches": CacheSizes(32 << 10, 512 << 10, 16 << 20, "sysfs")},
    ],
    ids=["another CPU model", "another L2", "another LLC"],
)
def test_another_machine_key_tunes_again_and_keeps_both(tmp_path, other):
    path = tmp_path / "tiles.json"
    autotune(EPYC, path=path, timer=Timer(Tile(32, 1024)), model="CPU A")
    settings = {"caches": EPYC, "model": "CPU A", **other}
    timer = Timer(Tile(128, 256))
    tuned = autotune(path=path, timer=timer, **settings)
    assert tuned.how == "autotuned" and len(timer.calls) == 1
    rule = tile_for(settings["caches"])
    assert timer.calls[0][0] == tuple(candidates(rule))
    assert len(json.loads(path.read_text())) == 2


def test_the_key_names_torch_and_the_kernel_source(tmp_path):
    key = machine_key(EPYC, "CPU A")
    assert key.startswith("CPU A | L1d 32768, L2 524288, LLC 33554432 | torch ")
    assert torch.__version__ in key and "| kernel " in key


def test_retune_and_an_unreadable_cache_time_again(tmp_path):
    path = tmp_path / "tiles.json"
    path.write_text("not json")
    timer = Timer(Tile(64, 256))
    assert autotune(EPYC, path=path, timer=timer, model="A").how == "autotuned"
    assert autotune(EPYC, path=path, timer=timer, model="A", retune=True).how == "autotuned"
    assert len(timer.calls) == 2


def test_the_cpu_model_comes_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n")
    assert cpu_model(info) == "AMD EPYC 7B13"
    assert cpu_model(tmp_path / "missing")  # platform's answer, never empty


@pytest.mark.parametrize("text", ["64", "64x", "0x256", "6x256", "64x8192", "axb"])
def test_bad_tiles_are_refused(text):
    with pytest.raises(CourseError, match="tile"):
        Tile.parse(text)


def test_tiles_are_parsed():
    assert Tile.parse("64x256") == Tile.parse(" 64 X 256") == Tile(64, 256)
    assert str(Tile(64, 256)) == "64 x 256"


@pytest.mark.compile
@pytest.mark.parametrize("tile", [Tile(4, 4), Tile(8, 12), Tile(32, 1024), Tile(4096, 64)])
def test_the_kernel_is_right_with_any_tile_on_ragged_shapes(tile):
    gen = torch.Generator().manual_seed(1)
    try:
        use(tile)
        for shape in [(5, 7), (130, 77), (3, 300, 20)]:
            t1, t2 = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
            mixed = torch.randn(shape, generator=gen).transpose(-1, -2).contiguous()
            for out in [random_output(shape, layout, gen) for layout in LAYOUTS] + [
                mixed.transpose(-1, -2)
            ]:
                expected = apply("native", out, t1, t2, value=0.5)
                torch.testing.assert_close(apply("tiled", out, t1, t2, value=0.5), expected)
    finally:
        use(Tile(64, 256))


@pytest.mark.compile
def test_the_compiled_setter_refuses_what_parse_refuses():
    with pytest.raises(CourseError, match="multiples of 4"):
        use(Tile(6, 256))
