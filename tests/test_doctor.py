"""The environment doctor: report shape, verdicts, and the compiler probe."""

from __future__ import annotations

import json

from course import doctor
from course.__main__ import main
from course.catalog import LESSONS


def test_report_has_a_verdict_per_notebook():
    data = doctor.report()
    assert [row["notebook"] for row in data["notebooks"]] == [lesson.filename for lesson in LESSONS]
    names = {c["name"] for c in data["checks"]}
    assert {"Python", "OS", "torch", "devices", "emulated MPS", "C++ compiler", "widgets"} <= names


def test_missing_compiler_skips_only_the_kernels_notebook():
    found = doctor.checks()
    found = [
        doctor.Check(c.name, False, "no c++/g++/clang++ on PATH") if c.name == "C++ compiler" else c
        for c in found
    ]
    verdicts = {row["notebook"]: row["verdict"] for row in doctor.verdicts(found)}
    assert verdicts["07_compiled_kernels.ipynb"].startswith(
        "will skip the C++ cells because no c++"
    )
    assert verdicts["04_strides.ipynb"] == "ready"


def test_old_torch_is_not_ready():
    found = [
        doctor.Check("torch", False, "2.2.1 (CPU build); the course needs >= 2.10")
        if c.name == "torch"
        else c
        for c in doctor.checks()
    ]
    verdicts = doctor.verdicts(found)
    assert verdicts[0]["verdict"] == "ready"
    assert all(v["verdict"].startswith("not ready") for v in verdicts[1:])


def test_cli_json_and_text(capsys):
    main(["doctor", "--json"])
    assert "notebooks" in json.loads(capsys.readouterr().out)
    main(["doctor"])
    out = capsys.readouterr().out
    assert "Environment" in out and "09_case_closed.ipynb" in out


def test_html_report_is_a_table():
    assert doctor.report_html().count("<table") == 2


def test_cli_lists_commands_and_rejects_unknown(capsys):
    assert main([]) == 0 and "doctor" in capsys.readouterr().out
    assert main(["nope"]) == 2


def test_an_empty_sources_cache_is_reported_and_notebook_06_says_what_it_will_show(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path))  # nothing fetched here
    found = {c.name: c for c in doctor.checks()}
    assert not found["kernel sources"].ok and "make fetch-sources" in found["kernel sources"].detail
    verdicts = {row["notebook"]: row["verdict"] for row in doctor.verdicts(list(found.values()))}
    assert verdicts["06_placeholder.ipynb"].startswith("ready, but shows links")
    assert verdicts["05_dispatch.ipynb"] == "ready"
