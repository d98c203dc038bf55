"""Instruction fetch: the loops of a kernel, which of them each block runs, and the cycles
the model gives a warp to fetch them, against the probe measured on GH100 SMs
(``benchmarks/fetch_probe.py``) and lab 12's ``sgemm_async``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu.counts import InstructionCounter
from cudakit.predict import load
from cudakit.predict.fetch import (
    fetch_cycles,
    loop_shares,
    main_loops,
    pairs_to_probe,
    ptx_loops,
    spread_fetch,
)
from cudakit.predict.sass import nvdisasm_path

TWO_LOOPS = r"""
extern "C" __global__ void two(float *x, int n)
{
    float v = x[threadIdx.x];
    if (blockIdx.x % 3 == 1) {
#pragma unroll 1
        for (int i = 0; i < n; i++) v = v * 0.5f + 1.0f;
    } else {
#pragma unroll 1
        for (int i = 0; i < n; i++) v = v * v - 0.25f;
    }
    x[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"""


def test_each_block_is_found_in_the_loop_it_runs():
    function = emu.SourceModule(TWO_LOOPS, no_extern_c=True).get_function("two")
    loops = ptx_loops(function.kernel.dec)
    assert len(loops) == 2 and loops[0][1] <= loops[1][0]
    x = emu.to_device(np.zeros(6 * 32, np.float32))
    found = main_loops(function, [x, np.int32(1 << 20)], (6, 1, 1), (32, 1, 1), 0, range(6))
    assert found[1] == found[4] != found[0] == found[2] == found[3] == found[5]
    assert set(found) == {0, 1}


def test_the_fetch_curves_start_where_the_cache_is_full():
    d = load("H100")
    assert fetch_cycles(16 * 1024, d) == 0.0 and fetch_cycles(30 * 1024, d, paired=True) == 0.0
    assert fetch_cycles(64 * 1024, d) == pytest.approx(2.41, abs=0.05)
    assert fetch_cycles(48 * 1024, d, paired=True) == pytest.approx(4.05, abs=0.05)
    # the first 8 blocks share TPCs two by two; past 66 blocks (one per TPC) so do the later
    # ones, probed where they hold a block of the last column or row; a launch of more
    # blocks than SMs, or loops that fit together, is not probed
    first = [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert pairs_to_probe([20e3, 20e3], d, (8, 8, 1)) == first
    assert pairs_to_probe([20e3, 20e3], d, (9, 12, 1)) == first + [
        (8, 9), (16, 17), (26, 27), (34, 35), (44, 45), (52, 53), (62, 63), (70, 71),
        (80, 81), (88, 89), (98, 99), (100, 101), (102, 103), (104, 105), (106, 107)]
    assert pairs_to_probe([20e3, 20e3], d, (100, 1, 1)) == first + [(98, 99)]
    assert pairs_to_probe([20e3, 20e3], d, (20, 10, 1)) == []
    assert pairs_to_probe([10e3, 12e3], d, (8, 8, 1)) == []


@pytest.mark.parametrize("n,threads", [(1024, 128), (1152, 128), (1280, 128), (2048, 128),
                                       (1280, 256)])
def test_two_loops_on_one_tpc_take_the_measured_fetch_time(n, threads):
    """Blocks 0 and 1 run different copies of an FFMA loop, so the H100 runs them on one TPC
    as the probe's mode 1 runs every TPC: the model within 10 % of that measurement."""
    from benchmarks import fetch_probe

    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    stored = fetch_probe.stored()["rows"]
    run = next(r for r in stored if (r["ffma"], r["chains"], r["threads"], r["mode"]) ==
               (n, 16, threads, 1))
    measured = float(np.median(fetch_probe.cycles_per_ffma(run)))
    assert fetch_probe.predicted(n, 16, threads, paired=True) == pytest.approx(measured, rel=0.1)


def test_sgemm_async_at_1000_has_an_interior_and_an_edge_block_on_one_tpc():
    """Lab 12's ``sgemm_async`` at 1000^3: blocks 0-6 of the first row run the interior loop
    and block 7 the edge loop (the H100 ran blocks 6 and 7 on SMs 126 and 127 in 316 k and
    319 k cycles, the rest in 201-226 k: ``fixtures/h100_sgemm_blocks.json``)."""
    from benchmarks import sgemm_blocks

    module = emu.SourceModule(sgemm_blocks.lab_source(), no_extern_c=False)
    function = module.get_function("sgemm_async")
    a, b, c = (emu.to_device(np.ones(10 ** 6, np.float32)) for _ in range(3))
    args = [a, b, c, np.int32(1000), np.int32(1000), np.int32(1000)]
    found = main_loops(function, args, (8, 8, 1), (128, 1, 1), 0, range(8))
    assert found[:7] == [found[0]] * 7 and found[7] not in (None, found[0])
    stored = json.loads(sgemm_blocks.FIXTURE.read_text())
    cycles = np.array(stored["shapes"][0]["blocks"][-1], float)[:8, 1]
    assert cycles[6:].min() > 1.3 * cycles[:6].max()


@pytest.mark.parametrize("n", [2048, 3072, 8192])
def test_warps_spread_over_a_large_loop_wait_for_fetches_beyond_their_dependencies(n):
    """The H200 probe (``fetch_probe --phases``): 8 warps per SM each run a chain of dependent
    FFMAs, entering the loop at different points. The cycles per FFMA are those of a loop
    that fits the cache plus what :func:`spread_fetch` adds for n FFMAs' bytes, within 7 %
    (at 32 kB, the cache's size, they took 6 % less);
    entering together they stay within 0.7 cycles of the small loop's."""
    from benchmarks import fetch_probe

    rows = json.loads(fetch_probe.PHASES_FIXTURE.read_text())["rows"]

    def measured(ffma: int, spread: bool) -> float:
        row = next(r for r in rows if (r["ffma"], r["chains"], r["threads"], r["stagger"] > 0)
                   == (ffma, 1, 256, spread))
        return float(np.median(row["cycles_per_ffma"]))

    d = load("H200")
    extra = spread_fetch([16.0 * n], [1.0], d, blocks_per_tpc=1, waves=1e9)
    assert measured(n, True) == pytest.approx(measured(512, True) + extra, rel=0.07)
    assert (extra > 1.0) == (n > 2048)
    assert measured(n, False) - measured(512, False) < 0.7


def test_the_loops_share_of_the_instructions_is_counted_per_loop():
    function = emu.SourceModule(TWO_LOOPS, no_extern_c=True).get_function("two")
    x = emu.to_device(np.zeros(3 * 32, np.float32))
    counter = InstructionCounter()
    function(x, np.int32(100), grid=(3, 1, 1), block=(32, 1, 1), counter=counter)
    low, high = sorted(loop_shares(function.kernel.dec, counter))  # blocks 0 and 2: one loop
    assert high == pytest.approx(2 * low, rel=0.05) and 0.9 < low + high < 1.0
