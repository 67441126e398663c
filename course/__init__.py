"""The importable half of the course: everything the notebooks compute lives here.

Notebooks narrate; these modules do the work, so every experiment, widget and checker can be
tested from pytest exactly as a learner runs it. `course.catalog` lists the lessons and the
modules each one uses.
"""

__version__ = "0.1.0"


def _show_figures_inline() -> None:
    """Let a bare `matplotlib.figure.Figure` returned by a course function display as an
    <img> that carries its alt text (course.figures.figure_html says why HTML).

    The course builds figures without pyplot (no global state, testable), and IPython only knows
    how to show those once a formatter is registered for the Figure type.
    """
    import sys

    if "IPython" not in sys.modules:
        return
    shell = sys.modules["IPython"].get_ipython()
    if shell is None:
        return
    from matplotlib.figure import Figure

    from course.figures import figure_html

    shell.display_formatter.formatters["text/html"].for_type(Figure, figure_html)


_show_figures_inline()
