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


def _luminance(colour: str) -> float:
    """WCAG 2's relative luminance of '#rrggbb'."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_each_kind_has_its_own_colour_readable_on_white():
    """A refused value reads as a warning (amber), not as news (blue) nor as a failure (red)."""
    colours = {
        kind: re.search(r"color:(#\w{6})", message_html("x", kind))[1]
        for kind in ("error", "warning", "info", "ok")
    }
    assert len(set(colours.values())) == 4
    assert all(1.05 / (_luminance(c) + 0.05) >= 4.5 for c in colours.values()), colours
