"""`python -m course mps-check`: skips without a Mac GPU, finds the bugs on the emulated one."""

from __future__ import annotations

from course.__main__ import main


def test_mps_check_skips_cleanly_here(capsys):
    assert main(["mps-check"]) == 0
    assert "skipped" in capsys.readouterr().out


def test_mps_check_finds_the_bugs_on_the_emulated_device():
    import course.emps  # noqa: F401  (registers the "emps" device)
    from course.mps_check import run_checks

    verdicts = {r["op"]: r["verdict"] for r in run_checks("emps")}
    assert verdicts["mul_"] == "ok" and verdicts["lerp_"] == "ok"
    assert verdicts["addcmul_"] == verdicts["normal_"] == "silent-no-write"
    assert all(r["verdict"] == "ok" for r in run_checks("cpu"))
