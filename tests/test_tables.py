"""The shared text table."""

from course.tables import text_table


def test_columns_align_under_the_header():
    text = text_table([{"op": "addcmul_", "verdict": "lost"}, {"op": "mul_", "verdict": "ok"}])
    assert text.splitlines() == ["op        verdict", "addcmul_  lost", "mul_      ok"]


def test_no_rows_says_so():
    assert text_table([]) == "(no rows)"
    assert text_table([], empty="(every result is ok)") == "(every result is ok)"
