"""Every solution scores full marks and every unmodified exercise zero (on this machine's
engine: the emulator in CI, the GPU on the device machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudakit.grading import grade

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_solution_scores_full_marks(path):
    result = grade(path, solutions=ROOT / "solutions")
    failed = [f"{t.name}: {t.feedback}" for t in result.tests if t.score != t.max_score]
    assert result.max_score > 0 and not failed, failed


@pytest.mark.slow
@pytest.mark.parametrize("path", SOLUTIONS, ids=[p.stem for p in SOLUTIONS])
def test_unmodified_exercise_scores_zero_and_compiles(path):
    result = grade(ROOT / "exercises" / path.name, solutions=ROOT / "solutions")
    assert result.tests and result.score == 0.0, [(t.name, t.feedback) for t in result.tests]
    for test in result.tests:
        assert "does not compile" not in test.feedback, test.feedback


def test_every_solution_scored_full_marks_on_the_h100():
    """The record of tests/grading/gpu_run.sh covers every solution, each with full marks."""
    import json

    record = json.loads((ROOT / "tests/grading/fixtures/h100_grades.json").read_text())
    graded = {r["notebook"]: r for r in record}
    for path in SOLUTIONS:
        result = graded[f"solutions/{path.name}"]
        assert result["score"] == result["max_score"] > 0, result
        assert graded[f"exercises/{path.name}"]["score"] == 0, graded[f"exercises/{path.name}"]
