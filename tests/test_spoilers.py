"""No prediction (or checked answer) is answered before it is asked (issues 24 and 35).

A learner reads everything above a question before committing to an answer: markdown, the stored
outputs, the comments and strings of the code cells (as the learner copy shows them), the widgets'
first drawings, whatever the course's objects print when the learner prints them, and the earlier
notebooks. None of it may name the answer: not its
declared words (`answer_words`), not the correct choice, and not a paraphrase of either. The
paraphrases are a reviewer's list per question, kept here (`PARAPHRASES`), written by reading each
notebook as a learner up to the question: other wordings, synonyms, numbers, and the key fact that
implies the answer. They are regular expressions matched against the text lower-cased, with
markdown's `*` and backticks dropped and whitespace collapsed. Earlier notebooks are searched for
a narrower list (`EARLIER`), since later lessons rightly build on what earlier ones taught.
"""

from __future__ import annotations

import html
import importlib.util
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from course import emps, exercises
from course.catalog import python_source
from tests.test_notebook_policy import NOTEBOOKS, ROOT, _import_cells, _outputs_text, _read

_spec = importlib.util.spec_from_file_location(
    "make_learner_copies", ROOT / "scripts/make_learner_copies.py"
)
make_learner_copies = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_learner_copies)

EXERCISES = exercises.all_exercises()
PREDICTIONS = exercises.all_predictions()
ASKED = re.compile(r"\b(predict|check)\(\s*[\"'](\d\d\.\w+)[\"']")

