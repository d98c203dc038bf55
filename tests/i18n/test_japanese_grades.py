"""The Japanese exercises grade exactly like the English ones: every Japanese solution scores
the English solution's full marks (against solutions/ja), and every unmodified Japanese exercise
scores zero on the same tests whether graded against solutions/ja or solutions/."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudakit.grading import grade

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_japanese_solution_and_exercise_grade_as_the_english(path, monkeypatch):
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    solution = grade(ROOT / "solutions/ja" / path.name, solutions=ROOT / "solutions/ja")
    names = [(t.name, t.max_score) for t in solution.tests]
    assert names and all(t.score == t.max_score for t in solution.tests), \
        [(t.name, t.feedback) for t in solution.tests]
    exercise = grade(ROOT / "exercises/ja" / path.name, solutions=ROOT / "solutions")
    assert [(t.name, t.max_score) for t in exercise.tests] == names
    assert exercise.score == 0.0, [(t.name, t.feedback) for t in exercise.tests]
