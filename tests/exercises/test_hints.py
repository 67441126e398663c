"""A hint points to the method, the building block, never the code: no hint spells its answer.

A hint is shown to a learner who is stuck, before the solution; one that holds the solution's
code (or the words that give the answer away) is the solution without the record that it was
shown, so the journal, the room view and the grading would count a copied answer as found.

What counts as spelling the answer, read from the solution region of the reference notebook
(`course.exercises.solutions.find`), whitespace and quote style ignored:
- a line of it longer than a trivial token: 4 or more tokens, and not only naming a building
  block (a bare name, or a call without arguments such as `bench.backward()`);
- a call in it with two or more arguments, written out (`lerp_(grad, 1 - beta1)`): even renamed
  variables around it leave the code to copy;
- an argument of it that is an expression of 5 or more tokens (`value=1 - beta2`), other than
  a building block (`out.cpu()`);
- one of the exercise's `answer_words`.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator

import pytest

from course.exercises import all_exercises, solutions

TOKEN = re.compile(r"\w+|[^\w\s]")
MIN_LINE_TOKENS = 4
MIN_ARGUMENT_TOKENS = 5
EXPRESSIONS = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Compare, ast.BoolOp)


def squashed(text: str) -> str:
    """Text compared without whitespace, with one quote style and one case."""
    return re.sub(r"\s+", "", text).replace('"', "'").lower()


def _building_block(line: str) -> bool:
    """A bare name or a call without arguments: what a hint is meant to point to."""
    try:
        node = ast.parse(line, mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.Call) and not (node.args or node.keywords):
        node = node.func
    return isinstance(node, ast.Name | ast.Attribute)


def _lines(region: str) -> Iterator[str]:
    for line in region.split("\n"):
        text = line.strip()
        if text.startswith("#") or len(TOKEN.findall(text)) < MIN_LINE_TOKENS:
            continue
        if not _building_block(text):
            yield text


def _calls(region: str) -> Iterator[str]:
    try:
        tree = ast.parse(textwrap.dedent(region))
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        arguments = [*node.args, *node.keywords]
        function = node.func.attr if isinstance(node.func, ast.Attribute) else node.func
        if len(arguments) >= 2:
            name = function if isinstance(function, str) else ast.unparse(function)
            yield f"{name}({', '.join(ast.unparse(a) for a in arguments)})"
        for argument in arguments:
            value = argument.value if isinstance(argument, ast.keyword) else argument
            text = ast.unparse(argument)
            long = len(TOKEN.findall(text)) >= MIN_ARGUMENT_TOKENS
            if isinstance(value, EXPRESSIONS) and long and not _building_block(text):
                yield text


def giveaways(hint: str, regions: tuple[str, ...], answer_words: tuple[str, ...]) -> list[str]:
    """What of the solution (or of the answer's words) the hint spells out."""
    found = squashed(hint)
    code = {piece for region in regions for piece in [*_lines(region), *_calls(region)]}
    spelled = sorted(piece for piece in code if squashed(piece) in found)
    return spelled + [word for word in answer_words if word.lower() in hint.lower()]


ADAM = """\
    state["exp_avg"].lerp_(grad, 1 - beta1)
    state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    param.addcdiv_(state["exp_avg"], denom, value=-lr / (1 - beta1**t))
    bench.backward()
    return x"""


def test_the_check_finds_code_even_with_the_variables_renamed():
    hint = "exp_avg.lerp_(grad, 1 - beta1); param.addcdiv_(exp_avg, denom, value=-lr/(1-beta1**t))"
    assert giveaways(hint, (ADAM,), ()) == [
        "lerp_(grad, 1 - beta1)",
        "value=-lr / (1 - beta1 ** t)",
    ]


def test_the_check_finds_a_whole_line_and_the_answer_words():
    hint = 'Write  state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad,value=1 - beta2) here'
    spelled = giveaways(hint, (ADAM,), ("Beta2",))
    assert 'state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)' in spelled
    assert spelled[-1] == "Beta2"


def test_naming_the_building_blocks_is_not_spelling_the_answer():
    hint = "bench.backward() sets the gradients; lerp_ and addcdiv_ do the rest; return x."
    assert giveaways(hint, (ADAM,), ()) == []
    hint = "compare out.cpu() with the expected values"
    assert giveaways(hint, ("    return torch.equal(out.cpu(), expected)",), ()) == []


@pytest.mark.parametrize("name", sorted(all_exercises()))
def test_no_hint_spells_its_answer(name):
    exercise = all_exercises()[name]
    regions = solutions.find(name).regions
    assert regions, f"{name}: no solution region to compare its hint with"
    spelled = giveaways(exercise.hint, regions, exercise.answer_words)
    assert not spelled, f"{name}'s hint spells its answer: {spelled}\nhint: {exercise.hint}"
