"""Grading as a Slurm job array on a real single-node Slurm (see conftest.py).

The class of forty (solutions, typical mistakes, untouched exercises) is graded by an array
of 5-notebook tasks, one task is cancelled half-way, and the merged report must equal the
one-by-one reference (``class_of_40.py``, ``fixtures/class_of_40_emu.json``: every test's
score and the kind of its feedback) and say that the task ran again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from class_of_40 import REFERENCE, ROOT, write_class

from cudakit.grading.batch import Options, result_path
from cudakit.grading.slurm import Settings, collect, grade_on_slurm

pytestmark = pytest.mark.slow
OPTIONS = Options(solutions=str(ROOT / "solutions"), backend="emu")


def _comparable(record: dict, folder: Path | None = None) -> tuple:
    """A result without what differs between two gradings of the same notebook: the test
    cells draw random inputs, so feedback quotes random values; its kind (before the first
    colon: "passed", "wrong result", "data race on shared memory...") stays."""
    notebook = os.path.relpath(record["notebook"], folder) if folder else record["notebook"]
    return notebook, record["score"], [
        (t["name"], t["score"], t["max_score"], t["feedback"].split(":")[0])
        for t in record["tests"]]


def _cancel_when(cluster, name: str, ready, stop: threading.Event, log: list) -> None:
    """scancel the array task 0 of job ``name`` once ``ready()`` (once), or every task
    of it as soon as it is seen (with ``ready`` None) until ``stop``."""
    while not stop.is_set():
        rows = cluster.run("squeue", "--noheader", "--array", f"--name={name}",
                           "--format=%i %K %T").split()
        tasks = [rows[i:i + 3] for i in range(0, len(rows), 3)]
        for job, task, state in tasks:
            if ready is None or (task == "0" and state == "RUNNING" and ready()):
                cluster.run("scancel", job)
                log.append(job)
                if ready is not None:
                    return
        time.sleep(0.05)


def test_array_grades_the_class_as_one_by_one_and_reruns_a_killed_task(slurm_cluster,
                                                                      tmp_path):
    folder = tmp_path / "class"
    paths = [folder / p for p in write_class(folder)]
    run = tmp_path / "round1"
    first = [result_path(run / "results", p, OPTIONS) for p in paths[:5]]  # task 0's chunk
    settings = Settings(chunk=5, gres="gpu:1", poll=0.5, name="grade-40", time="10")

    def half_done():  # task 0 has graded something
        return any(p.is_file() for p in first)

    cancelled, stop = [], threading.Event()
    killer = threading.Thread(target=_cancel_when,
                              args=(slurm_cluster, "grade-40", half_done, stop, cancelled))
    killer.start()
    try:
        report = grade_on_slurm(paths, OPTIONS, settings, folder=run, progress=False)
    finally:
        stop.set()
        killer.join()

    assert len(cancelled) == 1 and cancelled[0].endswith("_0"), cancelled
    assert len(report.jobs) == 2 and not report.failed
    (again,) = report.retried
    assert (again.task, again.job, again.state) == (0, cancelled[0], "CANCELLED")
    assert 0 < len(again.notebooks) < 5  # what it had graded was kept
    kept = (run / "logs" / f"{report.jobs[1]}_0.out").read_text()
    assert kept.count("kept from an earlier attempt") == 5 - len(again.notebooks), kept

    reference = [_comparable(r) for r in json.loads(REFERENCE.read_text())]
    merged = [_comparable(r.to_dict(), folder) for r in report.results]
    assert len(merged) == 40 and merged == reference
    assert not [o.error for o in report.outcomes if o.error]
    # each task graded on the GPU Slurm gave it (device files standing in for GPUs)
    assert {o.gpu for o in report.outcomes} <= {"0", "1"}
    assert json.loads((run / "report.json").read_text()) == report.to_dict()
    assert collect(run).to_dict()["outcomes"] == report.to_dict()["outcomes"]


def test_a_task_that_keeps_dying_is_reported_by_name(slurm_cluster, tmp_path):
    folder = tmp_path / "class"
    paths = [folder / p for p in write_class(folder)[:2]]
    cancelled, stop = [], threading.Event()
    killer = threading.Thread(target=_cancel_when,
                              args=(slurm_cluster, "doomed", None, stop, cancelled))
    killer.start()
    try:
        report = grade_on_slurm(paths, OPTIONS, Settings(chunk=1, poll=0.5, name="doomed"),
                                folder=tmp_path / "run", progress=False)
    finally:
        stop.set()
        killer.join()
    assert [t.task for t in report.retried] == [0, 1] == [t.task for t in report.failed]
    assert {t.state for t in report.failed} == {"CANCELLED"}
    named = sorted(n for t in report.failed for n in t.notebooks)
    assert named == sorted(str(p.resolve()) for p in paths)
    assert all("not graded" in o.error for o in report.outcomes)


def test_command_line_slurm_prints_the_usual_json(slurm_cluster, tmp_path, monkeypatch):
    from test_batch import PARTIAL, _class
    from test_grader import ANSWER

    paths, options = _class(tmp_path, [ANSWER, PARTIAL])
    monkeypatch.chdir(tmp_path)  # notebooks named relative to here, as an instructor types them
    given = [os.path.relpath(p, tmp_path) for p in paths]
    run = subprocess.run(
        [sys.executable, "-m", "cudakit", "grade", *given, "--json", "--slurm", "--chunk", "1",
         "--solutions", options.solutions, "--results", "round", "--time", "5",
         "--sbatch-arg=--job-name=cli-test"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [(r["notebook"], r["score"], r["max_score"]) for r in report] == [
        (given[0], 3.0, 3.0), (given[1], 1.0, 3.0)]
    script = (tmp_path / "round" / "grade.sbatch").read_text()
    assert "#SBATCH --time=5" in script and "#SBATCH --job-name=cli-test" in script
    assert len(json.loads((tmp_path / "round" / "report.json").read_text())["jobs"]) == 1
