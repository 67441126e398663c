"""Bad input, across the public API and the CLI: a clear message naming the value, never a
traceback and never a silent answer (issue: "bad input gets a clear error").

Each API case must raise CourseError whose text contains the given fragments (the bad value, and
what is allowed); each CLI case must exit non-zero with those fragments on stderr. The cheap
calls run first and each refuses before any training starts, so the whole file stays fast.
"""

from __future__ import annotations

import contextlib
import io

import pytest
import torch
from torch import nn

from course import emps, errors, exercises
from course.__main__ import main
from course.audit import core as audit
from course.casefile import checklist
from course.dispatch import explorer
from course.errors import CourseError
from course.layout import calculator, named, opchain
from course.model import runs, sae

FIXED = emps.get_profile("fixed-macos14")


def _load_onto(where: str):
    buffer = io.BytesIO()
    torch.save(torch.ones(2), buffer)
    buffer.seek(0)
    return torch.load(buffer, map_location=where)


LAYOUT = calculator.Layout.contiguous((3, 4))
API = [
    # the story: sizes and seeds a learner types
    ("run device=mps", lambda: runs.run(device="mps", steps=2), ["'mps'"]),
    ("run seed=str", lambda: runs.run(seed="x", steps=2), ["'x'", "integer"]),
    ("run k=0", lambda: runs.run(k=0, steps=2), ["k=0", "1 to"]),
    ("run k huge", lambda: runs.run(k=10**6, steps=2), ["k=1000000"]),
    ("run steps=True", lambda: runs.run(steps=True), ["steps=True"]),
    ("run steps=0", lambda: runs.run(steps=0), ["steps=0"]),
    ("run steps huge", lambda: runs.run(steps=10**9), ["steps=1000000000"]),
    ("run batch huge", lambda: runs.run(batch_size=10**7, steps=2), ["batch_size=10000000"]),
    ("run batch=0", lambda: runs.run(batch_size=0, steps=2), ["batch_size=0"]),
    ("run profile", lambda: runs.run(profile="nope", steps=2), ["'nope'", "2.2.1-macos14"]),
    ("sae d_model=0", lambda: sae.TopKSAE(d_model=0), ["d_model=0"]),
    ("sae d_model huge", lambda: sae.TopKSAE(d_model=10**7), ["d_model=10000000"]),
    # the emulated device
    ("profile name", lambda: emps.get_profile("nope"), ["'nope'", "fixed-macos14"]),
    ("profile type", lambda: emps.get_profile(3), ["3"]),
    ("broken as str", lambda: FIXED.with_broken("addcmul"), ["'addcmul'", "set"]),
    ("broken family", lambda: FIXED.with_broken({"matmul"}), ["matmul", "addcmul"]),
    ("emps:1", lambda: torch.zeros(2, device="emps:1"), ["emps:1", "emps:0"]),
    ("autocast", lambda: torch.autocast("emps").__enter__(), ["autocast"]),
    ("use_profile", lambda: emps.use_profile("2.3").__enter__(), ["'2.3'"]),
    ("profile list", lambda: emps.get_profile(["macos15"]), ["['macos15']", "list", "macos15"]),
    ("use_backend name", lambda: emps.use_backend("macos15").__enter__(), ["'macos15'", "Backend"]),
    ("Backend str", lambda: emps.Backend("macos15"), ["'macos15'", "get_profile"]),
    ("wrap a list", lambda: emps.EmulatedTensor([1.0, 2.0]), ["[1.0, 2.0]", "CPU torch.Tensor"]),
    ("wrap a string", lambda: emps.EmulatedTensor("x"), ["'x'", "torch.tensor(values"]),
    ("storage emps:1", lambda: torch.UntypedStorage(4, device="emps:1"), ["emps:1", "emps:0"]),
    ("load emps:1", lambda: _load_onto("emps:1"), ["emps:1", "emps:0"]),
    # layouts
    ("contiguous str", lambda: calculator.Layout.contiguous("3,4"), ["'3,4'", "tuple"]),
    ("contiguous neg", lambda: calculator.Layout.contiguous((-1, 3)), ["(-1, 3)", ">= 0"]),
    ("contiguous None", lambda: calculator.Layout.contiguous(None), ["None"]),
    ("chain None", lambda: opchain.parse_chain(None), ["None", "T; [:, ::2]"]),
    ("chain unknown op", lambda: opchain.parse_chain("spin(1)"), ["spin"]),
    ("zero step", lambda: calculator.apply(LAYOUT, opchain.parse_chain("[::0]")[0]), ["step 0"]),
    ("op it lacks", lambda: calculator.apply(LAYOUT, opchain.Op("mT", ())), ["'mT'", "permute"]),
    ("chain bad int", lambda: opchain.parse_chain("unsqueeze(x)"), ["x"]),
    ("narrow 1.5", lambda: calculator.apply(LAYOUT, opchain.Op("narrow", (0, 0, 1.5))), ["1.5"]),
    (
        "view float",
        lambda: calculator.apply(LAYOUT, opchain.Op("view", (2.0, 6))),
        ["2.0", "whole"],
    ),
    (
        "unsqueeze None",
        lambda: calculator.apply(LAYOUT, opchain.Op("unsqueeze", (None,))),
        ["None"],
    ),
    ("slice 0.5", lambda: calculator.apply(LAYOUT, opchain.Op("index", (slice(0.5, 2),))), ["0.5"]),
    ("storage index float", lambda: LAYOUT.storage_index((1.5, 0)), ["(1.5, 0)", "whole"]),
    ("storage index None", lambda: LAYOUT.storage_index(None), ["None", "(0, 0)"]),
    ("laid_out name", lambda: named.laid_out(torch.zeros(2, 2), "diag"), ["'diag'", "transposed"]),
    ("laid_out dims", lambda: named.laid_out(torch.zeros(2, 2), "channels-last"), ["4-D"]),
    ("laid_out type", lambda: named.laid_out([1.0], "contiguous"), ["list"]),
    # the auditor and the checklist
    ("audit None", lambda: audit.audit(None), ["None"]),
    ("audit device", lambda: audit.audit("tpu"), ["'tpu'", "cpu"]),
    ("audit op int", lambda: audit.audit("cpu", ops=[123]), ["123"]),
    ("audit op name", lambda: audit.audit("cpu", ops=["nope_"]), ["nope_"]),
    ("audit layout", lambda: audit.audit("cpu", layouts=["diag"]), ["diag"]),
    ("audit profile", lambda: audit.audit("emulated:nope"), ["nope"]),
    ("audit panel", lambda: audit.audit_panel(profile="nope"), ["'nope'"]),
    ("audit backend str", lambda: audit.audit(backend="macos15"), ["'macos15'", "emps.Backend"]),
    ("run data list", lambda: runs.run(data=[[1.0, 2.0]], steps=2), ["list", "SyntheticData"]),
    ("run data tensor", lambda: runs.run(data=torch.ones(4, 3), steps=2), ["Tensor", "make_data"]),
    ("explorer tensor", lambda: explorer.dispatch_explorer(tensor="gpu"), ["'gpu'", "CPU tensor"]),
    ("checklist None", lambda: checklist.checklist(None), ["None"]),
    ("checklist str", lambda: checklist.checklist("model"), ["str"]),
    ("checklist opt str", lambda: checklist.checklist(nn.Linear(2, 2), "adam"), ["optimizer"]),
    # exercises and predictions
    ("check unknown", lambda: exercises.check("99.nope", 1), ["'99.nope'", "'04.address'"]),
    ("check unknown in a lesson", lambda: exercises.check("00.nope", 1), ["00.on_emps"]),
    ("hint unknown", lambda: exercises.hint("99.nope"), ["'99.nope'"]),
    ("predict unknown", lambda: exercises.predict("99.nope", 1), ["'99.nope'"]),
    ("reveal unknown", lambda: exercises.reveal("99.nope"), ["'99.nope'"]),
    ("require_range", lambda: errors.require_range("lr", "fast", 0, 1), ["'fast'", "0 to 1"]),
    ("require_choice", lambda: errors.require_choice("x", 4, [1, 2]), ["x=4", "1, 2"]),
]


