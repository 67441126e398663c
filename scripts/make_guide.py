"""The instructor's guide, one per notebook, generated from the exercise units and the notebooks.

    python scripts/make_guide.py                      # build/guide/NN_name.md + the site's
                                                      # instructor section (build/site/instructor/)
    python scripts/make_guide.py --lessons 04_strides --journals DIR   # rooms' picks from journals

Nothing in a guide is written by hand, so it cannot drift from the course: the goals, stated
minutes and question come from the course map (`course.catalog`); each section's reading time
from the notebook's own words; each exercise's prompt, hint and minutes from its unit, its
solution from the reference notebook (`course.exercises.solutions`), and the wrong answers
learners give with the message each gets by running the checker on the lesson's corpus in
tests/ now; each prediction's choices and the experiment's real outcome by running it; demo
points from the cells that show a widget; the 3-hour cut from `course.catalog.ROOM`. With
`--journals DIR` (a folder of learners' progress.jsonl files, as `progress --collect` reads), each
prediction also shows what that room picked.

The HTML pages sit in the site's `instructor/` folder, which no learner page links to
(tests/test_guide.py checks it and that no guide text reaches a learner copy).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import mistune

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course import catalog, journal  # noqa: E402
from course.exercises import Exercise, Prediction, check, registry, solutions  # noqa: E402
from course.exercises.grading import points  # noqa: E402
from tests.corpus import all_corpora  # noqa: E402 (the corpora live with the tests)

WORDS_PER_MINUTE = 150  # reading a technical notebook, code and output included
WRONG_SHOWN = 6  # the first wrong answers of each corpus: the mistakes testers saw most
WIDGET = re.compile(r"Interactive widget|_widget\(|explorer\(|switchboard\(|panel\(")
OUT_DIR = ROOT / "build" / "guide"
SITE_DIR = ROOT / "build" / "site" / "instructor"


def sections(lesson: catalog.Lesson) -> list[dict]:
    """The notebook's `## ` sections: title, reading minutes, and the exercises and predictions
    they hold, in order."""
    cells = json.loads((catalog.NOTEBOOK_DIR / lesson.filename).read_text())["cells"]
    found: list[dict] = [{"title": "Introduction", "words": 0, "names": [], "demo": False}]
    for cell in cells:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            title = next((line[3:] for line in text.split("\n") if line.startswith("## ")), None)
            if title:
                found.append({"title": title.strip(), "words": 0, "names": [], "demo": False})
            found[-1]["words"] += len(text.split())
        else:
            found[-1]["words"] += len(text.split()) // 2  # code is read faster than prose
            names = re.findall(r"""(?:check|predict)\(\s*["'](\d\d\.\w+)["']""", text)
            found[-1]["names"] += [n for n in names if n not in found[-1]["names"]]
            outputs = json.dumps(cell.get("outputs", []))
            found[-1]["demo"] |= bool(WIDGET.search(text) or "Interactive widget" in outputs)
    return [s for s in found if s["words"] or s["names"]]


def wrong_answers(name: str) -> list[tuple[str, str]]:
    """(flaw, the first line of the checker's message) for the corpus's first wrong answers."""
    corpus = all_corpora().get(name)
    if corpus is None:
        return []
    shown = []
    for flaw, (make, _cause) in list(corpus.wrong.items())[:WRONG_SHOWN]:
        message = str(check(name, make()).message).split("\n  stuck?")[0]
        shown.append((flaw, " ".join(message.split())))
    return shown


def picks(name: str, journals: Path | None) -> Counter:
    """What a room committed to for a prediction, from its learners' journals."""
    if journals is None:
        return Counter()
    files = journal.learner_files(journals)
    return Counter(
        e.choice
        for path in files.values()
        for e in journal.load(path)
        if e.exercise == name and e.event == "predict"
    )


def exercise_md(exercise: Exercise) -> list[str]:
    lines = [
        f"### {exercise.name} ({exercise.minutes} min, {points(exercise.minutes)} points)",
        "",
        f"**Prompt.** {exercise.prompt}",
        "",
        f"**Hint** (what `hint(...)` shows). {exercise.hint}",
        "",
        "**Solution** (the reference notebook's):",
        "",
        "```python",
        solutions.find(exercise.name).text.strip(),
        "```",
        "",
        "**Wrong answers learners give, and what the checker tells each:**",
        "",
    ]
    lines += [f"- *{flaw}*: {message}" for flaw, message in wrong_answers(exercise.name)]
    return [*lines, ""]


def prediction_md(prediction: Prediction, journals: Path | None) -> list[str]:
    outcome = prediction.outcome()
    room = picks(prediction.name, journals)
    lines = [
        f"### {prediction.name} (prediction, ungraded)",
        "",
        f"**Question.** {prediction.question}",
        "",
        "**Choices:** " + ", ".join(f"`{c}`" for c in prediction.choices),
        "",
        f"**What the experiment says:** `{outcome}`. {prediction.explanation}",
        "",
    ]
    if journals is not None:
        tally = ", ".join(f"`{c}` {room[c]}" for c in prediction.choices) if room else "no picks"
        lines += [f"**This room picked:** {tally}.", ""]
    return lines


def room_md(lesson: catalog.Lesson) -> list[str]:
    slot = catalog.room_slot(lesson)
    lines = ["## In a 3-hour room", ""]
    if slot is None:
        return [*lines, "Not part of the 3-hour room: homework.", ""]
    return [
        *lines,
        f"{slot.minutes} minutes in the room: {', '.join(slot.room)}.",
        "",
        f"Homework: {', '.join(slot.homework) or 'nothing'}. Sections marked *(optional)* are "
        "always cut.",
        "",
    ]


def is_exercise(name: str) -> bool:
    """A checked exercise (else a prediction): both kinds are named in check/predict cells."""
    return name in registry.all_exercises()


def guide_md(lesson: catalog.Lesson, journals: Path | None = None) -> str:
    """The whole guide of one lesson, as Markdown."""
    registry.load_lesson(lesson)
    found = sections(lesson)
    lines = [
        f"# Instructor guide · {lesson.filename[:2]} {lesson.title}",
        "",
        f"**Question.** {lesson.question}",
        "",
        f"**Stated time:** {lesson.minutes} minutes. **Goals:** {'; '.join(lesson.goals)}.",
        "",
        "## Sections and minutes",
        "",
        "| section | reading (min) | exercises (min) | demo | holds |",
        "|---|---|---|---|---|",
    ]
    for s in found:
        work = sum(registry.get(n).minutes for n in s["names"] if is_exercise(n))
        reading = max(1, round(s["words"] / WORDS_PER_MINUTE))
        demo = "yes: show the widget" if s["demo"] else ""
        lines.append(f"| {s['title']} | {reading} | {work} | {demo} | {', '.join(s['names'])} |")
    lines += ["", *room_md(lesson), "## Exercises", ""]
    names = [n for s in found for n in s["names"]]
    for name in names:
        if is_exercise(name):
            lines += exercise_md(registry.get(name))
    lines += ["## Predictions", ""]
    for name in names:
        if not is_exercise(name):
            lines += prediction_md(registry.prediction(name), journals)
    return "\n".join(lines).rstrip() + "\n"


def write_guides(
    lessons: list[catalog.Lesson], out_dir: Path, site_dir: Path, journals: Path | None = None
) -> list[Path]:
    """One Markdown guide per lesson in `out_dir`, and its HTML page in `site_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    site_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for lesson in lessons:
        stem = lesson.filename.removesuffix(".ipynb")
        text = guide_md(lesson, journals)
        (out_dir / f"{stem}.md").write_text(text, encoding="utf-8")
        body = mistune.html(text)
        page = (
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>Instructor guide: {lesson.title}</title></head><body>{body}</body></html>"
        )
        (site_dir / f"{stem}.html").write_text(page, encoding="utf-8")
        written.append(out_dir / f"{stem}.md")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", nargs="*", help="e.g. 04_strides (default: every lesson)")
    parser.add_argument("--journals", type=Path, help="learners' journals: rooms' picks")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--site", type=Path, default=SITE_DIR)
    args = parser.parse_args(argv)
    chosen = [
        lesson
        for lesson in catalog.LESSONS
        if not args.lessons or lesson.filename.removesuffix(".ipynb") in args.lessons
    ]
    if args.lessons and len(chosen) != len(args.lessons):
        parser.error(f"unknown lesson in {args.lessons}; lessons: {catalog.LESSONS}")
    for path in write_guides(chosen, args.out, args.site, args.journals):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