# A reviewer's paraphrases of each answer (regexes on the plain text, see the module docstring).
PARAPHRASES: dict[str, tuple[str, ...]] = {
    "00.mixed_devices": (  # RuntimeError
        r"never moves? (any )?(data|tensors?)",
        r"(must|have to|need to) (share|be on) (a|the same|one) device",
        r"expected all tensors to be on the same device",
        r"(raises|throws|refuses with) an? (runtime)?error",
        r"(tensors|operands) on (two )?different devices (fail|raise|are refused)",
    ),
    "01.how_many_frozen": (  # 1
        r"exactly one (parameter|tensor|weight)",
        r"only one (parameter|tensor|weight)",
        r"a single (parameter|tensor|weight) (is|was|stays|stayed) (frozen|bitwise)",
        r"encoder\.?weight (is|was|stays|stayed|remains) (frozen|bitwise equal|exactly)",
        r"\b(1|one) of (the|its)? ?(4|four) (parameter|tensor)s? (is|was|stays|stayed) frozen",
        r"\b(3|three) of (the|its)? ?(4|four) (parameter|tensor)s? (train|move)",
    ),
    "01.floor": (  # about 0.0383
        r"\b0?\.038\d*\b",
        r"\b3\.8\d*e-0?2\b",
    ),
    "02.contiguous": (  # yes
        r"a contiguous encoder (moves|trains|does move)",
        r"contiguous (weight|parameter|encoder)s? (moves?|trains?|updates?) (on|under)",
        r"the stride is the (only )?(difference|cause|culprit)",
        r"mishandles? (a )?non-contiguous",
        r"non-contiguous (tensors?|outputs?|parameters?|weights?)[^.]{0,40}(lose|lost|drop|frozen)",
    ),
    "02.two_variables": (  # the dtype and the device
        r"(refuses|rejects|cannot hold|does not support|doesn't support) float64",
        r"cannot convert an? mps tensor to float64",
        r"float64 (is|was) not supported",
        r"float64 (run|runs|ran) (only )?on the cpu",
        r"two (things|variables) (changed|at once)",
        r"(the )?dtype and the device (changed|differ)",
    ),
    "02.update_size": (  # enormous: lr * m / eps
        r"\benormous\b",
        r"\bexplod",
        r"\bhuge (step|update|jump)",
        r"\|?exp_avg\|? ?[x×*] ?1e ?5\b",
        r"sqrt\(0\) ?\+ ?eps",
        r"thousands of times larger",
    ),
    "02.zero_pattern": (  # whole rows
        r"whole rows?",
        r"entire rows?",
        r"rows? (of|full of|all) zeros",
        r"\bzero rows\b",
        r"features? (that )?no sample (of the batch )?(kept|used)",
        r"passes back no gradient",
    ),
    "03.which_explodes": (  # addcmul_ only
        r"addcmul_? (alone|only|by itself)[^.]{0,60}explod",
        r"explod[^.]{0,60}addcmul_? (alone|only|by itself)",
        r"second bug mask",
        r"masked the first",
        r"(a )?working addcdiv_? delivers",
    ),
    "03.which_ops": (  # addcmul_ and addcdiv_
        r"addc(mul|div)_?(,| and|/) ?(and )?addc(div|mul)_?[^.]{0,40}(lose|lost|drop|break|broke)",
        r"only addc(mul|div)_? and addc(div|mul)_?",
        r"(lerp_?|mul_?) (and (lerp_?|mul_?) )?(are|is|were|was) fine",
        r"(kept|keeps|keep) (its|their) writes",
        r"the bug is in two kernels",
        r"(lerp_?|mul_?) (and (lerp_?|mul_?) )?(always )?update",
        r"broken famil(y|ies)[^.]{0,30}addc",
    ),
    "04.clone_layout": (  # transposed, like .T
        r"clone\(\) (keeps|kept|copies|preserves) (the |\.t's )?(layout|strides?)",
        r"defaults to memory_format ?= ?torch\.preserve_format",
        r"keeps? \.t's strides?",
        r"(gets|got|has|with) the (transposed|same) strides? as \.t",
    ),
    "04.find_mps_bug": (  # torch.randn(4, 6).T.clone()
        r"\.t\.clone\(\) (keeps|kept) [^.]{0,20}strides? \(1, 6\)",
        r"only one suspect is non-contiguous",
        r"the story's encoder in small",
    ),
    "04.transpose_writes": (  # yes: x[1, 0] becomes 100
        r"\bx\.t is a view\b",
        r"(swaps?|swapped) (the |its )?strides",
        r"shares? (x's|the same|its) (storage|memory)",
        r"no data (is |was )?(moved|copied)",
        r"\.t (is|returns) (a view|no copy)",
    ),
    "05.binding": (  # nowhere: it is generated C++
        r"method_descriptor",
        r"\btensorbase\b",
        r"no python (source|code)? ?behind",
        r"(written|lives|defined) in c\+\+",
        r"generated at build time",
    ),
    "05.call_order": (  # AutogradCPU, ADInplaceOrView, then CPU
        r"autograd(cpu)?('s kernel)? (runs|comes|goes) first",
        r"highest.priority (key )?(runs|first)",
        r"autogradcpu,? (then )?adinplaceorview",
        r"adinplaceorview,? (then )?cpu\b",
        r"(cpu|backend) kernel (runs|comes) last",
    ),
    "05.mps_kernel": (  # addcmul.out's kernel, shared with addcmul
        r"structured (kernel|delegate)",
        r"shared with addcmul",
        r"one out= kernel",
        r"addcmul\.out's (own )?kernel",
        r"serves addcmul",
        r"addcmul_out_mps",
    ),
    "05.override": (  # a huge jump
        r"\bexplod",
        r"\bhuge\b",
        r"\benormous\b",
        r"exp_avg_sq (stays|stayed|is|remains) (exactly )?0\b",
        r"sqrt\(0\) ?\+ ?eps",
        r"second bug mask",
    ),
    "06.lost_write": (  # into a temporary copy of out, never copied back
        r"nothing copie[sd]? it back",
        r"never copie[sd]? (it )?back",
        r"(copy|temporary|result) (is |was )?(dropped|thrown away|discarded)",
        r"threw the result away",
        r"computed into a (temporary|contiguous) copy",
    ),
    "06.macos15": (  # no copy is made: the graph writes into out itself
        r"makes? no (copy|temporar)",
        r"no temporar(y|ies)",
        r"strided buffers?[^.]{0,40}(no copy|directly|itself)",
        r"graph writes (straight )?into (out|the output)",
    ),
    "07.cache_lines": (  # 16: one line per element
        r"one (cache )?line per element",
        r"(its|their) own (cache )?line",
        r"\b4 ?kb apart",
        r"\b1,?024 floats apart",
        r"\b4,?096 bytes apart",
        r"\b16 (cache )?lines",
    ),
    "07.predict_scramble": (  # [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
        r"\b0, 2, 4\b",
        r"\b1, 3, 5\b",
        r"slot r ?\+ ?2 ?\* ?c",
        r"writes t1's (memory )?slot i into out's (memory )?slot i",
    ),
    "08.which_layouts": (  # every non-contiguous output
        r"storage.offset (has|keeps|with) the control's strides",
        r"storage.offset[^.]{0,40}(is|stays|leaves[^.]{0,20}) contiguous",
        r"expanded[^.]{0,60}only[^.]{0,20}inputs?",
        r"(stride.0|expanded)[^.]{0,40}(fine|harmless|safe)",
        r"feeds? every input with stride 0",
        r"placeholder copies (any|every) output",
    ),
    "09.which_fixes": (  # all three the same, to the last bit
        r"bit for bit",
        r"bitwise (equal|identical|the same)",
        r"identical (loss|losses|curves|runs)",
        r"(curves|losses|runs) (overlap|agree|coincide)",
        r"compute the same numbers",
        r"differ (only )?in what they cost",
    ),
}


