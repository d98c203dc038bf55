"""Sampling blocks: the emulator runs only the chosen blocks, and a sampled launch's scaled
counts agree with the fully emulated launch."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import LaunchError, emu
from cudakit.predict.sample import plan_runs, run_sample
from cudakit.predict.traffic import traffic

from .conftest import SOURCE


@pytest.fixture(scope="module")
def module():
    return emu.SourceModule(SOURCE, no_extern_c=True)


def test_only_the_chosen_blocks_run(module):
    a = emu.to_device(np.zeros(8 * 32, np.float32))
    module.get_function("increment")(a, np.int32(8 * 32), grid=(8,), block=(32,),
                                     blocks=[(1, 2), (6, 1)])
    ran = emu.from_device(a, (8, 32), np.float32).all(axis=1)
    assert ran.tolist() == [False, True, True, False, False, False, True, False]


def test_overlapping_or_outside_runs_are_refused(module):
    a = emu.to_device(np.zeros(8 * 32, np.float32))
    f = module.get_function("increment")
    with pytest.raises(LaunchError, match="overlap"):
        f(a, np.int32(256), grid=(8,), block=(32,), blocks=[(0, 3), (2, 2)])
    with pytest.raises(LaunchError, match="outside the grid"):
        f(a, np.int32(256), grid=(8,), block=(32,), blocks=[(7, 2)])


@pytest.mark.parametrize("nblocks,per_run,runs", [(1000, 7, 8), (64, 4, 8), (9, 4, 8),
                                                  (100000, 1, 8), (33, 16, 2)])
def test_runs_cover_first_and_last_block_without_overlap(nblocks, per_run, runs):
    plan = plan_runs(nblocks, per_run, runs)
    ids = [b for first, count in plan for b in range(first, first + count)]
    assert len(ids) == len(set(ids)) and 0 in ids and nblocks - 1 in ids
    assert all(0 <= b < nblocks for b in ids) and len(plan) <= runs


def test_sampled_counts_match_the_full_launch(module):
    nx = ny = 384  # 12 x 48 blocks of 32 x 8: 147,456 threads, above the sampling budget
    u = emu.to_device(np.random.default_rng(0).random(nx * ny, dtype=np.float32))
    v = emu.mem_alloc(nx * ny * 4)
    f = module.get_function("stencil")
    args = [u, v, np.int32(nx), np.int32(ny)]
    grid, block = (nx // 32, ny // 8, 1), (32, 8, 1)
    sampled = run_sample(f, args, grid, block, 0)
    full = run_sample(f, args, grid, block, 0, threads=1 << 30, seconds=1e9)
    assert full.sampled_blocks == 576 and sampled.sampled_blocks < 200
    for cls in ("fp32", "ld.global", "st.global", "int", "branch"):
        got = sampled.counter.classes[cls] * sampled.scale
        assert got == pytest.approx(full.counter.classes[cls], rel=0.03), cls
    assert sampled.counter.periods * sampled.scale == pytest.approx(full.counter.periods,
                                                                    rel=0.03)
    kw = dict(l1_bytes_per_block=16384, l2_bytes=50 << 20, blocks_per_wave=132 * 8)
    ts, tf = traffic(sampled, grid, [u, v], **kw), traffic(full, grid, [u, v], **kw)
    for name in ("global_load_sectors", "l2_read_bytes", "dram_read_bytes",
                 "dram_write_bytes"):
        assert getattr(ts, name) == pytest.approx(getattr(tf, name), rel=0.05), name
    # the full launch reads the whole input once and writes all but the border once; the
    # two sectors of each written row that hold a border cell are written in part, so the
    # L2 reads them too, to write them back whole
    assert tf.dram_read_bytes == pytest.approx(nx * ny * 4 + (ny - 2) * 2 * 32, rel=0.001)
    assert tf.dram_write_bytes == pytest.approx((nx - 2) * (ny - 2) * 4, rel=0.03)


def test_a_block_too_long_to_emulate_is_extrapolated_from_its_loop(module):
    k, blocks = 1 << 20, 64  # about a minute of emulation per block: stopped after 0.3 s
    a = emu.to_device(np.ones(blocks * 256, np.float32))
    b = emu.mem_alloc(blocks * 256 * 4)
    sample = run_sample(module.get_function("fma_loop"), [a, b, np.int32(k)], (blocks, 1, 1),
                        (256, 1, 1), 0, seconds=0.3)
    assert sample.sampled_blocks == 1 and 0 < sample.done < 0.2
    fp32 = sample.counter.classes["fp32"] * sample.scale
    assert fp32 == pytest.approx(k * blocks * 8, rel=0.02)
