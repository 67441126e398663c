"""What a check says: verdicts as text and html, wrapped prose, text that displays as itself."""

from __future__ import annotations

from course.exercises import verdicts


def test_a_verdict_prints_its_mark_and_yours_beside_expected():
    assert str(verdicts.passed("well done")) == "[PASSED] well done"
    miss = verdicts.failed("wrong shape", (2, 3), (3, 2))
    assert str(miss) == "[NOT YET] wrong shape\n  yours:    (2, 3)\n  expected: (3, 2)"
    assert repr(miss) == str(miss)
    blank = verdicts.not_attempted("write it")
    assert not blank.attempted and blank.message == f"{verdicts.NOT_ATTEMPTED}: write it"


def test_the_html_is_green_for_a_pass_red_for_a_miss_and_escaped():
    assert "color:#1b7f3b" in verdicts.passed("ok")._repr_html_()
    page = verdicts.failed("a <b> tag", "x", "y")._repr_html_()
    assert "color:#b00020" in page and "&lt;b&gt;" in page and "<b>" not in page
    assert "<br>" in page and "\n" not in page


def test_wrapped_reflows_paragraphs_to_the_width():
    text = " ".join(["word"] * 50) + "\nhand\nbroken\n\nsecond paragraph"
    out = verdicts.wrapped(text)
    assert max(len(line) for line in out.splitlines()) <= verdicts.TEXT_WIDTH
    assert out.endswith("word hand broken\n\nsecond paragraph")
    assert max(len(line) for line in verdicts.wrapped(text, width=20).splitlines()) <= 20


def test_text_displays_as_itself_not_as_a_quoted_repr():
    text = verdicts.Text("it's\nfine")
    assert repr(text) == "it's\nfine" and text == "it's\nfine"
    assert repr(verdicts.Shown("shown")) == "shown"  # outside IPython: displayed nowhere
