"""Grade many notebooks on one machine: a pool of workers, one result file per notebook, resume.

``grade_many(notebooks)`` hands each notebook to a worker process that calls the
per-notebook grader (``cudakit.grading.grade``) and writes that notebook's result
file the moment it is done, so an interrupted run loses at most the notebooks in
flight: run again with ``resume=True`` and only the others are graded. A result
file is reused only if it was made from the same submission bytes, the same
solution notebook and the same options (its name carries a hash of all three).

Workers: one per core by default, or one per GPU on a GPU machine, each worker
pinned to its GPU through ``CUDA_VISIBLE_DEVICES`` (more workers than GPUs share
them in turn). One worker with at most one GPU grades in this process, as the
grader always did (no pool to start for a single notebook). Inside a Slurm
allocation the cores and GPUs are the ones Slurm gave (``SLURM_CPUS_PER_TASK``,
``CUDA_VISIBLE_DEVICES``).

>>> outcomes = grade_many(["exercises/01_first_kernel.ipynb"], jobs=1)  # doctest: +SKIP
>>> outcomes[0].result.to_dict()["max_score"]  # doctest: +SKIP
8.0

Python's ``concurrent.futures`` is the pool; written here is only what it does not
do: pinning workers to GPUs, the result files, and carrying on when a worker dies.
"""

from __future__ import annotations

import functools
import hashlib
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import CudakitError
from .grader import (
    CELL_TIMEOUT,
    NOTEBOOK_TIMEOUT,
    NotebookResult,
    TestResult,
    find_source,
    grade,
)

WORKER_DIED = "the grading worker process died (out of memory or killed) twice on this notebook"


@dataclass(frozen=True)
class Options:
    """What ``grade`` is called with for every notebook of a run."""

    solutions: str | None = None
    cell_timeout: float = CELL_TIMEOUT
    timeout: float = NOTEBOOK_TIMEOUT
    backend: str | None = None
    sandbox: bool | None = None
    output_dir: str | None = None


@dataclass
class Outcome:
    """One graded notebook: its result, or why it could not be graded, and where it ran."""

    notebook: str
    result: NotebookResult
    error: str | None = None
    seconds: float = 0.0
    host: str = ""
    gpu: str | None = None
    reused: bool = False

    def to_dict(self) -> dict:
        record = asdict(self)
        record["result"] = {**self.result.to_dict(), "note": self.result.note}
        del record["reused"]
        return record

    @classmethod
    def from_dict(cls, record: dict, reused: bool = False) -> Outcome:
        tests = [TestResult(t["name"], t["score"], t["max_score"], t["feedback"])
                 for t in record["result"]["tests"]]
        result = NotebookResult(record["result"]["notebook"], tests, record["result"]["note"])
        return cls(record["notebook"], result,
                   record["error"], record["seconds"], record["host"], record["gpu"], reused)


@dataclass
class _Pending:
    """Notebooks still to grade, and how many times a worker died on each."""

    paths: dict[str, Path]
    deaths: dict[str, int] = field(default_factory=dict)


