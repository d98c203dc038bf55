"""The Japanese exercises grade exactly like the English ones.

Every Japanese solution is graded for real (with Japanese messages) against solutions/ja and
must score full marks, as every English solution does. A Japanese exercise is graded from the
notebook ``merge`` builds (the solution's cells with the submission's answers); that notebook's
code is the English one's, cell for cell, whichever solutions folder it is graded against, so
the scores are the same. One exercise is also graded for real both ways.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from cudakit.grading import grade
from cudakit.grading.merge import merge

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def _code(nb) -> list[tuple[str, str, dict]]:
    return [(c.id, c.source, c.metadata) for c in nb.cells if c.cell_type == "code"]


def _read(*parts: str):
    return nbformat.read(ROOT.joinpath(*parts), as_version=4)


@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_graded_notebook_of_a_japanese_exercise_runs_the_english_code(path):
    english = merge(_read("solutions", path.name), _read("exercises", path.name))
    for source in ("solutions", "solutions/ja"):
        japanese = merge(_read(source, path.name), _read("exercises/ja", path.name))
        assert _code(japanese) == _code(english), (source, path.name)


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_japanese_solution_scores_full_marks(path, monkeypatch):
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    result = grade(ROOT / "solutions/ja" / path.name, solutions=ROOT / "solutions/ja")
    failed = [f"{t.name}: {t.feedback}" for t in result.tests if t.score != t.max_score]
    assert result.max_score > 0 and not failed, failed


@pytest.mark.slow
def test_a_japanese_exercise_grades_as_the_english_one(monkeypatch):
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    name = "03_shared_memory.ipynb"
    english = grade(ROOT / "exercises" / name, solutions=ROOT / "solutions")
    for solutions in ("solutions", "solutions/ja"):
        japanese = grade(ROOT / "exercises/ja" / name, solutions=ROOT / solutions)
        assert [(t.name, t.score, t.max_score) for t in japanese.tests] == \
            [(t.name, t.score, t.max_score) for t in english.tests]
    assert english.score == 0 and english.tests
    assert japanese.tests[0].feedback.startswith("結果が正しくありません: ")
