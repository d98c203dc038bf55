"""Start a grading process inside a bubblewrap sandbox, with resource limits.

``Sandbox(limits, gpu=..., shared=...)`` builds the ``bwrap`` command line; ``spawn`` starts a
process in it and returns a ``Confined`` handle that reads its output up to the output limit and
says in a sentence which limit ended it. The sandbox sees:

* read-only: ``/usr``, ``/etc``, the library folders, the Python installation and every
  ``sys.path`` folder outside the course repository, and the ``cudakit`` package alone
  (at ``/run/cudakit-lib``: not the repository around it, so not ``solutions/``);
* writable: a private empty working folder (also ``$HOME``) and ``/tmp``, both size-limited
  tmpfs that vanish with the process, plus the folders given in ``shared``;
* no network (``--unshare-net``: its own empty loopback), its own PID, IPC and UTS namespaces;
* with ``gpu=True``, the NVIDIA device nodes (``/dev/nvidia*``) and ``/sys`` read-only.

Limits: CPU time, file size and (where no GPU is mapped) address space are rlimits; the number of
processes is a ``pids`` cgroup where this user may make one (root on Linux), else ``RLIMIT_NPROC``;
output is counted by the reader here. Bubblewrap cannot be replaced by a library: it is the
program that makes the namespaces (Debian package ``bubblewrap``).

>>> Limits().describe("output")
'it printed more than 16 MiB of output'
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ..errors import CudakitError
from ..i18n.messages import _, language

PACKAGE = Path(__file__).resolve().parents[1]  # the cudakit package folder
INSIDE_PACKAGE = "/run/cudakit-lib"  # where the sandbox sees it (not the repository around it)
WORKDIR = "/home/grader"
PIDS_CGROUP = Path("/sys/fs/cgroup/pids")
_counter = itertools.count()


class SandboxError(CudakitError):
    """Bubblewrap is missing or cannot make a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed process (bytes, seconds, counts)."""

    cpu_seconds: int = 600
    memory_bytes: int = 4 << 30
    processes: int = 64
    file_bytes: int = 64 << 20
    output_bytes: int = 16 << 20
    tmp_bytes: int = 256 << 20

    def describe(self, which: str) -> str:
        """The sentence a test's feedback gives when ``which`` limit stopped the process."""
        mb = lambda n: f"{n / 2**20:g} MiB"  # noqa: E731
        return {
            "cpu": lambda: _("it used more than {seconds} s of CPU time").format(
                seconds=self.cpu_seconds),
            "memory": lambda: _("it used more than {size} of memory").format(
                size=mb(self.memory_bytes)),
            "processes": lambda: _("it started more than {count} processes or threads").format(
                count=self.processes),
            "file": lambda: _("it wrote a file larger than {size}").format(
                size=mb(self.file_bytes)),
            "output": lambda: _("it printed more than {size} of output").format(
                size=mb(self.output_bytes)),
        }[which]()


def bwrap() -> str | None:
    """The ``bwrap`` program, or None where bubblewrap is not installed."""
    return shutil.which("bwrap")


def check() -> None:
    """Raise SandboxError, saying what to do, unless bubblewrap can make a sandbox here.

    >>> check()  # doctest: +SKIP
    """
    program = bwrap()
    if program is None:
        raise SandboxError("bubblewrap (bwrap) is not installed: install the Debian package "
                           "'bubblewrap' (tools/install-system-deps does)")
    run = subprocess.run([program, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                          "--proc", "/proc", "--dev", "/dev", "true"],
                         capture_output=True, text=True, timeout=30)
    if run.returncode != 0:
        raise SandboxError(
            f"bubblewrap cannot make a sandbox on this machine ({run.stderr.strip()}). It needs "
            "user namespaces: enable them (sysctl kernel.unprivileged_userns_clone=1, or "
            "user.max_user_namespaces > 0; in a container, run it with --privileged or a "
            "seccomp profile that allows unshare)")


