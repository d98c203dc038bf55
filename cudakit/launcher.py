"""Run one kernel launch in a child process, optionally under a tool such as ncu.

Profilers and sanitizers must start the program they watch, and a faulting kernel
must not take the notebook's context with it; both are served by launching in a
fresh Python process on the GPU engine. Arrays go in and come back as ``.npy`` files.

>>> result = run_in_subprocess(  # doctest: +SKIP
...     "__global__ void inc(int *x) { x[threadIdx.x] += 1; }", "inc",
...     grid=(1,), block=(32,), args=[np.zeros(32, np.int32)],
...     wrapper=["compute-sanitizer", "--tool", "memcheck"])
>>> result.ok, result.outputs[0][:3]  # doctest: +SKIP
(True, array([1, 1, 1], dtype=int32))
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import CudakitError


@dataclass
class LaunchResult:
    """What the child printed and returned; ``outputs`` holds each array argument afterwards."""

    returncode: int
    stdout: str
    stderr: str
    outputs: list[np.ndarray] = field(default_factory=list)
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def _write_job(directory: Path, source, kernel, grid, block, shared, options, args, repeat):
    spec = []
    for i, value in enumerate(args):
        if isinstance(value, np.ndarray):
            np.save(directory / f"arg{i}.npy", value)
            spec.append({"kind": "array", "file": f"arg{i}.npy"})
        elif isinstance(value, np.generic):
            spec.append({"kind": "scalar", "dtype": value.dtype.str, "value": value.item()})
        elif isinstance(value, bool | int | float):
            spec.append({"kind": "python", "value": value})
        else:
            raise CudakitError(
                f"argument {i} ({type(value).__name__}) cannot be sent to a child process: "
                "pass NumPy arrays and scalars"
            )
    job = {
        "kernel": kernel,
        "grid": list(grid),
        "block": list(block),
        "shared": int(shared),
        "options": list(options),
        "args": spec,
        "repeat": int(repeat),
    }
    (directory / "source.cu").write_text(source)
    (directory / "job.json").write_text(json.dumps(job))


def run_in_subprocess(
    source: str,
    kernel: str,
    *,
    grid,
    block,
    args,
    shared: int = 0,
    options=(),
    wrapper=(),
    timeout: float = 300,
    repeat: int = 1,
    env: dict | None = None,
) -> LaunchResult:
    """Launch ``kernel`` from ``source`` once (or ``repeat`` times) in a child on the GPU engine."""
    with tempfile.TemporaryDirectory(prefix="cudakit-launch-") as tmp:
        directory = Path(tmp)
        _write_job(directory, source, kernel, grid, block, shared, options, args, repeat)
        cmd = [*wrapper, sys.executable, "-m", "cudakit.launcher", str(directory)]
        child_env = {**os.environ, "CUDAKIT_BACKEND": "gpu", **(env or {})}
        try:
            done = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, env=child_env, check=False
            )
        except subprocess.TimeoutExpired as exc:
            return LaunchResult(-1, exc.stdout or "", exc.stderr or "", timed_out=True)
        except FileNotFoundError as exc:
            raise CudakitError(f"cannot start {cmd[0]!r}: {exc.strerror}") from None
        outputs = [
            np.load(directory / f"out{i}.npy")
            for i in range(len(args))
            if (directory / f"out{i}.npy").exists()
        ]
        return LaunchResult(done.returncode, done.stdout, done.stderr, outputs)


def _child(directory: Path) -> None:
    """The child's side: load the job, launch, save the arrays back."""
    from . import cuda
    from .binding import load
    from .kernel import find_kernel

    job = json.loads((directory / "job.json").read_text())
    kernels = load((directory / "source.cu").read_text(), job["options"])
    info = find_kernel({k.name: k.info for k in kernels.values()}, job["kernel"])
    kernel = kernels[info.name]
    args, arrays = [], {}
    for i, spec in enumerate(job["args"]):
        if spec["kind"] == "array":
            arrays[i] = np.load(directory / spec["file"])
            args.append(cuda.to_device(arrays[i]))
        elif spec["kind"] == "scalar":
            args.append(np.dtype(spec["dtype"]).type(spec["value"]))
        else:
            args.append(spec["value"])
    for _ in range(job["repeat"]):
        kernel(*args, grid=tuple(job["grid"]), block=tuple(job["block"]), shared=job["shared"])
    cuda.Context.synchronize()
    for i, host in arrays.items():
        cuda.memcpy_dtoh(host, args[i])
        np.save(directory / f"out{i}.npy", host)


if __name__ == "__main__":
    _child(Path(sys.argv[1]))
