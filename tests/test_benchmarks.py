"""The GPU benchmarks read their kernels and tile constants from the labs' ``%%cuda`` cells.

They only run on a GPU, so a renamed kernel, a wrong notebook path or a lab constant that no
longer matches the script would go unnoticed until then; these checks run anywhere.
"""

from __future__ import annotations

import pytest

from benchmarks import (
    chooser,
    common,
    matmul,
    nbody,
    out_of_core,
    reduction,
    stencil,
    streams,
    transfers,
    transpose,
)
from cudakit.signature import parse_kernels

WITH_KERNELS = [chooser, matmul, nbody, out_of_core, reduction, stencil, streams, transpose]


def kernels_of(notebook: str) -> set[str]:
    return {name for body, _ in common.cell_sources(notebook) for name in parse_kernels(body)}


@pytest.mark.parametrize("module", WITH_KERNELS, ids=lambda m: m.__name__)
def test_benchmarked_kernels_are_defined_in_their_lab(module):
    missing = set(module.KERNELS) - kernels_of(module.NOTEBOOK)
    assert not missing, f"{module.NOTEBOOK} defines no {sorted(missing)}"


@pytest.mark.parametrize(("notebook", "names"), transfers.LAB_KERNELS.items())
def test_transfer_benchmark_kernels_are_defined(notebook, names):
    assert set(names) <= kernels_of(notebook)


@pytest.mark.parametrize(
    ("module", "script_name", "lab_name"),
    [
        (matmul, "BM", "BM"),
        (matmul, "BN", "BN"),
        (matmul, "TILE", "TILE"),
        (transpose, "TILE", "TILE"),
        (transpose, "BLOCK_ROWS", "BLOCK_ROWS"),
        (reduction, "BLOCK", "BLOCK_SIZE"),
        (chooser, "TILE", "TILE"),
    ],
)
def test_script_constants_match_the_lab(module, script_name, lab_name):
    assert getattr(module, script_name) == common.lab_constant(module.NOTEBOOK, lab_name)


def test_stencil_launch_constants_come_from_the_lab():
    assert common.lab_constant(stencil.NOTEBOOK, "H2_ROWS") == 16
    assert common.lab_constant(stencil.NOTEBOOK, "V4_ROWS") == 4


def test_a_missing_constant_is_named():
    with pytest.raises(LookupError, match="NO_SUCH_CONSTANT"):
        common.lab_constant(stencil.NOTEBOOK, "NO_SUCH_CONSTANT")


def test_block_stamps_keep_the_kernel_and_time_every_block():
    """``benchmarks/block_times.py`` instruments a recorded kernel: its output is unchanged,
    and every block, including the threads that return early, stamps a start, an end at or
    after it and its SM (run here on the emulator, whose ``%globaltimer`` moves on)."""
    import numpy as np

    from benchmarks.block_times import instrument
    from cudakit import emu

    source = """
    __global__ void twice(float *a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        a[i] = 2 * a[i];
    }"""
    module = emu.SourceModule(instrument(source, "twice"), no_extern_c=True)
    a = np.arange(100, dtype=np.float32)
    module.get_function("twice")(emu.InOut(a), np.int32(100), grid=(4, 1, 1), block=(32, 1, 1))
    np.testing.assert_array_equal(a, 2 * np.arange(100, dtype=np.float32))
    pointer, _ = module.get_global("cudakit_block_stamps")
    stamps = np.empty((1 << 16, 3), np.uint64)
    emu.memcpy_dtoh(stamps, pointer)
    start, end = stamps[:4, 0].astype(np.int64), stamps[:4, 1].astype(np.int64)
    assert (start > 0).all() and (end >= start).all()
    assert not stamps[4:, :2].any()
    with pytest.raises(ValueError, match="no __global__ function 'other'"):
        instrument(source, "other")


