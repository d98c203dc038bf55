"""The out-of-core schedules of benchmarks/out_of_core.py, replayed in NumPy (no GPU).

Both schemes (the paper's halo rows, the skewed bands with the triangle hand-over) must give
the in-core result bit for bit for every depth and chunk size, with device buffers poisoned
with NaN so that any row read before it is written shows up.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchmarks.out_of_core import SETS, buffer_rows, largest_b, plan, spans

C1 = np.float32(0.1)
C0 = np.float32(1 - 4 * C1)


def step(u, v, at, rows, row0, n, nx):
    """Rows [row0, row0 + rows) from flat buffer u to v, both starting at row offset `at`."""
    for r in range(rows):
        y, k = row0 + r, (at + r) * nx
        row = u[k:k + nx].copy()
        out = row.copy()
        if 1 <= y < n - 1:
            up, down = u[k - nx:k], u[k + nx:k + 2 * nx]
            out[1:-1] = C0 * row[1:-1] + C1 * ((up[1:-1] + down[1:-1]) + (row[:-2] + row[2:]))
        v[k:k + nx] = out


def in_core(u0, steps):
    n, nx = u0.shape
    a, b = u0.ravel().copy(), u0.ravel().copy()
    for _ in range(steps):
        step(a, b, 0, n, 0, n, nx)
        a, b = b, a
    return a.reshape(n, nx)


def out_of_core(u0, steps, b, depth, scheme):
    n, nx = u0.shape
    src, dst = u0.ravel().copy(), np.full(u0.size, np.nan, np.float32)
    chunks = plan(n, b, scheme == "skew")
    rows = buffer_rows(b, depth, scheme)
    sets = [(np.full(rows * nx, np.nan, np.float32), np.full(rows * nx, np.nan, np.float32))
            for _ in range(SETS)]
    done = 0
    while done < steps:
        k = min(depth, steps - done)
        for c, (r0, r1) in enumerate(chunks):
            u, v = sets[c % SETS]
            base = spans(r0, r1, n, k, 0, scheme)[0]
            first, last = (r0, r1) if scheme == "skew" else (base, min(r1 + k, n))
            u[(first - base) * nx:(last - base) * nx] = src[first * nx:last * nx]
            if scheme == "skew" and c > 0:
                pbase = spans(*chunks[c - 1], n, k, 0, scheme)[0]
                for mine, theirs in zip((u, v), sets[(c - 1) % SETS], strict=True):
                    mine[:(r0 - base) * nx] = theirs[(base - pbase) * nx:(r0 - pbase) * nx]
            a, bb = u, v
            for t in range(1, k + 1):
                _, lo, hi = spans(r0, r1, n, k, t, scheme)
                if hi > lo:
                    step(a, bb, lo - base, hi - lo, lo, n, nx)
                a, bb = bb, a
            lo, hi = (r0, r1) if scheme == "halo" else spans(r0, r1, n, k, k, scheme)[1:]
            dst[lo * nx:hi * nx] = a[(lo - base) * nx:(hi - base) * nx]
        src, dst = dst, src
        done += k
    return src.reshape(n, nx)


@pytest.fixture(scope="module")
def domain():
    u0 = np.random.default_rng(1).random((61, 9), dtype=np.float32)
    return u0, in_core(u0, 9)


@pytest.mark.parametrize(("scheme", "depth", "b"),
                         list(itertools.product(("halo", "skew"), (1, 3, 9), (2, 7, 70))))
def test_schedule_equals_in_core(domain, scheme, depth, b):
    u0, want = domain
    got = out_of_core(u0, 9, b, depth, scheme)
    assert np.array_equal(got, want)


def test_plan_covers_every_row_once_with_ramped_ends():
    chunks = plan(1000, 90)
    assert chunks[0][0] == 0 and chunks[-1][1] == 1000
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
    sizes = [r1 - r0 for r0, r1 in chunks]
    assert sizes[:3] == [3, 10, 30] and sizes[-3:] == [30, 10, 3] and max(sizes) == 90


def test_budget_too_small_is_named():
    assert largest_b(6 * 10 * 64, 64, 2, "skew") == 7
    with pytest.raises(ValueError, match="holds no chunk"):
        largest_b(6 * 4 * 64, 64, 2, "halo")
    with pytest.raises(ValueError, match="at least 2 rows"):
        plan(10, 1)
