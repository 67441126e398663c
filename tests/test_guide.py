"""The instructor's guide (`make guide`) and the 3-hour cut it and README share."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from course import catalog
from course.exercises import all_exercises, all_predictions, solutions

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_guide  # noqa: E402 (scripts/make_guide.py)

LESSON = catalog.lesson("04_strides.ipynb")  # every checker of 04 runs in plain Python: quick


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    top = tmp_path_factory.mktemp("guide")
    make_guide.write_guides([LESSON], top / "md", top / "site" / "instructor")
    return top / "md", top / "site" / "instructor"


def test_every_exercise_and_prediction_of_the_lesson_appears_with_its_solution(built):
    text = (built[0] / "04_strides.md").read_text()
    names = [n for n in [*all_exercises(), *all_predictions()] if n.startswith("04.")]
    assert names and all(f"### {n} (" in text for n in names)
    for name in (n for n in names if n in all_exercises()):
        assert solutions.find(name).regions[0].strip().split("\n")[0].strip() in text
    assert text.count("*: ") >= 6 * len([n for n in names if n in all_exercises()])
    assert "## In a 3-hour room" in text and "25 minutes in the room" in text


def test_the_html_page_is_written_and_no_learner_page_links_to_it(built):
    page = (built[1] / "04_strides.html").read_text()
    assert "<h1>Instructor guide" in page
    site = ROOT / "scripts" / "build_site.py"
    assert "instructor" not in site.read_text()  # the site's pages never link the guides


def test_a_rooms_picks_are_tallied_from_its_journals(tmp_path):
    (tmp_path / "ada.jsonl").write_text(
        '{"t": 1.0, "exercise": "04.clone_layout", "event": "predict", "choice": "transposed, '
        'like .T"}\n'
    )
    text = make_guide.guide_md(LESSON, tmp_path)
    assert re.search(r"This room picked:.*`transposed, like \.T` 1", text)


def test_every_exercise_and_prediction_of_a_room_lesson_is_in_the_room_or_homework_once():
    named = [i for s in catalog.ROOM for i in (*s.room, *s.homework)]
    for slot in (s for s in catalog.ROOM if s.lesson not in ("", "00")):
        lesson = [n for n in (*all_exercises(), *all_predictions()) if n[:2] == slot.lesson]
        missing = sorted(n for n in lesson if named.count(n) != 1)
        assert not missing, f"lesson {slot.lesson}: {missing} not in the cut exactly once"
    assert sum(s.minutes for s in catalog.ROOM) == 180


@pytest.mark.parametrize("slot", [s for s in catalog.ROOM if s.lesson], ids=lambda s: s.lesson)
def test_a_slot_has_time_for_the_exercises_done_in_the_room(slot):
    exercises = all_exercises()
    work = sum(exercises[n].minutes for n in slot.room if n in exercises)
    assert slot.minutes >= work or slot.lesson == "00", (slot.lesson, work)


def test_readme_shows_the_cut_from_the_catalog():
    assert catalog.room_table() in (ROOT / "README.md").read_text()


def test_readme_states_each_notebooks_minutes_from_the_catalog():
    times = ", ".join(
        f"{e.filename[:2]} {e.minutes}{' min' if i == 0 else ''}"
        for i, e in enumerate(catalog.LESSONS)
    )
    total = round(sum(e.minutes for e in catalog.LESSONS) / 60)
    text = " ".join((ROOT / "README.md").read_text().split())
    assert f"is about {total} hours (each notebook states its own time: {times})" in text
