"""The text progress bar: draws every `every` steps and at the end, on stderr only."""

from __future__ import annotations

from course.progress import bar


def test_bar_draws_sparsely_and_finishes_the_line(capsys):
    show = bar("training", every=5)
    for done in range(1, 11):
        show(done, 10, 1.5)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\r") == 2 and err.endswith("10/10 loss 1.5\n")
    assert "[" + "#" * 30 + "]" in err
