"""The importable half of the course: everything the notebooks compute lives here.

Notebooks narrate; these modules do the work, so every experiment, widget and checker can be
tested from pytest exactly as a learner runs it. `course.catalog` lists the lessons and the
modules each one uses.
"""

__version__ = "0.1.0"


def _show_figures_inline() -> None:
    """Let a bare `matplotlib.figure.Figure` returned by a course function display as a PNG,
    with its alt text in the output's metadata (the site writes it as the image's alt).

    The course builds figures without pyplot (no global state, testable), and IPython only knows
    how to show those once a PNG formatter is registered for the Figure type.
    """
    import sys

    if "IPython" not in sys.modules:
        return
    shell = sys.modules["IPython"].get_ipython()
    if shell is None:
        return
    from matplotlib.figure import Figure

    from course.figures import figure_output

    shell.display_formatter.formatters["image/png"].for_type(Figure, figure_output)


_show_figures_inline()
