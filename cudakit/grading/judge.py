"""The judge: runs the instructor's cells and the tests, in a process where no participant
Python ever runs, and reports each cell's outcome to the grader.

``python -m cudakit.grading.judge`` reads a plan (JSON on stdin) and writes one JSON line per
cell to the file descriptor named by ``$CUDAKIT_JUDGE_FD`` (nothing the kernels print can reach
it). Cells by role:

* ``run`` / ``test``: the solution notebook's own cells (setup, helpers, tests), run in IPython;
* ``cuda``: a submitted ``%%cuda`` answer, compiled here by ``%%cuda`` with the allowed options;
* ``python``: a submitted Python answer. It is never run here: each name the solution's cell
  defines becomes a ``Remote`` function (or the data the participant's process holds for it).

Calling a ``Remote`` sends the arguments to the participant's process as data and serves its
device requests with this process's kernels and memory (so ``checks.recording`` around a test
counts real launches), then takes back the result as data. The tests compare it with references
computed here, with this process's NumPy and ``checks``, which the participant cannot touch.

A result the participant's function returns after device work must hold only values that a
kernel launch here produced (copied out of memory a kernel changed); a function that launches
an empty kernel and computes its answer with NumPy is told so.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import re
import shlex
import socket
import sys
import time
import traceback

import numpy as np

from ..errors import CudakitError
from . import wire
from .feedback import CONTEXT_LOST
from .served import Device

# nvcc options a graded %%cuda cell may use (others could run programs or read files)
ALLOWED_OPTION = re.compile(
    r"-O[0-3]|-D\w+(=[\w.+-]*)?|-lineinfo|-G|--?use_fast_math|-ftz=(true|false)|"
    r"-prec-(div|sqrt)=(true|false)|-fmad=(true|false)|--?maxrregcount=\d+|-std=c\+\+\d\d|"
    r"-arch=sm_\d+a?|--gpu-architecture=sm_\d+a?|-Xptxas=-v|-restrict")


class ParticipantEnded(RuntimeError):
    """The participant's process closed the connection (it ended, or was stopped)."""


class ParticipantTimeout(RuntimeError):
    """The participant's function did not answer within the cell's time."""


def check_cuda_line(line: str) -> tuple[str, tuple[str, ...]]:
    """The ``%%cuda`` line's module name and nvcc options, refusing options not allowed.

    >>> check_cuda_line("%%cuda -O3 -DN=4")
    ('cell', ('-O3', '-DN=4'))
    >>> check_cuda_line("%%cuda -ccbin=/tmp/x")
    Traceback (most recent call last):
    ...
    cudakit.errors.CompileError: option '-ccbin=/tmp/x' is not allowed in a graded %%cuda cell
    """
    from ..errors import CompileError
    from ..magic import parse_line

    args, options = parse_line(line.strip().removeprefix("%%cuda"))
    for option in options:
        if not ALLOWED_OPTION.fullmatch(option):
            raise CompileError(f"option {option!r} is not allowed in a graded %%cuda cell")
    if args.arch and not re.fullmatch(r"sm_\d+a?", args.arch):
        raise CompileError(f"--arch {shlex.quote(args.arch)} is not allowed in a graded cell")
    return args.name or "cell", options


class Remote:
    """A function of the participant's process, called with data, answering with data."""

    def __init__(self, judge: Judge, name: str):
        self.judge, self.name = judge, name
        self.__name__ = name

    def __repr__(self) -> str:
        return f"<function {self.name} (the submission's)>"

    def __call__(self, *args, **kwargs):
        judge = self.judge
        device = judge.device
        device.produced = []
        with judge.connect() as conn:
            wire.send(conn, {"msg": "call", "value": [self.name, tuple(args), kwargs]})
            requests, fault = 0, None
            while True:
                message = judge.receive(conn)
                if message.get("msg") == "device":
                    requests += 1
                    try:
                        reply = {"msg": "result",
                                 "value": device.handle(str(message.get("op")),
                                                        list(message["value"]))}
                    except Exception as error:  # reported to the participant's code
                        reply = {"msg": "error", "ename": type(error).__name__,
                                 "evalue": str(error)}
                        if fault is None and (isinstance(error, CudakitError)
                                              or CONTEXT_LOST.search(str(error))):
                            fault = error
                    wire.send(conn, reply)
                    continue
                if fault is not None:  # a kernel failed: that decides, whatever came back
                    raise fault
                if message.get("msg") == "error":
                    raise _exception(str(message.get("ename")), str(message.get("evalue")))
                result = message.get("value")
                break
        if requests and isinstance(result, np.ndarray) and result.size:
            self._check_provenance(result)
        return result

    def _check_provenance(self, result: np.ndarray) -> None:
        produced = self.judge.device.produced
        pool = np.concatenate([p.astype(result.dtype, copy=False).ravel() for p in produced]) \
            if produced else np.empty(0, result.dtype)
        found = np.isin(result.ravel(), pool)
        if result.dtype.kind in "fc":
            found |= np.isnan(result.ravel()) & np.isnan(pool).any()
        if not found.all():
            index = int(np.flatnonzero(~found)[0])
            raise AssertionError(
                f"{self.name} returned values that no kernel launch computed (first: element "
                f"{index}, {result.ravel()[index]!r}): the result must come from the kernel")


