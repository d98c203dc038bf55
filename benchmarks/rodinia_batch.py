"""The ninth held-out batch: kernels of the Rodinia benchmark suite at its own problem sizes.

Rodinia (University of Virginia) is the suite of real-world GPU kernels that papers on GPU
performance models test against; ``tests/emu/rodinia/kernels`` holds its device code
copied unchanged, and ``tests/emu/rodinia/test_rodinia.py`` checks each kernel on the
emulator against NumPy on small inputs. Here the same kernels are launched as the
benchmarks' host code launches them, at the sizes of Rodinia's own runs (hotspot and lud on
1024 and 2048 grids, srad on a 2048 x 2048 image, pathfinder on 100 000 columns, lavaMD on
10^3 boxes), for ``peer_times.py --ninth`` to predict first and then time on the GPU.

>>> [launch.kernel for launch in NINTH][:3]
['calculate_temp', 'dynproc_kernel', 'prepare']
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.emu.rodinia.test_rodinia import BOX, DIM, FOUR

from .peer_times import Launch

RODINIA = Path(__file__).resolve().parents[1] / "tests" / "emu" / "rodinia" / "kernels"


def _hotspot(n: int, pyramid: int):
    """calculate_temp's arguments for an n x n chip (Rodinia's hotspot.cu constants)."""
    t_chip, size = 0.0005, 0.016
    gh = gw = size / n
    cap = 0.5 * 1.75e6 * t_chip * gw * gh
    rx, ry = gw / (2.0 * 100 * t_chip * gh), gh / (2.0 * 100 * t_chip * gw)
    rz = t_chip / (100 * gh * gw)
    step = 0.001 / (3.0e6 / (0.5 * t_chip * 1.75e6))

    def inputs(r):
        temp = r.uniform(320, 340, n * n).astype(np.float32)
        power = r.uniform(0, 1e-3, n * n).astype(np.float32)
        return [np.int32(pyramid), power, temp, np.zeros_like(temp), np.int32(n), np.int32(n),
                np.int32(pyramid), np.int32(pyramid), *map(np.float32, (cap, rx, ry, rz, step)),
                np.float32(0.001)]
    return inputs


def _pathfinder(cols: int, rows: int, pyramid: int):
    def inputs(r):
        wall = r.integers(0, 10, (rows - 1) * cols).astype(np.int32)
        return [np.int32(pyramid), wall, r.integers(0, 10, cols).astype(np.int32),
                np.zeros(cols, np.int32), np.int32(cols), np.int32(rows), np.int32(0),
                np.int32(pyramid)]
    return inputs


def _srad(nr: int, nc: int, kernel: str):
    """Arguments of srad_v1's kernels on an nr x nc image stored by columns."""
    ne = nr * nc

    def inputs(r):
        image = r.uniform(0.5, 1.5, ne).astype(np.float32)
        if kernel == "prepare":
            return [np.int64(ne), image, np.zeros(ne, np.float32), np.zeros(ne, np.float32)]
        if kernel == "reduce":
            sums = r.uniform(0, 2, ne).astype(np.float32)
            return [np.int64(ne), np.int32(ne), np.int32(1), sums, sums * sums]
        rows, cols = np.arange(nr), np.arange(nc)
        around = [np.maximum(rows - 1, 0), np.minimum(rows + 1, nr - 1),
                  np.minimum(cols + 1, nc - 1), np.maximum(cols - 1, 0)]
        around = [a.astype(np.int32) for a in around]
        derivatives = [r.uniform(-0.1, 0.1, ne).astype(np.float32) for _ in range(4)]
        c = r.uniform(0, 1, ne).astype(np.float32)
        head = [np.float32(0.5), np.int32(nr), np.int32(nc), np.int64(ne), *around]
        if kernel == "srad":  # ... dN, dS, dE, dW, q0sqr, c, I
            return [*head, *derivatives, np.float32(0.05), c, image]
        return [*head, *derivatives, c, image]  # srad2
    return inputs


def _lud(n: int):
    def inputs(r):
        a = (r.random((n, n)) + np.eye(n) * n).astype(np.float32).reshape(-1)
        return [a, np.int32(n), np.int32(0)]
    return inputs


def _gaussian(n: int):
    def inputs(r):
        a = r.uniform(1, 2, n * n).astype(np.float32)
        return [r.uniform(0, 1, n * n).astype(np.float32), a, np.ones(n, np.float32),
                np.int32(n), np.int32(n), np.int32(0)]
    return inputs


LATLONG = np.dtype([("lat", np.float32), ("lng", np.float32)])


def _nn(n: int):
    def inputs(r):
        where = np.zeros(n, LATLONG)
        where["lat"], where["lng"] = r.uniform(-90, 90, n), r.uniform(-180, 180, n)
        return [where, np.zeros(n, np.float32), np.int32(n), np.float32(30), np.float32(90)]
    return inputs


