"""The peer suite: kernels from NVIDIA's cuda-samples (``kernels/``, copied unchanged by
``extract.py``), each launched as its sample launches it, with a NumPy reference.

``run(case, engine)`` returns the output arrays; ``engine`` is ``cudakit.emu`` or the
PyCUDA engine of ``record_h100.py``. Outputs that the GPU leaves to chance (the winner
of ``atomicExch``, a bucket's order) are checked by property and listed in ``vary``,
which the H100 comparison leaves out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parent / "kernels"


@dataclass
class PeerCase:
    name: str
    file: str
    kernel: str  # as the user names it: "reduce4<int, 128>"
    inputs: Callable  # rng -> list of host arrays / NumPy scalars
    outputs: list[int]
    check: Callable  # (outputs, inputs) -> None, asserting against NumPy
    grid: tuple = (1, 1)
    block: tuple = (128, 1, 1)
    shared: int = 0
    rtol: float = 0.0  # 0: integers or exactly representable values, compared exactly
    vary: set = field(default_factory=set)  # output indices the GPU leaves to chance

    @property
    def source(self) -> str:
        return (KERNELS / self.file).read_text()


def run(case: PeerCase, engine, host=None):
    """Launch ``case`` on ``engine``; return ``(outputs, host inputs)``."""
    if host is None:
        host = case.inputs(np.random.default_rng(11))
    fn = engine.peer_function(case) if hasattr(engine, "peer_function") else \
        engine.SourceModule(case.source, no_extern_c=True).get_function(case.kernel)
    dev = [engine.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    fn(*dev, grid=case.grid, block=case.block, shared=case.shared)
    outs = []
    for i in case.outputs:
        out = np.empty_like(host[i])
        engine.memcpy_dtoh(out, dev[i])
        outs.append(out)
    return outs, host


def same(expected, rtol=0.0):
    """A check comparing the outputs with NumPy's results ``expected(host)``."""
    def check(outs, host):
        for got, want in zip(outs, expected(host), strict=True):
            want = np.asarray(want).reshape(got.shape).astype(got.dtype)
            if rtol:
                np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
            else:
                np.testing.assert_array_equal(got, want)
    return check


def ints(n, hi=100, dtype=np.int32):
    return lambda r: r.integers(0, hi, n).astype(dtype)


