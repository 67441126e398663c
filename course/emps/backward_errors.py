"""An error raised on the device during a backward pass reaches the caller, never ends the process.

Note [An error in a backward pass on the device]
    Anything the device raises while autograd runs a backward pass (a learner's kernel that
    raises, a refused op, a CPU tensor mixed in by a hook) used to end the process: "terminate
    called without an active exception", exit status 134, the notebook's kernel gone. The
    mechanism, in PyTorch's C++ (seen in gdb, torch 2.13):

    1. The error leaves `__torch_dispatch__` as a C++ `python_error` that has not fetched
       Python's error indicator yet: it stays set while the C++ stack unwinds.
    2. The engine's `evaluate_function` holds a stream guard for every node on the device
       (PrivateUse1 counts as the accelerator). Its destructor runs during that unwinding and
       asks the device guard for the device type: `PythonDeviceGuard::exchangeStream`, which
       is `noexcept`, calls the Python method `type_` of the registered guard.
    3. Calling Python with an error indicator set fails ("returned a result with an exception
       set"), the failure is a C++ exception inside a `noexcept` function: std::terminate.

    So the device registers its own guard (`DeviceGuard`): before answering, its `type_` takes
    any pending error off the indicator (`PyErr_Occurred` called through ctypes raises it)
    and keeps it, and the destructor completes. The engine then reports a
    backward pass that failed without an error ("run_backward returned NULL without setting
    an exception"), and the autograd engine's Python entry point (`Variable._execution_engine`,
    wrapped here by `_Engine`) raises the kept error in its place: the learner reads the error
    the device raised, with its traceback. Errors on the CPU never reach the guard.
"""

from __future__ import annotations

import ctypes

import torch

_PENDING: list[BaseException] = []  # errors taken off the indicator during the current pass
_PRIVATEUSE1 = torch._C._autograd.DeviceType.PrivateUse1
# PyErr_Occurred through ctypes.pythonapi, which checks Python's error indicator after every
# call and raises what it finds: a check CPython cannot optimise away (a plain builtin call
# would do only until the interpreter specialises it, after a few calls, skipping the check)
_ERROR_PENDING = ctypes.pythonapi.PyErr_Occurred
_ERROR_PENDING.restype = ctypes.c_void_p


class DeviceGuard(torch._C._acc.DeviceGuard):
    """The device's guard for PyTorch's C++ (Note [An error in a backward pass on the device])."""

    def type_(self):
        try:
            _ERROR_PENDING()  # raises the pending error, if there is one
        except BaseException as pending:  # whatever it is, it is kept for the caller
            _PENDING.append(pending)
        return _PRIVATEUSE1


class _Engine:
    """Autograd's Python engine, raising the error a backward pass on the device kept."""

    def __init__(self, engine: object) -> None:
        self._engine = engine

    def run_backward(self, *args, **kwargs):
        _PENDING.clear()
        try:
            return self._engine.run_backward(*args, **kwargs)
        except SystemError:
            if not _PENDING:
                raise
            kept = _PENDING[0]
            _PENDING.clear()
            raise kept.with_traceback(kept.__traceback__) from None

    def __getattr__(self, name: str):
        return getattr(self._engine, name)


def install() -> None:
    """Route Python's backward passes through `_Engine` (once per process)."""
    variable = torch.autograd.variable.Variable
    if not isinstance(variable._execution_engine, _Engine):
        variable._execution_engine = _Engine(variable._execution_engine)
