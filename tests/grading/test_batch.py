"""Grading many notebooks with a pool: same results as one by one, a file per notebook,
resume, GPU pinning, a dead worker, the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import nbformat
import pytest
from test_grader import ANSWER, _solution

from cudakit.grading import grade, make_student
from cudakit.grading.batch import Options, grade_many, read_outcome, result_path

pytestmark = pytest.mark.slow
PARTIAL = "def square(x):\n    return int(x) * int(x)"  # passes the visible test only


def _class(tmp_path, answers):
    """One student folder per answer, each with its own ``sq.ipynb``."""
    solution = _solution()
    (tmp_path / "solutions").mkdir()
    nbformat.write(solution, tmp_path / "solutions" / "sq.ipynb")
    paths = []
    for index, answer in enumerate(answers):
        student = make_student(solution)
        if answer is not None:
            student.cells[1].source = answer
        (tmp_path / f"s{index}").mkdir()
        nbformat.write(student, tmp_path / f"s{index}" / "sq.ipynb")
        paths.append(str(tmp_path / f"s{index}" / "sq.ipynb"))
    return paths, Options(solutions=str(tmp_path / "solutions"))


def test_pool_equals_one_by_one_and_resumes(tmp_path, capsys):
    paths, options = _class(tmp_path, [ANSWER, None, PARTIAL, ANSWER])
    results = tmp_path / "results"
    seen = []
    outcomes = grade_many(paths, options, jobs=2, results=results, on_done=seen.append)
    assert [o.result.score for o in outcomes] == [3.0, 0.0, 1.0, 3.0]
    assert sorted(o.notebook for o in seen) == sorted(paths)
    assert outcomes[2].result.to_dict() == grade(paths[2], solutions=options.solutions).to_dict()
    assert "square(0.5) should be 0.25" in outcomes[2].result.tests[1].feedback
    for path, outcome in zip(paths, outcomes, strict=True):
        stored = read_outcome(result_path(results, path, options))
        assert stored.result.to_dict() == outcome.result.to_dict() and stored.error is None
    assert len(list(results.glob("*.json"))) == 4  # same file name, four students

    # resume: only the changed submission is graded again
    student = nbformat.read(paths[1], as_version=4)
    student.cells[1].source = PARTIAL
    nbformat.write(student, paths[1])
    capsys.readouterr()
    again = grade_many(paths, options, jobs=2, results=results, resume=True, progress=True)
    assert [o.reused for o in again] == [True, False, True, True]
    bar = capsys.readouterr().err  # tqdm's bar: starts at the 3 kept, ends at 4 of 4
    assert "grading:" in bar and "3/4" in bar and "4/4" in bar, bar
    assert [o.result.score for o in again] == [3.0, 1.0, 1.0, 3.0]
    # other options are another result, never a reused one
    other = grade_many(paths[:1], Options(options.solutions, cell_timeout=30), jobs=1,
                       results=results, resume=True)
    assert not other[0].reused and other[0].result.score == 3.0


def test_workers_are_pinned_to_gpus_in_turn(tmp_path, monkeypatch):
    from cudakit.grading import batch

    monkeypatch.setattr(batch, "gpu_ids", lambda backend=None: ["3", "5"])
    assert batch.default_jobs() == 2
    paths, options = _class(tmp_path, [ANSWER, ANSWER])
    outcomes = grade_many(paths, options)
    assert {o.gpu for o in outcomes} <= {"3", "5"}
    assert all(o.result.score == 3.0 for o in outcomes)


def test_a_killed_worker_loses_nothing(tmp_path):
    import multiprocessing

    paths, options = _class(tmp_path, [ANSWER, PARTIAL, None, ANSWER])
    killed = []

    def kill_a_worker(outcome):
        if not killed:
            worker = multiprocessing.active_children()[0]
            os.kill(worker.pid, signal.SIGKILL)
            killed.append(worker.pid)

    outcomes = grade_many(paths, options, jobs=2, on_done=kill_a_worker)
    assert killed
    assert [o.result.score for o in outcomes] == [3.0, 1.0, 0.0, 3.0]
    assert not [o.error for o in outcomes if o.error]


def test_command_line_jobs_and_resume(tmp_path):
    paths, options = _class(tmp_path, [ANSWER, PARTIAL])
    command = [sys.executable, "-m", "cudakit", "grade", *paths, "--json", "--jobs", "2",
               "--solutions", options.solutions, "--results", str(tmp_path / "r")]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert [(r["notebook"], r["score"]) for r in report] == [(paths[0], 3.0), (paths[1], 1.0)]
    assert report[1]["tests"][1]["feedback"] != "passed"
    again = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout) == report
    bad = subprocess.run([*command[:-2], "--jobs", "0"], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1 and "jobs=0" in bad.stderr