_BUILTIN_ERRORS = {name: getattr(builtins, name) for name in dir(builtins)
                   if isinstance(getattr(builtins, name), type)
                   and issubclass(getattr(builtins, name), BaseException)}


def _exception(ename: str, evalue: str) -> BaseException:
    """The participant's exception, rebuilt here by name (a plain one for unknown names)."""
    cls = _BUILTIN_ERRORS.get(ename)
    if cls is None or not issubclass(cls, Exception) or cls in (StopIteration,):
        cls = type(ename if ename.isidentifier() else "Error", (Exception,), {})
    try:
        return cls(evalue[:2000])
    except TypeError:
        return RuntimeError(f"{ename}: {evalue[:2000]}")


class Judge:
    """Runs one plan: cells in order, events to the grader."""

    def __init__(self, plan: dict, events):
        from IPython.core.interactiveshell import InteractiveShell

        self.plan = plan
        self.events = events
        self.shell = InteractiveShell.instance(colors="nocolor")  # plain text for the record
        self.device = Device(set(plan["kernels"]), self.shell.user_ns, plan["device_budget"])
        self.deadline = float("inf")

    # -- the participant's process ------------------------------------------------------
    def _gone(self) -> str:
        try:
            with open(self.plan["status"]) as f:
                return f.read(1000).strip()
        except OSError:
            return ""

    @contextlib.contextmanager
    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                sock.connect(self.plan["socket"])
                break
            except OSError:
                if self._gone():
                    sock.close()
                    raise ParticipantEnded(self._gone()) from None
                if time.monotonic() > self.deadline:
                    sock.close()
                    raise ParticipantTimeout("your code did not get ready within the time "
                                             "limit") from None
                time.sleep(0.05)
        try:
            yield sock
        finally:
            sock.close()

    def receive(self, sock: socket.socket) -> dict:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ParticipantTimeout("your function did not return within the time limit")
        sock.settimeout(left)
        try:
            return wire.receive(sock)
        except TimeoutError:
            raise ParticipantTimeout("your function did not return within the time limit") \
                from None
        except (EOFError, ConnectionError):
            raise ParticipantEnded("the process running your code ended") from None

    def bind_python(self, cell: dict) -> None:
        with self.connect() as conn:
            wire.send(conn, {"msg": "describe", "value": cell["names"]})
            reply = self.receive(conn)["value"]
        for name, info in reply["names"].items():
            if name not in cell["names"]:
                continue
            if info.get("kind") == "callable":
                self.shell.user_ns[name] = Remote(self, name)
            elif info.get("kind") == "data":
                self.shell.user_ns[name] = info.get("value")
            else:
                self.shell.user_ns.pop(name, None)
        failed = reply.get("outcomes", {}).get(cell.get("grade_id"))
        if failed:
            raise _exception(str(failed[0]), str(failed[1]))

    # -- cells ---------------------------------------------------------------------------
    def run_cuda(self, source: str) -> None:
        from ..magic import cuda_cell

        line, _, body = source.lstrip().partition("\n")
        if not line.startswith("%%cuda"):
            from ..errors import CompileError

            raise CompileError("this answer must stay a %%cuda cell (its first line is %%cuda)")
        check_cuda_line(line)
        cuda_cell(line.removeprefix("%%cuda"), body, self.shell.user_ns)

    def run(self, cell: dict) -> tuple[str, str] | None:
        role = cell["role"]
        self.deadline = time.monotonic() + self.plan["cell_timeout"] - 1
        try:
            if role == "cuda":
                self.run_cuda(cell["source"])
            elif role == "python":
                self.bind_python(cell)
            else:
                result = self.shell.run_cell(cell["source"], store_history=True)
                error = result.error_before_exec or result.error_in_exec
                if error is not None:
                    return type(error).__name__, str(error)
        except Exception as error:
            traceback.print_exception(error, limit=0)
            return type(error).__name__, str(error)
        return None

    def event(self, data: dict) -> None:
        self.events.write(json.dumps(data) + "\n")
        self.events.flush()

    def main(self) -> None:
        limit = self.plan["output_bytes"]
        for index in self.plan["replay"]:
            self.run(self.plan["cells"][str(index)])
        for index in self.plan["order"]:
            cell = self.plan["cells"][str(index)]
            self.event({"cell": index, "status": "start"})
            out = _Capped(limit)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                failure = self.run(cell)
            self.event({"cell": index, "status": "done", "failure": failure,
                        "output": out.getvalue()})


class _Capped(io.StringIO):
    """Output of one cell, cut at ``limit`` characters."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def write(self, text: str) -> int:
        room = self.limit - self.tell()
        if room > 0:
            super().write(text[:room])
        return len(text)


def main() -> None:
    plan = json.load(sys.stdin)
    events = os.fdopen(int(os.environ["CUDAKIT_JUDGE_FD"]), "w")
    Judge(plan, events).main()


if __name__ == "__main__":
    main()