def gpu_ids(backend: str | None = None) -> list[str]:
    """The GPUs workers may be pinned to: ``CUDA_VISIBLE_DEVICES`` when set (Slurm sets it
    for ``--gres=gpu``), else the indices ``nvidia-smi`` lists; none for the emulator or
    where PyCUDA is missing (the grader could not use a GPU)."""
    import importlib.util

    if backend == "emu" or importlib.util.find_spec("pycuda") is None:
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [v.strip() for v in visible.split(",") if v.strip() and v.strip() != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return out.split()


def cores() -> int:
    """Cores this process may use: Slurm's ``SLURM_CPUS_PER_TASK``, else the CPU affinity."""
    slurm = os.environ.get("SLURM_CPUS_PER_TASK", "")
    if slurm.isdigit() and int(slurm) > 0:
        return int(slurm)
    return len(os.sched_getaffinity(0))


def default_jobs(backend: str | None = None) -> int:
    """One worker per GPU on a GPU machine, else one per core."""
    return len(gpu_ids(backend)) or cores()


def _file_digest(path: Path) -> str:
    """SHA-256 of a file, remembered while its size and modification time stay the same."""
    stat = path.stat()
    return _digest(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _digest(path: Path, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def result_path(results: Path, notebook: str | os.PathLike, options: Options) -> Path:
    """Where the result of ``notebook`` graded with ``options`` is kept in ``results``.

    The name is the notebook's stem and a hash of its absolute path, its bytes, its
    solution notebook's bytes and the options, so a changed submission, solution or
    option never reuses an old result.
    """
    path = Path(notebook).resolve()
    digest = hashlib.sha256(json.dumps(asdict(options), sort_keys=True).encode())
    digest.update(str(path).encode())
    for part in (lambda: path, lambda: find_source(path, Path(options.solutions)
                                                   if options.solutions else None)):
        try:
            digest.update(_file_digest(part()).encode())
        except Exception:  # missing or unreadable: grading will say why
            digest.update(b"-")
    return Path(results) / f"{path.stem}-{digest.hexdigest()[:20]}.json"


def read_outcome(path: Path) -> Outcome | None:
    """The outcome stored at ``path``, or None when there is none (or it is damaged)."""
    try:
        return Outcome.from_dict(json.loads(path.read_text()), reused=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, outcome: Outcome) -> None:
    """Write atomically: a reader (or a resumed run) never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    partial.write_text(json.dumps(outcome.to_dict(), indent=1))
    os.replace(partial, path)


def grade_one(notebook: str, options: Options, results: Path | None) -> Outcome:
    """Grade one notebook (in this process) and store its result file."""
    start = time.monotonic()
    error = None
    try:
        result = grade(notebook, solutions=options.solutions, cell_timeout=options.cell_timeout,
                       timeout=options.timeout, backend=options.backend,
                       sandbox=options.sandbox, output_dir=options.output_dir)
    except (CudakitError, OSError) as failure:
        result, error = NotebookResult(notebook), str(failure)
    except Exception as failure:  # a bug must not stop the other notebooks of the run
        result, error = NotebookResult(notebook), f"{type(failure).__name__}: {failure}"
    outcome = Outcome(notebook, result, error, round(time.monotonic() - start, 3),
                      socket.gethostname(), os.environ.get("CUDA_VISIBLE_DEVICES"))
    if results is not None:
        _write(result_path(results, notebook, options), outcome)
    return outcome


def _pin(gpus) -> None:
    """Pool initializer: take this worker's GPU from the queue."""
    gpu = gpus.get()
    if gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu


def _pool(jobs: int, gpus: list[str]) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("spawn")  # no CUDA or threads inherited by fork
    queue = context.Queue()
    for index in range(jobs):
        queue.put(gpus[index % len(gpus)] if gpus else None)
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=_pin, initargs=(queue,))


def progress_bar(total: int, done: int = 0, show: bool | None = None, desc: str = "grading"):
    """A tqdm bar over notebooks (tqdm.auto: a widget in a notebook, text on a terminal).

    ``show`` None: on a terminal and in a notebook, not when stderr goes to a file."""
    from tqdm.auto import tqdm

    disable = None if show is None else not show
    return tqdm(total=total, initial=done, unit="nb", desc=desc, disable=disable,
                dynamic_ncols=True)


def grade_many(notebooks: Iterable[str | os.PathLike], options: Options = Options(), *,
               jobs: int | None = None, results: str | os.PathLike | None = None,
               resume: bool = False, progress: bool | None = None,
               on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Grade ``notebooks`` with ``jobs`` workers; outcomes come back in the given order.

    ``results``: folder for the per-notebook result files (written as each notebook is
    done); with ``resume`` the notebooks that already have one are not graded again.
    ``progress``: a progress bar (tqdm; in a notebook tqdm's widget); None shows it on a
    terminal and in a notebook, not when stderr goes to a file. ``on_done`` is called
    with each outcome as it arrives.
    Example: ``grade_many(paths, Options(backend="emu"), jobs=4, results="grades")``.
    """
    names = [str(n) for n in notebooks]
    folder = Path(results) if results is not None else None
    jobs = default_jobs(options.backend) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs={jobs}: need at least one worker")
    outcomes: dict[str, Outcome] = {}
    if resume and folder is not None:
        for name in names:
            found = read_outcome(result_path(folder, name, options))
            if found is not None and found.error is None and found.notebook == name:
                outcomes[name] = found
    pending = _Pending({n: Path(n) for n in names if n not in outcomes})
    with progress_bar(len(set(names)), len(outcomes), progress) as bar:

        def finish(name: str, outcome: Outcome) -> None:
            del pending.paths[name]
            outcomes[name] = outcome
            bar.update(1)
            if on_done:
                on_done(outcome)

        for outcome in outcomes.values():
            if on_done:
                on_done(outcome)
        if jobs == 1 and len(gpu_ids(options.backend)) <= 1:  # nothing to pin: no pool
            for name in list(pending.paths):
                finish(name, grade_one(name, options, folder))
        while pending.paths:
            _run_pool(pending, options, jobs, folder, finish)
    return [outcomes[n] for n in names]


def _run_pool(pending: _Pending, options: Options, jobs: int, folder: Path | None,
              finish: Callable[[str, Outcome], None]) -> None:
    """One pool's life: grade what is pending until done or until a worker dies.

    At most ``jobs`` notebooks are handed out at a time, so when a worker dies the
    notebooks in flight are the ones that were running; each is tried once more."""
    queue = list(pending.paths)
    jobs = min(jobs, len(queue))
    with _pool(jobs, gpu_ids(options.backend)) as pool:
        futures, broken = {}, False
        while (queue and not broken) or futures:
            while queue and not broken and len(futures) < jobs:
                try:
                    futures[pool.submit(grade_one, queue[0], options, folder)] = queue[0]
                    queue.pop(0)
                except BrokenProcessPool:  # a worker died while none was grading
                    broken = True
            if not futures:
                break
            done, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                name = futures.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    broken = True  # hand out nothing more; the caller starts a fresh pool
                    pending.deaths[name] = pending.deaths.get(name, 0) + 1
                    if pending.deaths[name] < 2:
                        continue  # graded again by the next pool
                    outcome = Outcome(name, NotebookResult(name), WORKER_DIED,
                                      host=socket.gethostname())
                    if folder is not None:
                        _write(result_path(folder, name, options), outcome)
                finish(name, outcome)
