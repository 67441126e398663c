"""The bug-report template asks for the commands that show a learner's machine, and they exist."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from course.__main__ import COMMANDS

TEMPLATE = Path(__file__).resolve().parents[1] / ".github/ISSUE_TEMPLATE/bug_report.yml"


def test_template_asks_for_doctor_json_and_on_a_mac_mps_check():
    form = yaml.safe_load(TEMPLATE.read_text())
    labels = {item["id"]: item["attributes"]["label"] for item in form["body"] if "id" in item}
    assert "`python -m course doctor --json`" in labels["doctor"]
    assert "Mac" in labels["mps"] and "`python -m course mps-check`" in labels["mps"]
    required = {i["id"] for i in form["body"] if i.get("validations", {}).get("required")}
    assert "doctor" in required and "mps" not in required


def test_the_commands_it_names_exist(capsys):
    assert {"doctor", "mps-check"} <= set(COMMANDS)
    from course.doctor import cli

    assert cli(["--json"]) in (0, 1)
    assert "checks" in json.loads(capsys.readouterr().out)