def _plain(text: str) -> str:
    """Lower case, markdown emphasis and code marks dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[*`]", "", text).lower().split())


def _questions(nb: nbformat.NotebookNode) -> list[tuple[str, int]]:
    """(name, index of the first cell that asks it), for each prediction or check in a notebook."""
    found: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            for match in ASKED.finditer(cell.source):
                found.setdefault(match.group(2), index)
    return list(found.items())


def _revealed_choice(nb: nbformat.NotebookNode, prediction: exercises.Prediction) -> str | None:
    """The choice the stored reveal(...) output says the experiment gave."""
    for cell in nb.cells:
        if cell.cell_type == "code" and f'reveal("{prediction.name}")' in cell.source:
            shown = _plain(_outputs_text(cell))
            for choice in prediction.choices:
                if f"experiment says {_plain(repr(choice))}" in shown:
                    return choice
    return None


def answer_words(nb: nbformat.NotebookNode, name: str) -> tuple[str, ...]:
    """Words that identify a question's answer: those its author declared, and for a
    prediction the correct choice itself (unless it is too short to mean anything alone)."""
    if name in EXERCISES:
        return EXERCISES[name].answer_words
    prediction = PREDICTIONS[name]
    choice = _revealed_choice(nb, prediction)
    assert choice is not None, f"{name}: no stored reveal({name!r}) output names the outcome"
    distinctive = len(choice) >= 4 and not choice.replace(".", "").isdigit()
    return prediction.answer_words + ((choice,) if distinctive else ())


def answer_patterns(nb: nbformat.NotebookNode, name: str) -> list[tuple[str, re.Pattern]]:
    """(what it is, regex) for each answer word (matched whole) and each reviewer's paraphrase."""
    words = [
        (repr(word), re.compile(rf"(?<!\w){re.escape(_plain(word))}(?!\w)"))
        for word in answer_words(nb, name)
    ]
    return words + [(f"/{p}/", re.compile(p)) for p in PARAPHRASES.get(name, ())]


def code_text(source: str) -> str:
    """What a code cell says to a learner in words: its comments and string literals, read from
    the cell as the learner copy shows it (solution regions replaced by their scaffold)."""
    try:
        shown = make_learner_copies.scaffold(source)
        tokens = tokenize.generate_tokens(io.StringIO(python_source(shown)).readline)
        said = [t.string for t in tokens if t.type in (tokenize.COMMENT, tokenize.STRING)]
    except (SyntaxError, tokenize.TokenError, make_learner_copies.SolutionMarkerError):
        return source  # unreadable as Python: the whole text, so nothing escapes the search
    return "\n".join(said)


