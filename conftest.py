"""pytest set-up for the whole repository: nbval records every notebook cell's time.

scripts/time_cells.py reports them (`make cell-times`); recording adds nothing to the run.
"""

pytest_plugins = ["scripts.time_cells"]