def _hotspot3d(nx: int, ny: int, nz: int):
    def inputs(r):
        temp = r.uniform(320, 340, nx * ny * nz).astype(np.float32)
        power = r.uniform(0, 1e-3, nx * ny * nz).astype(np.float32)
        c = [np.float32(v) for v in (0.05, 0.05, 0.07, 0.07, 0.02, 0.02)]
        cc = np.float32(1.0 - (2 * 0.05 + 2 * 0.07 + 3 * 0.02))
        return [power, temp, np.zeros_like(temp), np.float32(0.9), np.int32(nx), np.int32(ny),
                np.int32(nz), *c, cc]
    return inputs


def _lavamd(boxes1d: int, per: int = 100):
    """lavaMD's boxes (each with its up to 26 neighbours), charges and positions."""
    def inputs(r):
        n = boxes1d ** 3
        boxes = np.zeros(n, BOX)
        z, y, x = np.unravel_index(np.arange(n), (boxes1d,) * 3)
        boxes["x"], boxes["y"], boxes["z"] = x, y, z
        boxes["number"], boxes["offset"] = np.arange(n), np.arange(n) * per
        for h in range(n):
            count = 0
            for dz, dy, dx in np.ndindex(3, 3, 3):
                k, j, i = x[h] + dx - 1, y[h] + dy - 1, z[h] + dz - 1
                if (dx, dy, dz) != (1, 1, 1) and min(k, j, i) >= 0 and max(k, j, i) < boxes1d:
                    other = (i * boxes1d + j) * boxes1d + k
                    boxes["nei"][h, count] = (k, j, i, other, other * per)
                    count += 1
            boxes["nn"][h] = count
        rv = np.zeros(n * per, FOUR)
        for f in FOUR.names:
            rv[f] = r.integers(1, 11, n * per) / 10.0
        dim = np.zeros((), DIM)
        dim["boxes1d_arg"], dim["number_boxes"], dim["space_elem"] = boxes1d, n, n * per
        alpha = np.array(0.5, np.dtype([("alpha", np.float64)]))
        return [alpha[()], dim[()], boxes, rv, r.integers(1, 11, n * per) / 10.0,
                np.zeros(n * per, FOUR)]
    return inputs


def _backprop(n_in: int, hidden: int = 16):
    def inputs(r):
        return [r.random(n_in + 1).astype(np.float32), np.zeros(hidden + 1, np.float32),
                (r.random((n_in + 1) * (hidden + 1)) - 0.5).astype(np.float32),
                np.zeros(n_in // 16 * hidden, np.float32), np.int32(n_in), np.int32(hidden)]
    return inputs


SRAD_N = 2048
NINTH = [
    Launch("hotspot 1024^2, pyramid 2", "hotspot.cu", "calculate_temp", _hotspot(1024, 2),
           (86, 86), (16, 16), 0, RODINIA),
    Launch("pathfinder 100000 x 100, pyramid 20", "pathfinder.cu", "dynproc_kernel",
           _pathfinder(100_000, 101, 20), (463,), (256,), 0, RODINIA),
    Launch("srad prepare 2048^2", "srad_v1.cu", "prepare", _srad(SRAD_N, SRAD_N, "prepare"),
           (SRAD_N * SRAD_N // 512,), (512,), 0, RODINIA),
    Launch("srad reduce 2048^2, first pass", "srad_v1.cu", "reduce",
           _srad(SRAD_N, SRAD_N, "reduce"), (SRAD_N * SRAD_N // 512,), (512,), 0, RODINIA),
    Launch("srad 2048^2", "srad_v1.cu", "srad", _srad(SRAD_N, SRAD_N, "srad"),
           (SRAD_N * SRAD_N // 512,), (512,), 0, RODINIA),
    Launch("srad2 2048^2", "srad_v1.cu", "srad2", _srad(SRAD_N, SRAD_N, "srad2"),
           (SRAD_N * SRAD_N // 512,), (512,), 0, RODINIA),
    Launch("lud_internal 2048, first step", "lud.cu", "lud_internal", _lud(2048),
           (127, 127), (16, 16), 0, RODINIA),
    Launch("gaussian Fan2 2048, first step", "gaussian.cu", "Fan2", _gaussian(2048),
           (512, 512), (4, 4), 0, RODINIA),
    Launch("nn 2^22 records", "nn.cu", "euclid", _nn(1 << 22), (16384,), (256,), 0, RODINIA),
    Launch("hotspot3D 512 x 512 x 64", "hotspot3D.cu", "hotspotOpt1", _hotspot3d(512, 512, 64),
           (8, 128), (64, 4), 0, RODINIA),
    Launch("lavaMD 10^3 boxes", "lavaMD.cu", "kernel_gpu_cuda", _lavamd(10), (1000,), (128,),
           0, RODINIA),
    Launch("backprop layerforward 65536 x 16", "backprop.cu", "bpnn_layerforward_CUDA",
           _backprop(65536), (1, 4096), (16, 16), 0, RODINIA),
]
