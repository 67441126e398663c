"""The HTML pieces every panel, the doctor and the progress table show (no widget stack)."""

from __future__ import annotations

import re

from course.markup import html_table, message_html


def test_tables_keep_short_words_whole_and_scroll_instead_of_overflowing():
    text = html_table([{"verdict": "silent-no-write", "detail": "word " * 20}], {"ok": "#0f0"})
    assert "white-space:nowrap'>silent-no-write" in text
    assert "white-space:normal" in text and "overflow-x:auto" in text
    assert html_table([]) == "<p><em>(no rows)</em></p>"


def test_table_cells_read_from_the_left_where_jupyterlab_would_right_align_them():
    text = html_table([{"severity": "fail", "message": "not contiguous"}], {"fail": "#f00"})
    cells = re.findall(r"<t[dh] style='([^']*)'", text)
    assert len(cells) == 4 and all("text-align:left" in style for style in cells)


def test_a_message_is_escaped_keeps_its_lines_and_takes_its_kinds_colour():
    box = message_html("a < b\nc", "ok")
    assert "a &lt; b<br>c" in box and "#1b7f3b" in box
    assert "#1f5fa8" in message_html("x", "unknown")  # an unknown kind reads as info
