"""Fixed-width text tables: the one way the course prints rows in a checked notebook cell.

HTML tables (course.markup.html_table) suit widgets; text suits nbval, which compares a cell's
printed text exactly, so every lesson prints its table through this function and they all look
alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def text_table(rows: Sequence[Mapping[str, object]], empty: str = "(no rows)") -> str:
    """Rows (dicts with the same keys) as aligned columns under a header line."""
    if not rows:
        return empty
    keys = list(rows[0])
    cells = [[str(k) for k in keys]] + [[str(row.get(k, "")) for k in keys] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(keys))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    )
