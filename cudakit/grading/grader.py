"""Grade submissions: the answers run in the participant's sandbox, the tests in the judge's.

``grade(submission)`` finds the solution notebook of the same name, merges the
student's answers into it (so hidden tests arrive only now, see ``merge``), and
runs it in a ``session``: the judge (instructor cells, the submitted ``%%cuda`` code
compiled there, the tests) and the participant's process (its Python answers, called
by the judge with data), each in a bubblewrap sandbox (``sandbox``). A test cell that
finishes without an exception in the judge earns its points; one that raises earns
zero with the reason in words (``feedback``).

A cell that hangs, kills the judge or loses the GPU context ends that judge: the
grader starts a fresh one, replays the answer and setup cells, and carries on with
the next test. Each cell has a time limit, and so has the whole notebook.

>>> r = NotebookResult("ex.ipynb", [TestResult("t1", 0.0, 2.0, "wrong result")])
>>> r.to_dict()["max_score"]
2.0
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from ..backend import BACKENDS
from ..errors import ExerciseFormatError
from ..i18n.messages import _
from . import records
from .exercise import check_notebook, grade_id, graded_tests, is_answer, is_test
from .merge import merge
from .regions import HIDDEN_TESTS, drop_regions, has_markers
from .sandbox import Limits, gpu_present
from .session import CONTEXT_LOST, FATAL, Failure, Session, Settings  # noqa: F401

CELL_TIMEOUT = 120.0  # seconds per cell
NOTEBOOK_TIMEOUT = 900.0  # seconds per notebook


@dataclass
class TestResult:
    """The outcome of one test cell."""

    __test__ = False  # not a pytest class

    name: str
    score: float
    max_score: float
    feedback: str


@dataclass
class NotebookResult:
    """The outcome of one notebook: its tests, in order."""

    notebook: str
    tests: list[TestResult] = field(default_factory=list)
    note: str = ""  # e.g. that only the visible tests ran (not part of the JSON shape)

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_score for t in self.tests)

    def to_dict(self) -> dict:
        """The JSON shape of ``cudakit grade --json`` for this notebook."""
        return {"notebook": self.notebook, "score": self.score, "max_score": self.max_score,
                "tests": [asdict(t) for t in self.tests]}


def default_solutions() -> Path:
    """``$CUDAKIT_SOLUTIONS``, else the ``solutions/`` folder beside the cudakit package."""
    env = os.environ.get("CUDAKIT_SOLUTIONS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "solutions"


def find_source(submission: Path, solutions: Path | None = None) -> Path:
    """The solution notebook that ``submission`` answers: same file name in ``solutions``."""
    folder = solutions or default_solutions()
    source = folder / Path(submission).name
    if not source.is_file():
        raise ExerciseFormatError(
            f"{submission}: no solution notebook named {source.name!r} in {folder} "
            "(pass --solutions DIR, or keep the exercise's file name)"
        )
    return source


def _feedback(failure: Failure | None, earlier: list[Failure]) -> str:
    if failure is None:
        return "passed"
    text = failure.explain()
    if earlier:
        first = earlier[0]
        text += f" (An earlier cell failed first, {first.where}: {first.explain()})"
    return text


def score(nb, outcomes: dict[int, Failure | None]) -> list[TestResult]:
    """Turn cell outcomes into test results. A failed test also names the cells that failed
    since the test before it, or else the last answer cell that failed (the likely cause)."""
    results, since_last_test, last_answer = [], [], None
    for index, cell in enumerate(nb.cells):
        failure = outcomes.get(index)
        if not is_test(cell):
            if failure is not None:
                since_last_test.append(failure)
                last_answer = failure if is_answer(cell) else last_answer
            continue
        points = float(cell.metadata["nbgrader"]["points"])
        earlier = since_last_test or ([last_answer] if last_answer else [])
        results.append(TestResult(grade_id(cell), points if failure is None else 0.0, points,
                                  _feedback(failure, earlier)))
        since_last_test = []
    return results


def _visible_only(merged) -> set[int]:
    """Drop the hidden parts of the test cells; returns the indices of tests that had one."""
    hidden = set()
    for index, cell in enumerate(merged.cells):
        if is_test(cell) and has_markers(cell.source, HIDDEN_TESTS):
            cell.source = drop_regions(cell.source, HIDDEN_TESTS)
            hidden.add(index)
    return hidden


def use_sandbox(sandbox: bool | None) -> bool:
    """Whether to grade in the sandbox: ``None`` means where bubblewrap is installed.

    Raises SandboxError when it is asked for (or installed) but cannot run here.
    """
    from .sandbox import bwrap, check

    if sandbox is False or (sandbox is None and bwrap() is None):
        return False
    check()
    return True


def grade(submission: str | os.PathLike, source: str | os.PathLike | None = None, *,
          solutions: str | os.PathLike | None = None, cell_timeout: float = CELL_TIMEOUT,
          timeout: float = NOTEBOOK_TIMEOUT, backend: str | None = None,
          sandbox: bool | None = None, limits: Limits | None = None,
          output_dir: str | os.PathLike | None = None) -> NotebookResult:
    """Grade one submission against its solution notebook.

    Example: ``grade("exercises/01_first_kernel.ipynb").score``. ``backend`` ("gpu" or
    "emu") pins the engine; by default the GPU is used when present, else the emulator
    (``backend="emu"`` adds memcheck and racecheck even on a GPU machine). A submission
    that cannot be read scores zero on every test with the reason.

    ``sandbox``: None (default) grades in the bubblewrap sandbox where bubblewrap is installed,
    else runs the visible tests only (a self-check, said in ``result.note``); True requires the
    sandbox; False runs the visible tests only. ``limits`` bounds each sandboxed process.
    ``output_dir`` keeps a record of the result and the executed notebook (see ``records``).
    Resuming an interrupted run of many notebooks is :mod:`cudakit.grading.batch`'s job.
    """
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {', '.join(BACKENDS)}")
    submission = Path(submission)
    source_path = Path(source) if source else find_source(
        submission, Path(solutions) if solutions else None)
    reference = nbformat.read(source_path, as_version=4)
    check_notebook(reference, str(source_path))
    try:
        mine = nbformat.read(submission, as_version=4)
    except Exception as error:  # unreadable JSON, not a notebook, missing file
        reason = _("the notebook could not be read: {error}").format(error=error)
        return NotebookResult(str(submission), [TestResult(t.name, 0.0, t.points, reason)
                                                for t in graded_tests(reference)])
    sandboxed = use_sandbox(sandbox)
    merged = merge(reference, mine)
    hidden = set() if sandboxed else _visible_only(merged)
    missing = {grade_id(c) for c in reference.cells if is_answer(c)} - {
        grade_id(c) for c in mine.cells if is_answer(c)}
    settings = Settings(cell_timeout=cell_timeout, deadline=time.monotonic() + timeout,
                        limits=limits or Limits(), sandboxed=sandboxed, backend=backend,
                        hidden=[submission.resolve().parent, source_path.resolve().parent],
                        gpu=gpu_present())
    by_id = {grade_id(c): c for c in reference.cells if grade_id(c)}
    session = Session(merged, by_id, settings)
    outcomes = session.run()
    for index, cell in enumerate(merged.cells):
        if grade_id(cell) in missing and outcomes.get(index) is None:
            outcomes[index] = Failure("MissingCell", f"answer cell {grade_id(cell)!r}")
        if index in hidden and outcomes.get(index) is None:
            outcomes[index] = Failure("HiddenTests", "")
    note = "" if sandboxed else _("bubblewrap is not installed here: this is a self-check with "
                                  "the visible tests only; hidden tests run where the grader's "
                                  "sandbox runs")
    result = NotebookResult(str(submission), score(merged, outcomes), note=note)
    if output_dir is not None:
        records.save(Path(output_dir), submission, source_path,
                     {**result.to_dict(), "sandboxed": sandboxed}, merged, session.outputs)
    return result
