"""The README's figures come from the commands beside them: each cheap block, recomputed on the bundled data with the
offline model, is what the README shows (``scripts/readme_figures.py`` regenerates them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" / "readme_figures.py")
figures = importlib.util.module_from_spec(_spec)
sys.modules["readme_figures"] = figures  # dataclasses look their module up while the class is made
_spec.loader.exec_module(figures)

README_BLOCKS = figures.blocks(figures.README.read_text(encoding="utf-8"))


def test_every_block_in_the_readme_is_known_and_filled():
    assert set(README_BLOCKS) <= set(figures.FIGURES), "the README names a figure block the script cannot make"
    assert {"evaluate-ramdocs-dev-10", "evaluate-ramdocs-dev", "evaluate-multisource", "risk-ramdocs-dev"} <= set(
        README_BLOCKS)
    empty = [name for name, body in README_BLOCKS.items() if "|" not in body]
    assert not empty, f"run `python scripts/readme_figures.py`: blocks {empty} are empty"


@pytest.mark.parametrize("name", [n for n, f in figures.FIGURES.items() if f.cheap])
def test_cheap_readme_figures_match_their_command(name):
    assert name in README_BLOCKS
    fresh = figures.generate(name)
    assert README_BLOCKS[name] == fresh, (
        f"README block {name!r} no longer matches its command's output: run `python scripts/readme_figures.py "
        f"--only {name}` and commit README.md")


def test_a_changed_figure_is_caught(monkeypatch, tmp_path):
    """--check fails on a README whose figure differs from the command's output (so the test above can fail)."""
    readme = tmp_path / "README.md"
    readme.write_text("<!-- figures: evaluate-ramdocs-dev-10 -->\n| stale |\n<!-- /figures -->\n", encoding="utf-8")
    monkeypatch.setattr(figures, "README", readme)
    monkeypatch.setattr(figures, "generate", lambda name: "| fresh |\n")
    assert figures.main(["--check"]) == 1
    assert "stale" in readme.read_text()
    assert figures.main([]) == 0
    assert "| fresh |" in readme.read_text() and figures.main(["--check"]) == 0
