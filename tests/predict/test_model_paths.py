"""The Hong & Kim term's lower bounds of ``cudakit.predict.model``, on launches described by
hand (no emulator): a warp's in-order path, and a block in lockstep at its barriers. The
expected cycles are worked out from the device's figures as the docstrings state them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from cudakit.predict import load
from cudakit.predict.model import (
    Launch,
    _deciding,
    _terms,
    dram_latency,
    estimate,
    hong_kim,
    loaded,
    period_wait,
)
from cudakit.predict.traffic import Traffic

D = load("H100")
ROOT = Path(__file__).resolve().parents[2]


def launch(warps_per_block: int, issued: float, cycles: float, barriers: float) -> Launch:
    """One block per SM on one SM; per warp ``issued`` instructions taking ``cycles`` to
    issue, one global memory period (L1 hits) and ``barriers`` __syncthreads()."""
    w = warps_per_block
    classes = {"fp32": issued * w, "barrier": barriers * w}
    traffic = Traffic(global_load_requests=w, global_load_sectors=4 * w, global_lines=w,
                      l1_hit_bytes=128 * w)
    return Launch(classes=classes, issued=issued * w, cycles=cycles * w, warps=w,
                  periods=w, shared_periods=0, chain_periods=1, chain_shared_periods=0,
                  blocks=1, warps_per_block=w, blocks_per_sm=1, traffic=traffic)


def test_a_warp_waits_then_issues_its_dependency_chain():
    # one warp: 100 instructions whose dependencies take 300 cycles to issue, one wait for an
    # L1 hit. In order, the chain after the wait cannot start before the load is back.
    cycles, limit = hong_kim(launch(1, 100, 300, 0), D, 1)
    assert cycles == pytest.approx(D.l1_latency_cycles + 300)
    assert limit == "latency"


def test_a_block_with_barriers_waits_and_then_works_as_a_whole():
    # 8 warps of 100 independent FFMAs, one load wait and one barrier each: the block waits
    # (L1 hit + barrier), then its 800 FFMAs go through the FP32 pipe (its measured rate,
    # a little under the 4 schedulers' 200 cycles)
    mem = D.l1_latency_cycles + D.barrier_cycles
    work = max(200, 800 / D.fp32_fma)
    cycles, _ = hong_kim(launch(8, 100, 100, 1), D, 8)
    assert cycles == pytest.approx(mem + work)
    # without the barrier the warps drift apart: Hong & Kim's too-few-warps case, whose
    # compute slices overlap the waits (mem + comp + comp/periods x (MWP - 1))
    free, _ = hong_kim(launch(8, 100, 100, 0), D, 8)
    assert free == pytest.approx(D.l1_latency_cycles + 25 + 25 * 7)
    # a block of 2 warps: each warp on its own scheduler, its own path decides
    two, _ = hong_kim(launch(2, 100, 100, 1), D, 2)
    assert two == pytest.approx(mem + 100)


def test_the_dram_latency_under_load_is_little_s_law_fixed_point():
    # 64 warps on each SM, each with one 128-byte line from DRAM in flight per period: the
    # bandwidth they draw is bytes in flight / latency, and the latency at that bandwidth is
    # the measured curve's. The solution must satisfy both at once.
    w = 64 * D.sm_count
    traffic = Traffic(global_load_requests=w * 100, global_load_sectors=4 * w * 100,
                      global_lines=w * 100, l2_read_requests=w * 100,
                      l2_read_bytes=128 * w * 100,
                      dram_read_bytes=128 * w * 100)
    x = Launch(classes={"fp32": 2 * w * 100}, issued=2 * w * 100, cycles=8 * w * 100,
               warps=w, periods=w * 100, shared_periods=0, chain_periods=100,
               chain_shared_periods=0, blocks=8 * D.sm_count, warps_per_block=8,
               blocks_per_sm=8, traffic=traffic)
    curve = D.figures["dram_loaded_latency"]
    latency = dram_latency(x, D, 8, 1)
    assert curve[1][0] <= latency <= max(curve[1])
    _, work = _deciding(_terms(x, D, 8, 1, latency))
    drawn = traffic.dram_read_bytes / work / 1e9
    assert loaded(curve, drawn) == pytest.approx(latency, rel=1e-3)
    # more latency than idle, so slower than with the idle chase's figure
    assert estimate(x, D).seconds > _deciding(_terms(x, D, 8, 1))[1]


def test_waits_for_shared_loads_overlap_however_many_lines_cp_async_moves():
    # a cp.async kernel: its copies go global -> shared with no register to wait on, so its
    # warps wait only for shared loads and barriers (no global period). Hong & Kim's MWP
    # counts the warps whose *global* waits overlap; with none, the lines the copies move
    # (L1/L2 traffic, priced by their own terms) must not serialise the shared waits.
    def cp_async(lines: int) -> Launch:
        w = 8
        traffic = Traffic(global_load_requests=lines, global_load_sectors=4 * lines,
                          global_lines=lines, l2_read_bytes=128 * lines)
        return Launch(classes={"fp32": 1000 * w, "barrier": 10 * w}, issued=1000 * w,
                      cycles=1000 * w, warps=w, periods=0, shared_periods=20 * w,
                      chain_periods=0, chain_shared_periods=20, blocks=1,
                      warps_per_block=w, blocks_per_sm=1, traffic=traffic)
    few, _ = hong_kim(cp_async(8), D, 8)
    many, _ = hong_kim(cp_async(8_000_000), D, 8)
    # the lines add what the L1 needs to move them to the block's work between barriers
    # (its busiest pipe), not a wait per line
    fp32 = 8 * 1000 / D.fp32_fma
    lines = 8_000_000 * 128 / D.l1_read_bytes_per_clk_per_sm
    assert many - few == pytest.approx(lines - fp32)
    # and the block still pays its waits and its work in lockstep (the barrier rule)
    mem = 20 * D.shared_latency_cycles + 10 * D.barrier_cycles
    assert few >= mem + 1000 * 8 / D.issue_per_clk_per_sm


def test_shared_and_barrier_waits_do_not_queue_for_dram():
    # 64 warps per SM, each waiting once for 8 lines from DRAM: Hong & Kim's memory case,
    # MWP (Little's law) well below 64, so the global waits queue: waits x warps / MWP.
    # Adding 9 shared-memory waits and 16 barriers per warp (a scan in shared memory after
    # its load) adds those waits once per round: they hold no DRAM bandwidth and overlap
    # the other warps' loads (cuda-samples' scanExclusiveShared, +191 % when they queued)
    w = 64 * D.sm_count
    traffic = Traffic(global_load_requests=w, global_load_sectors=32 * w, global_lines=8 * w,
                      l2_read_requests=w, l2_read_bytes=1024 * w, dram_read_bytes=1024 * w)

    def with_waits(shared: int, barriers: int) -> Launch:
        return Launch(classes={"int": 100 * w, "barrier": barriers * w}, issued=100 * w,
                      cycles=200 * w, warps=w, periods=w, shared_periods=shared * w,
                      chain_periods=1, chain_shared_periods=shared, blocks=8 * D.sm_count,
                      warps_per_block=8, blocks_per_sm=8, traffic=traffic)

    plain, limit = hong_kim(with_waits(0, 0), D, 64)
    assert limit == "memory"
    scan, limit = hong_kim(with_waits(9, 16), D, 64)
    assert limit == "memory"
    extra = 9 * D.shared_latency_cycles + 16 * D.barrier_cycles
    assert 0 < scan - plain <= extra


def test_blocks_resident_together_wait_at_their_barriers_together():
    # two blocks of 8 warps on an SM, each warp 100 independent instructions, one L1 wait
    # and one barrier: the blocks start together and stay in phase, so the round is the
    # waits (L1 hit + barrier) and then all 16 warps' 1600 instructions on 4 schedulers;
    # no block's work fills the other's waits
    two_blocks = launch(8, 100, 100, 1)
    two_blocks.blocks_per_sm = 2
    cycles, limit = hong_kim(two_blocks, D, 16)
    work = max(400, 1600 / D.fp32_fma)  # the FP32 pipe's measured rate, if the slower
    assert cycles == pytest.approx(D.l1_latency_cycles + D.barrier_cycles + work)
    assert limit == "barrier"
    # the same over a whole grid of two such blocks per SM, 1000 times longer: the
    # estimate names the barriers and says what they do
    w = 16 * D.sm_count
    traffic = Traffic(global_load_requests=1000 * w, global_load_sectors=4000 * w,
                      global_lines=1000 * w, l1_hit_bytes=128000 * w)
    x = Launch(classes={"fp32": 1e5 * w, "barrier": 1000 * w}, issued=1e5 * w, cycles=1e5 * w,
               warps=w, periods=1000 * w, shared_periods=0, chain_periods=1000,
               chain_shared_periods=0, blocks=2 * D.sm_count, warps_per_block=8,
               blocks_per_sm=2, traffic=traffic)
    p = estimate(x, D)
    assert p.bound == "barrier" and "keep the 2 resident blocks in step" in p.explanation


def test_a_period_waits_for_its_slowest_load_not_the_average_sector():
    # a 5-point stencil's warp: one period of five loads, 22 sectors; the centre row's
    # request misses L1 (its line from DRAM), the neighbours' 18 sectors hit. It waits for DRAM.
    traffic = Traffic(global_load_requests=5, global_load_sectors=22, global_lines=6,
                      l1_hit_bytes=18 * 32, l2_read_requests=1, l2_read_bytes=128,
                      dram_read_bytes=128)
    stencil = Launch(classes={"fp32": 5}, issued=30, cycles=30, warps=1, periods=1,
                     shared_periods=0, chain_periods=1, chain_shared_periods=0, blocks=1,
                     warps_per_block=1, blocks_per_sm=1, traffic=traffic)
    assert period_wait(stencil, D) == pytest.approx(D.dram_latency_cycles)
    # a thread per row: one request in four reads new sectors (32 of them), the other three
    # hit in L1: three periods of four wait only for the L1
    rows = dataclasses.replace(stencil, periods=4, traffic=dataclasses.replace(
        traffic, global_load_requests=4, l2_read_bytes=32 * 32, dram_read_bytes=32 * 32))
    assert period_wait(rows, D) == pytest.approx(
        (D.dram_latency_cycles + 3 * D.l1_latency_cycles) / 4)
    # four lines from the L2 in one period, one of them from DRAM: a quarter of the L2's
    # sectors miss, so the period waits a quarter of the time for DRAM, and for the three
    # requests that leave after the first
    shared_tiles = dataclasses.replace(stencil, traffic=dataclasses.replace(
        traffic, l2_read_requests=4, l2_read_bytes=512, l1_hit_bytes=0))
    assert period_wait(shared_tiles, D) == pytest.approx(
        (D.dram_latency_cycles + 3 * D.l2_latency_cycles) / 4
        + 3 * D.figures["load_departure_cycles"])


def test_the_departure_delay_is_the_probes_slope():
    """A warp's N loads, served by the L2, came back 366 + d (N - 1) cycles after the first
    issued (``benchmarks/inflight_probe.py`` on an H200: one to 8 warps on each of 16 SMs); d,
    fitted here again from the stored run, is the device's ``load_departure_cycles``."""
    stored = json.loads((ROOT / "benchmarks/fixtures/h200_inflight_probe.json").read_text())
    clock_ghz = stored["sm_clock_khz"] / 1e6
    runs = [r for r in stored["rows"] if r["kernel"] == "offsets" and r["grid"] == 16
            and r["warps"] <= 8]
    loads = np.array([r["loads"] for r in runs], float)
    cycles = np.array([r["ms"] * 1e6 * clock_ghz * r["loads"] / stored["per_warp"]
                       for r in runs])
    slope, start = np.polyfit(loads - 1, cycles, 1)
    assert len(runs) == 24
    assert D.figures["load_departure_cycles"] == pytest.approx(slope, abs=0.1)
    # and the loads overlap: 32 in flight took 3x one load's time, not 32x
    assert start == pytest.approx(366, abs=5) and slope < start / 10