def block_sums(x, nblocks, chunk):
    """Sum of the elements each block of a grid-stride reduction owns."""
    owner = (np.arange(x.size) // chunk) % nblocks
    return np.bincount(owner, weights=x.astype(np.float64), minlength=nblocks)


# -- reduction.cu: reduce0 .. reduce7, cg_reduce, multi_warp_cg_reduce ------------------------
N = 1 << 14


def _reduce(name, kernel, dtype, block, chunk_of, grid, n=N, shared=None, rtol=0.0):
    def inputs(r):
        x = r.integers(0, 50, n).astype(dtype)
        return [x, np.zeros(grid, dtype), np.uint32(n)]

    def expect(h):
        return [block_sums(h[0], grid, chunk_of(block)).astype(dtype)]
    size = np.dtype(dtype).itemsize
    return PeerCase(name, "reduction.cu", kernel, inputs, [1], same(expect, rtol), (grid, 1),
                    (block, 1, 1), shared if shared is not None else block * size, rtol)


REDUCTION = [
    _reduce("reduce0_int", "reduce0<int>", np.int32, 128, lambda b: b, N // 128),
    _reduce("reduce1_int", "reduce1<int>", np.int32, 128, lambda b: b, N // 128),
    _reduce("reduce2_float", "reduce2<float>", np.float32, 256, lambda b: b, N // 256),
    _reduce("reduce3_int", "reduce3<int>", np.int32, 128, lambda b: 2 * b, N // 256),
    _reduce("reduce4_int_256", "reduce4<int, 256>", np.int32, 256, lambda b: 2 * b, N // 512),
    _reduce("reduce5_float_128", "reduce5<float, 128>", np.float32, 128, lambda b: 2 * b,
            N // 256),
    _reduce("reduce6_int_256_pow2", "reduce6<int, 256, true>", np.int32, 256, lambda b: 2 * b,
            8),
    _reduce("reduce6_double_128", "reduce6<double, 128, false>", np.float64, 128,
            lambda b: b, 8, n=N - 100),
    _reduce("reduce7_int_256_pow2", "reduce7<int, 256, true>", np.int32, 256, lambda b: 2 * b,
            8, shared=8 * 4),
    _reduce("reduce7_float_96", "reduce7<float, 96, false>", np.float32, 96, lambda b: b, 5,
            n=N - 7, shared=4 * 4),
    _reduce("cg_reduce_int", "cg_reduce<int>", np.int32, 256, lambda b: b, 16),
    _reduce("multi_warp_cg_reduce_int", "multi_warp_cg_reduce<int, 256, 64>", np.int32, 256,
            lambda b: 2 * b, 8, shared=4 * 4),
]

# -- transpose.cu -------------------------------------------------------------------------------
W = H = 96  # square, as the sample runs it (copySharedMem guards with width/height swapped)


def _transpose(name, kernel, expect):
    def inputs(r):
        return [np.zeros(W * H, np.float32), r.random(W * H, dtype=np.float32), np.int32(W),
                np.int32(H)]
    return PeerCase(name, "transpose.cu", kernel, inputs, [0],
                    same(lambda h: [expect(h[1].reshape(H, W))]), (W // 32, H // 32),
                    (32, 16, 1))


def _fine(a):  # each 32x32 tile transposed in place (transposeFineGrained)
    t = a.reshape(H // 32, 32, W // 32, 32).transpose(0, 2, 3, 1)
    return t.transpose(0, 2, 1, 3).reshape(H, W)


def _coarse(a):  # tiles moved to their transposed place, not transposed (CoarseGrained)
    t = a.reshape(H // 32, 32, W // 32, 32).transpose(2, 1, 0, 3)
    return t.reshape(W, H)


TRANSPOSE = [
    _transpose("transpose_copy", "copy", lambda a: a),
    _transpose("transpose_copySharedMem", "copySharedMem", lambda a: a),
    _transpose("transpose_naive", "transposeNaive", lambda a: a.T),
    _transpose("transpose_coalesced", "transposeCoalesced", lambda a: a.T),
    _transpose("transpose_noBankConflicts", "transposeNoBankConflicts", lambda a: a.T),
    _transpose("transpose_diagonal", "transposeDiagonal", lambda a: a.T),
    _transpose("transpose_fineGrained", "transposeFineGrained", _fine),
    _transpose("transpose_coarseGrained", "transposeCoarseGrained", _coarse),
]

# -- small samples --------------------------------------------------------------------------------


def _scalar_prod_inputs(r):
    a = r.integers(-8, 8, 8 * 4096).astype(np.float32)
    b = r.integers(-8, 8, 8 * 4096).astype(np.float32)
    return [np.zeros(8, np.float32), a, b, np.int32(8), np.int32(4096)]


def _shfl_inputs(r):
    return [r.integers(0, 10, 1024).astype(np.int32), np.int32(32), np.zeros(4, np.int32)]


def _shfl_expect(h):
    blocks = h[0].reshape(4, 256).astype(np.int64).cumsum(axis=1)
    return [blocks.reshape(-1), blocks[:, -1]]


def _uniform_add_inputs(r):
    return [r.integers(0, 10, 1024).astype(np.int32), r.integers(0, 99, 4).astype(np.int32),
            np.int32(1024)]


def _vote_any(h):
    return [np.repeat(h[0].reshape(-1, 32).any(axis=1), 32).astype(np.uint32)]


def _vote_all(h):
    return [np.repeat(h[0].reshape(-1, 32).all(axis=1), 32).astype(np.uint32)]


def _vote3_expect(h):
    tx = np.arange(64)
    half = tx >= 48
    warp_any = np.repeat(half.reshape(2, 32).any(axis=1), 32)
    warp_all = np.repeat(half.reshape(2, 32).all(axis=1), 32)
    return [np.stack([warp_any, half, warp_all], axis=1).reshape(-1)]


def _atomics_check(outs, host):
    g, n = outs[0].astype(np.int64), 10 * 128
    tid = np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(g[[0, 1, 3, 4, 5]], [10 * n, -10 * n, n - 1, 0, n % 18])
    dec = 0
    for _ in range(n):  # atomicDec wraps to 137 at 0
        dec = 137 if dec == 0 or dec > 137 else dec - 1
    assert g[6] == dec and 0 <= g[2] < n and 0 <= g[7] < n
    assert g[8] == np.bitwise_and.reduce(np.r_[0xFF, 2 * tid + 7])
    assert g[9] == np.int64(np.uint32(0xFFFFFFFF).view(np.int32))  # 1 << tid covers all bits
    assert g[10] == np.bitwise_xor.reduce(tid)


def _atomics_inputs(r):
    g = np.zeros(11, np.int32)
    g[4] = g[8] = 0xFF
    return [g]


def _fp16_inputs(r):
    n = 128 * 128 * 2
    a = (r.integers(-4, 5, n) / 4).astype(np.float16)
    b = (r.integers(-4, 5, n) / 4).astype(np.float16)
    return [a, b, np.zeros(128, np.float32), np.uint64(n // 2)]


def _fp16_expect(h):
    a = h[0].astype(np.float64).reshape(-1, 2)
    b = h[1].astype(np.float64).reshape(-1, 2)
    size = a.shape[0]
    out = np.zeros(128)
    stride = 128 * 128
    for blk in range(128):
        acc = np.zeros(2)
        for t in range(128):
            i = np.arange(t + 128 + blk, size, stride)
            acc += (a[i] * b[i]).sum(axis=0)
        out[blk] = acc.sum()
    return [out]


def _filter_inputs(r):
    src = r.integers(-5, 6, 5000).astype(np.int32)
    return [np.zeros(5000, np.int32), np.zeros(1, np.int32), src, np.int32(5000)]


def _filter_check(outs, host):
    dst, nres = outs
    pos = host[2][host[2] > 0]
    assert nres[0] == pos.size
    np.testing.assert_array_equal(np.sort(dst[: pos.size]), np.sort(pos))


def _buckets_inputs(r):
    src = r.integers(0, 8, 3000).astype(np.int32)
    counters = (np.arange(8) * 3000).astype(np.int32)
    return [src, np.zeros(8 * 3000, np.int32), counters, np.int32(3000), np.int32(8)]


def _buckets_check(outs, host):
    idx, counters = outs
    src = host[0]
    np.testing.assert_array_equal(counters - np.arange(8) * 3000, np.bincount(src, minlength=8))
    for b in range(8):
        got = idx[b * 3000: b * 3000 + (src == b).sum()]
        np.testing.assert_array_equal(np.sort(got), np.flatnonzero(src == b))


def _max_inputs(r):
    src = r.integers(0, 8, 3000).astype(np.int32)
    vals = r.integers(0, 10**6, 3000).astype(np.int32)
    return [src, vals, np.zeros(8, np.int32), np.int32(3000), np.int32(8)]


def _max_expect(h):
    out = np.zeros(8, np.int32)
    np.maximum.at(out, h[0], h[1])
    return [out]


def _oddeven_inputs(r):
    return [r.integers(0, 1000, 4000).astype(np.int32), np.zeros(1, np.int32),
            np.zeros(2, np.int32), np.uint32(4000)]


def _oddeven_expect(h):
    x = h[0]
    return [np.array([(x % 2 == 1).sum()]), np.array([x[x % 2 == 1].sum(), x[x % 2 == 0].sum()])]


def _matmul_inputs(r):
    a = r.integers(-4, 5, (64, 96)).astype(np.float32)
    b = r.integers(-4, 5, (96, 32)).astype(np.float32)
    return [np.zeros(64 * 32, np.float32), a, b, np.int32(96), np.int32(32)]


SMALL = [
    PeerCase("scalarProdGPU", "scalarProd.cu", "scalarProdGPU", _scalar_prod_inputs, [0],
             same(lambda h: [(h[1].astype(np.float64) * h[2]).reshape(8, -1).sum(axis=1)]),
             (4, 1), (256, 1, 1)),
    PeerCase("shfl_scan_test", "shfl_scan.cu", "shfl_scan_test", _shfl_inputs, [0, 2],
             same(_shfl_expect), (4, 1), (256, 1, 1), shared=8 * 4),
    PeerCase("uniform_add", "shfl_scan.cu", "uniform_add", _uniform_add_inputs, [0],
             same(lambda h: [h[0] + np.repeat(h[1], 256)]), (4, 1),
             (256, 1, 1)),
    PeerCase("VoteAnyKernel1", "simpleVote.cu", "VoteAnyKernel1",
             lambda r: [(r.random(128) < 0.02).astype(np.uint32), np.zeros(128, np.uint32),
                        np.int32(128)], [1], same(_vote_any), (1, 1), (128, 1, 1)),
    PeerCase("VoteAllKernel2", "simpleVote.cu", "VoteAllKernel2",
             lambda r: [(r.random(128) < 0.99).astype(np.uint32), np.zeros(128, np.uint32),
                        np.int32(128)], [1], same(_vote_all), (1, 1), (128, 1, 1)),
    PeerCase("VoteAnyKernel3", "simpleVote.cu", "VoteAnyKernel3",
             lambda r: [np.zeros(64 * 3, np.bool_), np.int32(32)], [0], same(_vote3_expect),
             (1, 1), (64, 1, 1)),
    PeerCase("simpleAtomicIntrinsics", "simpleAtomicIntrinsics.cu", "testKernel",
             _atomics_inputs, [0], _atomics_check, (10, 1), (128, 1, 1), vary={0}),
    PeerCase("fp16_scalarProduct_intrinsics", "fp16ScalarProduct.cu",
             "scalarProductKernel_intrinsics", _fp16_inputs, [2], same(_fp16_expect), (128, 1),
             (128, 1, 1)),
    PeerCase("fp16_scalarProduct_native", "fp16ScalarProduct.cu", "scalarProductKernel_native",
             _fp16_inputs, [2], same(_fp16_expect), (128, 1), (128, 1, 1)),
    PeerCase("inlinePTX_sequence", "inlinePTX.cu", "sequence_gpu",
             lambda r: [np.zeros(1000, np.int32), np.int32(1000)], [0],
             same(lambda h: [np.arange(1000) % 32]), (8, 1), (128, 1, 1)),
    PeerCase("warpAggregated_filter_arr", "warpAggregatedAtomicsCG.cu", "filter_arr",
             _filter_inputs, [0, 1], _filter_check, (4, 1), (256, 1, 1), vary={0}),
    PeerCase("warpAggregated_mapToBuckets", "warpAggregatedAtomicsCG.cu", "mapToBuckets",
             _buckets_inputs, [1, 2], _buckets_check, (3, 1), (512, 1, 1), vary={0}),
    PeerCase("warpAggregated_maxInBuckets", "warpAggregatedAtomicsCG.cu",
             "calculateMaxInEachBuckets", _max_inputs, [2], same(_max_expect), (3, 1),
             (512, 1, 1)),
    PeerCase("binaryPartition_oddEven", "binaryPartitionCG.cu", "oddEvenCountAndSumCG",
             _oddeven_inputs, [1, 2], same(_oddeven_expect), (4, 1), (256, 1, 1)),
    PeerCase("matrixMul_block16", "matrixMul.cu", "MatrixMulCUDA<16>", _matmul_inputs, [0],
             same(lambda h: [h[1].astype(np.float64) @ h[2]]), (2, 4), (16, 16, 1)),
    PeerCase("matrixMul_block32", "matrixMul.cu", "MatrixMulCUDA<32>", _matmul_inputs, [0],
             same(lambda h: [h[1].astype(np.float64) @ h[2]]), (1, 2), (32, 32, 1)),
    PeerCase("vectorAdd", "vectorAdd.cu", "vectorAdd",
             lambda r: [r.random(1000, dtype=np.float32), r.random(1000, dtype=np.float32),
                        np.zeros(1000, np.float32), np.int32(1000)], [2],
             same(lambda h: [h[0] + h[1]]), (4, 1), (256, 1, 1)),
]

# -- histograms --------------------------------------------------------------------------------


def _hist64_inputs(r):
    data = r.integers(0, 256, 4 * 4 * 64 * 8, dtype=np.uint8)
    return [np.zeros(4 * 64, np.uint32), data, np.uint32(data.size // 16)]


def _hist64_expect(h):
    words = h[1].reshape(-1, 16)  # one uint4 per position
    owner = (np.arange(words.shape[0]) // 64) % 4
    out = np.zeros((4, 64), np.uint32)
    for b in range(4):
        np.add.at(out[b], (words[owner == b].reshape(-1) >> 2), 1)
    return [out.reshape(-1)]


def _merge_inputs(bins):
    def inputs(r):
        parts = r.integers(0, 1000, (300, bins)).astype(np.uint32)
        return [np.zeros(bins, np.uint32), parts.reshape(-1), np.uint32(300)]
    return inputs


def _hist256_inputs(r):
    data = r.integers(0, 256, 4 * 4 * 192 * 5, dtype=np.uint8)
    return [np.zeros(4 * 256, np.uint32), data, np.uint32(data.size // 4)]


def _hist256_expect(h):
    words = h[1].reshape(-1, 4)
    owner = (np.arange(words.shape[0]) // 192) % 4
    out = np.zeros((4, 256), np.uint32)
    for b in range(4):
        np.add.at(out[b], words[owner == b].reshape(-1), 1)
    return [out.reshape(-1)]


HISTOGRAM = [
    PeerCase("histogram64Kernel", "histogram64.cu", "histogram64Kernel", _hist64_inputs, [0],
             same(_hist64_expect), (4, 1), (64, 1, 1)),
    PeerCase("mergeHistogram64Kernel", "histogram64.cu", "mergeHistogram64Kernel",
             _merge_inputs(64), [0], same(lambda h: [h[1].reshape(300, 64).sum(axis=0)]),
             (64, 1), (256, 1, 1)),
    PeerCase("histogram256Kernel", "histogram256.cu", "histogram256Kernel", _hist256_inputs,
             [0], same(_hist256_expect), (4, 1), (192, 1, 1)),
    PeerCase("mergeHistogram256Kernel", "histogram256.cu", "mergeHistogram256Kernel",
             _merge_inputs(256), [0], same(lambda h: [h[1].reshape(300, 256).sum(axis=0)]),
             (256, 1), (256, 1, 1)),
]

# -- threadFenceReduction, bitonic sort, scan, fast Walsh transform ------------------------------


def _fence_inputs(r):
    x = r.integers(0, 20, 8 * 256 * 2).astype(np.float32)
    return [x, np.zeros(8, np.float32), np.uint32(x.size)]


def _bitonic_inputs(r, n=1024, batch=4):
    keys = r.integers(0, 1 << 20, n * batch).astype(np.uint32)
    return [np.zeros_like(keys), np.zeros_like(keys), keys, np.arange(keys.size, dtype=np.uint32),
            np.uint32(n), np.uint32(1)]


def _sorted_check(n):
    def check(outs, host):
        keys, vals = outs
        src = host[2].reshape(-1, n)
        np.testing.assert_array_equal(keys.reshape(-1, n), np.sort(src, axis=1))
        np.testing.assert_array_equal(host[2][vals], keys)  # values travel with their keys
    return check


def _bitonic1_inputs(r):
    keys = r.integers(0, 1 << 20, 4096).astype(np.uint32)
    return [np.zeros_like(keys), np.zeros_like(keys), keys, np.arange(keys.size, dtype=np.uint32)]


def _bitonic1_check(outs, host):
    keys = outs[0].reshape(-1, 1024)
    src = host[2].reshape(-1, 1024)
    for k, (row, s) in enumerate(zip(keys, src, strict=True)):  # even blocks descending
        np.testing.assert_array_equal(row, np.sort(s)[::-1] if k % 2 == 0 else np.sort(s))


def _merge_global_inputs(r):
    keys = r.integers(0, 1 << 20, 4096).astype(np.uint32)
    return [np.zeros_like(keys), np.zeros_like(keys), keys, np.arange(keys.size, dtype=np.uint32),
            np.uint32(4096), np.uint32(4096), np.uint32(2048), np.uint32(1)]


def _merge_global_expect(h):
    k = h[2].copy()
    v = h[3].copy()
    lo, hi = k[:2048], k[2048:]
    swap = lo > hi
    nk = k.copy()
    nv = v.copy()
    nk[:2048] = np.where(swap, hi, lo)
    nk[2048:] = np.where(swap, lo, hi)
    nv[:2048] = np.where(swap, v[2048:], v[:2048])
    nv[2048:] = np.where(swap, v[:2048], v[2048:])
    return [nk, nv]


def _scan_inputs(r):
    src = r.integers(0, 100, 4 * 1024).astype(np.uint32)
    return [np.zeros_like(src), src, np.uint32(1024)]


def _scan_expect(h):
    rows = h[1].reshape(-1, 1024).astype(np.uint64)
    return [(np.cumsum(rows, axis=1) - rows).astype(np.uint32).reshape(-1)]


def _scan2_inputs(r):
    n = 64  # top elements: the last of each 1024-element row of a first pass
    dst = r.integers(0, 100, 1024 * n).astype(np.uint32)
    src = r.integers(0, 100, 1024 * n).astype(np.uint32)
    return [np.zeros(256, np.uint32), dst, src, np.uint32(n), np.uint32(64)]


def _scan2_expect(h):
    top = (h[1][1023::1024] + h[2][1023::1024]).astype(np.uint64)
    out = np.zeros(256, np.uint64)
    out[:64] = np.cumsum(top) - top
    return [out.astype(np.uint32)]


def _uniform_update_inputs(r):
    data = r.integers(0, 100, 4 * 1024).astype(np.uint32)
    return [data, r.integers(0, 1000, 4).astype(np.uint32)]


def _hadamard(n):
    h = np.ones((1, 1))
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def _fwt1_inputs(r):
    x = r.integers(-3, 4, 2 * 2048).astype(np.float32)
    return [np.zeros_like(x), x, np.int32(11)]


def _fwt2_inputs(r):
    x = r.integers(-3, 4, 2 * 4096).astype(np.float32)
    return [np.zeros_like(x), x, np.int32(256)]


def _fwt2_expect(h):
    stride = 256
    x = h[1].reshape(2, 4096).astype(np.float64)
    out = np.zeros_like(x)
    for pos in range(1024):
        lo = pos & (stride - 1)
        i0 = ((pos - lo) << 2) + lo
        i = [i0, i0 + stride, i0 + 2 * stride, i0 + 3 * stride]
        d0, d1, d2, d3 = (x[:, k] for k in i)
        e0, e2, e1, e3 = d0 + d2, d0 - d2, d1 + d3, d1 - d3
        out[:, i[0]], out[:, i[1]] = e0 + e1, e0 - e1
        out[:, i[2]], out[:, i[3]] = e2 + e3, e2 - e3
    return [out.reshape(-1)]


def _modulate_inputs(r):
    return [r.integers(-8, 8, 4096).astype(np.float32), r.integers(-8, 8, 4096).astype(np.float32),
            np.int32(4096)]


OTHER = [
    PeerCase("reduceSinglePass", "threadFenceReduction.cu", "reduceSinglePass<256, true>",
             _fence_inputs, [1], same(lambda h: [np.r_[h[0].astype(np.float64).sum(),
                                                       block_sums(h[0], 8, 512)[1:]]]),
             (8, 1), (256, 1, 1), shared=256 * 4),
    PeerCase("reduceMultiPass", "threadFenceReduction.cu", "reduceMultiPass<128, false>",
             _fence_inputs, [1], same(lambda h: [block_sums(h[0], 8, 256)]), (8, 1),
             (128, 1, 1), shared=128 * 4),
    PeerCase("bitonicSortShared", "bitonicSort.cu", "bitonicSortShared", _bitonic_inputs,
             [0, 1], _sorted_check(1024), (4, 1), (512, 1, 1)),
    PeerCase("bitonicSortShared1", "bitonicSort.cu", "bitonicSortShared1", _bitonic1_inputs,
             [0, 1], _bitonic1_check, (4, 1), (512, 1, 1)),
    PeerCase("bitonicMergeGlobal", "bitonicSort.cu", "bitonicMergeGlobal", _merge_global_inputs,
             [0, 1], same(_merge_global_expect), (4, 1), (512, 1, 1)),
    PeerCase("scanExclusiveShared", "scan.cu", "scanExclusiveShared", _scan_inputs, [0],
             same(_scan_expect), (4, 1), (256, 1, 1)),
    PeerCase("scanExclusiveShared2", "scan.cu", "scanExclusiveShared2", _scan2_inputs, [0],
             same(_scan2_expect), (1, 1), (256, 1, 1)),
    PeerCase("uniformUpdate", "scan.cu", "uniformUpdate", _uniform_update_inputs, [0],
             same(lambda h: [h[0] + np.repeat(h[1], 1024)]), (4, 1), (256, 1, 1)),
    PeerCase("fwtBatch1Kernel", "fastWalshTransform.cu", "fwtBatch1Kernel", _fwt1_inputs, [0],
             same(lambda h: [h[1].reshape(2, 2048).astype(np.float64) @ _hadamard(2048)]),
             (2, 1), (512, 1, 1), shared=2048 * 4),
    PeerCase("fwtBatch2Kernel", "fastWalshTransform.cu", "fwtBatch2Kernel", _fwt2_inputs, [0],
             same(_fwt2_expect), (4, 2), (256, 1, 1)),
    PeerCase("modulateKernel", "fastWalshTransform.cu", "modulateKernel", _modulate_inputs, [0],
             same(lambda h: [h[0] * (h[1] * np.float32(1 / 4096))]), (8, 1), (256, 1, 1)),
]



def _bs_inputs(r, n=4000):
    def pair(lo, hi):
        return (lo + (hi - lo) * r.random(n, dtype=np.float32)).astype(np.float32)
    return [np.zeros(n, np.float32), np.zeros(n, np.float32), pair(5, 30), pair(1, 100),
            pair(0.25, 10), np.float32(0.02), np.float32(0.30), np.int32(n)]


def _bs_expect(h):
    s, x, t = (h[k].astype(np.float64) for k in (2, 3, 4))
    r, v = float(h[5]), float(h[6])

    def cnd(d):
        k = 1 / (1 + 0.2316419 * np.abs(d))
        poly = k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (
            -1.821255978 + k * 1.330274429))))
        c = 0.39894228040143267793994605993438 * np.exp(-0.5 * d * d) * poly
        return np.where(d > 0, 1 - c, c)
    d1 = (np.log(s / x) + (r + 0.5 * v * v) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    ert = np.exp(-r * t)
    return [s * cnd(d1) - x * ert * cnd(d2), x * ert * (1 - cnd(d2)) - s * (1 - cnd(d1))]


BLACK_SCHOLES = PeerCase("BlackScholesGPU", "BlackScholes.cu", "BlackScholesGPU", _bs_inputs,
                         [0, 1], same(_bs_expect, rtol=2e-4), (16, 1), (128, 1, 1),
                         rtol=2e-4)
ODD_EVEN = PeerCase("oddEvenMergeSortShared", "oddEvenMergeSort.cu", "oddEvenMergeSortShared",
                    _bitonic_inputs, [0, 1], _sorted_check(1024), (4, 1), (512, 1, 1))

CASES = REDUCTION + TRANSPOSE + SMALL + HISTOGRAM + OTHER + [BLACK_SCHOLES, ODD_EVEN]
