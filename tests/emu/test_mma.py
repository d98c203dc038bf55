"""``mma.sync``, ``ldmatrix``, ``stmatrix`` and ``movmatrix`` on the emulator against NumPy,
and (marked ``gpu``) the same kernels on a GPU against the same answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks import mma_gemm, mma_probe
from cudakit import emu
from cudakit.emu import mma
from cudakit.emu.counts import InstructionCounter, instruction_class
from cudakit.errors import UnsupportedError

from . import mma_kernels as mk
from .conftest import build
from .suite import pycuda_engine


def _run_case(engine, case, rng):
    a, b, c, want = mk.operands(case, rng)
    d = np.zeros_like(want)
    mod = engine.SourceModule(mk.source(case), no_extern_c=True)
    f = mod.get_function(mk.name(case))
    f(engine.In(a), engine.In(b), engine.In(c), engine.Out(d), block=(32, 1, 1), grid=(1, 1))
    return d, want


def _run_moves(engine, rng):
    halves = rng.integers(0, 1 << 16, 256).astype(np.uint16)
    out, back = np.zeros((32, 12), np.uint32), np.zeros(256, np.uint16)
    engine.SourceModule(mk.MOVES, no_extern_c=True).get_function("moves")(
        engine.In(halves), engine.Out(out), engine.Out(back), block=(32, 1, 1), grid=(1, 1))
    return (out, back), mk.moves_expected(halves)


def _run_gemm(engine, rng, name="hgemm_mma", n=128, **launch):
    """``benchmarks/mma_gemm.py``'s kernel ``name``: C = A B at n^3 in small integers."""
    a = rng.integers(-4, 5, (n, n)).astype(np.float16)
    bt = rng.integers(-4, 5, (n, n)).astype(np.float16)  # row j: column j of B
    c = np.zeros((n, n), np.float32)
    _, _, block, grid = mma_gemm.HELD_OUT[name]
    engine.SourceModule(mma_gemm.SOURCE, no_extern_c=True).get_function(name)(
        engine.In(a), engine.In(bt), engine.Out(c), *[np.int32(n)] * 3, block=block,
        grid=grid(n)[:2], **launch)
    return c, a.astype(np.float64) @ bt.astype(np.float64).T


def _gpu():
    import pycuda.driver as drv

    return type("Gpu", (), {"SourceModule": pycuda_engine().SourceModule, "In": drv.In,
                            "Out": drv.Out})


@pytest.mark.parametrize("case", mk.CASES, ids=mk.name)
def test_mma_sync_matches_numpy(case, rng):
    got, want = _run_case(emu, case, rng)
    np.testing.assert_array_equal(got, want)


def test_ldmatrix_stmatrix_movmatrix_follow_the_ptx_tables(rng):
    (out, back), (want_out, want_back) = _run_moves(emu, rng)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(back, want_back)


def test_an_ldmatrix_gemm_matches_numpy_and_counts_its_sass(rng):
    counter = InstructionCounter()
    got, want = _run_gemm(emu, rng, counter=counter)
    np.testing.assert_array_equal(got, want)
    warps, steps = 4 * 4, 128 // 16  # 4 blocks of 4 warps; k in steps of 16
    assert counter.classes["mma.f16"] == warps * steps * 8  # one HMMA.16816 each
    assert counter.classes["ld.shared"] == warps * steps * 4  # LDSM.16.M88.4


def test_a_cp_async_double_buffered_gemm_matches_numpy(rng):
    got, want = _run_gemm(emu, rng, "hgemm_mma_async", n=256)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("case", mk.CASES, ids=mk.name)
def test_the_tables_are_the_gpus_mma_sync(case, rng):
    got, want = _run_case(_gpu(), case, rng)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
def test_the_tables_are_the_gpus_ldmatrix_stmatrix_movmatrix(rng):
    (out, back), (want_out, want_back) = _run_moves(_gpu(), rng)
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(back, want_back)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["hgemm_mma", "hgemm_mma_async"])
def test_the_ldmatrix_gemms_on_the_gpu(name, rng):
    got, want = _run_gemm(_gpu(), rng, name, n=256)
    np.testing.assert_array_equal(got, want)