def _nvidia_nodes() -> list[str]:
    return sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri/renderD*"))


def gpu_present() -> bool:
    """Whether this machine has NVIDIA device nodes to pass through."""
    return bool(_nvidia_nodes())


def _outside(path: Path, hidden: list[Path]) -> bool:
    """True when ``path`` shows nothing of ``hidden`` (not inside one, not a parent of one)."""
    for secret in hidden:
        if path == secret or secret in path.parents or path in secret.parents:
            return False
    return True


class Sandbox:
    """The bwrap command line for one kind of grading process.

    ``hidden`` lists folders that must stay invisible (the repository, the solutions, the
    submissions, the grader's output); ``shared`` maps outside folders to writable folders
    inside (the channel between the two grading processes, the compile cache).
    """

    def __init__(self, limits: Limits, *, gpu: bool = False, hidden: list[Path] = (),
                 shared: dict[str, str] | None = None, env: dict[str, str] | None = None):
        self.limits = limits
        self.gpu = gpu
        self.hidden = [Path(h).resolve() for h in hidden] + [PACKAGE.parent]
        self.shared = shared or {}
        self.env = env or {}

    def _readonly(self) -> list[str]:
        """Read-only binds: system folders, the Python installation (even inside the
        repository, as a project venv is), and other import folders that hold no source tree."""
        def shows_secret(path: Path) -> bool:
            return not _outside(path, self.hidden)

        def source_tree(path: Path) -> bool:
            return (path / "cudakit").is_dir() or (path / "solutions").is_dir()

        chosen = [Path(p) for p in (sys.base_prefix, sys.prefix)
                  if not any(Path(p) in h.parents or Path(p) == h for h in self.hidden)]
        for entry in ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                      *[p for p in sys.path if p and os.path.isabs(p)]]:
            path = Path(entry)
            if path.exists() and not shows_secret(path.resolve()) and not source_tree(path):
                chosen.append(path)
        self.visible = chosen
        binds: list[str] = []
        kept: list[Path] = []
        for path in sorted(set(chosen), key=lambda p: len(p.parts)):
            if any(k == path or k in path.parents for k in kept):
                continue
            kept.append(path)
            binds += ["--ro-bind", str(path), str(path)]
        return binds

    def _pythonpath(self) -> str:
        """The package's folder, then the host's PYTHONPATH folders that are visible inside."""
        visible = {str(p) for p in self.visible}
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p in visible]
        return os.pathsep.join([INSIDE_PACKAGE, *extra])

    def command(self, argv: list[str]) -> list[str]:
        """The full command that runs ``argv`` in the sandbox."""
        program = bwrap()
        if program is None:
            raise SandboxError("bubblewrap (bwrap) is not installed")
        cmd = [program, "--unshare-all", "--die-with-parent", "--new-session",
               "--cap-drop", "ALL", "--hostname", "grader"]
        cmd += ["--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp", "--tmpfs", "/run"]
        cmd += self._readonly()
        cmd += ["--ro-bind", str(PACKAGE), f"{INSIDE_PACKAGE}/cudakit",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/dev/shm",
                "--size", str(self.limits.tmp_bytes), "--tmpfs", WORKDIR, "--chdir", WORKDIR]
        for outside, inside in self.shared.items():
            cmd += ["--bind", outside, inside]
        if self.gpu:
            for node in _nvidia_nodes():
                cmd += ["--dev-bind", node, node]
            cmd += ["--ro-bind", "/sys", "/sys"]
        cmd += ["--clearenv"]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin:" + os.path.dirname(sys.executable),
               "HOME": WORKDIR, "TMPDIR": "/tmp", "PYTHONPATH": self._pythonpath(),
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "LANG": "C.UTF-8",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMBA_NUM_THREADS": "1", "MPLBACKEND": "Agg", "IPYTHONDIR": "/tmp/ipython",
               "CUDAKIT_LANG": language(),  # the tools' own messages in the grader's language
               **self.env}
        for key in ("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                    "CUDAKIT_NVCC"):
            if key in os.environ and key not in env:
                env[key] = os.environ[key]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        return cmd + ["--", *argv]

    def spawn(self, argv: list[str], *, stdin=subprocess.PIPE, pass_fds=()) -> Confined:
        """Start ``argv`` in the sandbox, limits applied."""
        return Confined(self.command(argv), self.limits, memory=not self.gpu, stdin=stdin,
                        pass_fds=pass_fds)


def _pids_parent() -> Path | None:
    """Where to make pids cgroups: the v1 ``pids`` hierarchy, or the v2 root with ``pids``
    enabled for its children; None where this user may not."""
    if os.access(PIDS_CGROUP, os.W_OK):
        return PIDS_CGROUP
    unified = PIDS_CGROUP.parent
    control = unified / "cgroup.subtree_control"
    if not os.access(control, os.W_OK):
        return None
    try:
        if "pids" not in control.read_text().split():
            control.write_text("+pids")
    except OSError:
        return None
    return unified


def _pids_cgroup(limit: int) -> Path | None:
    """A fresh pids cgroup holding at most ``limit`` tasks, or None where none can be made."""
    parent = _pids_parent()
    if parent is None:
        return None
    path = parent / f"cudakit-grade-{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
        (path / "pids.max").write_text(str(limit))
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def _user_tasks() -> int:
    """Tasks (processes and threads) this user runs now, as RLIMIT_NPROC counts them."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == os.getuid():
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


class Confined:
    """A process started in a sandbox: its output (up to the limit) and why it ended."""

    def __init__(self, cmd: list[str], limits: Limits, *, memory: bool, stdin=subprocess.PIPE,
                 pass_fds=(), env: dict[str, str] | None = None, cwd: str | None = None):
        self.limits = limits
        self.cgroup = _pids_cgroup(limits.processes + 8)  # bwrap and its init count too
        tasks = _user_tasks() if self.cgroup is None and os.getuid() != 0 else 0
        self.output = bytearray()
        self.over = False  # printed past the output limit (and was killed for it)

        def confine() -> None:
            if self.cgroup is not None:
                (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))
            elif os.getuid() != 0:  # counts all of this user's tasks: allow for those running
                resource.setrlimit(resource.RLIMIT_NPROC, (tasks + limits.processes,) * 2)
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes,) * 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory:
                resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes,) * 2)

        self.process = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, pass_fds=pass_fds, env=env,
                                        cwd=cwd, preexec_fn=confine, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        while chunk := stream.read1(1 << 16):
            if len(self.output) + len(chunk) > self.limits.output_bytes:
                self.output += chunk[:self.limits.output_bytes - len(self.output)]
                self.over = True
                self.kill()
                break
            self.output += chunk

    def kill(self) -> None:
        """End the process and everything it started (its whole PID namespace)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill, reap and remove the cgroup."""
        self.kill()
        self.process.wait()
        self._reader.join(timeout=5)
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()

    def reason(self) -> str:
        """Why the process ended, in words ('' when it ended by itself or is running)."""
        code = self.process.poll()
        if self.over:
            return self.limits.describe("output")
        if code is None:
            return ""
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return self.limits.describe("cpu")
        if code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            return self.limits.describe("file")
        if self.cgroup is not None and self._pids_refused():
            return self.limits.describe("processes")
        return ""

    def _pids_refused(self) -> bool:
        try:
            events = (self.cgroup / "pids.events").read_text().split()
            return int(events[events.index("max") + 1]) > 0
        except (OSError, ValueError, IndexError):
            return False

    def pids_refused(self) -> bool:
        """Whether the sandbox tried to start more processes than allowed."""
        return self.cgroup is not None and self._pids_refused()
