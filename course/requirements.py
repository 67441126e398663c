"""What the course needs from its environment, defined once: the oldest torch it runs on.

Why a module of its own, free of torch: the doctor must report a too-old (or broken) torch
without importing it, and the emulated device refuses to start below the same floor. The
install pin in pyproject.toml (`torch>=...`) says the same; tests/test_requirements.py holds
the two together.
"""

from __future__ import annotations

# The first torch with _setup_privateuseone_for_python_backend, which emps is built on (2.9.0
# lacks it).
TORCH_FLOOR = (2, 10)
TORCH_FLOOR_TEXT = ".".join(map(str, TORCH_FLOOR))
