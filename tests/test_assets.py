"""assets/ holds every diagram of course.figures, none stale; notebooks point only at real ones."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from matplotlib.text import Text
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from course.figures import CELL_WIDTH_PX, FIGURES, MIN_FONT_PT

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_assets", ROOT / "scripts/make_assets.py")
make_assets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_assets)

MAX_BYTES = 150_000
# ![alt](../assets/x.png) in markdown, <img src="../assets/x.png"> in HTML
ASSET_REF = re.compile(r"""(?:\]\(|src=["'])([^)"'\s]*assets/[^)"'\s]+)""")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "learner").glob("*.ipynb")
)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("assets")
    make_assets.draw_all(out)
    return out


def test_every_figure_is_committed_and_not_stale(fresh):
    assert make_assets.stale(make_assets.ASSETS, fresh) == [], "run `make assets` and commit"


def test_assets_holds_nothing_but_the_figures():
    assert sorted(p.stem for p in make_assets.ASSETS.glob("*")) == sorted(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_assets_are_modest(name):
    assert (make_assets.ASSETS / f"{name}.png").stat().st_size < MAX_BYTES


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_diagrams_fit_a_cell_with_text_of_at_least_10_pt(name, fresh):
    """Drawn at the size a notebook shows them (a wider PNG is scaled down, its text too)."""
    with Image.open(fresh / f"{name}.png") as image:
        assert image.width <= CELL_WIDTH_PX, f"{name}: {image.width} px"
    small = {
        text.get_text(): text.get_fontsize()
        for text in FIGURES[name]().findobj(Text)
        if text.get_text().strip() and text.get_fontsize() < MIN_FONT_PT
    }
    assert not small, f"{name}: text below {MIN_FONT_PT} pt: {small}"


def test_stale_names_a_missing_a_resized_and_a_changed_file(fresh, tmp_path):
    names = sorted(p.name for p in fresh.glob("*.png"))
    old = tmp_path / "old"
    old.mkdir()
    for name in names[1:]:
        (old / name).write_bytes((fresh / name).read_bytes())
    Image.new("RGBA", (5, 5)).save(old / names[1])
    pixels = make_assets.pixels(fresh / names[2]).copy()
    pixels[0, 0] = (1, 2, 3, 255)
    Image.fromarray(pixels).save(old / names[2])
    problems = make_assets.stale(old, fresh)
    assert problems[0] == f"{names[0]}: missing"
    assert problems[1].startswith(f"{names[1]}: size (5, 5)")
    assert problems[2] == f"{names[2]}: 1 pixels differ from a fresh drawing"
    assert len(problems) == 3


def test_metadata_alone_is_not_staleness(fresh, tmp_path):
    name = sorted(FIGURES)[0] + ".png"
    meta = PngInfo()
    meta.add_text("Software", "another writer")
    with Image.open(fresh / name) as image:
        image.save(tmp_path / name, pnginfo=meta)
    assert (tmp_path / name).read_bytes() != (fresh / name).read_bytes()
    only = tmp_path / "only"
    only.mkdir()
    (only / name).write_bytes((fresh / name).read_bytes())
    assert make_assets.stale(tmp_path, only) == []


def asset_refs(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [
        ref for c in nb.cells if c.cell_type == "markdown" for ref in ASSET_REF.findall(c.source)
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebooks_reference_only_existing_assets(path):
    for ref in asset_refs(path):
        assert ref.startswith("../assets/"), f"{path.name}: write {ref!r} as ../assets/NAME.png"
        assert (path.parent / ref).is_file(), f"{path.name} shows {ref}, which does not exist"


def test_the_reference_pattern_finds_markdown_and_html_images():
    text = '![a](../assets/stack_layers.png) and <img src="../assets/x.png" width=3>'
    assert ASSET_REF.findall(text) == ["../assets/stack_layers.png", "../assets/x.png"]


def test_check_mode_reports_stale_files(fresh, tmp_path, capsys):
    for path in fresh.glob("*.png"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    assert make_assets.main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "stack_layers.png").unlink()
    assert make_assets.main(["--out", str(tmp_path), "--check"]) == 1
    assert "stack_layers.png: missing (run `make assets`)" in capsys.readouterr().err
