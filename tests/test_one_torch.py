"""The tests `make test-torch` leaves out are named by path: a renamed module must not slip back
in (or out) unnoticed, and nothing that reads torch may be on the list."""

from __future__ import annotations

from pathlib import Path

import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_every_one_torch_module_exists():
    assert [p for p in conftest.ONE_TORCH if not (ROOT / p).is_file()] == []


def test_no_one_torch_module_tests_what_reads_torch():
    """emps, the dispatcher, kernels and the checkers' corpora stay in the second torch's leg."""
    reading = ("tests/emps", "tests/dispatch", "tests/kernels", "tests/audit", "corpus")
    assert [p for p in conftest.ONE_TORCH if any(r in p for r in reading)] == []
