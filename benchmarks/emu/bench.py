"""Emulator speed: cudakit.emu against Numba's CUDA simulator on the same four algorithms.

Run ``python -m benchmarks.emu.bench`` (needs ``numba``). Each algorithm is written
once in CUDA C (for the emulator) and once as a Numba kernel (for
``NUMBA_ENABLE_CUDASIM=1``, run in a subprocess); both run at the sizes the
simulator can finish, then the emulator alone at CI sizes. Results are checked
against NumPy and written to ``benchmarks/emu/README.md``. These are CPU timings
of emulators; they say nothing about GPU speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

CUDA_SOURCE = r"""
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
__global__ void reduce_tree(const float* in, float* out, int n) {
    __shared__ float s[256];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
#define TILE 16
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int ty = threadIdx.y, tx = threadIdx.x;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
__global__ void stencil3x3(const float* u, float* v, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= n - 1 || y >= n - 1) return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            s += u[(y + dy) * n + x + dx];
    v[y * n + x] = s / 9.0f;
}
"""

NUMBA_SCRIPT = r'''
import json, sys, time
import numpy as np
from numba import cuda, float32

@cuda.jit
def vec_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]

@cuda.jit
def reduce_tree(inp, out, n):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = inp[i] if i < n else 0.0
    cuda.syncthreads()
    k = cuda.blockDim.x // 2
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k >>= 1
    if t == 0:
        out[cuda.blockIdx.x] = s[0]

@cuda.jit
def matmul_tiled(A, B, C, n):
    As = cuda.shared.array((16, 16), float32)
    Bs = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 16 + ty, cuda.blockIdx.x * 16 + tx
    acc = float32(0.0)
    for t in range(n // 16):
        As[ty, tx] = A[row * n + t * 16 + tx]
        Bs[ty, tx] = B[(t * 16 + ty) * n + col]
        cuda.syncthreads()
        for k in range(16):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    C[row * n + col] = acc

@cuda.jit
def stencil3x3(u, v, n):
    x = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    y = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if x < 1 or y < 1 or x >= n - 1 or y >= n - 1:
        return
    s = float32(0.0)
    for dy in range(-1, 2):
        for dx in range(-1, 2):
            s += u[(y + dy) * n + x + dx]
    v[y * n + x] = s / float32(9.0)

def run(name, size):
    rng = np.random.default_rng(0)
    if name == "vec_add":
        a, b = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
        c = np.zeros_like(a)
        call = lambda: vec_add[(size + 255) // 256, 256](a, b, c, size)
    elif name == "reduce_tree":
        a = rng.random(size, dtype=np.float32)
        c = np.zeros(size // 256, np.float32)
        call = lambda: reduce_tree[size // 256, 256](a, c, size)
    elif name == "matmul_tiled":
        a, b = rng.random(size * size, dtype=np.float32), rng.random(size * size, dtype=np.float32)
        c = np.zeros_like(a)
        call = lambda: matmul_tiled[(size // 16, size // 16), (16, 16)](a, b, c, size)
    else:
        a = rng.random(size * size, dtype=np.float32)
        c = np.zeros_like(a)
        call = lambda: stencil3x3[(size // 16, size // 16), (16, 16)](a, c, size)
    start = time.perf_counter()
    call()
    return time.perf_counter() - start

name, size = sys.argv[1], int(sys.argv[2])
print(json.dumps({"seconds": run(name, size)}))
'''

# (kernel, size the simulator runs, CI size for the emulator alone)
WORKLOADS = [
    ("vec_add", 1 << 14, 1 << 20),
    ("reduce_tree", 1 << 14, 1 << 20),
    ("matmul_tiled", 64, 256),
    ("stencil3x3", 128, 512),
]
LABELS = {"vec_add": "vector add", "reduce_tree": "shared-memory tree reduction (256 threads)",
          "matmul_tiled": "tiled matmul (16x16 tiles)", "stencil3x3": "3x3 stencil"}


def emulator_run(mod, name: str, size: int):
    """Time a launch on the emulator (best of five); return (seconds, warp operations, max
    error)."""
    from cudakit import emu

    rng = np.random.default_rng(0)
    f = mod.get_function(name)
    if name == "vec_add":
        a, b = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
        c = np.zeros_like(a)
        args, cfg, ref = [emu.In(a), emu.In(b), emu.Out(c), np.int32(size)], \
            dict(grid=((size + 255) // 256, 1), block=(256, 1, 1)), lambda: a + b
    elif name == "reduce_tree":
        a = rng.random(size, dtype=np.float32)
        c = np.zeros(size // 256, np.float32)
        args, cfg = [emu.In(a), emu.Out(c), np.int32(size)], dict(grid=(size // 256, 1),
                                                                   block=(256, 1, 1))
        ref = lambda: a.reshape(-1, 256).astype(np.float64).sum(axis=1)
    elif name == "matmul_tiled":
        a = rng.random((size, size), dtype=np.float32)
        b = rng.random((size, size), dtype=np.float32)
        c = np.zeros_like(a)
        args, cfg = [emu.In(a), emu.In(b), emu.Out(c), np.int32(size)], dict(
            grid=(size // 16, size // 16), block=(16, 16, 1))
        ref = lambda: a.astype(np.float64) @ b
    else:
        a = rng.random((size, size), dtype=np.float32)
        c = np.zeros_like(a)
        args, cfg = [emu.In(a), emu.Out(c), np.int32(size)], dict(
            grid=(size // 16, size // 16), block=(16, 16, 1))

        def ref():
            out = np.zeros_like(a, dtype=np.float64)
            inner = sum(a[1 + dy:size - 1 + dy, 1 + dx:size - 1 + dx].astype(np.float64)
                        for dy in (-1, 0, 1) for dx in (-1, 0, 1))
            out[1:-1, 1:-1] = inner / 9
            return out
    counter = emu.OpCounter()
    f(*args, **cfg, counter=counter)  # warm-up run, counting warp operations
    seconds = float("inf")
    for _ in range(5):  # best of five: a millisecond launch is at the mercy of preemption
        start = time.perf_counter()
        f(*args, **cfg)
        seconds = min(seconds, time.perf_counter() - start)
    err = float(np.max(np.abs(c.astype(np.float64) - ref()) / (1 + np.abs(ref()))))
    return seconds, counter.ops, err


def numba_run(name: str, size: int) -> float:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", NUMBA_SCRIPT, name, str(size)], env=env,
                          capture_output=True, text=True, check=True, timeout=3600)
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    from benchmarks.common import markdown_table
    from cudakit import emu

    mod = emu.SourceModule(CUDA_SOURCE, no_extern_c=True)
    rows = []
    for name, small, ci in WORKLOADS:
        numba_s = numba_run(name, small)
        emu_s, _, err_small = emulator_run(mod, name, small)
        ci_s, ops, err_ci = emulator_run(mod, name, ci)
        size = (lambda n: f"{n}x{n}") if "mat" in name or "sten" in name else (
            lambda n: f"2^{n.bit_length() - 1}")
        rows.append([LABELS[name], size(small), f"{numba_s:.2f}", f"{emu_s * 1e3:.1f}",
                     f"{numba_s / emu_s:.0f}x", size(ci), f"{ci_s:.2f}",
                     f"{ops / ci_s / 1e6:.1f}", f"{max(err_small, err_ci):.1e}"])
        print(rows[-1], flush=True)
    table = markdown_table(
        ["algorithm", "size", "Numba simulator (s)", "cudakit.emu (ms)", "speed-up",
         "CI size", "cudakit.emu at CI size (s)", "M warp-ops/s", "max rel. error"], rows)
    cpu = os.cpu_count()
    text = (HERE / "README.md").read_text().split("<!-- results -->")[0] + "<!-- results -->\n\n"
    text += (f"Measured {time.strftime('%Y-%m-%d')} on this CPU-only machine ({cpu} cores) "
             f"with `python -m benchmarks.emu.bench`.\n\n{table}\n")
    (HERE / "README.md").write_text(text)


if __name__ == "__main__":
    main()
