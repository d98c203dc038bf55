"""Tests of cudakit.sanitize: the parser against compute-sanitizer output recorded on the H100.

The recorded outputs below were made on the GPU machine by this file itself::

    python tests/test_sanitizer.py capture OUT.json

which runs each sample kernel under ``compute-sanitizer --tool racecheck|memcheck|synccheck``
(through PyCUDA, so no cudakit code is involved) and writes the raw text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

SAMPLES = {
    "racy": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
""",
    "fixed": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
""",
    "oob": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2 * x[i];
}
""",
    "barrier": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    if (t < 128)
        __syncthreads();
    if (t == 0)
        out[blockIdx.x] = s[0] + s[255];
}
""",
}
TOOLS = {"racy": "racecheck", "fixed": "racecheck", "oob": "memcheck", "barrier": "synccheck"}


def _launch(case: str) -> None:
    """Run one sample on the GPU through PyCUDA (the process compute-sanitizer watches)."""
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule

    mod = SourceModule(SAMPLES[case], no_extern_c=True, options=["-lineinfo"])
    blocks = 4
    x = np.arange(blocks * 256, dtype=np.int32)
    out = np.zeros(blocks * 256 if case == "oob" else blocks, dtype=np.int32)
    d_x = drv.to_device(x[: x.size - 8] if case == "oob" else x)
    d_out = drv.mem_alloc(out.nbytes)
    mod.get_function("block_sum")(d_x, d_out, grid=(blocks, 1), block=(256, 1, 1))
    drv.Context.synchronize()


def _capture(path: Path) -> None:
    """Run every sample under its tool; write {case: {tool, exit, stdout, stderr}} as JSON."""
    records = {}
    for case, tool in TOOLS.items():
        run = subprocess.run(
            ["compute-sanitizer", "--tool", tool, sys.executable, __file__, "launch", case],
            capture_output=True, text=True, timeout=60)
        records[case] = {"tool": tool, "exit": run.returncode, "stdout": run.stdout,
                         "stderr": run.stderr}
    path.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        _launch(sys.argv[2])
    else:
        _capture(Path(sys.argv[2]))
