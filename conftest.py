"""pytest set-up for the whole repository: nbval records every notebook cell's time.

scripts/time_cells.py reports them (`make cell-times`); recording adds nothing to the run.
tests/balance.py hands the units of `--dist loadfile` out heaviest first (see there).
Every check(...) a test or a notebook under test runs saves progress (course.journal): the run
points COURSE_PROGRESS_DIR at a temporary folder, so no test writes to the real home.
"""

import os
import tempfile

pytest_plugins = ["scripts.time_cells", "tests.balance"]

# Test modules that prove nothing about which torch is installed: they test the course's own
# tooling (learner copies generated from the references, which nbval runs on every torch; nbgrader;
# the release; the guide; imports without ipywidgets; the Colab set-up cell; static notebook
# rules). `make test-torch` leaves them out (`-m "not one_torch"`) so the second torch's leg
# spends its time on what reads torch: emps, the dispatcher, kernels, checkers and nbval.
ONE_TORCH = (
    "tests/test_learner_copies.py",
    "tests/test_grading.py",
    "tests/test_release.py",
    "tests/test_guide.py",
    "tests/test_without_widgets.py",
    "tests/test_frontends.py",
    "tests/test_notebook_policy.py",
    "tests/test_balance.py",
    "tests/test_time_cells.py",
)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "one_torch: proves nothing about the installed torch (conftest.ONE_TORCH)"
    )
    os.environ["COURSE_PROGRESS_DIR"] = tempfile.mkdtemp(prefix="course-progress-")
    # Tests never touch the network: course.kernels.upstream (notebook 06's real PyTorch source)
    # reads this, and the notebook kernels nbval starts inherit it.
    os.environ.setdefault("COURSE_OFFLINE", "1")
    # xdist workers (and the notebook kernels they start) each run torch's OpenMP threads: more
    # threads than cores on a 2-core machine, and an idle OpenMP thread spins by default, burning
    # the core another worker needs. Passive waiting lets it sleep: same thread counts, same
    # results. Measured with -n 2 on story/test_plateau, story/test_cli, casefile/test_fixes here
    # (a shared machine, load ~8): 318 s wall and 134 s CPU spinning, 63 s and 13.9 s passive.
    # Set in the controller before the workers start; they and their kernels inherit it.
    if config.getoption("numprocesses", default=None):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    for item in items:
        if item.path.is_relative_to(root) and item.path.relative_to(root).as_posix() in ONE_TORCH:
            item.add_marker("one_torch")
