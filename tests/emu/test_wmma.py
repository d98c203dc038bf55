"""Warp matrix operations (``nvcuda::wmma``) on the emulator, compared with NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu import wmma
from cudakit.emu.counts import InstructionCounter, instruction_class
from cudakit.errors import UnsupportedError

from .conftest import build

#: one warp: D = A B + C on one tile, each operand in the layout its template names
TILE = r"""
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
template <int M, int N, int K, typename T, typename S, typename C, typename LA, typename LB,
          bool TO_TF32>
__global__ void tile(const S *a, const S *b, const C *c, C *d, int lda, int ldb, int ldc,
                     int c_by_rows)
{
    wmma::fragment<wmma::matrix_a, M, N, K, T, LA> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, T, LB> fb;
    wmma::fragment<wmma::accumulator, M, N, K, C> fc;
    wmma::load_matrix_sync(fa, a, lda);
    wmma::load_matrix_sync(fb, b, ldb);
    if (TO_TF32) {
        for (int e = 0; e < fa.num_elements; ++e) fa.x[e] = wmma::__float_to_tf32(fa.x[e]);
        for (int e = 0; e < fb.num_elements; ++e) fb.x[e] = wmma::__float_to_tf32(fb.x[e]);
    }
    wmma::layout_t layout = c_by_rows ? wmma::mem_row_major : wmma::mem_col_major;
    wmma::load_matrix_sync(fc, c, ldc, layout);
    wmma::mma_sync(fc, fa, fb, fc);
    for (int e = 0; e < fc.num_elements; ++e) fc.x[e] = fc.x[e] * C(2);  // any mapping
    wmma::store_matrix_sync(d, fc, ldc, layout);
}
"""
ROW, COL = "wmma::row_major", "wmma::col_major"
#: (M, N, K, fragment type, storage type, accumulator type, A layout, B layout, to tf32)
CASES = [
    (16, 16, 16, "half", "half", "float", ROW, COL, False),
    (16, 16, 16, "half", "half", "half", COL, ROW, False),
    (32, 8, 16, "half", "half", "float", ROW, ROW, False),
    (8, 32, 16, "half", "half", "half", COL, COL, False),
    (16, 16, 16, "__nv_bfloat16", "__nv_bfloat16", "float", ROW, COL, False),
    (16, 16, 8, "wmma::precision::tf32", "float", "float", ROW, COL, True),
    (16, 16, 8, "wmma::precision::tf32", "float", "float", COL, ROW, True),
    (16, 16, 16, "signed char", "signed char", "int", ROW, COL, False),
    (32, 8, 16, "unsigned char", "unsigned char", "int", COL, ROW, False),
    (8, 32, 16, "signed char", "signed char", "int", ROW, ROW, False),
    (8, 8, 4, "double", "double", "double", ROW, COL, False),
    (8, 8, 4, "double", "double", "double", COL, ROW, False),
]
_NUMPY = {"half": np.float16, "float": np.float32, "double": np.float64, "int": np.int32,
          "signed char": np.int8, "unsigned char": np.uint8}


def _name(case, demangled: bool = False) -> str:
    """The instance's name as the source writes it, or as nvcc demangles it."""
    m, n, k, t, s, c, la, lb, tf32 = case
    text = f"tile<{m}, {n}, {k}, {t}, {s}, {c}, {la}, {lb}, {str(tf32).lower()}>"
    if demangled:
        text = text.replace("wmma::", "nvcuda::wmma::").replace("half", "__half")
    return text


def _to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 rounded to 10 mantissa bits, ties away from zero (cvt.rna.tf32.f32)."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def _operand(rng, shape, storage: str):
    """Values exact in the storage type, and the array the kernel reads."""
    if storage in ("signed char", "unsigned char"):
        low = 0 if storage == "unsigned char" else -20
        v = rng.integers(low, 20, shape)
        return v.astype(np.float64), v.astype(_NUMPY[storage])
    if storage == "__nv_bfloat16":  # the upper half of float32s with 8 mantissa bits
        v = (rng.integers(-64, 64, shape) / 8.0).astype(np.float32)
        return v.astype(np.float64), (v.view(np.uint32) >> 16).astype(np.uint16)
    v = rng.standard_normal(shape).astype(_NUMPY[storage])
    return v.astype(np.float64), v


@pytest.mark.parametrize("case", CASES, ids=_name)
@pytest.mark.parametrize("c_by_rows", [1, 0], ids=["C by rows", "C by columns"])
def test_one_tile_matches_numpy(case, c_by_rows, rng):
    m, n, k, _, storage, acc, la, lb, tf32 = case
    mod = build(TILE + f"template __global__ void {_name(case)}(const {storage} *, "
                f"const {storage} *, const {acc} *, {acc} *, int, int, int, int);")
    a, a_mem = _operand(rng, (m, k), storage)
    b, b_mem = _operand(rng, (k, n), storage)
    c, c_mem = _operand(rng, (m, n), "signed char" if acc == "int" else acc)
    c_mem = c_mem.astype(_NUMPY[acc])
    a_mem = a_mem if la == ROW else np.ascontiguousarray(a_mem.T)
    b_mem = b_mem if lb == ROW else np.ascontiguousarray(b_mem.T)
    if tf32:
        a, b = _to_tf32(a).astype(np.float64), _to_tf32(b).astype(np.float64)
    lda = k if la == ROW else m
    ldb = n if lb == ROW else k
    d = np.zeros((m, n) if c_by_rows else (n, m), _NUMPY[acc])
    mod.get_function(_name(case, demangled=True))(
        emu.In(a_mem), emu.In(b_mem), emu.In(c_mem if c_by_rows else
                                               np.ascontiguousarray(c_mem.T)),
        emu.Out(d), np.int32(lda), np.int32(ldb), np.int32(n if c_by_rows else m),
        np.int32(c_by_rows), block=(32, 1, 1), grid=(1, 1))
    want = 2 * (a @ b + c)
    got = d if c_by_rows else d.T
    if acc == "int" or acc == "double":
        np.testing.assert_array_equal(got, want.astype(_NUMPY[acc]))
    else:  # rounded once from the exact sum (the tensor cores' own order is not modelled)
        np.testing.assert_allclose(got, want.astype(_NUMPY[acc]), rtol=2e-3 if acc == "half"
                                   else 1e-6, atol=1e-2 if acc == "half" else 1e-5)


