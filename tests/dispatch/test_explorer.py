"""The dispatch explorer: registry beside live tables, the call path, and a width that fits."""

from __future__ import annotations

import html
import io
import re
import textwrap

import pytest

from course.dispatch.explorer import dispatch_explorer, entry_html, explorer_html, stacked_html
from course.dispatch.registry import backend_kernel, lookup, op_names
from course.markup import html_table


def test_explorer_redraws_and_reports_unknown_names():
    panel = dispatch_explorer()
    assert panel.error == "" and panel.image.value
    mps_kernel = backend_kernel("addcmul_", "MPS")  # addcmul_out_mps up to torch 2.14
    assert mps_kernel in panel.text.value and "RegisterCPU" in panel.text.value
    cpu_image = panel.image.value
    panel.controls["tensor"].value = "emps tensor (emulated MPS)"
    assert panel.error == "" and panel.image.value != cpu_image
    panel.controls["op"].value = "addcmull_"
    assert "Did you mean: addcmul_" in panel.error
    panel.controls["op"].value = "mul_.Tensor"
    assert panel.error == "" and "mul.out" in panel.text.value


def test_the_op_box_sends_no_list_and_every_op_name_once():
    """Issue 38: with all 2,584 ops as the box's options the page took 0.2-0.5 s a key. The
    box now has no options of its own: the names go to the page once, beside it, and the page
    fills its list as the learner types (tests/browser/test_keyboard.py sees it there)."""
    panel = dispatch_explorer()
    op = panel.controls["op"]
    assert op.box.options == () and not op.box.continuous_update  # typing sends nothing
    names = re.search(r"data-names='([^']*)'", op.source.value)[1].split(" ")
    assert names == op_names() and "data-blank='addc'" in op.source.value
    assert op.source.layout.display == "none"


def _type_and_enter(panel, text: str) -> None:
    """What the page sends for a name typed and Enter: the box's value (continuous_update off)."""
    panel.controls["op"].box.value = text


def test_the_tensor_changing_under_an_op_error_shows_a_change():
    """Issue 38: with an op error shown, picking another tensor changed nothing visible."""
    panel = dispatch_explorer()
    _type_and_enter(panel, "mul")
    shown = [panel.message.value]
    for kind in ("meta tensor (shapes only)", "CPU tensor"):
        panel.controls["tensor"].value = kind
        shown.append(panel.message.value)
        assert "has no default overload" in panel.error
    assert len(set(shown)) == 3 and "CPU tensor" in html.unescape(shown[-1])
    _type_and_enter(panel, "mul.Tensor")
    assert (
        panel.controls["op"].value == "mul.Tensor"
        and panel.error == ""
        and panel.message.value == ""
        and panel.image.value
    )


# What a 414 px column (one of the explorer's two, side by side in a notebook cell) shows in one
# line at the page's font, about 7 px a character.
COLUMN_CHARS = 56


def rendered_lines(page: str, width: int = COLUMN_CHARS) -> list[str]:
    """The page's text as a browser lays it out in a column `width` characters wide: a line per
    block or <br>, wrapped at spaces; a table row is one line (its cells sit side by side and
    short cells never wrap); text that wraps anywhere (the schema) is left out."""
    page = re.sub(r"<pre[^>]*overflow-wrap:anywhere[^>]*>.*?</pre>", "\n", page, flags=re.S)
    page = re.sub(
        r"<tr>(.*?)</tr>",
        lambda row: re.sub(r"</t[dh]>", "  ", row[1]).replace(" ", "\xa0") + "\n",
        page,
        flags=re.S,
    )
    page = re.sub(r"<br>|</(div|p|h4)>", "\n", page)
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    return [
        piece
        for line in text.splitlines()
        for piece in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
    ]


def test_the_measure_sees_a_table_row_as_one_line():
    row = {"key": "CompositeExplicitAutogradNonFunctional[alias]", "file": "Register_0.cpp"}
    assert max(map(len, rendered_lines(html_table([row])))) > COLUMN_CHARS
    assert max(map(len, rendered_lines("<div>" + "word " * 40 + "</div>"))) <= COLUMN_CHARS


@pytest.mark.parametrize("op", ["addcmul_", "add.Tensor", "mul_.Tensor", "addmm", "linear"])
def test_every_line_fits_a_narrow_column(op):
    """Registry and live kernels stack as short lines: nothing needs a column wider than
    414 px (the live table needed 943 px, and its file column was cut off)."""
    page = explorer_html(lookup(op))
    lines = rendered_lines(page)
    assert max(map(len, lines)) <= COLUMN_CHARS, max(lines, key=len)
    assert "<table" not in page and page.count("overflow-wrap:anywhere") >= 2
    assert any("RegisterCPU" in line or "Composite" in line for line in lines)


def test_long_schemas_wrap_instead_of_widening_the_widget():
    page = explorer_html(lookup("addcmul_"))
    assert "flex-wrap:wrap" in page and "min-width:0" in page
    schema = lookup("addcmul.out").schema
    block = entry_html(lookup("addcmul.out"))
    assert "white-space:pre-wrap" in block and block.count(schema.split("(")[0]) >= 1


def test_an_empty_stack_says_so():
    assert "(none)" in stacked_html([])


def test_an_unknown_op_clears_the_old_diagram():
    panel = dispatch_explorer()
    assert panel.image.value
    panel.controls["op"].value = "no_such_op_"
    assert panel.error and panel.image.value == b"" and panel.text.value == ""


def test_the_path_diagram_fits_a_cell_with_text_of_10_pt():
    from matplotlib.text import Text
    from PIL import Image

    from course.dispatch.explorer import draw_explorer
    from course.figures import CELL_WIDTH_PX, figure_png

    figure = draw_explorer("addcmul_", "emps tensor (emulated MPS)").figure
    sizes = [t.get_fontsize() for t in figure.findobj(Text) if t.get_text()]
    assert sizes and min(sizes) >= 10
    assert Image.open(io.BytesIO(figure_png(figure))).width <= CELL_WIDTH_PX
