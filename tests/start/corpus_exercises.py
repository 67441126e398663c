"""Notebook 00's warm-ups as test data: each reference, right answers written other ways, and
the wrong answers a newcomer writes, keyed by their flaw with the words their feedback must hold."""

from __future__ import annotations

import re

import numpy as np
import torch

from tests.corpus import Corpus


def _on_emps():
    my_tensor = torch.ones(3).to("emps")
    return my_tensor


def _moved_but_not_kept():
    my_tensor = torch.ones(3)
    my_tensor.to("emps")  # as if .to moved the tensor itself
    return my_tensor


ON_EMPS = Corpus(
    "00.on_emps",
    _on_emps,
    wrong={
        "a CPU tensor": (lambda: torch.ones(3), "not on the emulated device yet"),
        "a list of numbers": (lambda: [1.0, 2.0], "a list is not a tensor"),
        "the meta device": (lambda: torch.ones(3, device="meta"), "holds shapes but no data"),
        "the device's name": (lambda: "emps", "the device's name"),
        "a torch.device": (lambda: torch.device("emps"), "a device, not a tensor"),
        "a module": (lambda: torch.nn.Linear(2, 2).to("emps"), "a module, not a tensor"),
        ".to not called": (lambda: torch.ones(3).to, "forget the parentheses"),
        "a NumPy array": (lambda: np.ones(3), "NumPy array"),
        "its shape": (lambda: torch.ones(3).to("emps").shape, "tensor's shape"),
        "a number": (lambda: torch.ones(3).to("emps").sum().item(), "plain number"),
        "in a tuple": (lambda: (torch.ones(3).to("emps"),), "a tuple is not a tensor"),
        "its dtype": (lambda: torch.ones(3).to("emps").dtype, "a dtype"),
        "a bool (.is_cpu)": (lambda: torch.ones(3).to("emps").is_cpu, "a bool"),
        "its storage": (lambda: torch.ones(3).to("emps").untyped_storage(), "storage"),
        ".to's result dropped": (_moved_but_not_kept, "keep what it returns"),
        "printed as text": (lambda: str(torch.ones(3).to("emps")), "printed as text"),
        "in a list": (lambda: [torch.ones(3).to("emps")], "not a list"),
        "a class": (lambda: torch.Tensor, "a class, not a tensor"),
    },
    right={
        "a Parameter": lambda: torch.nn.Parameter(torch.ones(2).to("emps")),
        "an empty tensor": lambda: torch.empty(0, device="emps"),
        "a 0-dim tensor on emps:0": lambda: torch.tensor(1.0, device="emps:0"),
        "moved to a torch.device": lambda: torch.arange(4).to(torch.device("emps")),
    },
)


def _device_type():
    def device_type(t):
        return t.device.type

    return device_type


def _cpu_or_emps():
    def device_type(t):
        return "cpu" if t.is_cpu else "emps"  # only the two devices the learner has met

    return device_type


def _the_devices_seen():
    def device_type(t):
        return "meta" if t.is_meta else "cpu" if t.is_cpu else "emps"  # the three named so far

    return device_type


def _known_flags():
    def device_type(t):
        if t.is_cuda:
            return "cuda"
        if t.is_mps:
            return "mps"
        if t.is_meta:
            return "meta"
        return "cpu" if t.is_cpu else "emps"  # every device torch has a flag for, then emps

    return device_type


def printed():
    """A device_type that prints its answer: it returns None, which is not the CPU's index."""

    def device_type(t):
        print(t.device.type)

    return device_type


DEVICE_TYPE = Corpus(
    "00.device_type",
    _device_type,
    wrong={
        "str(t.device)": (lambda: lambda t: str(t.device), "without its index"),
        "t.device": (lambda: lambda t: t.device, "the torch.device itself"),
        "always 'cpu'": (lambda: lambda t: "cpu", "on a tensor on emps"),
        "cpu, else emps": (_cpu_or_emps, "meta device"),
        "t.type()": (lambda: lambda t: t.type(), "not its device"),
        "printed, not returned": (printed, "returned None"),
        "upper case": (lambda: lambda t: t.device.type.upper(), "lower case"),
        "repr(t.device)": (lambda: lambda t: repr(t.device), "the device's repr"),
        "':0' replaced": (
            lambda: lambda t: str(t.device).replace(":0", ""),  # 'emps', but not cuda:1
            "without its index (cuda:1",
        ),
        "four characters": (lambda: lambda t: str(t.device)[:4], "cut short"),  # mps:
        "the devices named so far": (_the_devices_seen, "mps device"),
        "t.get_device()": (lambda: lambda t: t.get_device(), "the device's index"),
        "t.device.index": (lambda: lambda t: t.device.index, "the device's index"),
        "a repr of the type": (lambda: lambda t: repr(t.device.type), "quotes"),
        "the tensor": (lambda: lambda t: t, "the tensor itself"),
        "the devices torch has flags for": (_known_flags, "lists the devices it knows"),
        "two characters cut": (
            lambda: lambda t: str(t.device)[:-2] if ":" in str(t.device) else str(t.device),
            "cuda:10",
        ),
        "one digit cut": (lambda: lambda t: re.sub(r":\d$", "", str(t.device)), "cuda:10"),
        "not a function": (lambda: "cpu", "give a function of one tensor"),
    },
    right={
        "split at ':'": lambda: lambda t: str(t.device).split(":")[0],
        "partition at ':'": lambda: lambda t: str(t.device).partition(":")[0],
        "digits stripped": lambda: lambda t: str(t.device).rstrip(":0123456789"),
        "a torch.device rebuilt": lambda: lambda t: torch.device(str(t.device)).type,
        "a regex": lambda: lambda t: re.match(r"[a-z]+", str(t.device)).group(0),
    },
)

CORPORA = (ON_EMPS, DEVICE_TYPE)