GEMM = r"""
#include <mma.h>
using namespace nvcuda;
__global__ void gemm(const half *a, const half *b, float *c, int n)
{
    __shared__ half sa[2][16 * 16];
    int w = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.y * 16, col = (blockIdx.x * 2 + w) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < n; k += 16) {
        for (int e = lane; e < 256; e += 32) sa[w][e] = a[(row + e / 16) * n + k + e % 16];
        __syncwarp();
        wmma::load_matrix_sync(fa, sa[w], 16);
        wmma::load_matrix_sync(fb, b + (size_t)col * n + k, n);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(c + (size_t)row * n + col, acc, n, wmma::mem_row_major);
}
"""


def test_a_gemm_through_shared_memory_matches_numpy(rng):
    n = 64
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)  # row j: column j of B
    c = np.zeros((n, n), np.float32)
    counter = InstructionCounter()
    build(GEMM).get_function("gemm")(emu.In(a), emu.In(b), emu.Out(c), np.int32(n),
                                     block=(64, 1, 1), grid=(n // 32, n // 16),
                                     counter=counter)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
    warps, steps = (n // 32) * (n // 16) * 2, n // 16
    # each wmma.mma runs as two HMMA.16816; A from shared (4 loads), B from global (4)
    assert counter.classes["mma.f16"] == warps * steps * 2
    assert counter.classes["ld.shared"] == warps * steps * 4


def test_a_diverged_warp_is_reported():
    src = GEMM.replace("wmma::mma_sync(acc, fa, fb, acc);",
                       "if (lane < 16) wmma::mma_sync(acc, fa, fb, acc);")
    z = np.zeros(64 * 64, np.float16)
    with pytest.raises(UnsupportedError, match="all 32 threads of each warp"):
        build(src).get_function("gemm")(emu.In(z), emu.In(z), emu.Out(np.zeros(64 * 64,
                                        np.float32)), np.int32(64), block=(64, 1, 1),
                                        grid=(2, 4))


def test_the_fragments_cover_each_tile_once():
    for opcode in ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16",
                   "wmma.load.b.sync.aligned.col.m32n8k16.global.f16",
                   "wmma.load.c.sync.aligned.row.m8n32k16.global.f32",
                   "wmma.load.a.sync.aligned.col.m16n16k8.tf32",
                   "wmma.load.b.sync.aligned.row.m32n8k16.global.u8",
                   "wmma.load.c.sync.aligned.col.m8n8k4.global.f64"):
        f = wmma.fragment(opcode)
        rows, cols = wmma.coordinates(f)
        cells = rows.ravel() * f.cols + cols.ravel()
        assert sorted(cells.tolist()) == list(range(f.rows * f.cols)), opcode


def test_the_instruction_classes_are_the_sass_ones():
    # nvdisasm of nvcc 13.0's sm_90 code: two HMMA.16816 per m16n16k16, four HMMA.1684 per
    # m16n16k8 tf32, one DMMA.8x8x4, two IMMA.16816 per 8-bit m16n16k16; a row-major f16
    # A fragment is four 32-bit loads, a float accumulator four 64-bit stores
    assert wmma.sass_count("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32") == ("mma.f16", 2)
    assert wmma.sass_count(
        "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32") == ("mma.tf32", 4)
    assert wmma.sass_count(
        "wmma.mma.sync.aligned.row.col.m8n8k4.f64.f64.f64.f64") == ("mma.f64", 1)
    assert wmma.sass_count(
        "wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.s8.s32") == ("mma.i8", 2)
    assert wmma.sass_count("wmma.load.a.sync.aligned.row.m16n16k16.global.f16") == (
        "ld.global", 4)
    assert wmma.sass_count("wmma.store.d.sync.aligned.row.m16n16k16.global.f32") == (
        "st.global", 4)
    assert instruction_class("wmma.load.b.sync.aligned.col.m16n16k16.shared.f16") == \
        "ld.shared"


def test_the_experimental_sub_byte_types_are_named_as_unsupported():
    src = r"""
#include <mma.h>
using namespace nvcuda;
__global__ void s4(const void *a, const void *b, int *c) {
    wmma::fragment<wmma::matrix_a, 8, 8, 32, wmma::experimental::precision::s4,
                   wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a, 32);
}
"""
    with pytest.raises(UnsupportedError, match=r"\.s4"):
        build(src).get_function("s4")(emu.In(np.zeros(128, np.uint8)),
                                      emu.In(np.zeros(128, np.uint8)),
                                      emu.Out(np.zeros(64, np.int32)), block=(32, 1, 1),
                                      grid=(1, 1))