@pytest.mark.parametrize(("label", "call", "fragments"), API, ids=[c[0] for c in API])
def test_api_refuses_with_a_message(label, call, fragments):
    with pytest.raises(CourseError) as caught:
        call()
    for fragment in fragments:
        assert fragment in str(caught.value), f"{label}: {caught.value}"


CLI = [
    (["plateau", "--plot", "/nonexistent/x.png"], ["/nonexistent"]),
    (["plateau", "--plot", "plot.txt"], ["plot.txt", ".png"]),
    (["plateau", "--steps", "0"], ["steps=0"]),
    (["plateau", "--steps", "x"], ["'x'"]),
    (["plateau", "--profile", "nope"], ["'nope'", "fixed-macos14"]),
    (["plateau", "--init", "sideways"], ["'sideways'", "transposed"]),
    (["audit", "--device", "nope"], ["'nope'", "cpu"]),
    (["audit", "--layout", "diag"], ["'diag'", "transposed"]),
    (["audit", "--dtype", "float128"], ["'float128'", "float32"]),
    (["mystery", "--seed", "x"], ["'x'"]),
    (["mystery", "--seed", "-1"], ["-1"]),
    (["progress", "--collect", "/nonexistent/dir"], ["/nonexistent/dir"]),
    (["doctor", "--bogus"], ["--bogus"]),
    (["mps-check", "--device", "tpu"], ["'tpu'", "mps"]),
    (["mps-check", "--device", "meta"], ["'meta'", "cannot hold data", "cpu"]),
    (["plateu"], ["'plateu'", "plateau"]),
]
if not torch.cuda.is_available():  # a device torch knows but this machine cannot use
    CLI.append((["mps-check", "--device", "cuda"], ["'cuda'", "cannot hold data", "cpu"]))


@pytest.mark.parametrize(("argv", "fragments"), CLI, ids=[" ".join(c[0]) for c in CLI])
def test_cli_refuses_with_a_message(argv, fragments):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's own refusal
            code = exit_.code
    assert code not in (0, None), f"{argv} succeeded"
    for fragment in fragments:
        assert fragment in err.getvalue(), f"{argv}: {err.getvalue()}"


def test_at_least_sixty_bad_inputs_are_covered():
    assert len(API) + len(CLI) >= 60


def test_a_corrupt_or_foreign_journal_is_named_line_by_line(tmp_path, capsys):
    """`progress --collect` over files that are not journals says which lines it skipped,
    instead of a silent "0 passed"."""
    (tmp_path / "alice.jsonl").write_text(
        'not json\n{"t": 1.0, "exercise": "04.strides", "event": "check", "passed": true}\n{"t":\n'
    )
    (tmp_path / "bob.jsonl").write_bytes(bytes(range(256)))
    with pytest.warns(UserWarning) as warned:
        assert main(["progress", "--collect", str(tmp_path)]) == 0
    messages = sorted(str(w.message) for w in warned)
    assert "alice.jsonl: skipped 2 unreadable line(s) (line 1, 3)" in messages[0]
    assert "bob.jsonl: skipped" in messages[1] and '"exercise"' in messages[1]
    assert "alice" in capsys.readouterr().out