def _shown(cell: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """(kind, text) for what a learner reads in a cell before running anything after it."""
    if cell.cell_type == "markdown":
        return [("markdown", cell.source)]
    if cell.cell_type == "code":
        return [("code", code_text(cell.source)), ("output", _outputs_text(cell))]
    return []


def _without_choices(text: str, choices: list[str]) -> str:
    """A text that lists every choice (the question itself) read without them."""
    if choices and all(c in text for c in choices):
        for choice in choices:
            text = text.replace(choice, " ")
    return text


def found_in(text: str, patterns: list[tuple[str, re.Pattern]], choices: list[str]) -> list[str]:
    """The answer words and paraphrases a text shows."""
    plain = _without_choices(_plain(text), choices)
    return [what for what, pattern in patterns if pattern.search(plain)]


def _choices(name: str) -> list[str]:
    return [_plain(c) for c in PREDICTIONS[name].choices] if name in PREDICTIONS else []


def spoilers(nb: nbformat.NotebookNode, name: str, asked: int) -> list[str]:
    """Each earlier markdown cell, code cell (comments, strings) or stored output that shows
    one of the answer's words or paraphrases."""
    patterns, choices = answer_patterns(nb, name), _choices(name)
    return [
        f"cell {index} ({kind}) shows {what}"
        for index, cell in enumerate(nb.cells[:asked])
        for kind, text in _shown(cell)
        for what in found_in(text, patterns, choices)
    ]


def _asks_something(name: str) -> bool:
    """A prediction, or a check that declares answer words (a function to write gives none)."""
    return name in PREDICTIONS or (name in EXERCISES and bool(EXERCISES[name].answer_words))


# Answered before they are asked today, in notebooks this branch may not edit (issue 35):
# name -> what spoils it. The lead fixes them after merging; an entry that passes fails the run.
SPOILED: dict[str, str] = {}


def _asked_in_notebooks() -> list:
    """One case per prediction, and per check that declares answer words, in each notebook."""
    params = []
    for path in NOTEBOOKS:
        for name, asked in _questions(_read(path)):
            if not _asks_something(name):
                continue
            marks = []
            if name in SPOILED:
                reason = f"issue 35: {SPOILED[name]}"
                marks = [pytest.mark.xfail(reason=reason, strict=True)]
            params.append(pytest.param(path, name, asked, marks=marks, id=name))
    return params


QUESTIONS = _asked_in_notebooks()


@pytest.mark.parametrize("path, name, asked", QUESTIONS)
def test_no_question_is_answered_before_it_is_asked(path, name, asked):
    """A question's answer words and paraphrases appear nowhere a learner reads before it."""
    found = spoilers(_read(path), name, asked)
    assert not found, (
        f"{path.name}: {name} (asked in cell {asked}) is answered before it is asked: "
        + "; ".join(found)
    )


def test_the_spoiled_list_names_only_questions_the_notebooks_ask():
    assert {p.values[1] for p in QUESTIONS} >= set(SPOILED)


def test_every_question_has_a_reviewers_paraphrases():
    """Each prediction, and each check that declares answer words, has its reviewer's list,
    and the list names nothing else; every paraphrase is a regex that compiles."""
    asked = {name for name in PREDICTIONS} | {n for n, e in EXERCISES.items() if e.answer_words}
    assert set(PARAPHRASES) == asked
    for name, phrases in PARAPHRASES.items():
        assert phrases, f"{name}: no paraphrases"
        for phrase in phrases:
            assert phrase == phrase.lower(), f"{name}: {phrase!r} must be lower case"
            re.compile(phrase)


# --- what an earlier notebook shows -----------------------------------------------------------

# Lessons build on each other, so a later question may rest on what an earlier lesson taught, and
# most of the paraphrases above are ordinary words there. These are a reviewer's key facts that an
# earlier notebook must not show, because they answer a later question outright.
EARLIER: dict[str, tuple[str, ...]] = {
    "05.mps_kernel": (r"structured_delegate of addcmul\.out",),
    # 03 shows what the learner sees (old values kept; nothing lost on macOS 15): 06 asks why.
    "06.lost_write": (
        r"placeholder[^.]{0,60}(copy|result)[^.]{0,40}(dropped|thrown away|discarded|lost)",
    ),
    "06.macos15": (r"strided buffers?[^.]{0,40}(no copy|directly|itself)",),
    "07.predict_scramble": (r"\b0, 2, 4\b[^.]{0,20}\b1, 3, 5\b",),
    "08.which_layouts": (r"storage.offset[^.]{0,40}(is|stays|leaves[^.]{0,20}) contiguous",),
    "09.which_fixes": (r"(fixes|fix 1|fix 2|fix 3)[^.]{0,60}(to the last bit|bit for bit)",),
}

# Answered by an earlier notebook today: name -> what spoils it (issue 35); the lead decides
# whether the earlier lesson or the later question changes.
SPOILED_EARLIER: dict[str, str] = {}


def earlier_spoilers(earlier: dict[str, nbformat.NotebookNode], name: str) -> list[str]:
    """Each cell of an earlier notebook that shows one of a question's key facts."""
    patterns = [(f"/{p}/", re.compile(p)) for p in EARLIER.get(name, ())]
    return [
        f"{notebook} cell {index} ({kind}) shows {what}"
        for notebook, nb in earlier.items()
        for index, cell in enumerate(nb.cells)
        for kind, text in _shown(cell)
        for what in found_in(text, patterns, _choices(name))
    ]


def _asked_later() -> list:
    """One case per question with key facts to look for in the notebooks before its own."""
    params = []
    for position, path in enumerate(NOTEBOOKS):
        for name, _ in _questions(_read(path)):
            if name not in EARLIER:
                continue
            marks = []
            if name in SPOILED_EARLIER:
                reason = f"issue 35: {SPOILED_EARLIER[name]}"
                marks = [pytest.mark.xfail(reason=reason, strict=True)]
            params.append(pytest.param(position, name, marks=marks, id=name))
    return params


@pytest.mark.parametrize("position, name", _asked_later())
def test_no_earlier_notebook_answers_a_question(position, name):
    earlier = {path.name: _read(path) for path in NOTEBOOKS[:position]}
    found = earlier_spoilers(earlier, name)
    assert not found, f"{name} is answered by an earlier notebook: " + "; ".join(found)


def test_the_earlier_lists_name_only_questions_the_notebooks_ask():
    asked = {p.values[1] for p in QUESTIONS}
    assert set(EARLIER) <= asked and set(SPOILED_EARLIER) <= set(EARLIER)


# --- what a printed object shows --------------------------------------------------------------


def _profiles() -> list[emps.Profile]:
    """Every profile a learner can print: the listed ones, the one in force, and the made-up
    ones the checkers hand to a learner's function (02's benches, 03.lost_ops, 08.lost_writes)."""
    from course.adam.exercises import common as adam_common
    from course.isolation.exercises import common as isolation_common

    made_up = [
        value
        for module in (adam_common, isolation_common)
        for value in vars(module).values()
        if isinstance(value, emps.Profile)
    ]
    hidden = [backend.profile for backend in _hidden_backends()]
    return [*emps.PROFILES.values(), emps.current_profile(), *made_up, *hidden]


def _hidden_backends() -> list[emps.Backend]:
    """The backends 08.lost_writes hands to a learner's function."""
    from course.audit.exercises import lost_writes

    return [backend for backend, _ in lost_writes._backends().values()]


def _backends() -> list[emps.Backend]:
    return [*map(emps.Backend, _profiles()), *_hidden_backends()]


def _bench() -> object:
    from course.isolation import experiments

    return experiments.bench("2.2.1-macos14", "emps")


def _story_report() -> str:
    from course.casefile.checklist import checklist, problems, report, sae_after_one_step

    return report(problems(checklist(*sae_after_one_step("transposed"))))


# What a learner can print of the course's objects: (label, where it appears in a notebook's
# code, a function returning the objects). A notebook whose code matches must keep every
# question it asks unspoiled by the objects' repr and str.
PRINTABLES: list[tuple[str, str, Callable[[], list[object]]]] = [
    ("a profile", r"\bemps\b|profile", _profiles),
    ("a backend", r"\bBackend\b|backend", _backends),
    ("a bench", r"\bbench\(", lambda: [_bench()]),
    ("the checklist's report", r"\breport\(", lambda: [_story_report()]),
]


def _printable_cases() -> list:
    params = []
    for path in NOTEBOOKS:
        nb = _read(path)
        code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
        names = [name for name, _ in _questions(nb) if _asks_something(name)]
        for label, appears, _ in PRINTABLES:
            if names and re.search(appears, code):
                params.append(pytest.param(path, label, names, id=f"{path.stem[:2]}-{label}"))
    return params


def printed_spoilers(
    nb: nbformat.NotebookNode, names: list[str], objects: list[object]
) -> list[str]:
    """For each question, the objects whose repr or str shows its answer."""
    found = []
    for name in names:
        patterns, choices = answer_patterns(nb, name), _choices(name)
        for obj in objects:
            for text in {repr(obj), str(obj)}:
                found += [
                    f"{name}: {text[:80]!r} shows {what}"
                    for what in found_in(text, patterns, choices)
                ]
    return found


@pytest.mark.parametrize("path, label, names", _printable_cases())
def test_no_printed_object_answers_a_question(path, label, names):
    """What a course object prints (a profile, a backend, a bench, a report) answers none of
    the questions of a notebook that hands it to the learner."""
    (make,) = [make for printable, _, make in PRINTABLES if printable == label]
    found = printed_spoilers(_read(path), names, make())
    assert not found, f"{path.name}: printing {label} gives answers away: " + "; ".join(found)


# --- what a widget shows when its cell runs ---------------------------------------------------

# A widget's stored output is a sentence ("Interactive widget ..."); the learner sees its first
# drawing. Names a widget cell needs besides the import cell's, made cheaply: 01's sweep gets a
# 3-step run in place of the notebook's 120-step `story` (its row #1 shows that run's numbers).
WIDGET_STAND_INS: dict[str, dict[str, str]] = {"01_the_plateau.ipynb": {"story": "run(steps=3)"}}


def widget_text(widget: object) -> str:
    """The words a widget shows: its controls' labels, values and options, its HTML (without
    tags) and its figure's alt text, through every child."""
    parts = [
        value
        for name in ("description", "value", "tooltip", "placeholder")
        if isinstance(value := getattr(widget, name, None), str)
    ]
    parts += [str(o[0] if isinstance(o, tuple) else o) for o in getattr(widget, "options", ())]
    parts += [widget_text(child) for child in getattr(widget, "children", ())]
    return html.unescape(re.sub(r"<[^>]+>", " ", "\n".join(parts)))


def _widget_cases() -> list:
    """(notebook, widget cell, the questions asked after it) for each widget shown before one."""
    params = []
    for path in NOTEBOOKS:
        nb = _read(path)
        questions = [(name, asked) for name, asked in _questions(nb) if _asks_something(name)]
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or "Interactive widget" not in _outputs_text(cell):
                continue
            names = [name for name, asked in questions if asked > index]
            if names:
                params.append(pytest.param(path, index, names, id=f"{path.stem[:2]}-cell{index}"))
    return params


def _made_widget(nb: nbformat.NotebookNode, path: Path, index: int) -> object:
    """The widget a cell makes, in a namespace holding the notebook's imports (and stand-ins)."""
    namespace: dict[str, object] = {}
    (imports,) = _import_cells(nb)
    exec(python_source(nb.cells[imports].source), namespace)
    for name, expression in WIDGET_STAND_INS.get(path.name, {}).items():
        namespace[name] = eval(expression, namespace)
    return eval(python_source(nb.cells[index].source).strip(), namespace)


@pytest.mark.parametrize("path, index, names", _widget_cases())
def test_no_widget_answers_a_later_question(path, index, names):
    """A widget's first drawing, before any control moves, answers none of the questions
    asked after it."""
    nb = _read(path)
    text = widget_text(_made_widget(nb, path, index))
    found = [
        f"{name}: the widget shows {what}"
        for name in names
        for what in found_in(text, answer_patterns(nb, name), _choices(name))
    ]
    assert not found, f"{path.name}: cell {index}'s widget gives answers away: " + "; ".join(found)


# --- the test fails on a real spoiler ----------------------------------------------------------


def _fabricated(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A notebook that asks 04.transpose_writes after `cells`, and reveals it."""
    ask = nbformat.v4.new_code_cell(
        '### BEGIN SOLUTION\nchoice = "yes: x[1, 0] becomes 100"\n### END SOLUTION\n'
        'predict("04.transpose_writes", choice)'
    )
    reveal = nbformat.v4.new_code_cell('reveal("04.transpose_writes")')
    reveal.outputs = [
        nbformat.v4.new_output(
            "stream", text="the experiment says 'yes: x[1, 0] becomes 100': right."
        )
    ]
    return nbformat.v4.new_notebook(cells=[*cells, ask, reveal])


def _printed(text: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("print(thing)")
    cell.outputs = [nbformat.v4.new_output("stream", text=text)]
    return cell


@pytest.mark.parametrize(
    "cell, where",
    [
        (nbformat.v4.new_markdown_cell("Remember: `x.T` *is a view*."), "markdown"),
        (nbformat.v4.new_markdown_cell("A transpose swaps the strides."), "markdown"),
        (nbformat.v4.new_code_cell("y = x.T  # shares x's storage"), "code"),
        (nbformat.v4.new_code_cell('print("no data is moved")'), "code"),
        (_printed("Tensor(view of x: same storage)"), "output"),
        (_printed("Hint: the answer is yes: x[1, 0] becomes 100"), "output"),
    ],
)
def test_a_fabricated_spoiler_fails_the_test(cell, where, tmp_path):
    """The policy test itself fails on a notebook with a spoiler, and names the cell."""
    path = tmp_path / "fabricated.ipynb"
    nbformat.write(_fabricated(nbformat.v4.new_markdown_cell("## Strides"), cell), path)
    with pytest.raises(AssertionError, match=rf"cell 1 \({where}\) shows"):
        test_no_question_is_answered_before_it_is_asked(path, "04.transpose_writes", 2)


def test_a_fabricated_notebook_without_spoilers_passes():
    """The question itself (every choice listed), a solution region the learner never sees,
    and text after the question are not spoilers."""
    nb = _fabricated(
        nbformat.v4.new_markdown_cell(
            "y = x.T; y[0, 1] = 100: `yes: x[1, 0] becomes 100` or `no: x.T is a copy`?"
        ),
        nbformat.v4.new_code_cell(
            "def f(x):\n    ### BEGIN SOLUTION\n    # x.T is a view\n    return x\n"
            "    ### END SOLUTION"
        ),
    )
    nb.cells.append(nbformat.v4.new_markdown_cell("So x.T is a view: same storage."))
    assert spoilers(nb, "04.transpose_writes", asked=2) == []


def test_an_earlier_notebook_that_answers_is_found():
    earlier = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("With strided buffers the graph writes directly.")]
    )
    found = earlier_spoilers({"03_x.ipynb": earlier}, "06.macos15")
    assert found == [
        "03_x.ipynb cell 0 (markdown) shows /strided buffers?[^.]{0,40}(no copy|directly|itself)/"
    ]
    earlier.cells[0].source = "macOS 15 gave MPSGraph strided buffers."
    assert earlier_spoilers({"03_x.ipynb": earlier}, "06.macos15") == []


def test_a_widget_that_answers_is_found():
    import ipywidgets as widgets

    leaky = widgets.VBox(
        [widgets.HTML("<b>x.T</b> <i>is a view</i>"), widgets.Dropdown(options=[1])]
    )
    assert "x.T is a view" in " ".join(widget_text(leaky).split())
    patterns = answer_patterns(_fabricated(), "04.transpose_writes")
    assert found_in(widget_text(leaky), patterns, [])


def test_a_printed_object_that_answers_is_found():
    nb = _fabricated()

    class Leaky:
        def __repr__(self) -> str:
            return "Leaky(note='x.T is a view')"

    assert printed_spoilers(nb, ["04.transpose_writes"], [Leaky()])
    assert printed_spoilers(nb, ["04.transpose_writes"], [emps.TORCH_2_2_1]) == []


def test_a_profile_that_printed_its_description_would_be_found():
    """Issue 35's case: a profile printed with its description answers 03.which_ops."""

    class Described:
        def __repr__(self) -> str:
            return emps.TORCH_2_2_1.description

    lesson = _read(NOTEBOOKS[3])
    assert printed_spoilers(lesson, ["03.which_ops"], [Described()])
    assert printed_spoilers(lesson, ["03.which_ops"], [emps.TORCH_2_2_1]) == []
