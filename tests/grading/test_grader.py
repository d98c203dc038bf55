"""The grader on small Python-only exercises: points, hidden tests, limits, crashes, JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from cudakit.grading import answer_cell, grade, graded_cell, locked_cell, make_student

ANSWER = "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION"
HIDDEN = ("assert square(-2) == 4\n### BEGIN HIDDEN TESTS\n"
          "assert square(0.5) == 0.25, 'square(0.5) should be 0.25'\n### END HIDDEN TESTS")


def _solution(*extra):
    nb = nbformat.v4.new_notebook(cells=[
        locked_cell("Write `square`.", "intro", markdown=True),
        answer_cell(ANSWER, "square"),
        graded_cell("assert square(3) == 9, 'square(3) should be 9'", "test_visible", points=1),
        graded_cell(HIDDEN, "test_hidden", points=2),
        *extra,
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def _write(tmp_path, solution, answer=None, name="sq.ipynb"):
    (tmp_path / "solutions").mkdir(exist_ok=True)
    (tmp_path / "mine").mkdir(exist_ok=True)
    nbformat.write(solution, tmp_path / "solutions" / name)
    student = make_student(solution)
    if answer is not None:
        student.cells[1].source = answer
    nbformat.write(student, tmp_path / "mine" / name)
    return tmp_path / "mine" / name


def _scores(result):
    return {t.name: t.score for t in result.tests}


def test_solution_full_marks_exercise_zero_and_hidden_tests_injected(tmp_path):
    solution = _solution()
    full = grade(_write(tmp_path, solution, answer=ANSWER), solutions=tmp_path / "solutions")
    assert (full.score, full.max_score) == (3.0, 3.0)
    empty = grade(_write(tmp_path, solution), solutions=tmp_path / "solutions")
    assert empty.score == 0.0 and "not done yet" in empty.tests[0].feedback
    # passes the visible test only: the hidden one (absent from the student's file) catches it
    partial = _write(tmp_path, solution, answer="def square(x):\n    return int(x) * int(x)")
    result = grade(partial, solutions=tmp_path / "solutions")
    assert _scores(result) == {"test_visible": 1.0, "test_hidden": 0.0}
    assert "square(0.5) should be 0.25" in result.tests[1].feedback


def test_edited_tests_count_for_nothing(tmp_path):
    path = _write(tmp_path, _solution(), answer="def square(x):\n    return 0")
    nb = nbformat.read(path, as_version=4)
    nb.cells[2].source = nb.cells[3].source = "pass"
    nbformat.write(nb, path)
    assert grade(path, solutions=tmp_path / "solutions").score == 0.0


def test_hang_and_crash_lose_their_test_and_grading_goes_on(tmp_path):
    solution = _solution(
        graded_cell("while True:\n    pass", "test_hang", points=1),
        graded_cell("import os\nos._exit(1)", "test_crash", points=1),
        graded_cell("assert square(4) == 16", "test_after", points=1),
    )
    result = grade(_write(tmp_path, solution, answer=ANSWER), solutions=tmp_path / "solutions",
                   cell_timeout=3)
    assert _scores(result) == {"test_visible": 1, "test_hidden": 2, "test_hang": 0,
                               "test_crash": 0, "test_after": 1}
    assert "time limit" in result.tests[2].feedback
    assert "crashed" in result.tests[3].feedback


def test_notebook_time_limit_zeroes_the_rest(tmp_path):
    solution = _solution(graded_cell("import time\ntime.sleep(30)", "test_slow", points=1),
                         graded_cell("assert square(4) == 16", "test_after", points=1))
    result = grade(_write(tmp_path, solution, answer=ANSWER), solutions=tmp_path / "solutions",
                   timeout=6)
    assert _scores(result)["test_after"] == 0.0
    assert "whole notebook" in result.tests[-1].feedback


def test_submission_runs_in_an_empty_temporary_folder(tmp_path):
    spy = "import os\nassert os.listdir('.') == [], os.listdir('.')\nopen('x', 'w').close()"
    solution = _solution(graded_cell(spy, "test_cwd", points=1))
    result = grade(_write(tmp_path, solution, answer=ANSWER), solutions=tmp_path / "solutions")
    assert _scores(result)["test_cwd"] == 1.0
    assert not (tmp_path / "mine" / "x").exists()


def test_missing_answer_cell_and_unreadable_notebook(tmp_path):
    path = _write(tmp_path, _solution(), answer=ANSWER)
    nb = nbformat.read(path, as_version=4)
    del nb.cells[1]
    nbformat.write(nb, path)
    result = grade(path, solutions=tmp_path / "solutions")
    assert result.score == 0.0 and "missing" in result.tests[0].feedback
    path.write_text("{not json")
    result = grade(path, solutions=tmp_path / "solutions")
    assert result.score == 0.0 and "could not be read" in result.tests[0].feedback


@pytest.mark.slow
def test_command_line_json(tmp_path):
    good = _write(tmp_path, _solution(), answer=ANSWER)
    missing = tmp_path / "mine" / "other.ipynb"
    missing.write_text(good.read_text())
    run = subprocess.run([sys.executable, "-m", "cudakit", "grade", str(good), str(missing),
                          "--json", "--solutions", str(tmp_path / "solutions")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "no solution notebook named 'other.ipynb'" in run.stderr
    report = json.loads(run.stdout)
    assert report[0] == {"notebook": str(good), "score": 3.0, "max_score": 3.0, "tests": [
        {"name": "test_visible", "score": 1.0, "max_score": 1.0, "feedback": "passed"},
        {"name": "test_hidden", "score": 2.0, "max_score": 2.0, "feedback": "passed"}]}
    assert report[1]["notebook"] == str(missing) and report[1]["tests"] == []


def test_unknown_backend_is_refused(tmp_path):
    with pytest.raises(ValueError, match="expected one of gpu, emu"):
        grade(_write(tmp_path, _solution()), solutions=tmp_path / "solutions", backend="cuda")


def test_backend_reaches_the_kernel_process(tmp_path):
    probe = "import os\nassert os.environ['CUDAKIT_BACKEND'] == 'emu'"
    path = _write(tmp_path, _solution(graded_cell(probe, "test_env", points=1)), answer=ANSWER)
    result = grade(path, solutions=tmp_path / "solutions", backend="emu")
    assert _scores(result)["test_env"] == 1.0
