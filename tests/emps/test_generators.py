"""torch.Generator(device="emps"): seeded random ops on the device, bitwise the CPU's."""

from __future__ import annotations

import pickle

import pytest
import torch

from course import emps
from course.emps.generators import EmulatedGenerator
from course.emps.mps_kernels import same_bits
from course.errors import CourseError


def cpu_generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_a_device_generator_is_a_generator_of_the_device():
    generator = torch.Generator(device="emps")
    assert isinstance(generator, torch.Generator) and isinstance(generator, EmulatedGenerator)
    assert generator.device == torch.device(emps.DEVICE)
    assert generator.manual_seed(3) is generator and generator.initial_seed() == 3
    assert torch.Generator(device=torch.device("emps:0")).device.type == "emps"
    assert (
        type(torch.Generator()) is torch.Generator and torch.Generator("cpu").device.type == "cpu"
    )


@pytest.mark.parametrize("profile", ["2.4-macos14", "fixed-macos14", "macos15"])
@pytest.mark.parametrize(
    "draw",
    [
        lambda device, g: torch.randn(3, 5, device=device, generator=g),
        lambda device, g: torch.rand(40, device=device, generator=g),
        lambda device, g: torch.randint(0, 9, (6,), device=device, generator=g),
        lambda device, g: torch.randperm(7, device=device, generator=g),
        lambda device, g: torch.bernoulli(torch.full((9,), 0.5, device=device), generator=g),
        lambda device, g: torch.empty(4, 6, device=device).uniform_(generator=g),
        lambda device, g: torch.nn.init.normal_(torch.empty(4, 6, device=device), generator=g),
        lambda device, g: torch.multinomial(torch.ones(5, device=device), 3, generator=g),
    ],
)
def test_seeded_draws_are_the_cpus(draw, profile):
    with emps.use_profile(profile):
        on_device = draw(emps.DEVICE, torch.Generator(device="emps").manual_seed(7))
    assert on_device.device.type == "emps"
    assert same_bits(on_device.cpu(), draw("cpu", cpu_generator(7)))


@pytest.mark.parametrize("profile", ["fixed-macos14", "macos15"])
def test_draws_into_a_transposed_tensor_land_where_the_cpus_do(profile):
    """A random kernel draws in the order it walks its output (memory order for a transposed
    one): on a fixed profile every draw lands where the CPU puts it."""

    def draw(device, generator):
        weight = torch.empty(20, 30, device=device).t()
        torch.nn.init.normal_(weight, generator=generator)
        return weight.bernoulli_(0.5, generator=generator)

    with emps.use_profile(profile):
        on_device = draw(emps.DEVICE, torch.Generator(device="emps").manual_seed(1))
    assert same_bits(on_device.cpu(), draw("cpu", cpu_generator(1)))


def test_a_generator_pickles_and_keeps_its_state():
    generator = torch.Generator(device="emps").manual_seed(5)
    torch.randn(3, device="emps", generator=generator)
    twin = pickle.loads(pickle.dumps(generator))
    assert isinstance(twin, EmulatedGenerator) and twin.device.type == "emps"
    assert same_bits(
        torch.randn(4, device="emps", generator=twin).cpu(),
        torch.randn(4, device="emps", generator=generator).cpu(),
    )


def test_a_cpu_generator_is_accepted_and_a_second_device_refused():
    """The course's experiments draw device tensors from private CPU generators (MPS itself
    would refuse one)."""
    drawn = torch.randn(3, device="emps", generator=cpu_generator(2))
    assert same_bits(drawn.cpu(), torch.randn(3, generator=cpu_generator(2)))
    with pytest.raises(CourseError, match="'emps:1' does not exist"):
        torch.Generator(device="emps:1")
