"""pytest set-up for the whole repository: nbval records every notebook cell's time.

scripts/time_cells.py reports them (`make cell-times`); recording adds nothing to the run.
tests/balance.py hands the units of `--dist loadfile` out heaviest first (see there).
Every check(...) a test or a notebook under test runs saves progress (course.journal): the run
points COURSE_PROGRESS_DIR at a temporary folder, so no test writes to the real home.
"""

import os
import tempfile

pytest_plugins = ["scripts.time_cells", "tests.balance"]


def pytest_configure(config):
    os.environ["COURSE_PROGRESS_DIR"] = tempfile.mkdtemp(prefix="course-progress-")
    # Tests never touch the network: course.kernels.upstream (notebook 06's real PyTorch source)
    # reads this, and the notebook kernels nbval starts inherit it.
    os.environ.setdefault("COURSE_OFFLINE", "1")
