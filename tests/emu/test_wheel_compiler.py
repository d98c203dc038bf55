"""Without a CUDA toolkit, the emulator compiles with nvcc from NVIDIA's pip wheels."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cudakit.compiler import wheel_toolkit

PROGRAM = r"""
import numpy as np
from cudakit import compiler, emu
src = '''#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void total(const int* x, int* out) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    int v = cg::reduce(tile, x[threadIdx.x], cg::plus<int>());
    if (tile.thread_rank() == 0) atomicAdd(out, v);
}'''
x = np.arange(128, dtype=np.int32)
out = np.zeros(1, np.int32)
emu.SourceModule(src).get_function("total")(emu.In(x), emu.InOut(out), block=(128, 1, 1))
print(compiler.nvcc_path(), int(out[0]))
"""


@pytest.mark.skipif(wheel_toolkit() is None, reason="NVIDIA's nvcc wheels are not installed")
def test_emulator_runs_with_the_wheels_nvcc_when_no_toolkit_is_visible(tmp_path):
    hidden = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    hidden["PATH"] = "/usr/bin:/bin"  # no toolkit's nvcc on PATH
    hidden["CUDAKIT_CACHE_DIR"] = str(tmp_path)
    hidden["PYTHONPATH"] = os.pathsep.join(sys.path)
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=hidden, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    nvcc, total = done.stdout.split()
    assert nvcc.startswith(wheel_toolkit()) and int(total) == sum(range(128))
