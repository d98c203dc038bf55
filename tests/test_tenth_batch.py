"""The tenth held-out batch's kernels (``benchmarks/fresh/tenth.cu``) compute what they
say, on the emulator at small sizes against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.peer_times import FRESH
from cudakit import emu


@pytest.fixture(scope="module")
def tenth():
    return emu.SourceModule((FRESH / "tenth.cu").read_text(), no_extern_c=True)


@pytest.fixture
def rng():
    return np.random.default_rng(3)


@pytest.mark.parametrize("cols", [300, 301])
def test_softmax_rows(emulate, tenth, rng, cols):
    x = rng.uniform(-4, 4, (5, cols)).astype(np.float32)
    y = emulate(tenth, "softmax_rows", [x, np.zeros_like(x), np.int32(cols)], (5,), (128,))[1]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_layernorm_warp(emulate, tenth, rng):
    x = rng.uniform(-1, 1, (12, 1024)).astype(np.float32)
    gain, bias = rng.random(1024, dtype=np.float32), rng.random(1024, dtype=np.float32)
    y = emulate(tenth, "layernorm_warp", [x, gain, bias, np.zeros_like(x), np.int32(12)], (2,),
                (256,))[3]
    want = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want * gain + bias, rtol=1e-4, atol=1e-5)


def test_sobel_u8(emulate, tenth, rng):
    h, w = 20, 70
    img = rng.integers(0, 256, (h, w)).astype(np.uint8)
    out = emulate(tenth, "sobel_u8", [img, np.zeros_like(img), np.int32(w), np.int32(h)],
                  (3, 3), (32, 8))[1]
    p = img.astype(np.int64)
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    want = np.zeros_like(img)
    want[1:-1, 1:-1] = np.minimum(255, (abs(gx) + abs(gy)) // 2)
    np.testing.assert_array_equal(out, want)


def test_transpose_f64(emulate, tenth, rng):
    a = rng.random((64, 64))
    out = emulate(tenth, "transpose_f64", [a, np.zeros_like(a), np.int32(64)], (2, 2), (32, 8))[1]
    np.testing.assert_array_equal(out, a.T)


def test_dot_int8(emulate, tenth, rng):
    a, b = (rng.integers(-2**31, 2**31, 5000).astype(np.int32) for _ in range(2))
    total = emulate(tenth, "dot_int8", [a, b, np.int64(5000), np.zeros(1, np.int32)], (4,),
                    (128,))[3]
    want = (a.view(np.int8).astype(np.int64) * b.view(np.int8)).sum()
    assert total[0] == want


def test_weighted_bins(emulate, tenth, rng):
    v, w = rng.random(3000, dtype=np.float32), rng.random(3000, dtype=np.float32)
    bins = emulate(tenth, "weighted_bins", [v, w, np.zeros(16, np.float32), np.int32(3000),
                                         np.int32(16)], (12,), (256,))[2]
    np.testing.assert_allclose(bins, np.bincount((v * 16).astype(int), w, 16), rtol=1e-5)


def test_bitonic_steps_sort(tenth, rng):
    a = rng.random(1024, dtype=np.float32)
    dev = emu.to_device(a)
    f = tenth.get_function("bitonic_step")
    k = 2
    while k <= 1024:
        j = k // 2
        while j > 0:
            f(dev, np.int32(j), np.int32(k), grid=(4,), block=(256,))
            j //= 2
        k *= 2
    np.testing.assert_array_equal(emu.from_device_like(dev, a), np.sort(a))


def test_stencil_1d(emulate, tenth, rng):
    x, w = rng.random(1024, dtype=np.float32), rng.random(17, dtype=np.float32)
    out = emulate(tenth, "stencil_1d", [x, np.zeros_like(x), w, np.int32(1024)], (4,), (256,))[1]
    padded = np.pad(x.astype(np.float64), 8)
    want = sum(w[k] * padded[k:k + 1024] for k in range(17))
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_haxpy(emulate, tenth, rng):
    x, y = (rng.uniform(-1, 1, 600).astype(np.float16) for _ in range(2))
    a = np.float16([0.5, 2.0])
    out = emulate(tenth, "haxpy", [np.int32(300), a.view(np.uint32)[0], x, y.copy()], (2,),
                  (64,))[3]
    want = (np.tile(a, 300).astype(np.float64) * x + y).astype(np.float16)
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


@pytest.mark.parametrize("kernel", ["row_sums", "column_sums"])
def test_sums(emulate, tenth, rng, kernel):
    m = rng.random((256, 512), dtype=np.float32)
    axis, n = (1, 256) if kernel == "row_sums" else (0, 512)
    out = emulate(tenth, kernel, [m, np.zeros(n, np.float32), np.int32(256), np.int32(512)],
                  (n // 256,), (256,))[1]
    np.testing.assert_allclose(out, m.astype(np.float64).sum(axis=axis), rtol=1e-5)


def test_sum_tiles(emulate, tenth, rng):
    x = rng.random(10_000, dtype=np.float32)
    total = emulate(tenth, "sum_tiles", [x, np.zeros(1, np.float32), np.int32(10_000)], (8,),
                    (128,))[1]
    assert total[0] == pytest.approx(x.astype(np.float64).sum(), rel=1e-5)


def _measured(kernel: str) -> dict:
    from benchmarks.sass_counts import read_ncu_file

    fixture = FRESH.parent / "fixtures" / "h200_tenth_batch.ncu.csv.gz"
    return next(m for m in read_ncu_file(fixture) if m["kernel"] == kernel)


def _tenth_launch(name: str):
    from benchmarks import peer_times

    return next(launch for launch in peer_times.TENTH if launch.name == name)


def test_a_row_read_three_times_past_the_l1_share_comes_from_the_l2_each_time():
    """``softmax_rows`` at 8192 floats a row: a block's row (32 kB) is more than its share of
    the L1 (eight blocks per SM), so the L1 keeps none of it from one pass to the next (an
    LRU cache streamed through): Nsight Compute counted 3.6 times the input read from the
    L2 on the H200; a row of 2048 floats fits, and is read from the L2 once."""
    from benchmarks import peer_times

    launch = _tenth_launch("softmax_rows 4096x8192")
    p, _ = peer_times._predict(launch, "H200")
    measured = _measured("softmax_rows")["lts__t_sectors_op_read.sum"] * 32
    assert p.counts["l2_read_bytes"] == pytest.approx(measured, rel=0.25)
    x = np.zeros(1024 * 2048, np.float32)
    import cudakit

    short = cudakit.predict(launch.source, "softmax_rows", grid=(1024,), block=(256,),
                            args=[x, np.zeros_like(x), np.int32(2048)], device="H200")
    assert short.counts["l2_read_bytes"] == pytest.approx(x.nbytes, rel=0.05)


def test_weights_every_block_reads_stay_in_l1_after_the_first_round():
    """``stencil_1d`` reads its 17 weights with ``LDG`` in each of its 131072 blocks: after
    each SM's first round they are L1 hits, and the blocks wait for their input alone (the
    model had them wait for the L2 at every block: +34 % of the H200's time)."""
    import json

    from benchmarks import peer_times

    launch = _tenth_launch("stencil_1d 2^25 radius 8")
    stored = json.loads(peer_times.TENTH_FIXTURE.read_text())["launches"][launch.name]
    p, _ = peer_times._predict(launch, "H200")
    assert p.ms == pytest.approx(stored["ms"], rel=0.15)