def test_the_requests_that_read_a_new_sector_are_the_ones_that_reach_the_l2():
    from cudakit.emu.memory import HEAP_BASE
    from cudakit.emu.trace import AccessBatch
    from cudakit.predict.traffic import first_touch_share

    def load(block, rows):  # one warp of ``block``, lane i reading row i's word ``column``
        def batch(column):
            address = HEAP_BASE + 4 * (np.arange(32, dtype=np.uint64) * rows + column)
            return AccessBatch("k", 0, 0, 0, "global", "ld", 4,
                               np.array([[block, 0, 0]]), np.zeros(1, np.int64),
                               np.ones((1, 32), bool), address[None, :])
        return batch

    # a thread per row of 64 floats: 32 sectors per request, new every 8th column (NumPy's
    # count of distinct 32-byte sectors per request, in order, is the reference)
    thread_per_row = [load(0, 64)(column) for column in range(64)]
    seen, new = set(), 0
    for column in range(64):
        sectors = {(row * 64 + column) * 4 // 32 for row in range(32)}
        new += bool(sectors - seen)
        seen |= sectors
    assert first_touch_share(thread_per_row, 1, 1) == pytest.approx(new / 64) == 0.125
    # another block reads the same rows: its first reads are new to it
    both = thread_per_row + [load(1, 64)(column) for column in range(64)]
    assert first_touch_share(both, 2, 1) == pytest.approx(0.125)
    # so are another warp's of the same block: warps that walk the same words at the same
    # pace (lab 20's force kernels, all reading x[j]) each wait for the sector from the L2
    second = [dataclasses.replace(b, warp=np.ones(1, np.int64)) for b in thread_per_row]
    assert first_touch_share(thread_per_row + second, 1, 1) == pytest.approx(0.125)


def test_between_barriers_the_block_takes_its_busiest_pipes_time():
    # 8 warps of 100 independent instructions and one barrier, as above, but each warp also
    # reads 100 shared-memory wavefronts: the SM's data pipe serves 800 of them in
    # 800 x 128 / shared_bytes_per_clk cycles, more than the 200 cycles of issue and the
    # FP32 pipe's
    x = launch(8, 100, 100, 1)
    x = dataclasses.replace(x, traffic=dataclasses.replace(x.traffic, shared_wavefronts=800))
    mem = D.l1_latency_cycles + D.barrier_cycles
    wavefronts = 800 * 128 / D.shared_bytes_per_clk_per_sm + \
        8 * 128 / D.l1_read_bytes_per_clk_per_sm  # and its 8 L1 lines: one data pipe
    assert wavefronts > max(200, 800 / D.fp32_fma)
    cycles, limit = hong_kim(x, D, 8)
    assert cycles == pytest.approx(mem + wavefronts)
    assert limit == "barrier"


def test_the_last_round_runs_only_the_blocks_left_over():
    # 2 blocks of 8 warps resident per SM; the busiest SM runs 5 blocks: two full rounds and
    # one of a single block, whose 8 warps issue in half the cycles of 16
    x = dataclasses.replace(launch(8, 100, 100, 1), blocks=5 * D.sm_count, blocks_per_sm=2)
    full, _ = hong_kim(x, D, 16)
    last, _ = hong_kim(x, D, 8)
    assert last < full
    terms = _terms(x, D, 5, 3)
    assert terms["latency"] * D.clock_hz == pytest.approx(2 * full + last)
    # a launch of whole rounds pays each in full
    whole = dataclasses.replace(x, blocks=6 * D.sm_count)
    assert _terms(whole, D, 6, 3)["latency"] * D.clock_hz == pytest.approx(3 * full)
