"""Lab 21's vectorised and temporally blocked stencils at shapes the notebook never uses.

Each ``%%cuda`` cell is loaded on its own on this machine's engine (the emulator in CI) and
compared with NumPy: widths of one float4, rows that end mid-block, windows whose core does not
divide the grid, and thread blocks narrower or wider than the window.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.stencil import C0, C1, NOTEBOOK, heat2d_reference
from cudakit import cuda


@pytest.fixture(scope="module")
def stencil(lab_kernels):
    return lab_kernels(NOTEBOOK)


def run(launch, u: np.ndarray, launches: int) -> np.ndarray:
    d_u, d_v = cuda.to_device(u), cuda.to_device(u)
    for _ in range(launches):
        launch(d_u, d_v)
        d_u, d_v = d_v, d_u
    return cuda.from_device(d_u, u.shape, np.float32)


@pytest.mark.parametrize(("ny", "nx", "width"), [(3, 4, 32), (9, 4, 32), (7, 8, 32),
                                                  (37, 260, 32), (22, 132, 64)])
def test_vec4_matches_numpy(stencil, ny, nx, width):
    u = np.random.default_rng(nx * ny).random((ny, nx), dtype=np.float32)
    rows = 4  # V4_ROWS

    def launch(d_u, d_v):
        stencil["heat2d_vec4"](d_u, d_v, nx, ny, C0, C1, block=(width, 1, 1),
                               grid=(-(-nx // 4 // width), -(-(ny - 2) // rows)))

    got = run(launch, u, 3)
    np.testing.assert_allclose(got, heat2d_reference(u, C0, C1, 3), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("wx", "wy", "depth", "block"), [
    (16, 16, 1, (32, 8)),     # block wider than the window
    (24, 12, 2, (8, 4)),      # several columns and rows per thread
    (40, 18, 3, (16, 16)),    # more thread rows than the last steps have rows
    (20, 40, 6, (32, 2)),     # tall window, deep blocking
    (32, 32, 12, (32, 4)),    # core of 8 x 8
])
def test_temporal_matches_numpy(stencil, wx, wy, depth, block):
    ny, nx, steps = 29, 53, 12
    u = np.random.default_rng(depth).random((ny, nx), dtype=np.float32)
    tx, ty = wx - 2 * depth, wy - 2 * depth

    def launch(d_u, d_v):
        stencil["heat2d_temporal"](d_u, d_v, nx, ny, C0, C1, wx, wy, depth,
                                   grid=(-(-nx // tx), -(-ny // ty)), block=(*block, 1),
                                   shared=2 * wx * wy * 4)

    got = run(launch, u, steps // depth)
    np.testing.assert_allclose(got, heat2d_reference(u, C0, C1, steps), rtol=1e-5, atol=1e-6)
