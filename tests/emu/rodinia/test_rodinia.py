"""Kernels of the Rodinia benchmark suite (``kernels/``, device code copied unchanged by
``extract.py``), each launched as its benchmark's host code launches it, on small inputs,
against a NumPy reference written from the algorithm. Where a kernel itself is wrong
(srad_v2 reads outside its image, hybridsort's histogram races inside a warp, leukocyte's
MGVF across warps), the test checks that the emulator reports it. Left out: kernels that use
texture references, which CUDA 12 removed (kmeans' ``kmeansPoint``, hybridsort's sorts,
leukocyte's find_ellipse), and myocyte and heartwall, whose models are too large for a
reference written here.
"""

from __future__ import annotations

import functools
import heapq
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu
from cudakit.errors import MemcheckError, RaceError

KERNELS = Path(__file__).resolve().parent / "kernels"


@functools.cache
def _module(name: str):
    return emu.SourceModule((KERNELS / name).read_text(), no_extern_c=True)


def _fn(name: str, kernel: str):
    return _module(name).get_function(kernel)


def _dev(a: np.ndarray):
    return emu.to_device(np.ascontiguousarray(a))


def _get(d, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    emu.memcpy_dtoh(out, d)
    return out


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


# -- hotspot: pyramid stencil of the chip's heat equation ---------------------------------------
def test_hotspot(rng):
    bs, n, pyramid, total = 16, 40, 2, 5
    temp = (rng.random((n, n)) * 20 + 320).astype(np.float32)
    power = (rng.random((n, n)) * 1e-3).astype(np.float32)
    t_chip, height, width = 0.0005, 0.016, 0.016
    gh, gw = np.float32(height / n), np.float32(width / n)
    cap = np.float32(0.5 * 1.75e6 * np.float32(t_chip) * gw * gh)
    rx = np.float32(gw / (2.0 * 100 * np.float32(t_chip) * gh))
    ry = np.float32(gh / (2.0 * 100 * np.float32(t_chip) * gw))
    rz = np.float32(np.float32(t_chip) / (100 * gh * gw))
    step = np.float32(0.001 / (3.0e6 / (0.5 * np.float32(t_chip) * 1.75e6)))
    small = bs - 2 * pyramid
    blocks = -(-n // small)
    f = _fn("hotspot.cu", "calculate_temp")
    d_power = _dev(power)
    bufs = [_dev(temp), _dev(np.zeros_like(temp))]
    src, dst = 1, 0
    for t in range(0, total, pyramid):
        src, dst = dst, src
        f(np.int32(min(pyramid, total - t)), d_power, bufs[src], bufs[dst], np.int32(n),
          np.int32(n), np.int32(pyramid), np.int32(pyramid), cap, rx, ry, rz, step,
          np.float32(0.001), block=(bs, bs, 1), grid=(blocks, blocks))
    got = _get(bufs[dst], temp)

    want = temp.astype(np.float64)
    k = float(step) / float(cap)
    for _ in range(total):
        p = np.pad(want, 1, mode="edge")
        want = want + k * (power + (p[2:, 1:-1] + p[:-2, 1:-1] - 2 * want) / float(ry)
                           + (p[1:-1, 2:] + p[1:-1, :-2] - 2 * want) / float(rx)
                           + (80.0 - want) / float(rz))
    np.testing.assert_allclose(got, want, rtol=1e-5)


# -- pathfinder: dynamic programming, cheapest path down a grid ---------------------------------
def test_pathfinder(rng):
    bs, cols, rows, pyramid = 256, 600, 20, 5
    wall = rng.integers(0, 10, (rows, cols)).astype(np.int32)
    small = bs - 2 * pyramid
    blocks = -(-cols // small)
    f = _fn("pathfinder.cu", "dynproc_kernel")
    d_wall = _dev(wall[1:])
    res = [_dev(wall[0]), _dev(np.zeros(cols, np.int32))]
    src, dst = 1, 0
    for t in range(0, rows - 1, pyramid):
        src, dst = dst, src
        f(np.int32(min(pyramid, rows - t - 1)), d_wall, res[src], res[dst], np.int32(cols),
          np.int32(rows), np.int32(t), np.int32(pyramid), block=(bs, 1, 1), grid=(blocks, 1))
    got = _get(res[dst], wall[0])

    want = wall[0].astype(np.int64)
    for i in range(1, rows):
        p = np.pad(want, 1, mode="edge")
        want = np.minimum(np.minimum(p[:-2], p[1:-1]), p[2:]) + wall[i]
    np.testing.assert_array_equal(got, want)


# -- nw: Needleman-Wunsch alignment, anti-diagonal sweep of 16x16 tiles --------------------------
BLOSUM62_DIAG = [4, 5, 6, 6, 9, 5, 5, 6, 8, 4, 4, 5, 5, 6, 7, 4, 5, 11, 7, 4, 4, 4, -1, 1]


def _blosum62(rng):
    # Any symmetric score table does: the kernel reads reference scores from memory.
    t = rng.integers(-4, 4, (24, 24))
    t = np.triu(t) + np.triu(t, 1).T
    np.fill_diagonal(t, BLOSUM62_DIAG)
    return t


def test_needle(rng):
    bs, n, penalty = 16, 64, 10
    cols = n + 1
    seq_a, seq_b = rng.integers(1, 11, n), rng.integers(1, 11, n)
    ref = np.zeros((cols, cols), np.int32)
    ref[1:, 1:] = _blosum62(rng)[seq_a[:, None], seq_b[None, :]]
    items = np.zeros((cols, cols), np.int32)
    items[1:, 0] = -np.arange(1, cols) * penalty
    items[0, 1:] = -np.arange(1, cols) * penalty
    d_ref, d_m = _dev(ref), _dev(items)
    width = n // bs
    f1, f2 = _fn("needle.cu", "needle_cuda_shared_1"), _fn("needle.cu", "needle_cuda_shared_2")
    for i in range(1, width + 1):
        f1(d_ref, d_m, np.int32(cols), np.int32(penalty), np.int32(i), np.int32(width),
           block=(bs, 1, 1), grid=(i, 1))
    for i in range(width - 1, 0, -1):
        f2(d_ref, d_m, np.int32(cols), np.int32(penalty), np.int32(i), np.int32(width),
           block=(bs, 1, 1), grid=(i, 1))
    got = _get(d_m, items)

    want = items.astype(np.int64)
    for i in range(1, cols):
        for j in range(1, cols):
            want[i, j] = max(want[i - 1, j - 1] + ref[i, j], want[i, j - 1] - penalty,
                             want[i - 1, j] - penalty)
    np.testing.assert_array_equal(got, want)


# -- srad_v1: speckle-reducing anisotropic diffusion, with its multi-pass reduction -------------
def test_srad_v1(rng):
    threads, nr, nc, niter, lam = 512, 64, 30, 2, 0.5
    ne = nr * nc  # column-major image, 4 blocks: the reduction's second pass has no remainder
    img = (rng.random(ne) * 200 + 20).astype(np.float32)
    i_n = np.maximum(np.arange(nr) - 1, 0).astype(np.int32)
    i_s = np.minimum(np.arange(nr) + 1, nr - 1).astype(np.int32)
    j_w = np.maximum(np.arange(nc) - 1, 0).astype(np.int32)
    j_e = np.minimum(np.arange(nc) + 1, nc - 1).astype(np.int32)
    blocks = -(-ne // threads)
    f = {k: _fn("srad_v1.cu", k)
         for k in ("extract", "prepare", "reduce", "srad", "srad2", "compress")}
    d_i = _dev(img)
    zeros = np.zeros(ne, np.float32)
    d_sums, d_sums2 = _dev(zeros), _dev(zeros)
    d_dn, d_ds, d_dw, d_de, d_c = (_dev(zeros) for _ in range(5))
    d_in, d_is, d_je, d_jw = _dev(i_n), _dev(i_s), _dev(j_e), _dev(j_w)
    launch = dict(block=(threads, 1, 1), grid=(blocks, 1))
    f["extract"](np.int64(ne), d_i, **launch)
    totals = []
    for _ in range(niter):
        f["prepare"](np.int64(ne), d_i, d_sums, d_sums2, **launch)
        b2, no, mul = blocks, ne, 1
        while b2 != 0:
            f["reduce"](np.int64(ne), np.int32(no), np.int32(mul), d_sums, d_sums2,
                        block=(threads, 1, 1), grid=(b2, 1))
            no = b2
            if b2 == 1:
                b2 = 0
            else:
                mul *= threads
                b2 = -(-b2 // threads)
        total = _get(d_sums, np.zeros(1, np.float32))[0]
        total2 = _get(d_sums2, np.zeros(1, np.float32))[0]
        totals.append((total, total2))
        mean = np.float32(total / np.float32(ne))
        var = np.float32(total2 / np.float32(ne) - mean * mean)
        q0sqr = np.float32(var / (mean * mean))
        f["srad"](np.float32(lam), np.int32(nr), np.int32(nc), np.int64(ne), d_in, d_is, d_je,
                  d_jw, d_dn, d_ds, d_de, d_dw, q0sqr, d_c, d_i, **launch)
        f["srad2"](np.float32(lam), np.int32(nr), np.int32(nc), np.int64(ne), d_in, d_is, d_je,
                   d_jw, d_dn, d_ds, d_de, d_dw, d_c, d_i, **launch)
    f["compress"](np.int64(ne), d_i, **launch)
    got = _get(d_i, img)

    im = np.exp(img.astype(np.float64) / 255).reshape(nc, nr).T  # [row, col]
    for it in range(niter):
        s, s2 = im.sum(), (im * im).sum()
        np.testing.assert_allclose(totals[it], (s, s2), rtol=1e-5)
        mean = s / ne
        q0 = (s2 / ne - mean * mean) / (mean * mean)
        dn, ds = im[i_n, :] - im, im[i_s, :] - im
        dw, de = im[:, j_w] - im, im[:, j_e] - im
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (im * im)
        lap = (dn + ds + dw + de) / im
        num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
        den = 1 + 0.25 * lap
        qsqr = num / (den * den)
        c = np.clip(1.0 / (1.0 + (qsqr - q0) / (q0 * (1 + q0))), 0, 1)
        div = c * dn + c[i_s, :] * ds + c * dw + c[:, j_e] * de
        im = im + 0.25 * lam * div
    want = (np.log(im) * 255).T.reshape(-1)
    np.testing.assert_allclose(got, want, rtol=1e-4)


# -- srad_v2: the same diffusion on 16x16 tiles with halos in shared memory ---------------------
def _srad_v2(rng, pad):
    """Run srad_v2's two kernels; the image lies ``pad`` floats inside its allocation."""
    bs, rows, cols, lam, niter = 16, 48, 32, 0.5, 2
    img = np.exp(rng.random((rows, cols))).astype(np.float32)
    buf = np.zeros(rows * cols + 2 * pad, np.float32)
    buf[pad:pad + rows * cols] = img.reshape(-1)
    d_buf, d_cbuf = _dev(buf), _dev(np.zeros_like(buf))
    j = np.uintp(int(d_buf) + 4 * pad) if pad else d_buf
    c_ptr = np.uintp(int(d_cbuf) + 4 * pad) if pad else d_cbuf  # C_cuda is read past its end too
    zeros = np.zeros(rows * cols, np.float32)
    d_e, d_w, d_n, d_s = (_dev(zeros) for _ in range(4))
    f1, f2 = _fn("srad_v2.cu", "srad_cuda_1"), _fn("srad_v2.cu", "srad_cuda_2")
    im = img.astype(np.float64)
    want = im.copy()
    for _ in range(niter):
        mean = float(np.float32(want.mean()))
        q0 = (want * want).mean() / mean**2 - 1.0
        launch = dict(block=(bs, bs, 1), grid=(cols // bs, rows // bs))
        f1(d_e, d_w, d_n, d_s, j, c_ptr, np.int32(cols), np.int32(rows), np.float32(q0), **launch)
        f2(d_e, d_w, d_n, d_s, j, c_ptr, np.int32(cols), np.int32(rows), np.float32(lam),
           np.float32(q0), **launch)
        p = np.pad(want, 1, mode="edge")
        dn, ds = p[:-2, 1:-1] - want, p[2:, 1:-1] - want
        dw, de = p[1:-1, :-2] - want, p[1:-1, 2:] - want
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (want * want)
        lap = (dn + ds + dw + de) / want
        qsqr = (0.5 * g2 - lap * lap / 16.0) / (1 + 0.25 * lap) ** 2
        c = np.clip(1.0 / (1.0 + (qsqr - q0) / (q0 * (1 + q0))), 0, 1)
        pc = np.pad(c, 1, mode="edge")
        want = want + 0.25 * lam * (c * dn + pc[2:, 1:-1] * ds + c * dw + pc[1:-1, 2:] * de)
    got = _get(d_buf, buf)[pad:pad + rows * cols].reshape(rows, cols)
    return got, want


def test_srad_v2_reads_outside_its_image():
    # The kernel loads north/south/west/east halos before it checks for the image's border:
    # the first block row reads J_cuda[-cols + tx]. memcheck names it.
    with pytest.raises(MemcheckError):
        _srad_v2(np.random.default_rng(5), 0)


def test_srad_v2(rng):
    got, want = _srad_v2(rng, 16 * 32 + 16)
    np.testing.assert_allclose(got, want, rtol=1e-4)


# -- backprop: layer forward (tree sum in shared memory) and the weight update ------------------
def test_backprop_layerforward(rng):
    n_in, hid = 64, 16  # 16 hidden units: one per thread column, as the benchmark has
    blocks = n_in // 16
    x = rng.random(n_in + 1).astype(np.float32)
    w = (rng.random((n_in + 1, hid + 1)) - 0.5).astype(np.float32)
    partial = np.zeros(blocks * 16, np.float32)
    w_out = w.copy()
    _fn("backprop.cu", "bpnn_layerforward_CUDA")(
        emu.In(x), emu.Out(np.zeros(hid + 1, np.float32)), emu.InOut(w_out), emu.Out(partial),
        np.int32(n_in), np.int32(hid), block=(16, 16, 1), grid=(1, blocks))

    prod = (w[1:, 1:].astype(np.float64) * x[1:, None]).reshape(blocks, 16, hid)
    np.testing.assert_allclose(partial.reshape(blocks, hid), prod.sum(axis=1), rtol=1e-5)
    # What the tree leaves in each row: row ty holds the sum of rows ty .. ty + lowbit(ty) - 1.
    span = [16] + [t & -t for t in range(1, 16)]
    tree = np.stack([prod[:, t:t + span[t]].sum(axis=1) for t in range(16)], axis=1)
    np.testing.assert_allclose(w_out[1:, 1:], tree.reshape(n_in, hid), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(w_out[0], w[0])


def test_backprop_adjust_weights(rng):
    n_in, hid, eta, momentum = 64, 16, 0.3, 0.3
    delta = rng.random(hid + 1).astype(np.float32)
    ly = rng.random(n_in + 1).astype(np.float32)
    w = rng.random((n_in + 1, hid + 1)).astype(np.float32)
    oldw = (rng.random((n_in + 1, hid + 1)) * 0.1).astype(np.float32)
    got_w, got_old = w.copy(), oldw.copy()
    _fn("backprop.cu", "bpnn_adjust_weights_cuda")(
        emu.In(delta), np.int32(hid), emu.In(ly), np.int32(n_in), emu.InOut(got_w),
        emu.InOut(got_old), block=(16, 16, 1), grid=(1, n_in // 16))

    step = eta * delta[None, 1:].astype(np.float64) * ly[1:, None] + momentum * oldw[1:, 1:]
    want_w, want_old = w.astype(np.float64), oldw.astype(np.float64)
    want_w[1:, 1:] += step
    want_old[1:, 1:] = step
    bias = eta * delta[1:].astype(np.float64) + momentum * oldw[0, 1:]
    want_w[0, 1:] += bias
    want_old[0, 1:] = bias
    np.testing.assert_allclose(got_w, want_w, rtol=1e-6)
    np.testing.assert_allclose(got_old, want_old, rtol=1e-6)


# -- gaussian: elimination without pivoting, Fan1 (multipliers) and Fan2 (row updates) ----------
def test_gaussian():
    size = 22  # not a multiple of the 4x4 block: the bounds checks matter
    lam = np.float32(-0.01)
    coe = np.array([10 * np.exp(lam * np.float32(abs(k))) for k in range(-(size - 1), size)],
                   np.float32)
    a = np.array([[coe[size - 1 - i + j] for j in range(size)] for i in range(size)], np.float32)
    b = np.ones(size, np.float32)
    m = np.zeros((size, size), np.float32)
    d_m, d_a, d_b = _dev(m), _dev(a), _dev(b)
    fan1, fan2 = _fn("gaussian.cu", "Fan1"), _fn("gaussian.cu", "Fan2")
    g2 = size // 4 + (1 if size % 4 else 0)
    for t in range(size - 1):
        fan1(d_m, d_a, np.int32(size), np.int32(t), block=(512, 1, 1), grid=(1, 1))
        fan2(d_m, d_a, d_b, np.int32(size), np.int32(size - t), np.int32(t), block=(4, 4, 1),
             grid=(g2, g2))
    got_m, got_a, got_b = _get(d_m, m), _get(d_a, a), _get(d_b, b)

    wa, wb, wm = a.astype(np.float64), b.astype(np.float64), np.zeros((size, size))
    for t in range(size - 1):
        wm[t + 1:, t] = wa[t + 1:, t] / wa[t, t]
        wa[t + 1:, t:] -= wm[t + 1:, t, None] * wa[t, t:]
        wb[t + 1:] -= wm[t + 1:, t] * wb[t]
    np.testing.assert_allclose(got_m, wm, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_a, wa, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_b, wb, rtol=1e-4, atol=1e-5)
    x = np.linalg.solve(np.triu(got_a.astype(np.float64)), got_b)  # the host's back substitution
    np.testing.assert_allclose(a @ x, b, rtol=1e-3, atol=1e-3)


# -- lud: blocked LU decomposition (diagonal, perimeter and internal kernels) -------------------
def test_lud(rng):
    bs, dim = 16, 48
    a = (rng.random((dim, dim)) + np.eye(dim) * dim).astype(np.float32)
    d = _dev(a)
    diag, peri, internal = (_fn("lud.cu", k) for k in
                            ("lud_diagonal", "lud_perimeter", "lud_internal"))
    i = 0
    for i in range(0, dim - bs, bs):
        diag(d, np.int32(dim), np.int32(i), block=(bs, 1, 1), grid=(1, 1))
        nb = (dim - i) // bs - 1
        peri(d, np.int32(dim), np.int32(i), block=(2 * bs, 1, 1), grid=(nb, 1))
        internal(d, np.int32(dim), np.int32(i), block=(bs, bs, 1), grid=(nb, nb))
    diag(d, np.int32(dim), np.int32(i + bs), block=(bs, 1, 1), grid=(1, 1))
    got = _get(d, a)

    want = a.astype(np.float64)
    for k in range(dim - 1):
        want[k + 1:, k] /= want[k, k]
        want[k + 1:, k + 1:] -= np.outer(want[k + 1:, k], want[k, k + 1:])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# -- kmeans: invert_mapping (kmeansPoint reads texture references, which nvcc 13 rejects) -------
def test_kmeans_invert_mapping(rng):
    npoints, nfeatures = 1000, 34
    x = rng.random((npoints, nfeatures)).astype(np.float32)
    out = np.zeros(npoints * nfeatures, np.float32)
    _fn("kmeans.cu", "invert_mapping")(emu.In(x), emu.Out(out), np.int32(npoints),
                                       np.int32(nfeatures), block=(256, 1, 1),
                                       grid=(-(-npoints // 256), 1))
    np.testing.assert_array_equal(out.reshape(nfeatures, npoints), x.T)


# -- nn: distance of every record to a target, on a 2-D grid of 1-D blocks ----------------------
def test_nn(rng):
    n, threads, max_grid_x = 5000, 256, 8  # a small max grid X, to use blockIdx.y as the host does
    loc = np.zeros(n, np.dtype([("lat", np.float32), ("lng", np.float32)]))
    loc["lat"], loc["lng"] = rng.random(n) * 180 - 90, rng.random(n) * 360 - 180
    blocks = -(-n // threads)
    gy = -(-blocks // max_grid_x)
    gx = -(-blocks // gy)
    dist = np.zeros(n, np.float32)
    lat, lng = np.float32(30.0), np.float32(90.0)
    _fn("nn.cu", "euclid")(emu.In(loc), emu.Out(dist), np.int32(n), lat, lng,
                           block=(threads, 1, 1), grid=(gx, gy))
    want = np.sqrt((lat - loc["lat"].astype(np.float64)) ** 2 + (lng - loc["lng"]) ** 2)
    np.testing.assert_allclose(dist, want, rtol=1e-6)


# -- hotspot3D: 7-point stencil, each thread walking up its column of layers --------------------
def test_hotspot3d(rng):
    nx, ny, nz, iters = 128, 8, 4, 3
    temp = (rng.random((nz, ny, nx)) * 20 + 320).astype(np.float32)
    power = (rng.random((nz, ny, nx)) * 1e-3).astype(np.float32)
    cw = ce = np.float32(0.05)
    cn = cs = np.float32(0.07)
    ct = cb = np.float32(0.02)
    cc = np.float32(1.0 - (2.0 * ce + 2.0 * cn + 3.0 * ct))
    sdc = np.float32(0.9)
    d_p, bufs = _dev(power), [_dev(temp), _dev(np.zeros_like(temp))]
    f = _fn("hotspot3D.cu", "hotspotOpt1")
    for i in range(iters):
        f(d_p, bufs[i % 2], bufs[1 - i % 2], sdc, np.int32(nx), np.int32(ny), np.int32(nz), ce,
          cw, cn, cs, ct, cb, cc, block=(64, 4, 1), grid=(nx // 64, ny // 4, 1))
    got = _get(bufs[iters % 2], temp)

    t = temp.astype(np.float64)
    for _ in range(iters):
        p = np.pad(t, 1, mode="edge")
        t = (cc * t + cw * p[1:-1, 1:-1, :-2] + ce * p[1:-1, 1:-1, 2:] + cs * p[1:-1, 2:, 1:-1]
             + cn * p[1:-1, :-2, 1:-1] + cb * p[:-2, 1:-1, 1:-1] + ct * p[2:, 1:-1, 1:-1]
             + sdc * power + ct * 80.0)
    np.testing.assert_allclose(got, t, rtol=1e-5)


# -- lavaMD: particle forces between neighbouring boxes; structs passed by value ----------------
NEI = np.dtype([("x", np.int32), ("y", np.int32), ("z", np.int32), ("number", np.int32),
                ("offset", np.int64)], align=True)
BOX = np.dtype([("x", np.int32), ("y", np.int32), ("z", np.int32), ("number", np.int32),
                ("offset", np.int64), ("nn", np.int32), ("nei", NEI, (26,))], align=True)
FOUR = np.dtype([("v", np.float64), ("x", np.float64), ("y", np.float64), ("z", np.float64)])
DIM = np.dtype([("cur_arg", np.int32), ("arch_arg", np.int32), ("cores_arg", np.int32),
                ("boxes1d_arg", np.int32), ("number_boxes", np.int64), ("box_mem", np.int64),
                ("space_elem", np.int64), ("space_mem", np.int64), ("space_mem2", np.int64)],
               align=True)


def test_lavamd(rng):
    b1, per, alpha = 2, 100, 0.5
    nbox = b1**3
    boxes = np.zeros(nbox, BOX)
    for h in range(nbox):
        z, y, x = h // (b1 * b1), (h // b1) % b1, h % b1
        for name, v in zip(("x", "y", "z", "number", "offset"), (x, y, z, h, h * per),
                           strict=True):
            boxes[name][h] = v
        nn = 0
        for dz, dy, dx in np.ndindex(3, 3, 3):
            k, j, i = x + dx - 1, y + dy - 1, z + dz - 1
            if (dx, dy, dz) != (1, 1, 1) and 0 <= k < b1 and 0 <= j < b1 and 0 <= i < b1:
                num = i * b1 * b1 + j * b1 + k
                boxes["nei"][h, nn] = (k, j, i, num, num * per)
                nn += 1
        boxes["nn"][h] = nn
    rv = np.zeros(nbox * per, FOUR)
    for f in FOUR.names:
        rv[f] = rng.integers(1, 11, nbox * per) / 10.0
    qv = rng.integers(1, 11, nbox * per) / 10.0
    fv = np.zeros(nbox * per, FOUR)
    dim = np.zeros((), DIM)
    dim["boxes1d_arg"], dim["number_boxes"], dim["space_elem"] = b1, nbox, nbox * per
    par = np.array(alpha, np.dtype([("alpha", np.float64)]))
    _fn("lavaMD.cu", "kernel_gpu_cuda")(par, dim, emu.In(boxes), emu.In(rv), emu.In(qv),
                                        emu.InOut(fv), block=(128, 1, 1), grid=(nbox, 1))

    a2 = 2.0 * alpha * alpha
    r = np.stack([rv[f] for f in FOUR.names], axis=1).reshape(nbox, per, 4)
    q = qv.reshape(nbox, per)
    want = np.zeros((nbox, per, 4))
    for h in range(nbox):
        for other in [h] + list(boxes[h]["nei"]["number"][:boxes[h]["nn"]]):
            a, b = r[h], r[other]
            r2 = a[:, None, 0] + b[None, :, 0] - a[:, 1:] @ b[:, 1:].T
            vij = np.exp(-a2 * r2) * q[other][None, :]
            want[h, :, 0] += vij.sum(axis=1)
            for c in (1, 2, 3):
                want[h, :, c] += (2 * vij * (a[:, None, c] - b[None, :, c])).sum(axis=1)
    got = np.stack([fv[f] for f in FOUR.names], axis=1).reshape(nbox, per, 4)
    np.testing.assert_allclose(got, want, rtol=1e-10)


# -- b+tree: point and range queries, one block (ORDER threads) per query -----------------------
ORDER = 256
KNODE = np.dtype([("location", np.int32), ("indices", np.int32, (ORDER + 1,)),
                  ("keys", np.int32, (ORDER + 1,)), ("is_leaf", np.bool_),
                  ("num_keys", np.int32)], align=True)
BIG = np.iinfo(np.int32).max


def _btree(keys, fanout):
    """Knodes of a B+ tree over sorted ``keys`` (record i holds key i), root first and level
    by level, as Rodinia's transform_to_cuda lays them out: an internal node sends a key to
    child ``indices[t]`` where ``keys[t] <= key < keys[t + 1]``; a leaf maps ``keys[t]`` to
    record ``indices[t]``. Returns the knodes and the number of levels above the leaves."""
    # levels[d]: list of nodes, each (smallest key, children) -- record numbers for leaves,
    # node numbers within levels[d + 1] otherwise; built from the leaves up.
    level = [(keys[i], list(range(i, min(i + fanout, len(keys)))))
             for i in range(0, len(keys), fanout)]
    levels = [level]
    while len(level) > 1:
        level = [(level[i][0], list(range(i, min(i + fanout, len(level)))))
                 for i in range(0, len(level), fanout)]
        levels.insert(0, level)
    out = np.zeros(sum(map(len, levels)), KNODE)
    out["keys"] = BIG
    n = 0
    for depth, level in enumerate(levels):
        below = n + len(level)  # the next level starts right after this one
        for _, kids in level:
            node = out[n]
            node["location"], node["num_keys"] = n, len(kids)
            if depth == len(levels) - 1:
                node["is_leaf"] = True
                node["keys"][:len(kids)] = [keys[k] for k in kids]
                node["indices"][:len(kids)] = kids
            else:
                child = levels[depth + 1]
                node["keys"][:len(kids)] = [np.iinfo(np.int32).min] + [child[k][0]
                                                                      for k in kids[1:]]
                node["indices"][:len(kids)] = [below + k for k in kids]
            n += 1
    return out, len(levels) - 1


def test_btree_find_k(rng):
    nrec, queries = 3000, 40
    keys = np.sort(rng.choice(100000, nrec, replace=False)).astype(np.int32)
    knodes, height = _btree(keys, 64)
    values = rng.integers(0, 10**6, nrec).astype(np.int32)
    want_idx = rng.integers(0, nrec, queries)
    q = keys[want_idx].copy()
    q[::5] += 1  # some keys are absent (unless the next key is key + 1)
    ans = np.full(queries, -1, np.int32)
    zeros = np.zeros(queries, np.int64)
    _fn("btree.cu", "findK")(np.int64(height), emu.In(knodes), np.int64(len(knodes)),
                             emu.In(values), emu.InOut(zeros.copy()), emu.InOut(zeros.copy()),
                             emu.In(q), emu.InOut(ans), block=(ORDER, 1, 1), grid=(queries, 1))
    pos = np.searchsorted(keys, q)
    hit = (pos < nrec) & (keys[np.minimum(pos, nrec - 1)] == q)
    want = np.where(hit, values[np.minimum(pos, nrec - 1)], -1)
    np.testing.assert_array_equal(ans, want)


def test_btree_find_range_k(rng):
    nrec, queries = 3000, 40
    keys = np.arange(nrec, dtype=np.int32) * 3
    knodes, height = _btree(keys, 64)
    start = rng.integers(0, nrec - 100, queries)
    length = rng.integers(1, 100, queries)
    s_keys, e_keys = keys[start], keys[start + length - 1]
    zeros = np.zeros(queries, np.int64)
    rstart, rlen = np.zeros(queries, np.int32), np.zeros(queries, np.int32)
    _fn("btree.cu", "findRangeK")(np.int64(height), emu.In(knodes), np.int64(len(knodes)),
                                  emu.InOut(zeros.copy()), emu.InOut(zeros.copy()),
                                  emu.InOut(zeros.copy()), emu.InOut(zeros.copy()),
                                  emu.In(s_keys), emu.In(e_keys), emu.Out(rstart),
                                  emu.Out(rlen), block=(ORDER, 1, 1), grid=(queries, 1))
    np.testing.assert_array_equal(rstart, start)
    np.testing.assert_array_equal(rlen, length)


# -- streamcluster: the gain of opening a new centre at point x ---------------------------------
POINT = np.dtype([("weight", np.float32), ("coord", np.uint64), ("assign", np.int64),
                  ("cost", np.float32)], align=True)


def test_streamcluster_compute_cost(rng):
    num, dim, k, x, threads = 1200, 5, 6, 17, 512
    coord = rng.random((dim, num)).astype(np.float32)  # coord_d is dimension-major
    centres = rng.choice(num, k, replace=False)
    center_table = np.zeros(num, np.int32)
    center_table[centres] = np.arange(k)
    pts = np.zeros(num, POINT)
    pts["weight"] = rng.integers(1, 4, num)
    pts["assign"] = centres[rng.integers(0, k, num)]
    pts["cost"] = rng.random(num) * 0.5
    stride = k + 1
    work = np.zeros(stride * (num + 1), np.float32)
    switch = np.zeros(num, np.bool_)
    blocks = -(-num // threads)
    _fn("streamcluster.cu", "kernel_compute_cost")(
        np.int32(num), np.int32(dim), np.int64(x), emu.In(pts), np.int32(k), np.int32(stride),
        emu.In(coord), emu.InOut(work), emu.In(center_table), emu.InOut(switch),
        block=(threads, 1, 1), grid=(blocks, 1))

    c = coord.astype(np.float64)
    x_cost = ((c - c[:, x:x + 1]) ** 2).sum(axis=0) * pts["weight"]
    closer = x_cost < pts["cost"]
    want = np.zeros((num + 1, stride))
    rows = np.arange(num)
    want[rows[closer], k] = x_cost[closer] - pts["cost"][closer]
    far = ~closer
    want[rows[far], center_table[pts["assign"][far]]] = (pts["cost"] - x_cost)[far]
    np.testing.assert_array_equal(switch, closer)
    np.testing.assert_allclose(work.reshape(num + 1, stride), want, rtol=1e-5, atol=1e-6)


# -- cfd: initialising from __constant__ memory, and the local time step ------------------------
def test_cfd_step_factor(rng):
    nelr, block, gamma = 192 * 4, 192, 1.4
    mod = _module("cfd.cu")
    ff = np.array([1.4, 1.2, 0.1, -0.05, 3.0], np.float32)
    emu.memcpy_htod(mod.get_global("ff_variable")[0], ff)
    variables = np.zeros(5 * nelr, np.float32)
    mod.get_function("cuda_initialize_variables")(np.int32(nelr), emu.Out(variables),
                                                  block=(block, 1, 1), grid=(nelr // block, 1))
    np.testing.assert_array_equal(variables.reshape(5, nelr), np.repeat(ff[:, None], nelr, 1))

    v = np.stack([rng.random(nelr) + 1.0, rng.random(nelr) - 0.5, rng.random(nelr) - 0.5,
                  rng.random(nelr) - 0.5, rng.random(nelr) * 2 + 3.0]).astype(np.float32)
    areas = (rng.random(nelr) + 0.1).astype(np.float32)
    step = np.zeros(nelr, np.float32)
    mod.get_function("cuda_compute_step_factor")(
        np.int32(nelr), emu.In(v.reshape(-1)), emu.In(areas), emu.Out(step),
        block=(block, 1, 1), grid=(nelr // block, 1))
    w = v.astype(np.float64)
    vel = w[1:4] / w[0]
    speed2 = (vel**2).sum(axis=0)
    pressure = (gamma - 1) * (w[4] - 0.5 * w[0] * speed2)
    sound = np.sqrt(gamma * pressure / w[0])
    np.testing.assert_allclose(step, 0.5 / (np.sqrt(areas) * (np.sqrt(speed2) + sound)),
                               rtol=1e-5)


# -- hybridsort: 1024-bin histogram with per-warp tagged (warp-synchronous) updates --------------
def _histogram1024(rng, **options):
    n = 20_000
    x = rng.random(n).astype(np.float32) * 10 - 5
    x[::3] = 1.25  # colliding updates within a warp
    lo, hi = np.float32(x.min()), np.float32(x.max())
    result = np.zeros(1024, np.uint32)
    _fn("hybridsort_histogram.cu", "histogram1024Kernel")(
        emu.InOut(result), emu.In(x), lo, hi, np.int32(n), block=(96, 1, 1), grid=(64, 1),
        **options)
    return x, lo, hi, result


def test_hybridsort_histogram1024_is_a_warp_level_race(rng):
    # addData1024 relies on a warp's lanes running in lockstep (pre-Volta): a genuine hazard,
    # which compute-sanitizer's racecheck also reports.
    with pytest.raises(RaceError, match="s_Hist.*one warp"):
        _histogram1024(rng)


def test_hybridsort_histogram1024(rng):
    x, lo, hi, result = _histogram1024(rng, racecheck=False)
    bins = (((x - lo) / (hi - lo)) * np.float32(1024)).astype(np.uint32) & 0x3FF
    np.testing.assert_array_equal(result, np.bincount(bins, minlength=1024))


# -- particlefilter: resampling (sum of weights, normalise + CDF + LCG draw, find index) --------
def test_particlefilter_resampling(rng):
    n = 400  # one block: normalize_weights_kernel shares u[0] across blocks without a barrier
    partial = np.zeros(1, np.float64)  # one block: one partial sum
    weights = rng.random(n) + 0.1
    partial[0] = weights.sum()
    seed = rng.integers(1, 2**30, n).astype(np.int32)
    ax, ay = rng.random(n) * 100, rng.random(n) * 100
    d_w, d_part, d_seed = _dev(weights), _dev(partial), _dev(seed)
    d_cdf, d_u = _dev(np.zeros(n)), _dev(np.zeros(n))
    d_xj, d_yj = _dev(np.zeros(n)), _dev(np.zeros(n))
    mod = _module("particlefilter.cu")
    launch = dict(block=(512, 1, 1), grid=(1, 1))
    mod.get_function("sum_kernel")(d_part, np.int32(n), **launch)
    mod.get_function("normalize_weights_kernel")(d_w, np.int32(n), d_part, d_cdf, d_u, d_seed,
                                                 **launch)
    mod.get_function("find_index_kernel")(_dev(ax), _dev(ay), d_cdf, d_u, d_xj, d_yj, d_w,
                                          np.int32(n), **launch)
    zeros = np.zeros(n)

    w = weights / weights.sum()
    cdf = np.cumsum(w)
    s0 = (np.int64(1103515245) * np.int64(seed[0]) + 12345) & 0xFFFFFFFF
    s0 = int(np.array(s0, np.uint32).view(np.int32))
    m = 2**31 - 1
    s1 = int(np.fmod(s0, m))  # C's % truncates towards zero
    u = abs(s1 / m) / n + np.arange(n) / n
    idx = np.minimum(np.searchsorted(cdf, u, side="left"), n - 1)
    np.testing.assert_allclose(_get(d_part, partial), [weights.sum()], rtol=1e-12)
    np.testing.assert_allclose(_get(d_w, zeros), w, rtol=1e-12)
    np.testing.assert_allclose(_get(d_cdf, zeros), cdf, rtol=1e-12)
    np.testing.assert_allclose(_get(d_u, zeros), u, rtol=1e-12)
    assert _get(d_seed, seed)[0] == s1
    np.testing.assert_array_equal(_get(d_xj, zeros), ax[idx])
    np.testing.assert_array_equal(_get(d_yj, zeros), ay[idx])


# -- cfd: fluxes through each element's four faces (neighbour, wing, far field), RK time steps --
def _cfd_contributions(rho, mom, e, p):
    """compute_flux_contribution: the momentum fluxes (row c: momentum c) and the energy's."""
    vel = mom / rho
    eye = np.eye(3).reshape((3, 3) + (1,) * (np.ndim(rho)))
    return vel[:, None] * mom[None] + p * eye, vel * (e + p)


def test_cfd_flux_and_time_step(rng):
    nelr, block, gamma = 192 * 2, 192, 1.4
    mod = _module("cfd.cu")
    ff_rho, ff_p = 1.4, 1.0  # the far field as the host sets it (no angle of attack)
    ff_speed = 1.2 * np.sqrt(gamma * ff_p / ff_rho)
    ff = np.array([ff_rho, ff_rho * ff_speed, 0.0, 0.0,
                   ff_rho * 0.5 * ff_speed**2 + ff_p / (gamma - 1)])
    ff_m, ff_e = _cfd_contributions(ff[0], ff[1:4], ff[4], ff_p)
    for name, val in (("ff_variable", ff), ("ff_flux_contribution_momentum_x", ff_m[0]),
                      ("ff_flux_contribution_momentum_y", ff_m[1]),
                      ("ff_flux_contribution_momentum_z", ff_m[2]),
                      ("ff_flux_contribution_density_energy", ff_e)):
        emu.memcpy_htod(mod.get_global(name)[0], val.astype(np.float32))
    nb = rng.integers(-2, nelr, (4, nelr)).astype(np.int32)  # -1: wing, -2: far field
    normals = (rng.random((3, 4, nelr)) - 0.5).astype(np.float32)
    v = np.stack([rng.random(nelr) + 1.0, rng.random(nelr) - 0.5, rng.random(nelr) - 0.5,
                  rng.random(nelr) - 0.5, rng.random(nelr) * 2 + 3.0]).astype(np.float32)
    step = (rng.random(nelr) * 0.01).astype(np.float32)
    d_nb, d_normals, d_step = _dev(nb), _dev(normals), _dev(step)
    d_var, d_old, d_flux = _dev(v), _dev(v), _dev(np.zeros_like(v))
    launch = dict(block=(block, 1, 1), grid=(nelr // block, 1))
    fluxes = []
    for j in range(3):  # one iteration of the host's RK loop
        mod.get_function("cuda_compute_flux")(np.int32(nelr), d_nb, d_normals, d_var, d_flux,
                                              **launch)
        fluxes.append(_get(d_flux, v))
        mod.get_function("cuda_time_step")(np.int32(j), np.int32(nelr), d_old, d_var, d_step,
                                           d_flux, **launch)
    got = _get(d_var, v)

    def flux(w):
        rho, mom, e = w[0], w[1:4], w[4]
        speed2 = ((mom / rho) ** 2).sum(axis=0)
        p = (gamma - 1) * (e - 0.5 * rho * speed2)
        c = np.sqrt(gamma * p / rho)
        fm, fe = _cfd_contributions(rho, mom, e, p)
        out = np.zeros_like(w)
        for j in range(4):
            n, k = normals[:, j].astype(np.float64), np.maximum(nb[j], 0)
            visc = -np.sqrt((n**2).sum(axis=0)) * 0.2 * 0.5 * (
                np.sqrt(speed2) + np.sqrt(speed2[k]) + c + c[k])
            cell = np.concatenate([[(0.5 * n * (mom + mom[:, k])).sum(axis=0)],
                                   (0.5 * n[None] * (fm + fm[:, :, k])).sum(axis=1),
                                   [(0.5 * n * (fe + fe[:, k])).sum(axis=0)]])
            far = np.concatenate([[(0.5 * n * (ff[1:4, None] + mom)).sum(axis=0)],
                                  (0.5 * n[None] * (ff_m[:, :, None] + fm)).sum(axis=1),
                                  [(0.5 * n * (ff_e[:, None] + fe)).sum(axis=0)]])
            out += np.where(nb[j] >= 0, visc * (w - w[:, k]) + cell, 0)
            out += np.where(nb[j] == -2, far, 0)
            out[1:4] += np.where(nb[j] == -1, n * p, 0)
        return out

    w = old = v.astype(np.float64)
    for j in range(3):
        f = flux(w)
        np.testing.assert_allclose(fluxes[j], f, rtol=1e-4, atol=1e-4)
        w = old + step / (3 + 1 - j) * f
    np.testing.assert_allclose(got, w, rtol=1e-5)


# -- particlefilter: likelihood (move the particles, score them on the frame, block sums) ---------
def _lcg(seed):
    """d_randu: GCC's LCG in 32-bit int arithmetic, then % INT_MAX (truncating)."""
    num = (1103515245 * seed.astype(np.int64) + 12345) & 0xFFFFFFFF
    seed = np.fmod(np.where(num >= 2**31, num - 2**32, num), 2**31 - 1)
    return seed, np.abs(seed / (2**31 - 1))


def test_particlefilter_likelihood(rng):
    n, size, frames, k, radius = 600, 64, 4, 2, 5  # two blocks of 512, the second part-full
    d = 2 * radius - 1
    xs, ys = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
    disk = (xs - radius + 1.0) ** 2 + (ys - radius + 1.0) ** 2 < radius**2  # strelDisk
    objxy = np.stack([ys[disk], xs[disk]], axis=1).astype(np.int32) - (radius - 1)
    ones = len(objxy)
    video = (np.where(rng.random((size, size, frames)) < 0.3, 228, 100)
             + rng.integers(-10, 10, (size, size, frames))).astype(np.uint8)
    xj, yj = size / 2 + rng.normal(0, 8, n), size / 2 + rng.normal(0, 8, n)
    xj[:5] = [-3.7, 70.2, 31.5, 32.5, -0.5]  # off the frame, and halves
    seed = rng.integers(1, 2**31 - 1, n).astype(np.int32)
    blocks = -(-n // 512)
    zeros = np.zeros(n)
    d_x, d_y, d_like, d_w, d_part = (_dev(zeros) for _ in range(5))
    d_ind, d_seed = _dev(np.zeros(n * ones, np.int32)), _dev(seed)
    _fn("particlefilter.cu", "likelihood_kernel")(
        d_x, d_y, _dev(xj), _dev(yj), _dev(zeros), d_ind, _dev(objxy), d_like, _dev(video),
        _dev(zeros), d_w, np.int32(n), np.int32(ones), np.int32(video.size), np.int32(k),
        np.int32(size), np.int32(frames), d_seed, d_part, block=(512, 1, 1), grid=(blocks, 1))

    s, normal = seed, []
    for _ in range(2):  # d_randn: Box-Muller from two draws
        s, u = _lcg(s)
        s, v = _lcg(s)
        normal.append(np.sqrt(-2 * np.log(u)) * np.cos(2 * np.pi * v))
    ax, ay = xj + 1.0 + 5.0 * normal[0], yj - 2.0 + 2.0 * normal[1]
    # dev_round_double returns newValue++ (the value before the increment): it truncates.
    ix = np.trunc(ax).astype(np.int64)[:, None] + objxy[None, :, 1]
    iy = np.trunc(ay).astype(np.int64)[:, None] + objxy[None, :, 0]
    ind = np.abs(ix * size * frames + iy * frames + k)
    ind[ind >= video.size] = 0
    px = video.reshape(-1)[ind].astype(np.float64)
    like = (((px - 100) ** 2 - (px - 228) ** 2) / 50.0).sum(axis=1) / ones
    w = np.exp(like) / n
    np.testing.assert_array_equal(_get(d_seed, seed), s)
    np.testing.assert_allclose(_get(d_x, zeros), ax, rtol=1e-12)
    np.testing.assert_allclose(_get(d_y, zeros), ay, rtol=1e-12)
    np.testing.assert_array_equal(_get(d_ind, ind.astype(np.int32)).reshape(n, ones), ind)
    np.testing.assert_allclose(_get(d_like, zeros), like, rtol=1e-12)
    np.testing.assert_allclose(_get(d_w, zeros), w, rtol=1e-10)
    padded = np.zeros(blocks * 512)
    padded[:n] = w
    np.testing.assert_allclose(_get(d_part, zeros)[:blocks], padded.reshape(blocks, 512).sum(1),
                               rtol=1e-10)


# -- dwt2d: one level of the 2-D 5/3 (integer) and 9/7 (float) wavelets, forward and back -------
def _cdiv(a, b):
    return np.sign(a) * (np.abs(a) // b)  # C's integer division truncates


def _lift(x, steps, axis):
    """1-D lifting along ``axis`` with symmetric extension; returns (low, high)."""
    x = np.moveaxis(x, axis, 0)
    even, odd = x[0::2].copy(), x[1::2].copy()
    for k, step in enumerate(steps):  # predict the odd samples, update the even, in turn
        if k % 2 == 0:
            odd = step(even, odd, np.concatenate([even[1:], even[-1:]]))
        else:
            even = step(np.concatenate([odd[:1], odd[:-1]]), even, odd)
    return np.moveaxis(even, 0, axis), np.moveaxis(odd, 0, axis)


def _dwt2(img, steps, low=1.0, high=1.0):
    """Columns then rows; the output's layout: the LL, HL, LH, HH bands, each row-major."""
    lo, hi = _lift(img, steps, 0)
    (ll, hl), (lh, hh) = _lift(lo * low, steps, 1), _lift(hi * high, steps, 1)
    return np.concatenate([(ll * low).ravel(), (hl * high).ravel(), (lh * low).ravel(),
                           (hh * high).ravel()])


def _dwt_kernel(name, win_x, win_y, data):
    """launchFDWT53Kernel & co.: windows of WIN_Y rows slid ``steps`` times per block."""
    sy, sx = data.shape
    steps = -(-sy // (15 * win_y))
    out = np.zeros_like(data)
    _fn("dwt2d.cu", f"dwt_cuda::{name}Kernel<{win_x}, {win_y}>")(
        emu.In(data), emu.Out(out), np.int32(sx), np.int32(sy), np.int32(steps),
        block=(win_x, 1, 1), grid=(-(-sx // win_x), -(-sy // (win_y * steps))))
    return out


def test_dwt2d_53(rng):
    # 96 x 48: a block at the right edge, a block row at the bottom (its checked loaders)
    img = rng.integers(-128, 128, (48, 96)).astype(np.int32)  # a component, level-shifted
    got = _dwt_kernel("fdwt53", 64, 8, img)  # the host's choice for widths under 480
    steps = [lambda p, c, n: c - _cdiv(p + n, 2), lambda p, c, n: c + _cdiv(p + n + 2, 4)]
    np.testing.assert_array_equal(got.reshape(-1), _dwt2(img.astype(np.int64), steps))
    np.testing.assert_array_equal(_dwt_kernel("rdwt53", 64, 8, got), img)  # lossless


def test_dwt2d_97(rng):
    img = rng.integers(-128, 128, (48, 96)).astype(np.float32)
    got = _dwt_kernel("fdwt97", 64, 6, img)
    steps = [lambda p, c, n, s=s: c + s * (p + n)
             for s in (-1.586134342, -0.05298011854, 0.8829110762, 0.4435068522)]
    scale = 1.23017410491400
    want = _dwt2(img.astype(np.float64), steps, 1 / scale, scale)
    np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(_dwt_kernel("rdwt97", 64, 6, got), img, atol=1e-3)


# -- huffman: variable-length encoding (shared-memory scan and atomics), then pack2 --------------
def _huffman_code(freqs):
    """Canonical Huffman codewords and lengths for byte frequencies ``freqs``."""
    heap = [(f, s, (s,)) for s, f in enumerate(freqs) if f]
    heapq.heapify(heap)
    lens = np.zeros(256, np.int64)
    order = 256
    while len(heap) > 1:
        f1, _, a = heapq.heappop(heap)
        f2, _, b = heapq.heappop(heap)
        lens[list(a + b)] += 1
        heapq.heappush(heap, (f1 + f2, order, a + b))
        order += 1
    codes = np.zeros(256, np.int64)
    code = prev = 0
    for s in sorted(np.flatnonzero(lens), key=lambda s: (lens[s], s)):
        code <<= int(lens[s]) - prev
        codes[s], prev = code, int(lens[s])
        code += 1
    return codes.astype(np.uint32), lens.astype(np.uint32)


def test_huffman_vlc_encode_and_pack(rng):
    blocks, threads = 32, 256  # pack2 runs blocks/16 blocks of 16 threads
    n = blocks * threads
    p = 1.0 / (np.arange(256) + 4.0)
    raw = rng.choice(256, 4 * n, p=p / p.sum()).astype(np.uint8)
    codes, lens = _huffman_code(np.bincount(raw, minlength=256))
    assert lens.max() <= 16  # the encoder's limit: 4 codewords in 64 bits
    data = raw.view(np.uint32)  # the host reads the file's bytes into words
    d_out, spare = _dev(np.zeros(n, np.uint32)), _dev(np.zeros(n, np.uint32))
    bits = np.zeros(blocks, np.uint32)
    mod = _module("huffman_vlc.cu")
    mod.get_function("vlc_encode_kernel_sm64huff")(
        emu.In(data), emu.In(codes), emu.In(lens), spare, spare, spare, d_out, emu.Out(bits),
        block=(threads, 1, 1), grid=(blocks, 1), shared=2 * 256 * 4 + threads * 4)
    start = (np.cumsum(bits) - bits).astype(np.uint32)  # prescanArray's exclusive scan
    packed = np.zeros(n, np.uint32)
    mod.get_function("pack2")(d_out, emu.In(bits), emu.In(start), emu.InOut(packed),
                              np.uint32(threads), block=(16, 1, 1), grid=(blocks // 16, 1))

    sym = raw.reshape(-1, 4)[:, ::-1].reshape(-1)  # each word's bytes, most significant first
    np.testing.assert_array_equal(bits, lens[sym].reshape(blocks, -1).sum(axis=1))
    stream = "".join(format(int(c), f"0{int(k)}b") for c, k in zip(codes[sym], lens[sym],
                                                                   strict=True))
    stream += "0" * (-len(stream) % 32)
    want = [int(stream[i:i + 32], 2) for i in range(0, len(stream), 32)]
    np.testing.assert_array_equal(packed[:len(want)], want)
    assert not packed[len(want):].any()


# -- leukocyte: motion gradient vector flow (MGVF) of several cells, one block per cell ----------
def _imgvf(rng, **options):
    shapes = [(41, 81), (20, 30)]  # the largest matrix the shared buffer holds, and a small one
    imgs = [rng.random(s).astype(np.float32) for s in shapes]  # normalised to [0, 1)
    flat = np.concatenate([i.ravel() for i in imgs])
    d_i, d_v = _dev(flat), _dev(flat)
    offsets = np.cumsum([0] + [i.size for i in imgs])[:-1] * 4
    rows, cols = (np.array(s, np.int32) for s in zip(*shapes, strict=True))
    iterations, cutoff = 5, 1e-5
    _fn("leukocyte_track.cu", "IMGVF_kernel")(
        emu.In(np.uint64(int(d_v)) + offsets.astype(np.uint64)),
        emu.In(np.uint64(int(d_i)) + offsets.astype(np.uint64)), emu.In(rows), emu.In(cols),
        np.float32(1), np.float32(1), np.float32(1e-10), np.int32(iterations),
        np.float32(cutoff), block=(320, 1, 1), grid=(len(shapes), 1), **options)
    return imgs, iterations, cutoff, np.split(_get(d_v, flat), np.cumsum(rows * cols)[:-1])


def test_leukocyte_imgvf_races():
    # Each virtual block of 320 elements reads its neighbours while other threads store the
    # previous virtual block's new values (or, when the matrix fits in one, their own) with no
    # barrier between: a genuine hazard across warps.
    with pytest.raises(RaceError, match="IMGVF"):
        _imgvf(np.random.default_rng(7))


def test_leukocyte_imgvf(rng):
    # With racecheck off the emulator reads before it stores, which is the Jacobi update the
    # kernel means (its buffer exists to keep old values for the neighbours).
    imgs, iterations, cutoff, got = _imgvf(rng, racecheck=False)
    neighbours = [(-1, 0, -1), (1, 0, 1), (0, -1, -1), (0, 1, 1),  # (dy, dx, v . (dx, dy))
                  (-1, 1, 0), (1, 1, 2), (-1, -1, -2), (1, -1, 0)]
    for img, out in zip(imgs, got, strict=True):
        im = img.astype(np.float64)
        v = im.copy()
        for _ in range(iterations):
            p = np.pad(v, 1, mode="edge")
            acc = 0.0
            for dy, dx, dot in neighbours:
                diff = p[1 + dy:1 + dy + v.shape[0], 1 + dx:1 + dx + v.shape[1]] - v
                acc = acc + (np.arctan(diff * dot / 1e-10) / 3.14159 + 0.5) * diff
            new = v + 0.5 / 5.0 * acc
            new -= (1 / 5.0) * im * (new - im)
            done = np.abs(new - v).mean() < cutoff
            v = new
            if done:
                break
        np.testing.assert_allclose(out.reshape(img.shape), v, rtol=1e-5, atol=1e-6)


def test_kernels_are_sourced():
    from .extract import SPEC

    files = sorted(KERNELS.glob("*.cu"))
    assert {p.name for p in files} == set(SPEC)  # every file comes from extract.py's list
    for path in files:
        head = path.read_text().splitlines()[:3]
        assert "github.com/yuhc/gpu-rodinia" in head[0] and "lines" in head[1], path.name
    assert "University of Virginia" in (KERNELS / "LICENSE-rodinia").read_text()
