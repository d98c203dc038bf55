"""Grade a course round on a Slurm cluster: one job array, one task per chunk of submissions.

``grade_on_slurm(notebooks, options, Settings(gres="gpu:1"), folder="round1")`` writes a run
folder (on storage every node sees), submits ``sbatch --array`` with one task per
``chunk`` notebooks, follows the array with ``squeue``, submits the tasks that left
notebooks ungraded once more, and merges the per-notebook result files into one
``Report`` (also saved as ``round1/report.json``)::

    round1/run.json        notebooks, grading options, chunk size
    round1/grade.sbatch    the batch script (its #SBATCH lines are the settings)
    round1/results/*.json  one file per graded notebook (``cudakit.grading.batch``)
    round1/logs/%A_%a.out  each task's output
    round1/report.json     the merged report

Each task runs ``python -m cudakit.grading.slurm round1``: ``batch.grade_many`` on its
chunk, on the cores and GPU Slurm gave it, with ``resume``; so a task that is killed,
times out or loses its node is run again from where it stopped, and nothing already
graded is lost. Whether a task is done is read from the result files, not from Slurm's
accounting (which many test and small clusters lack); ``scontrol`` only names the reason.

For nbgrader's gradebook, ``collect(folder)`` gives the merged ``Report`` of a run;
``Report.outcomes`` holds each notebook's path and ``NotebookResult``.

>>> Settings(chunk=10, gres="gpu:1").sbatch_lines()[:2]
['--job-name=cudakit-grade', '--cpus-per-task=1']
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import SlurmError
from .batch import Options, Outcome, grade_many, progress_bar, read_outcome, result_path
from .grader import NotebookResult

NO_VAL = 0xFFFFFFFE  # Slurm's "no value" in ArrayTaskId


@dataclass(frozen=True)
class Settings:
    """How the array is submitted: chunk size and the ``sbatch`` options a centre needs."""

    chunk: int = 20                    # notebooks per array task
    partition: str | None = None       # --partition
    gres: str | None = None            # --gres, e.g. "gpu:1"
    cpus: int = 1                      # --cpus-per-task
    time: str | None = None            # --time; default: every notebook of a chunk at its limit
    max_running: int | None = None     # --array=...%N: at most N tasks at once
    name: str = "cudakit-grade"        # --job-name
    extra: tuple[str, ...] = ()        # more sbatch options, e.g. ("--account=gpu-course",)
    poll: float = 5.0                  # seconds between squeue calls

    def sbatch_lines(self, options: Options | None = None) -> list[str]:
        """The sbatch options, one per ``#SBATCH`` line."""
        lines = [f"--job-name={self.name}", f"--cpus-per-task={self.cpus}"]
        if self.partition:
            lines.append(f"--partition={self.partition}")
        if self.gres:
            lines.append(f"--gres={self.gres}")
        if self.time:
            lines.append(f"--time={self.time}")
        elif options is not None:  # every notebook of the chunk at its limit, plus 5 minutes
            lines.append(f"--time={math.ceil(self.chunk * options.timeout / 60) + 5}")
        return lines + list(self.extra)


@dataclass
class TaskRecord:
    """An array task that did not finish its chunk: which, why, and what it left."""

    task: int
    job: str
    state: str
    notebooks: list[str]


@dataclass
class Report:
    """The merged result of a run: every notebook's outcome in the run's order, the array
    jobs submitted, tasks run a second time and tasks that failed twice (by name)."""

    folder: str
    outcomes: list[Outcome]
    jobs: list[str] = field(default_factory=list)
    retried: list[TaskRecord] = field(default_factory=list)
    failed: list[TaskRecord] = field(default_factory=list)

    @property
    def results(self) -> list[NotebookResult]:
        return [o.result for o in self.outcomes]

    def to_dict(self) -> dict:
        return {"folder": self.folder, "jobs": self.jobs,
                "retried": [asdict(t) for t in self.retried],
                "failed": [asdict(t) for t in self.failed],
                "outcomes": [o.to_dict() for o in self.outcomes]}