@pytest.mark.parametrize("rows, cols, panel", [(97, 64, 2), (70, 97, 3), (64, 64, 129)])
def test_shape_probe_kernels_copy_and_transpose_in_any_panel_order(rows, cols, panel):
    """``benchmarks/probes/shape.cu``'s kernels that take their tiles in panels (the last
    panel lower when the tile rows do not divide) still cover every element once: checked
    against NumPy on the emulator."""
    import numpy as np

    from benchmarks import shape_probe
    from cudakit import emu

    module = emu.SourceModule((shape_probe.PROBES / "shape.cu").read_text(), no_extern_c=True)
    a = np.random.default_rng(3).uniform(0, 1, rows * cols).astype(np.float32)
    tiles = -(-rows // 32) * -(-cols // 32)
    height = min(panel, -(-rows // 32))
    for kernel, want in (("copy_panels", a), ("copy_through_tile_panels", a),
                         ("transpose_panels", a.reshape(rows, cols).T.ravel())):
        out = np.full(rows * cols, np.nan, np.float32)
        module.get_function(kernel)(emu.In(a), emu.Out(out), np.int32(rows), np.int32(cols),
                                    np.int32(height), grid=(tiles, 1, 1), block=(32, 8, 1))
        np.testing.assert_array_equal(out, want, err_msg=kernel)


def test_shape_probe_launches_have_their_h100_times():
    import json

    from benchmarks import shape_probe

    stored = json.loads(shape_probe.FIXTURE.read_text())["launches"]
    names = [launch.name for launch in shape_probe.launches()]
    assert len(names) == len(set(names)) and set(names) <= set(stored)


def test_stall_chains_compute_their_chains_and_have_their_h100_times():
    """``benchmarks/stall_chains.py``: each kernel runs 8 dependent steps a trip (checked
    against NumPy on the emulator, 2 trips), and every kernel has its stored H100 time."""
    import json

    import numpy as np

    from benchmarks import stall_chains
    from cudakit import emu

    module = emu.SourceModule(stall_chains.SRC, options=["-O3"], no_extern_c=True)
    t, b, steps = np.arange(64), np.float32(1.5), 16

    def chain(start, step):
        value = start
        for _ in range(steps):
            value = step(value)
        return value

    f32 = np.float32
    want = {
        "fadd_chain": chain(t.astype(f32), lambda a: a + b),
        "fadd_two": chain(t.astype(f32), lambda a: a + b)
        + chain(t.astype(f32) + 1, lambda a: a + b),
        "fmul_fadd": chain(t.astype(f32), lambda a: a * b + f32(0.5)),
        "iadd_chain": chain(t.astype(np.int32), lambda x: (x + 1) ^ 3).astype(f32),
        "imad_chain": chain(t.astype(np.int32), lambda x: x * 3 + 7).astype(f32),
        "dfma_chain": chain(t.astype(np.float64), lambda d: d * 1.5 + 0.25).astype(f32),
        "shfl_chain": chain(t.astype(f32) * b, lambda a: a[t ^ 1] + 1),
        "sin_chain": chain(t.astype(f32) * b, np.sin).astype(f32),
    }
    for name, expected in want.items():
        out = np.zeros(64, np.float32)
        module.get_function(name)(emu.Out(out), emu.Out(np.zeros(2, np.int64)), np.int32(2), b,
                                  grid=(1, 1, 1), block=(64, 1, 1))
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5, err_msg=name)
    stored = json.loads(stall_chains.FIXTURE.read_text())["chains"]
    assert [c["kernel"] for c in stored] == list(stall_chains.KERNELS)


def test_sgemm_blocks_sums_stalls_over_the_loops_every_block_runs():
    """``benchmarks/sgemm_blocks.py`` on its stored Nsight Compute source page (lab 12's
    ``sgemm_async`` at 1000^3, 8 x 8 blocks of 4 warps, 125 steps of 8): the interior blocks'
    loop runs 7 x 7 x 4 warps x 125 trips, the edge blocks' 15 x 4 x 125; an instruction
    issued is one ``selected`` sample."""
    import json

    from benchmarks import sgemm_blocks

    loops = sgemm_blocks.loop_stalls(
        sgemm_blocks.FIXTURE.with_name("h100_sgemm_async_source.ncu.csv.gz"))
    executed = {r["executed"] for r in loops if r["region"] != "whole kernel"}
    assert {7 * 7 * 4 * 125, 15 * 4 * 125} <= executed
    assert all(r["per_issue"]["selected"] == 1.0 for r in loops)
    stored = json.loads(sgemm_blocks.FIXTURE.read_text())
    assert stored["stalls"] == loops
    assert [s["shape"] for s in stored["shapes"]] == [list(s) for s in sgemm_blocks.SHAPES]


def test_dram_extent_probe_streams_cover_every_word_once_and_match_the_quarters():
    """``benchmarks/dram_extent_probe.py``'s stream kernels write every word of their buffer
    once, and four streams store, warp by warp and store by store, to the addresses that
    ``quarters_write`` stores to with one (what the README compares as "the same
    addresses"): on the emulator, at 4 blocks, read from its memory trace."""
    import numpy as np

    from benchmarks import dram_extent_probe
    from cudakit import emu
    from cudakit.emu.trace import Trace

    module = emu.SourceModule(dram_extent_probe.SOURCE, no_extern_c=True)
    threads = 4 * 256
    words = 4 * threads
    log2 = words.bit_length() - 1

    def stores(kernel: str, count: int) -> np.ndarray:
        """Each warp's stores in program order: (blocks x warps, 4, 32) word offsets."""
        out = np.zeros(words, np.float32)
        shift = count.bit_length() - 1
        trace = Trace()
        module.get_function(kernel)(emu.In(np.zeros(1, np.float32)), emu.InOut(out),
                                    np.int32(shift), np.int32(log2 - shift),
                                    grid=(threads // 256, 1, 1), block=(256, 1, 1),
                                    trace=trace)
        np.testing.assert_array_equal(out, 1.0, err_msg=f"{kernel} with {count} streams")
        rows = {}
        for a in (a for a in trace.accesses if a.space == "global" and a.op == "st"):
            for block, warp, address in zip(a.block[:, 0], a.warp, a.address, strict=True):
                rows.setdefault((int(block), int(warp)), []).append((a.site, address))
        base = min(int(addr.min()) for r in rows.values() for _, addr in r)
        return np.array([[(addr.astype(np.int64) - base) // 4
                          for _, addr in sorted(r, key=lambda x: x[0])]
                         for _, r in sorted(rows.items())])

    for count in (1, 64):
        stores("streams_write", count)
    four, quarters = stores("streams_write", 4), stores("quarters_write", 1)
    assert four.shape == (threads // 32, 4, 32)
    np.testing.assert_array_equal(four, quarters)
    assert sorted(np.unique(four[:, :, 0] // (words // 4)).tolist()) == [0, 1, 2, 3]
