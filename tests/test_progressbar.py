"""The text progress bar: draws every `every` steps and at the end, on stderr only."""

from __future__ import annotations

from course.progressbar import bar


def test_bar_draws_sparsely_and_finishes_the_line(capsys):
    show = bar("training", every=5)
    for done in range(1, 11):
        show(done, 10, "loss 1.5")
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\r") == 2 and err.endswith("10/10 loss 1.5\n")
    assert "[" + "#" * 30 + "]" in err


def test_a_bar_without_a_note_ends_at_the_count(capsys):
    show = bar("auditing", every=1)
    show(1, 2)
    show(2, 2, "")
    assert capsys.readouterr().err.endswith("2/2\n")