@dataclass
class Run:
    """A run folder: its notebooks (absolute paths), options and settings."""

    folder: Path
    notebooks: list[str]
    options: Options
    settings: Settings
    jobs: int | None = None  # workers per task; None: one per GPU, else per core
    _paths: dict[str, Path] = field(default_factory=dict, repr=False)

    @property
    def tasks(self) -> int:
        return math.ceil(len(self.notebooks) / self.settings.chunk)

    def chunk(self, task: int) -> list[str]:
        size = self.settings.chunk
        return self.notebooks[task * size:(task + 1) * size]

    def result(self, notebook: str) -> Path:
        """Where ``notebook``'s result file is (worked out once: it hashes the notebook)."""
        if notebook not in self._paths:
            self._paths[notebook] = result_path(self.folder / "results", notebook, self.options)
        return self._paths[notebook]

    def missing(self, task: int) -> list[str]:
        """The notebooks of ``task`` that have no result file yet."""
        return [n for n in self.chunk(task) if not self.result(n).is_file()]

    def save(self) -> None:
        (self.folder / "logs").mkdir(parents=True, exist_ok=True)
        (self.folder / "results").mkdir(exist_ok=True)
        record = {"notebooks": self.notebooks, "options": asdict(self.options),
                  "settings": {**asdict(self.settings), "extra": list(self.settings.extra)},
                  "jobs": self.jobs}
        (self.folder / "run.json").write_text(json.dumps(record, indent=1))
        lines = [f"#SBATCH {line}" for line in self.settings.sbatch_lines(self.options)]
        (self.folder / "grade.sbatch").write_text("\n".join([
            "#!/bin/bash", *lines,
            f"#SBATCH --output={self.folder}/logs/%A_%a.out",
            "# One task of a cudakit grading run: grades chunk $SLURM_ARRAY_TASK_ID of run.json.",
            f"exec {sys.executable} -m cudakit.grading.slurm {self.folder}", ""]))

    @classmethod
    def load(cls, folder: str | os.PathLike) -> Run:
        folder = Path(folder).resolve()
        try:
            record = json.loads((folder / "run.json").read_text())
        except (OSError, ValueError) as error:
            raise SlurmError(f"{folder}: not a grading run folder ({error})") from None
        settings = {**record["settings"], "extra": tuple(record["settings"]["extra"])}
        return cls(folder, record["notebooks"], Options(**record["options"]),
                   Settings(**settings), record["jobs"])


def _slurm(*command: str) -> str:
    """Run a Slurm client command; its output, or a SlurmError with what it said."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise SlurmError(f"{command[0]} not found: is this a Slurm login node? "
                         "(Debian: apt-get install slurm-client)") from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{' '.join(command)}: no answer from slurmctld in 120 s") from None
    if done.returncode != 0:
        raise SlurmError(f"{' '.join(command)} failed: {done.stderr.strip() or done.stdout}")
    return done.stdout


def submit(run: Run, tasks: list[int]) -> str:
    """Submit ``tasks`` of ``run`` as one job array; returns the array's job id."""
    array = ",".join(str(t) for t in tasks)
    if run.settings.max_running:
        array += f"%{run.settings.max_running}"
    out = _slurm("sbatch", "--parsable", f"--array={array}", str(run.folder / "grade.sbatch"))
    return out.strip().split(";")[0]


def queued(job: str) -> dict[int, str]:
    """The array's tasks still known to ``squeue``, with their states."""
    out = _slurm("squeue", "--noheader", "--array", f"--jobs={job}", "--format=%K %T")
    states = {}
    for line in out.splitlines():
        task, _, state = line.strip().partition(" ")
        if task.isdigit():
            states[int(task)] = state
    return states


def final_states(job: str) -> tuple[dict[int, str], str | None]:
    """Each finished task's state (COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL...) as
    ``scontrol`` still remembers it (for ``MinJobAge`` seconds), and the state of the
    array's own record, which stands for tasks that never started (cancelled while
    pending); empty when forgotten."""
    try:
        out = _slurm("scontrol", "--oneliner", "show", "job", job)
    except SlurmError:
        return {}, None
    states, rest = {}, None
    for line in out.splitlines():
        tasks = re.search(r"\bArrayTaskId=([\d,-]+)", line)  # one task, or "0-3,7" when pending
        state = re.search(r"\bJobState=(\S+)", line)
        if not (tasks and state):
            continue
        for part in tasks.group(1).split(","):
            first, _, last = part.partition("-")
            if int(first) >= NO_VAL:  # the array's own record: its state covers the rest
                rest = state.group(1)
                continue
            for task in range(int(first), int(last or first) + 1):
                states[task] = state.group(1)
    return states, rest


def follow(run: Run, job: str, tasks: list[int], bar=None) -> dict[int, str]:
    """Wait until no task of ``job`` is queued or running; returns the final states."""
    failures = 0
    while True:
        try:
            now = queued(job)
            failures = 0
        except SlurmError:  # slurmctld restarting or busy: ask again, give up after 10 tries
            failures += 1
            if failures >= 10:
                raise
            time.sleep(run.settings.poll)
            continue
        if bar is not None:
            bar.n = sum(1 for n in run.notebooks if run.result(n).is_file())
            bar.refresh()
        if not now:
            break
        time.sleep(run.settings.poll)
    ended, rest = final_states(job)
    return {task: ended.get(task, rest or "UNKNOWN") for task in tasks}


