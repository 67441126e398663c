"""Version profiles of the emulated Apple-MPS backend: which kernels drop writes, and why.

Each profile mirrors a real combination of PyTorch and macOS. A *family* names a structured
kernel family: "addcmul" covers `addcmul_` and `addcmul.out`, because both run one out= kernel
(`addc_mul_div_out_mps` in aten/src/ATen/native/mps/operations/PointwiseOps.mm).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from course.errors import CourseError

ADAM_FAMILIES = frozenset({"addcmul", "addcdiv"})
RANDOM_FAMILIES = frozenset({"normal", "uniform", "exponential", "random", "bernoulli"})
FUSED_2_4 = frozenset({"adam", "adamw"})  # pytorch#127242
FUSED_RECENT = FUSED_2_4 | {"sgd"}  # pytorch#129350


@dataclass(frozen=True)
class Profile:
    """One emulated version profile: the kernel families whose writes to non-contiguous outputs
    are lost on one real combination of PyTorch and macOS.

    `name` is what code and the command line take ("2.2.1-macos14"). `label` is what a learner
    sees: the versions only, because which ops break is the investigation's answer.
    `description` says what breaks (for the checklist and instructors).
    """

    name: str
    label: str
    description: str
    broken: frozenset[str]
    strided_buffers: bool = False  # macOS 15: MPSGraph reads/writes strided arrays, no temporaries
    references: tuple[str, ...] = ()
    # Fused optimizer kernels MPS had ("adam" for `_fused_adam_`); empty: fused=True refused.
    # See course.emps.optim_paths for the sources.
    fused_optimizers: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        """The name and the versions only: a printed profile (a learner's print of
        `emps.current_profile()`, or the profile a checker hands their function) must not say
        which families break, the answer of notebooks 02, 03 and 08."""
        return f"Profile({self.name!r}: {self.label})"

    __str__ = __repr__

    def with_broken(self, broken: set[str] | frozenset[str], name: str | None = None) -> Profile:
        """A copy of this profile with a different broken set (used by the bug switchboard)."""
        if isinstance(broken, str):
            raise CourseError(
                f"broken={broken!r} is one string; give a set of kernel families, "
                f"e.g. {{{broken!r}}}"
            )
        known = ", ".join(sorted(ADAM_FAMILIES | RANDOM_FAMILIES))
        if not isinstance(broken, (set, frozenset, list, tuple)):
            raise CourseError(
                f"broken={broken!r} is not allowed: give a set of kernel families (known: "
                f"{known}), e.g. {{'addcmul'}}, or set() for none"
            )
        if not all(isinstance(family, str) for family in broken):
            raise CourseError(
                f"broken={broken!r} is not allowed: kernel families are names, known: {known}"
            )
        if name is not None and (not isinstance(name, str) or not name):
            raise CourseError(f"name={name!r} is not allowed: give the profile a non-empty name")
        unknown = set(broken) - (ADAM_FAMILIES | RANDOM_FAMILIES)
        if unknown:
            raise CourseError(f"unknown kernel families {sorted(unknown)}; known: {known}")
        chosen = f"broken={sorted(broken) or 'none'}"
        return replace(
            self,
            name=name or f"{self.name}+custom",
            label=f"{self.label}, {chosen}",
            description=f"{self.description} with {chosen}",
            broken=frozenset(broken),
        )


TORCH_2_2_1 = Profile(
    "2.2.1-macos14",
    "PyTorch 2.2.1 on macOS 14",
    "PyTorch 2.2.1 on macOS 14: addcmul_/addcdiv_ and in-place random ops drop writes",
    ADAM_FAMILIES | RANDOM_FAMILIES,
    references=(
        "pytorch#118115 (addcmul_/addcdiv_ on non-contiguous outputs)",
        "pytorch#165257 (in-place random ops on non-contiguous tensors)",
    ),
)
TORCH_2_4 = Profile(
    "2.4-macos14",
    "PyTorch 2.4 on macOS 14",
    "PyTorch 2.4 on macOS 14: addcmul_/addcdiv_ fixed, random ops still drop writes",
    RANDOM_FAMILIES,
    fused_optimizers=FUSED_2_4,
    references=(
        "pytorch#124442 (fix: gather, compute, copy back in addc_mul_div_out_mps)",
        "pytorch#165257 (random ops still broken)",
    ),
)
FIXED_MACOS14 = Profile(
    "fixed-macos14",
    "a recent PyTorch on macOS 14",
    "PyTorch with pytorch#165267 on macOS 14: no lost writes, but temporaries remain",
    frozenset(),
    fused_optimizers=FUSED_RECENT,
    references=("pytorch#165267 (fix for the in-place random ops)",),
)
MACOS15 = Profile(
    "macos15",
    "a recent PyTorch on macOS 15",
    "A recent PyTorch on macOS 15: MPSGraph takes strided arrays, no temporaries at all",
    frozenset(),
    strided_buffers=True,
    fused_optimizers=FUSED_RECENT,
    references=("macOS 15 added strided MPSGraph arrays, making the copies unnecessary",),
)
PROFILES: dict[str, Profile] = {p.name: p for p in (TORCH_2_2_1, TORCH_2_4, FIXED_MACOS14, MACOS15)}
DEFAULT_PROFILE = TORCH_2_2_1.name  # the story's profile


def get_profile(name: str | Profile) -> Profile:
    """Look up a profile by name (a Profile passes through)."""
    if isinstance(name, Profile):
        return name
    if not isinstance(name, str):
        raise CourseError(
            f"a profile is a name or a Profile, not {type(name).__name__} {name!r}; "
            f"choose one of: {', '.join(PROFILES)}"
        )
    if name not in PROFILES:
        raise CourseError(
            f"unknown emulated profile {name!r}; choose one of: {', '.join(PROFILES)}"
        )
    return PROFILES[name]
