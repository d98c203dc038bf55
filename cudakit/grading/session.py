"""One grading run of a merged notebook: the judge and the participant's process, each in its
own sandbox, driven cell by cell with time limits, restarted after fatal failures.

``Session(merged, reference, settings).run()`` returns each code cell's failure (None when it
passed) and the judge's output per cell. The judge reports on a pipe only it holds; the
participant's process is reached by the judge through a Unix socket in a folder the two share,
and by this process only through its exit status and its (capped) output.

>>> plan_roles(__import__("nbformat").v4.new_notebook(), {})
{}
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n.messages import _
from .exercise import grade_id, is_answer, is_test
from .feedback import CONTEXT_LOST, explain
from .participant import kernel_names
from .regions import is_cuda
from .sandbox import Confined, Limits, Sandbox, SandboxError

CHANNEL = "/run/cudakit-chan"
CACHE = "/run/cudakit-cache"
MAX_RESTARTS = 4  # of the participant's process, before its functions count as gone


# errors after which the judge cannot be trusted (the GPU context is gone, a limit was hit)
FATAL = {"CellTimeoutError", "DeadKernelError", "KernelFaultError", "NotebookTimeout",
         "LimitExceeded"}


@dataclass
class Failure:
    """A cell that failed: the exception's name and message, and where."""

    ename: str
    evalue: str
    where: str = ""

    @property
    def fatal(self) -> bool:
        return self.ename in FATAL

    def explain(self) -> str:
        return explain(self.ename, self.evalue)


@dataclass
class Settings:
    """How one notebook is graded."""

    cell_timeout: float
    deadline: float  # time.monotonic() at which the whole notebook's time is up
    limits: Limits = field(default_factory=Limits)
    sandboxed: bool = True
    backend: str | None = None
    hidden: list[Path] = field(default_factory=list)
    gpu: bool = False


def top_level_names(source: str) -> list[str]:
    """Names a Python cell defines at top level (functions, classes, assignments).

    >>> top_level_names("BLOCK = 256\\ndef f(x):\\n    y = 1\\nclass K: pass")
    ['BLOCK', 'f', 'K']
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(names))


def plan_roles(merged, reference: dict) -> dict[int, dict]:
    """The judge's role for each code cell of ``merged`` (``reference``: solution cells by id)."""
    roles = {}
    for index, cell in enumerate(merged.cells):
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell)
        entry = {"source": cell.source, "grade_id": gid}
        if is_test(cell):
            entry["role"] = "test"
        elif is_answer(cell):
            solution = reference[gid].source
            entry["role"] = "cuda" if is_cuda(solution) else "python"
            entry["names"] = [] if is_cuda(solution) else top_level_names(solution)
        elif gid in reference:
            entry["role"] = "run"
        else:
            continue  # a cell the participant added: it runs in their process only
        roles[index] = entry
    return roles


def _exit_words(code: int | None) -> str:
    if code is None:
        return _("it did not answer")
    if code < 0:
        return _("it was killed by signal {signal}").format(signal=-code)
    return _("it exited with status {code}").format(code=code)


