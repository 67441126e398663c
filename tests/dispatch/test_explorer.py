"""The dispatch explorer: registry beside live tables, the call path, and a width that fits."""

from __future__ import annotations

import re

from course.dispatch.explorer import dispatch_explorer, entry_html, explorer_html
from course.dispatch.registry import backend_kernel, lookup


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


def test_long_schemas_wrap_instead_of_widening_the_widget():
    page = explorer_html(lookup("addcmul_"))
    assert "flex-wrap:wrap" in page and "min-width:0" in page
    schema = lookup("addcmul.out").schema
    block = entry_html(lookup("addcmul.out"))
    assert "white-space:pre-wrap" in block and block.count(schema.split("(")[0]) >= 1
    cells = re.findall(r"<td[^>]*>(.*?)</td>", block)
    assert all(len(cell) < 60 for cell in cells), max(cells, key=len)


def test_an_unknown_op_clears_the_old_diagram():
    panel = dispatch_explorer()
    assert panel.image.value
    panel.controls["op"].value = "no_such_op_"
    assert panel.error and panel.image.value == b"" and panel.text.value == ""