def test_a_diverged_warp_is_reported():
    src = mma_gemm.SOURCE.replace("for (int i = 0; i < MI; ++i)\n            ldmatrix_x4",
                                  "for (int i = 0; i < MI && lane < 16; ++i)\n"
                                  "            ldmatrix_x4", 1)
    assert src != mma_gemm.SOURCE
    z = np.zeros(64 * 64, np.float16)
    with pytest.raises(UnsupportedError, match="all 32 threads of each warp"):
        build(src).get_function("hgemm_mma")(emu.In(z), emu.In(z), emu.Out(np.zeros(
            64 * 64, np.float32)), *[np.int32(64)] * 3, block=(128, 1, 1), grid=(1, 1))


@pytest.mark.parametrize("opcode, reason", [
    ("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "quad-pairs"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "types"),
    ("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc", "types"),
    ("mma.sync.aligned.m16n8k32.row.col.s32.s4.s8.s32", "mixing .s4 and .s8"),
    ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", "sparse"),
])
def test_the_shapes_left_out_are_named(opcode, reason):
    with pytest.raises(UnsupportedError, match=reason):
        mma.fragments(opcode)


def test_the_fragments_cover_each_tile_once():
    for case in mk.CASES:
        m, n, k, d, a, b, c = case
        for f in mma.fragments(f"mma.sync.aligned.m{m}n{n}k{k}.row.col.{d}.{a}.{b}.{c}"):
            rows, cols = mma.coordinates(f)
            cells = rows.ravel() * f.cols + cols.ravel()
            assert sorted(cells.tolist()) == list(range(f.rows * f.cols)), (case, f.role)


def test_the_instruction_classes_are_the_sass_ones():
    # nvdisasm of nvcc 13.0's sm_90 code: one HMMA, IMMA or DMMA per mma.sync, LDSM.16.M88.4
    # and LDSM.16.MT88.4 per ldmatrix
    assert mma.sass_count("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") == ("mma.f16", 1)
    assert mma.sass_count("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32")[0] == "mma.f16"
    assert mma.sass_count("mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32")[0] == "mma.i8"
    assert mma.sass_count("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64")[0] == "mma.f64"
    # a 4-bit mma.sync is a subroutine on sm_90: two IMMA.16832 and the nibbles' widening
    assert mma.sass_slots("mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32") == {
        "mma.i8": pytest.approx(2 * 1.486), "int": 138, "imad": 47, "branch": 2}
    assert instruction_class("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == "ld.shared"
    assert instruction_class("stmatrix.sync.aligned.m8n8.x2.shared.b16") == "st.shared"
    assert instruction_class("movmatrix.sync.aligned.m8n8.trans.b16") == "shfl"


def test_each_shape_is_worth_what_the_h200_measured():
    """``mma.UNITS`` against the rates ``benchmarks/mma_probe.py`` stored: every shape it
    timed, in its class's unit, within 1 %."""
    stored = json.loads(mma_probe.STORED.read_text())
    measured = mma_probe.units(stored)
    assert len(measured) == len(mma_probe.KINDS)
    for kind, (opcode, *_) in mma_probe.KINDS.items():
        assert mma.sass_count(opcode)[1] == pytest.approx(measured[kind], rel=0.01), kind


def test_an_ldmatrix_row_outside_shared_memory_is_reported():
    src = r"""
    extern "C" __global__ void past(unsigned *out)
    {
        __shared__ __align__(16) unsigned short rows[64];
        rows[threadIdx.x] = threadIdx.x;
        __syncwarp();
        unsigned addr = (unsigned)__cvta_generic_to_shared(rows + threadIdx.x * 8), r;
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                     : "=r"(r), "=r"(out[32]) : "r"(addr));
        out[threadIdx.x] = r;
    }
    """
    with pytest.raises(emu.MemcheckError, match="shared"):
        build(src).get_function("past")(emu.Out(np.zeros(64, np.uint32)), block=(32, 1, 1),
                                        grid=(1, 1))
