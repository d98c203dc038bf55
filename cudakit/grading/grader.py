"""Grade submissions: run each in a fresh kernel process and score its test cells.

``grade(submission)`` finds the solution notebook of the same name, merges the
student's answers into it (so hidden tests arrive only now, see ``merge``), and
runs the cells in order in a new IPython kernel whose working directory is an
empty temporary folder. A test cell that finishes without an exception earns its
points; one that raises earns zero with the reason in words (``feedback``).

A cell that hangs, kills the kernel or loses the GPU context ends that kernel:
the grader starts a fresh one, replays the answer and setup cells, and carries on
with the next test. Each cell has a time limit, and so has the whole notebook.

>>> r = NotebookResult("ex.ipynb", [TestResult("t1", 0.0, 2.0, "wrong result")])
>>> r.to_dict()["max_score"]
2.0
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets.config import Config

from ..backend import BACKENDS
from ..errors import ExerciseFormatError
from .exercise import check_notebook, grade_id, graded_tests, is_answer, is_test
from .feedback import explain
from .merge import merge

CELL_TIMEOUT = 120.0  # seconds per cell
NOTEBOOK_TIMEOUT = 900.0  # seconds per notebook
# errors after which the kernel process cannot be trusted (the GPU context is gone)
FATAL = {"CellTimeoutError", "DeadKernelError", "KernelFaultError", "NotebookTimeout"}
# the CUDA driver's words for sticky errors that lose the context, however they surface
CONTEXT_LOST = re.compile(r"illegal memory access|illegal address|unspecified launch failure|"
                          r"misaligned address|illegal instruction|context is destroyed", re.I)


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


@dataclass
class Failure:
    """A cell that raised: the exception's name and message, and where."""

    ename: str
    evalue: str
    where: str = ""

    @property
    def fatal(self) -> bool:
        return self.ename in FATAL

    def explain(self) -> str:
        return explain(self.ename, self.evalue)


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


class _Run:
    """Executes a merged notebook cell by cell, restarting the kernel after fatal failures."""

    def __init__(self, nb, cell_timeout: float, deadline: float, workdir: str, sockets: str,
                 env: dict[str, str]):
        self.nb = nb
        self.cell_timeout = cell_timeout
        self.deadline = deadline
        self.workdir = workdir
        self.sockets = sockets
        self.env = env
        self.outcomes: dict[int, Failure | None] = {}

    def _client(self) -> NotebookClient:
        return NotebookClient(
            self.nb, timeout=self.cell_timeout, kernel_name="python3",
            shutdown_kernel="immediate", allow_errors=False,
            # Unix sockets outside the kernel's folder rather than TCP ports
            config=Config(KernelManager={"transport": "ipc",
                                         "ip": os.path.join(self.sockets, "kernel")}),
        )

    def _execute(self, client: NotebookClient, index: int) -> Failure | None:
        cell = self.nb.cells[index]
        where = f"cell {index}" + (f" ({grade_id(cell)!r})" if grade_id(cell) else "")
        left = self.deadline - time.monotonic()
        if left <= 0:
            return Failure("NotebookTimeout", "", where)
        # a cell cut short by the notebook's limit ends just after the notebook's deadline
        client.timeout = max(1, math.ceil(min(self.cell_timeout, left)))
        notebook_limit = left < self.cell_timeout
        try:
            client.execute_cell(cell, index)
        except CellExecutionError as error:
            lost = error.ename not in FATAL and CONTEXT_LOST.search(error.evalue)
            return Failure("KernelFaultError" if lost else error.ename, error.evalue, where)
        except CellTimeoutError:
            if notebook_limit:
                return Failure("NotebookTimeout", "", where)
            return Failure("CellTimeoutError", f"limit {client.timeout} s", where)
        except DeadKernelError:
            return Failure("DeadKernelError", "", where)
        return None

    def run(self) -> dict[int, Failure | None]:
        """Run every code cell once; returns each cell's failure (None when it passed)."""
        position, cells = 0, self.nb.cells
        while position < len(cells):
            if time.monotonic() >= self.deadline:  # no fresh kernel for what cannot run
                for index in range(position, len(cells)):
                    if cells[index].cell_type == "code":
                        self.outcomes[index] = Failure("NotebookTimeout", "")
                break
            client = self._client()
            with client.setup_kernel(env=self.env, cwd=self.workdir):
                for index in range(position):  # replay after a restart, tests excluded
                    if cells[index].cell_type == "code" and not is_test(cells[index]):
                        self._execute(client, index)
                while position < len(cells):
                    index, position = position, position + 1
                    if cells[index].cell_type != "code":
                        continue
                    self.outcomes[index] = failure = self._execute(client, index)
                    if failure is not None and failure.fatal:
                        break
        return self.outcomes


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


def grade(submission: str | os.PathLike, source: str | os.PathLike | None = None, *,
          solutions: str | os.PathLike | None = None, cell_timeout: float = CELL_TIMEOUT,
          timeout: float = NOTEBOOK_TIMEOUT, backend: str | None = None) -> NotebookResult:
    """Grade one submission against its solution notebook.

    Example: ``grade("exercises/01_first_kernel.ipynb").score``. ``backend`` ("gpu" or
    "emu") pins the engine; by default the GPU is used when present, else the emulator
    (``backend="emu"`` adds memcheck and racecheck even on a GPU machine). A submission
    that cannot be read scores zero on every test with the reason.
    """
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}: expected one of {', '.join(BACKENDS)}")
    env = {**os.environ, **({"CUDAKIT_BACKEND": backend} if backend else {})}
    submission = Path(submission)
    source_path = Path(source) if source else find_source(
        submission, Path(solutions) if solutions else None)
    reference = nbformat.read(source_path, as_version=4)
    check_notebook(reference, str(source_path))
    try:
        mine = nbformat.read(submission, as_version=4)
    except Exception as error:  # unreadable JSON, not a notebook, missing file
        reason = f"the notebook could not be read: {error}"
        return NotebookResult(str(submission), [TestResult(t.name, 0.0, t.points, reason)
                                                for t in graded_tests(reference)])
    merged = merge(reference, mine)
    missing = {grade_id(c) for c in reference.cells if is_answer(c)} - {
        grade_id(c) for c in mine.cells if is_answer(c)}
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryDirectory(prefix="cudakit-grade-") as workdir, \
            tempfile.TemporaryDirectory(prefix="cudakit-sock-") as sockets:
        outcomes = _Run(merged, cell_timeout, deadline, workdir, sockets, env).run()
    for index, cell in enumerate(merged.cells):
        if grade_id(cell) in missing and outcomes.get(index) is None:
            outcomes[index] = Failure("MissingCell", f"answer cell {grade_id(cell)!r}")
    return NotebookResult(str(submission), score(merged, outcomes))