def collect(folder: str | os.PathLike, jobs=(), retried=(), failed=()) -> Report:
    """Merge the result files of a run into one ``Report`` (for a report or a gradebook).

    A notebook without a result gets an empty result and an error naming why.
    """
    run = Run.load(folder)
    outcomes = []
    for notebook in run.notebooks:
        outcome = read_outcome(run.result(notebook))
        if outcome is None:
            outcome = Outcome(notebook, NotebookResult(notebook),
                              "not graded: no result file (its task failed twice, or has not "
                              "run yet; see report.json)")
        outcomes.append(outcome)
    return Report(str(run.folder), outcomes, list(jobs), list(retried), list(failed))


def _records(run: Run, job: str, states: dict[int, str], tasks: list[int]) -> list[TaskRecord]:
    return [TaskRecord(t, f"{job}_{t}", states.get(t, "UNKNOWN"), run.missing(t))
            for t in tasks if run.missing(t)]


def grade_on_slurm(notebooks, options: Options | None = None, settings: Settings | None = None,
                   *, folder: str | os.PathLike, jobs: int | None = None, resume: bool = False,
                   progress: bool | None = None) -> Report:
    """Grade ``notebooks`` as a Slurm job array and wait for the merged ``Report``.

    ``folder`` must be on storage the compute nodes see. With ``resume`` the notebooks
    that already have a result there are not graded again. Tasks that leave notebooks
    ungraded are submitted once more, then reported in ``Report.failed``.
    Example: ``grade_on_slurm(paths, Options(), Settings(gres="gpu:1"), folder="round1")``.
    """
    options, settings = options or Options(), settings or Settings()
    if settings.chunk < 1:
        raise ValueError(f"chunk={settings.chunk}: need at least one notebook per task")
    folder = Path(folder).resolve()
    everything = [str(Path(n).resolve()) for n in dict.fromkeys(map(str, notebooks))]
    run = Run(folder, everything, options, settings, jobs)
    run.save()
    done = set()
    for notebook in everything:  # keep what resume may reuse; clear the rest
        found = read_outcome(run.result(notebook)) if resume else None
        if found is not None and found.error is None:
            done.add(notebook)
        else:
            run.result(notebook).unlink(missing_ok=True)
    todo = [t for t in range(run.tasks) if run.missing(t)]
    report_jobs, retried, failed = [], [], []
    with progress_bar(len(everything), len(done), progress, "grading (slurm)") as bar:
        for attempt in range(2):
            if not todo:
                break
            job = submit(run, todo)
            report_jobs.append(job)
            try:
                states = follow(run, job, todo, bar)
            except KeyboardInterrupt:
                raise SlurmError(
                    f"interrupted; job array {job} keeps grading into {folder}. Cancel it "
                    f"(scancel {job}) or let it end, then run the same command with --resume "
                    f"--results {folder} to grade what is left and merge") from None
            left = _records(run, job, states, todo)
            (retried if attempt == 0 else failed).extend(left)
            todo = [record.task for record in left]
    report = collect(folder, report_jobs, retried, failed)
    (folder / "report.json").write_text(json.dumps(report.to_dict(), indent=1))
    return report


def task_main(argv: list[str] | None = None) -> int:
    """What one array task runs: grade its chunk of the run in the folder given."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or "SLURM_ARRAY_TASK_ID" not in os.environ:
        print("usage (inside a Slurm array task): python -m cudakit.grading.slurm RUN_FOLDER",
              file=sys.stderr)
        return 2
    run = Run.load(args[0])
    task = int(os.environ["SLURM_ARRAY_TASK_ID"])
    chunk = run.chunk(task)
    print(f"task {task}: {len(chunk)} notebooks on {os.uname().nodename}, "
          f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')}", flush=True)

    def show(outcome: Outcome) -> None:
        note = " (kept from an earlier attempt)" if outcome.reused else ""
        note += f" ({outcome.error})" if outcome.error else ""
        print(f"{outcome.notebook}: {outcome.result.score:g} / {outcome.result.max_score:g}"
              f"{note}", flush=True)

    grade_many(chunk, run.options, jobs=run.jobs, results=run.folder / "results", resume=True,
               progress=False, on_done=show)
    return 1 if run.missing(task) else 0


if __name__ == "__main__":
    sys.exit(task_main())