class Session:
    """Runs the merged notebook; see the module docstring."""

    def __init__(self, merged, reference: dict, settings: Settings):
        self.merged = merged
        self.settings = settings
        self.roles = plan_roles(merged, reference)
        self.kernels = sorted({k for c in reference.values()
                               if c.cell_type == "code" and is_cuda(c.source)
                               for k in kernel_names(c.source)})
        self.outcomes: dict[int, Failure | None] = {}
        self.outputs: dict[int, str] = {}
        self.participant: Confined | None = None
        self.participant_deaths: list[str] = []
        self.participant_ready = False
        self.restarts = 0

    # -- processes -----------------------------------------------------------------------
    def _sandbox(self, *, judge: bool, env: dict[str, str]) -> Sandbox | None:
        if not self.settings.sandboxed:
            return None
        shared = {self.channel: CHANNEL}
        if judge:
            from ..compiler import cache_dir

            cache = cache_dir()
            cache.mkdir(parents=True, exist_ok=True)
            shared[str(cache)] = CACHE
            env = {**env, "CUDAKIT_CACHE_DIR": CACHE}
        return Sandbox(self.settings.limits, gpu=judge and self.settings.gpu,
                       hidden=self.settings.hidden, shared=shared, env=env)

    def _spawn(self, module: str, plan: dict, *, judge: bool, env: dict[str, str],
               pass_fds=()) -> Confined:
        argv = [sys.executable, "-u", "-m", f"cudakit.grading.{module}"]  # output in order
        sandbox = self._sandbox(judge=judge, env=env)
        if sandbox is not None:
            confined = sandbox.spawn(argv, pass_fds=pass_fds)
        else:
            root = str(Path(__file__).resolve().parents[2])
            full_env = {**os.environ, **env, "PYTHONPATH": root,
                        "IPYTHONDIR": os.path.join(self.channel, "ipython")}
            confined = Confined(argv, self.settings.limits, memory=not judge, stdin=subprocess.PIPE,
                                pass_fds=pass_fds, env=full_env, cwd=self.workdir)
        try:
            confined.process.stdin.write(json.dumps(plan).encode())
            confined.process.stdin.close()
        except BrokenPipeError:
            pass
        return confined

    def _path(self, name: str) -> str:
        base = CHANNEL if self.settings.sandboxed else self.channel
        return f"{base}/{name}"

    def _start_participant(self) -> None:
        cells = [{"source": c.source, "grade_id": grade_id(c)}
                 for c in self.merged.cells if c.cell_type == "code" and not is_test(c)]
        plan = {"cells": cells, "socket": self._path("p.sock")}
        self.participant = self._spawn("participant", plan, judge=False, env={})
        self.participant_ready = False

    def _watch_participant(self) -> None:
        """Restart the participant's process when it ended; give up after MAX_RESTARTS."""
        p = self.participant
        if p is None:
            return
        if os.path.exists(os.path.join(self.channel, "p.sock")):
            self.participant_ready = True
        if p.process.poll() is None:
            return
        reason = p.reason() or _exit_words(p.process.returncode)
        p.close()
        last = bytes(p.output).decode(errors="replace").strip().splitlines()[-1:]
        if last and not p.reason():  # e.g. the error that ended it: a hint for the participant
            reason += f" ({last[0][:200]})"
        self.participant = None
        self.participant_deaths.append(reason)
        self.restarts += 1
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self.channel, "p.sock"))
        if self.restarts > MAX_RESTARTS:
            Path(self.channel, "status").write_text(reason)
        else:
            if not self.participant_ready:  # ended at start-up: wait a little (a loaded machine
                time.sleep(0.25 * 2 ** self.restarts)  # has been seen to lose one there)
            self._start_participant()

    def _stop_participant(self) -> None:
        """Stop a participant's process that may be stuck (it restarts at once)."""
        if self.participant is not None:
            self.participant.kill()
            self.participant.process.wait()
            self._watch_participant()

    # -- the judge -----------------------------------------------------------------------
    def _judge(self, position: int, order: list[int]) -> tuple[Confined, queue.Queue]:
        read, write = os.pipe()
        replay = [i for i in order if i < position and self.roles[i]["role"] != "test"]
        plan = {"cells": {str(i): self.roles[i] for i in order}, "replay": replay,
                "order": [i for i in order if i >= position], "kernels": self.kernels,
                "socket": self._path("p.sock"), "status": self._path("status"),
                "cell_timeout": self.settings.cell_timeout,
                "output_bytes": self.settings.limits.output_bytes,
                "device_budget": self.settings.limits.memory_bytes // 2}
        env = {"CUDAKIT_JUDGE_FD": str(write)}
        if self.settings.backend:
            env["CUDAKIT_BACKEND"] = self.settings.backend
        for key in ("CUDAKIT_EMU_TIMEOUT",):
            if key in os.environ:
                env[key] = os.environ[key]
        judge = self._spawn("judge", plan, judge=True, env=env, pass_fds=(write,))
        os.close(write)
        events: queue.Queue = queue.Queue()

        def pump() -> None:
            with os.fdopen(read, "rb") as stream:
                for line in stream:
                    try:
                        events.put(json.loads(line))
                    except ValueError:
                        break
            events.put(None)

        threading.Thread(target=pump, daemon=True).start()
        return judge, events

    def _next_event(self, events: queue.Queue, until: float):
        while True:
            self._watch_participant()
            left = until - time.monotonic()
            if left <= 0:
                return "timeout"
            try:
                return events.get(timeout=min(left, 0.1))
            except queue.Empty:
                continue

    def _where(self, index: int) -> str:
        gid = grade_id(self.merged.cells[index])
        return f"cell {index}" + (f" ({gid!r})" if gid else "")

    def _after(self, failure: Failure) -> Failure:
        """Say which limit or end of the participant's process a failure comes from."""
        limits = self.settings.limits
        if failure.ename == "ParticipantTimeout":
            refused = self.participant is not None and self.participant.pids_refused()
            failure.evalue = _("limit {seconds} s").format(
                seconds=math.ceil(self.settings.cell_timeout)) + (
                f"; {limits.describe('processes')}" if refused else "")
            self._stop_participant()
        elif failure.ename == "ParticipantEnded":
            if self.participant is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.participant.process.wait(timeout=1)
            self._watch_participant()
            if self.participant_deaths:
                failure.evalue = self.participant_deaths[-1]
        elif failure.ename == "MemoryError":
            failure.evalue = limits.describe("memory")
        elif "File too large" in failure.evalue:
            failure.evalue = limits.describe("file")
        return failure

    def _drive(self, position: int, order: list[int]) -> int:
        """Run one judge from ``position``; returns where the next judge must start."""
        judge, events = self._judge(position, order)
        settings = self.settings
        replay_time = settings.cell_timeout * (1 + sum(1 for i in order if i < position))
        waiting_until = min(settings.deadline, time.monotonic() + replay_time)
        current, started = None, False
        try:
            while True:
                event = self._next_event(events, waiting_until)
                if event == "timeout" or event is None:
                    if current is None:  # the judge died or hung before its next cell
                        nxt = [i for i in order if i >= position and i not in self.outcomes]
                        if not nxt:
                            return len(self.merged.cells)
                        current = nxt[0]
                    if event == "timeout":
                        late = time.monotonic() >= settings.deadline
                        self.outcomes[current] = Failure(
                            "NotebookTimeout" if late else "CellTimeoutError",
                            "" if late else f"limit {math.ceil(settings.cell_timeout)} s",
                            self._where(current))
                        self._stop_participant()
                    else:
                        judge.process.wait()
                        reason = judge.reason()
                        if position == 0 and not started:  # no participant code ran yet
                            tail = judge.output[-2000:].decode(errors="replace")
                            raise SandboxError(f"the grader's judge process could not start "
                                               f"(exit status {judge.process.returncode}):\n{tail}")
                        self.outcomes[current] = Failure(
                            "LimitExceeded" if reason else "DeadKernelError", reason,
                            self._where(current))
                    return current + 1
                if event.get("status") == "start":
                    started = True
                    current = event["cell"]
                    waiting_until = min(settings.deadline,
                                        time.monotonic() + settings.cell_timeout)
                    continue
                index = event["cell"]
                self.outputs[index] = event.get("output", "")
                failure = event.get("failure")
                current = None
                waiting_until = settings.deadline
                if failure is None:
                    self.outcomes[index] = None
                    continue
                ename, evalue = failure
                if ename not in FATAL and CONTEXT_LOST.search(evalue):
                    ename = "KernelFaultError"
                self.outcomes[index] = self._after(Failure(ename, evalue, self._where(index)))
                if ename in FATAL:
                    return index + 1
        finally:
            judge.close()

    def run(self) -> dict[int, Failure | None]:
        """Run every code cell the judge runs; returns each one's failure (None: passed)."""
        order = sorted(self.roles)
        with tempfile.TemporaryDirectory(prefix="cudakit-chan-") as channel, \
                tempfile.TemporaryDirectory(prefix="cudakit-work-") as workdir:
            self.channel, self.workdir = channel, workdir
            if any(r["role"] == "python" for r in self.roles.values()):
                self._start_participant()  # kernel-only exercises need no participant process
            try:
                position = 0
                while position < len(self.merged.cells):
                    if time.monotonic() >= self.settings.deadline:
                        for index in order:
                            if index >= position and index not in self.outcomes:
                                self.outcomes[index] = Failure("NotebookTimeout", "")
                        break
                    position = self._drive(position, order)
                    if all(i in self.outcomes for i in order if i >= position):
                        break
            finally:
                if self.participant is not None:
                    self.participant.close()
                shutil.rmtree(channel, ignore_errors=True)
        return self.outcomes
