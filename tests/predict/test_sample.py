"""Sampling blocks: the emulator runs only the chosen blocks, and a sampled launch's scaled
counts agree with the fully emulated launch."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import LaunchError, emu
from cudakit.analysis import counting
from cudakit.predict import sample as sample_module
from cudakit.predict.sample import plan_runs, rereads_writes, run_sample
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


@pytest.mark.parametrize("nblocks,per_run,runs", [
    (1000, 7, 8), (64, 4, 8), (9, 4, 8), (100000, 1, 8), (33, 16, 2), (64 * 2048, 64, 8),
    (256 * 256, 16, 8), (63 * 63, 5, 8), (4 * 256 * 512, 5, 8)])
def test_each_run_stands_for_an_equal_part_of_the_grid(nblocks, per_run, runs):
    plan = plan_runs(nblocks, per_run, runs)
    ids = [b for first, count in plan for b in range(first, first + count)]
    assert len(ids) == len(set(ids)) and all(0 <= b < nblocks for b in ids)
    assert len(plan) <= runs
    # one run in each of len(plan) equal parts of the grid: total / sampled blocks is the
    # weight of every run, edge rows included
    part = nblocks / len(plan)
    homes = sorted(int((first + count / 2) // part) for first, count in plan)
    assert homes == list(range(len(plan)))
    # not all at the same place in their parts (the parts of a power-of-two grid start
    # rows and planes: a stencil's boundary)
    if len(plan) > 2:
        assert len({round((first % part) / part, 2) for first, _ in plan}) > 2
    # and the first half of the runs already spreads over the grid
    if len(plan) >= 4:
        half = sorted(int((f + c / 2) // part) for f, c in plan[:len(plan) // 2])
        assert all(b - a >= 2 for a, b in zip(half, half[1:], strict=False)), half


def test_a_stencils_short_last_row_weighs_what_it_weighs_in_the_grid(module):
    # 64 blocks a row, 256 rows; the last row of blocks stores half of what the others
    # store. Sampled stores scaled by total / sampled blocks match the full launch's.
    f = module.get_function("half_last_row")
    out = emu.mem_alloc(64 * 256 * 64 * 4)
    grid, block = (64, 256, 1), (32, 1, 1)
    sampled = run_sample(f, [out], grid, block, 0, threads=4096)
    full = 64 * 255 * 2 + 64 * 1
    assert sampled.sampled_blocks < 200
    got = sampled.counter.classes["st.global"] * sampled.scale
    assert got == pytest.approx(full, rel=0.01)


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
    # every block of the full launch ran once (the one first_block names first, then the rest)
    assert full.runs == [(0, 576)] and full.counter.blocks == 576
    for cls in ("fp32", "ld.global", "st.global", "int", "branch"):
        got = sampled.counter.classes[cls] * sampled.scale
        assert got == pytest.approx(full.counter.classes[cls], rel=0.03), cls
    assert sampled.counter.periods * sampled.scale == pytest.approx(full.counter.periods,
                                                                    rel=0.03)
    # an L2 of 2 MiB: the launch's 1.2 MB fit, but not in the half it keeps launch after
    # launch, so its writes reach DRAM
    kw = dict(l1_bytes_per_block=16384, l2_bytes=2 << 20, blocks_per_wave=132 * 8)
    ts, tf = traffic(sampled, grid, [u, v], **kw), traffic(full, grid, [u, v], **kw)
    for name in ("global_load_sectors", "l2_read_bytes", "dram_read_bytes",
                 "dram_write_bytes"):
        assert getattr(ts, name) == pytest.approx(getattr(tf, name), rel=0.05), name
    # the full launch reads the whole input once and writes all but the border once; the
    # two sectors of each written row that hold a border cell are written in part, so the
    # L2 reads them too, to write them back whole
    assert tf.dram_read_bytes == pytest.approx(nx * ny * 4 + (ny - 2) * 2 * 32, rel=0.001)
    assert tf.dram_write_bytes == pytest.approx((nx - 2) * (ny - 2) * 4, rel=0.03)
    # with an L2 that keeps them, launch after launch nothing reaches DRAM
    kept = traffic(full, grid, [u, v], **{**kw, "l2_bytes": 50 << 20})
    assert kept.dram_read_bytes == kept.dram_write_bytes == 0.0
    assert kept.l2_read_bytes == tf.l2_read_bytes


def test_a_block_too_long_to_emulate_is_extrapolated_from_its_loop(module):
    k, blocks = 1 << 20, 64  # about a minute of emulation per block: stopped after 0.3 s
    a = emu.to_device(np.ones(blocks * 256, np.float32))
    b = emu.mem_alloc(blocks * 256 * 4)
    sample = run_sample(module.get_function("fma_loop"), [a, b, np.int32(k)], (blocks, 1, 1),
                        (256, 1, 1), 0, seconds=0.3)
    assert sample.sampled_blocks == 1 and 0 < sample.done < 0.2
    fp32 = sample.counter.classes["fp32"] * sample.scale
    assert fp32 == pytest.approx(k * blocks * 8, rel=0.02)


def test_a_row_read_back_after_writing_it_misses_l2_when_the_block_has_too_little(module):
    rows, n = 16, 16384  # a block writes a 64 kB row of b, then reads it back
    a = emu.to_device(np.ones(rows * n, np.float32))
    b, c = emu.mem_alloc(rows * n * 4), emu.mem_alloc(rows * 256 * 4)
    sample = run_sample(module.get_function("row_back"), [a, b, c, np.int32(n)], (rows, 1, 1),
                        (256, 1, 1), 0, threads=1 << 30, seconds=1e9)
    row = n * 4

    def dram_read(l2_bytes):
        return traffic(sample, (rows, 1, 1), [a, b, c], l1_bytes_per_block=16384,
                       l2_bytes=l2_bytes, blocks_per_wave=rows).dram_read_bytes

    # 3.5 MiB of L2 (1.75 MiB kept across launches, less than the 2 MiB touched): 224 kB
    # per block, more than the 193 kB it reads and writes: b comes back from L2, only a is
    # read from DRAM
    assert dram_read(7 << 19) == pytest.approx(rows * row, rel=0.01)
    # 48 kB of L2, 3 kB per block: the blocks stream through it together, so the written
    # row is gone when it is read back (rule 3b): a and b are both read from DRAM
    assert dram_read(48 << 10) == pytest.approx(rows * row * 2, rel=0.02)


def test_a_long_loop_is_cut_short_so_that_the_loops_after_it_are_counted(module):
    # a thread per row of 2^18 floats, two passes: minutes of emulation per block. Stopped
    # in the first pass, the second (the stores) would never be seen; each pass is cut at
    # the same part of its iterations instead, and both scale to their full counts
    n, warps = 1 << 18, 2
    x = emu.to_device(np.ones(warps * 32 * n, np.float32))
    y = emu.mem_alloc(warps * 32 * n * 4)
    sample = run_sample(module.get_function("row_passes"), [x, y, np.int32(n)], (warps, 1, 1),
                        (32, 1, 1), 0, seconds=0.8)
    assert sample.sampled_blocks == warps and 0 < sample.done < 0.5  # the grid in one batch
    counts = {k: v * sample.scale for k, v in sample.counter.classes.items()}
    assert counts["ld.global"] == pytest.approx(2 * n * warps, rel=0.05)
    assert counts["st.global"] == pytest.approx(n * warps, rel=0.05)
    assert counts["fp32"] == pytest.approx(2 * n * warps, rel=0.05)
    stored = traffic(sample, (warps, 1, 1), [x, y], l1_bytes_per_block=0, l2_bytes=0,
                     blocks_per_wave=1).global_store_requests
    assert stored == pytest.approx(n * warps, rel=0.05)


def test_a_block_a_cut_loop_leads_astray_is_sampled_again_without_cuts(module):
    # after the first loop, the kernel indexes with what that loop summed: cut short, the
    # index is out of bounds; the sample is taken again, stopped in the first loop instead
    n = 1 << 20
    a = emu.to_device(np.ones(n, np.int32))
    out = emu.mem_alloc(n * 4)
    sample = run_sample(module.get_function("astray"), [a, out, np.int32(n)], (1, 1, 1),
                        (32, 1, 1), 0, seconds=0.4)
    assert 0 < sample.done < 0.5
    assert sample.counter.classes["st.global"] == 0  # stopped before the store
    # one scale for every instruction: the few before the loop make the loads' share of the
    # work done look smaller, the more so the fewer iterations ran (a loaded machine)
    assert sample.counter.classes["ld.global"] * sample.scale == pytest.approx(n, rel=0.1)


def test_a_finished_loop_counts_once_when_a_later_one_is_extrapolated(module):
    k1, k2, blocks = 1 << 11, 1 << 20, 64  # the first loop ends within a quarter of the budget
    a = emu.to_device(np.ones(blocks * 256, np.float32))
    b = emu.mem_alloc(blocks * 256 * 4)
    sample = run_sample(module.get_function("two_loops"), [a, b, np.int32(k1), np.int32(k2)],
                        (blocks, 1, 1), (256, 1, 1), 0, seconds=0.4)
    assert sample.sampled_blocks == 1 and 0 < sample.done < 0.5
    fp32 = sample.counter.classes["fp32"] * sample.scale
    assert fp32 == pytest.approx((k1 + k2) * blocks * 8, rel=0.02)


#: Attention over tiles, as flash attention computes it: one block per head, a thread per
#: query row of a tile. The outer loop brings a tile of keys and values into shared memory;
#: the inner loop takes each tile of queries in turn, scores it against the keys, and folds
#: the tile's softmax into the running maximum, sum and output of its rows.
TILED_ATTENTION = r"""
extern "C" __global__ void tiled_attention(const float *q, const float *k, const float *v,
                                           int n, int d, int tiles, float scale,
                                           float *row_max, float *row_sum, float *out)
{
    extern __shared__ float smem[];
    const int t = blockDim.x, me = threadIdx.x;
    float *keys = smem, *values = keys + t * d, *mine = values + t * d, *p = mine + t * d;
    const size_t head = (size_t)blockIdx.x * n;
    for (int kt = 0; kt < tiles; ++kt) {
        for (int c = 0; c < d; ++c) {
            keys[me * d + c] = k[(head + kt * t + me) * d + c];
            values[me * d + c] = v[(head + kt * t + me) * d + c];
        }
        __syncthreads();
        for (int qt = 0; qt < tiles; ++qt) {
            const size_t row = head + qt * t + me;
            for (int c = 0; c < d; ++c) mine[me * d + c] = q[row * d + c];
            float top = -INFINITY;
            for (int j = 0; j < t; ++j) {
                float dot = 0.0f;
                for (int c = 0; c < d; ++c) dot += mine[me * d + c] * keys[j * d + c];
                p[me * t + j] = dot * scale;
                top = fmaxf(top, dot * scale);
            }
            float sum = 0.0f;
            for (int j = 0; j < t; ++j) {
                p[me * t + j] = __expf(p[me * t + j] - top);
                sum += p[me * t + j];
            }
            const float was = row_max[row], now = fmaxf(was, top);
            const float old_part = __expf(was - now), new_part = __expf(top - now);
            const float total = old_part * row_sum[row] + new_part * sum;
            for (int c = 0; c < d; ++c) {
                float acc = 0.0f;
                for (int j = 0; j < t; ++j) acc += p[me * t + j] * values[j * d + c];
                float *o = out + row * d + c;
                *o = (old_part * row_sum[row] * *o + new_part * acc) / total;
            }
            row_max[row] = now;
            row_sum[row] = total;
        }
        __syncthreads();
    }
}
"""


def _attention_args(rng, heads, n, d, tile):
    q, k, v = (rng.standard_normal(heads * n * d).astype(np.float32) for _ in range(3))
    return [q, k, v, np.int32(n), np.int32(d), np.int32(n // tile), np.float32(d ** -0.5),
            np.full(heads * n, -np.inf, np.float32), np.zeros(heads * n, np.float32),
            np.zeros(heads * n * d, np.float32)]


def test_the_tiled_attention_is_attention():
    heads, n, d, tile = 2, 64, 16, 32
    host = _attention_args(np.random.default_rng(1), heads, n, d, tile)
    dev = [emu.to_device(a) if isinstance(a, np.ndarray) else a for a in host]
    emu.SourceModule(TILED_ATTENTION).get_function("tiled_attention")(
        *dev, grid=(heads,), block=(tile,), shared=(3 * tile * d + tile * tile) * 4)
    q, k, v = (a.astype(np.float64).reshape(heads, n, d) for a in host[:3])
    scores = q @ k.transpose(0, 2, 1) * d ** -0.5
    weights = np.exp(scores - scores.max(axis=2, keepdims=True))
    want = (weights / weights.sum(axis=2, keepdims=True)) @ v
    got = emu.from_device(dev[-1], (heads, n, d), np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_block_stopped_in_its_outer_loops_first_trip_counts_every_trip():
    # a block loops over 4 tiles of keys, and for each over 4 tiles of queries (the inner
    # loop, which the sample cuts short). Stopped in the first tile of keys, the inner loop's
    # progress tells a quarter of the block's work, not all of it: the outer loop's trips
    # multiply it (flash attention over 1024 keys came out at 5 % of its time before)
    n, d, tile = 128, 64, 32
    tiles = n // tile
    host = _attention_args(np.random.default_rng(0), 1, n, d, tile)
    sample = run_sample(emu.SourceModule(TILED_ATTENTION).get_function("tiled_attention"),
                        [emu.to_device(a) if isinstance(a, np.ndarray) else a for a in host],
                        (1, 1, 1), (tile, 1, 1), (3 * tile * d + tile * tile) * 4)
    assert 0 < sample.done < 0.25
    # the FMAs of the scores and of the weighted values, per thread (one warp); the class
    # also counts the softmax's few FP32 instructions per row
    ffmas = 2 * tiles * tiles * tile * d
    assert 0.9 * ffmas <= sample.counter.classes["fp32"] * sample.scale <= 1.25 * ffmas


def test_an_outer_loop_whose_latch_copies_its_counter_is_extrapolated():
    # lavaMD's loop over a box's neighbours: the bound is read again every trip and NVVM's
    # latch compares the old counter, then copies the new one in (t = k + 1; setp k < nn;
    # mov k, t). Not seen as a loop, the block ended with the trip it was stopped in: lavaMD
    # came out at -31 % on the H200, the sampled block's 27 boxes counted as 17
    source = r"""
    struct Box { int x, y, z, nn; };
    extern "C" __global__ void neighbours(const Box* boxes, const float* x, float* out,
                                          int n) {
        __shared__ float tile[128];
        float acc = 0.0f;
        for (int k = 0; k < 1 + boxes[blockIdx.x].nn; ++k) {
            __syncthreads();
            tile[threadIdx.x] = x[(k * 128 + threadIdx.x) % n];
            __syncthreads();
            for (int j = 0; j < 128; ++j) acc += tile[j] * tile[threadIdx.x];
        }
        out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    }"""
    fn = emu.SourceModule(source, no_extern_c=True).get_function("neighbours")
    assert "mov.u32" in fn.kernel.program.compiled.ptx.split("setp.lt.s32")[-1].split("bra")[0]
    blocks, trips = 64, 2001
    boxes = np.zeros((blocks, 4), np.int32)
    boxes[:, 3] = trips - 1
    sample = run_sample(fn, [emu.to_device(boxes), emu.to_device(np.ones(4096, np.float32)),
                             emu.mem_alloc(blocks * 128 * 4), np.int32(4096)],
                        (blocks, 1, 1), (128, 1, 1), 0, seconds=0.3)
    assert 0 < sample.done < 0.5
    fmas = blocks * 4 * trips * 128  # warp FMAs: 4 warps a block, 128 a trip
    assert sample.counter.classes["fp32"] * sample.scale == pytest.approx(fmas, rel=0.05)


def test_a_loop_whose_iterations_grow_is_extrapolated_along_its_trend(module):
    # one warp, 512 rows of a triangle: row i adds i + 1 terms, so the warp's trip j costs
    # 32 j + 32 adds, 4.2 million in all. Stopped some 30 trips in, the trips still to come
    # are the long ones: the average of those done would count a sixteenth of them, their trend
    # (from about 25 trips, extrapolated over 480) counts them within a few per cent
    n = 1 << 14
    out = emu.mem_alloc(n * 4)
    sample = run_sample(module.get_function("triangle"), [out, np.int32(n)], (1, 1, 1),
                        (32, 1, 1), 0, seconds=0.5)
    assert 0 < sample.done < 0.5
    trips = n // 32
    adds = sum(32 * j + 32 for j in range(trips))
    assert sample.counter.classes["fp32"] * sample.scale == pytest.approx(adds, rel=0.1)


def test_a_blocks_own_rereads_miss_when_the_resident_blocks_overflow_l2(module):
    rows, n = 16, 16384  # a block per 64 kB row, read twice, written once
    a = emu.to_device(np.ones(rows * n, np.float32))
    b = emu.mem_alloc(rows * n * 4)
    sample = run_sample(module.get_function("row_twice"), [a, b, np.int32(n)], (rows, 1, 1),
                        (256, 1, 1), 0, threads=1 << 30, seconds=1e9)
    row = n * 4

    def dram(l2_bytes, per_wave):
        t = traffic(sample, (rows, 1, 1), [a, b], l1_bytes_per_block=16384, l2_bytes=l2_bytes,
                    blocks_per_wave=per_wave)
        return t.dram_read_bytes, t.dram_write_bytes

    l2 = 3 << 20  # keeps 1.5 MiB launch after launch: less than the 2 MiB of rows and output
    # 16 resident blocks: 192 kB of L2 each, more than a row and its output (128 kB), so
    # the second pass finds each row there
    assert dram(l2, 16) == pytest.approx((rows * row, rows * row), rel=0.01)
    # room for 1024 resident blocks, but the grid has 16: they share the L2 among themselves
    assert dram(l2, 1024) == dram(l2, 16)
    # a 48 kB L2 shared by the 16 blocks: 3 kB each, far less than a row and its output:
    # the second pass reads the whole row from DRAM again. Streamed through in the same
    # order, a 64 kB row leaves nothing of itself in the block's 16 kB of L1 or 3 kB of L2
    # (LRU), not the part of the row that would fit
    got_read, got_write = dram(48 << 10, 16)
    assert got_read == pytest.approx(2 * rows * row, rel=0.02)
    assert got_write == pytest.approx(rows * row, rel=0.01)


def test_a_grid_stride_loop_nvvm_unrolled_is_extrapolated(module):
    # NVVM unrolls `i += gridDim.x * blockDim.x` four times (i = t3 + stride at the end of
    # the body); the induction's step is the chain's sum, so the block is extrapolated
    n = 1 << 22
    x, y = emu.to_device(np.ones(n, np.float32)), emu.to_device(np.ones(n, np.float32))
    sample = run_sample(module.get_function("saxpy_stride"), [np.float32(2), x, y, np.int32(n)],
                        (1, 1, 1), (256, 1, 1), 0, seconds=0.3)
    assert 0 < sample.done < 0.5
    assert sample.counter.classes["st.global"] * sample.scale == pytest.approx(n / 32, rel=0.02)


def _recorded(function, launches: list):
    """``function``, noting the blocks of each launch made of it."""
    def launch(*values, **kw):
        launches.append({k for first, count in kw["blocks"] for k in range(first, first + count)})
        return function(*values, **kw)
    return launch


def test_single_blocks_spread_over_the_grid_count_uneven_work(module):
    # 64 x 64 blocks of one warp; the blocks of 8 of the 64 rows loop 20 times longer
    # (a bright band of an image). The runs of neighbours are a few places in the grid;
    # the single blocks spread over it count the band's share of the work.
    k = 50
    out = emu.mem_alloc(64 * 64 * 32 * 4)
    sample = run_sample(module.get_function("band"), [out, np.int32(k), np.int32(0)],
                        (64, 64, 1), (32, 1, 1), 0)
    assert sample.spread is not None and sample.spread_blocks >= 64
    assert not rereads_writes(sample.trace)
    counter, scale = sample.instructions
    exact = 64 * (56 * k + 8 * 20 * k)  # FMAs, one warp instruction a trip
    assert counter.classes["fp32"] * scale == pytest.approx(exact, rel=0.05)


def test_even_work_spends_no_time_on_spread_blocks(module):
    n = 1024 * 256
    a, b = emu.to_device(np.ones(n, np.float32)), emu.mem_alloc(n * 4)
    launches = []
    sample = run_sample(_recorded(module.get_function("copy"), launches), [a, b, np.int32(n)],
                        (1024, 1, 1), (256, 1, 1), 0, threads=2048)
    assert sample.spread is None and sample.instructions[0] is sample.counter
    assert set().union(*launches) == {k for first, count in sample.runs
                                      for k in range(first, first + count)}


def test_an_in_place_update_is_not_run_twice_by_the_spread_blocks(module):
    out = emu.to_device(np.zeros(64 * 64 * 32, np.float32))
    launches = []
    sample = run_sample(_recorded(module.get_function("band"), launches),
                        [out, np.int32(20), np.int32(1)], (64, 64, 1), (32, 1, 1), 0)
    assert sample.spread is not None and sample.spread_blocks >= 64
    assert rereads_writes(sample.trace)
    assert not set().union(*launches[:-1]) & launches[-1]  # the runs', the single blocks'


def test_a_wave_of_whole_planes_reads_each_plane_of_a_3d_stencil_once(module):
    # 64^3 floats (1 MiB) in blocks of 32 x 4 x 1: 2 blocks a row, 32 a plane. A wave of 256
    # blocks (8 planes) reads its planes and the two beside them; the waves before and after
    # read those too, and an L2 of 1 MiB keeps them in between. Sampled with each run's
    # neighbours in y only, a block's planes above and below counted as its own: 3x the reads.
    n = 64
    u = emu.to_device(np.random.default_rng(1).random(n ** 3, dtype=np.float32))
    v = emu.mem_alloc(n ** 3 * 4)
    f = module.get_function("stencil3d")
    args, grid, block = [u, v, np.int32(n)], (n // 32, n // 4, n), (32, 4, 1)
    sampled = run_sample(f, args, grid, block, 0, wave=256)
    assert sampled.sampled_blocks < 400
    t = traffic(sampled, grid, [u, v], l1_bytes_per_block=16384, l2_bytes=1 << 20,
                blocks_per_wave=256)
    # each plane once, and (rule 3) the two planes beside each of the 8 waves again
    assert n ** 3 * 4 <= t.dram_read_bytes <= (1 + 2 * 8 / n) * n ** 3 * 4


def test_the_trace_stays_within_its_budget_of_sectors_and_accesses(module, monkeypatch):
    monkeypatch.setattr(sample_module, "SECTORS", 1 << 14)
    monkeypatch.setattr(sample_module._Budget, "CHECK", 0.002)  # looked at every 2 ms
    n = 1 << 22
    a = emu.to_device(np.ones(n, np.float32))
    out = emu.mem_alloc(64 * 256 * 4)

    def sectors(s):
        return sum(int(counting.sectors(batch).sum()) for batch in s.trace.accesses)

    # one long block, all the time in the world: stopped at the budget and extrapolated
    one = run_sample(module.get_function("grid_sum"), [a, out, np.int32(n)], (1, 1, 1),
                     (256, 1, 1), 0, seconds=1e9)
    assert 0 < one.done < 0.5 and sectors(one) < 2 * (1 << 14)
    assert one.counter.classes["ld.global"] * one.scale == pytest.approx(n / 32, rel=0.02)
    # 64 blocks of 2 warps over 2^20 floats: per warp 256 coalesced loads of 4 sectors and
    # one store of 4, 2 * 1028 sectors a block, so 7 blocks fit the budget
    n = 1 << 20
    many = run_sample(module.get_function("grid_sum"), [a, out, np.int32(n)], (64, 1, 1),
                      (64, 1, 1), 0, seconds=1e9)
    assert many.sampled_blocks == 7 and sectors(many) == 7 * 2 * 1028
    assert many.counter.classes["ld.global"] * many.scale == pytest.approx(n / 32, rel=0.01)
    # the warp accesses count too (the cache model goes over each): 2 * 257 a block
    monkeypatch.setattr(sample_module, "SECTORS", 1 << 30)
    monkeypatch.setattr(sample_module, "ROWS", 1 << 12)
    rows = run_sample(module.get_function("grid_sum"), [a, out, np.int32(n)], (64, 1, 1),
                      (64, 1, 1), 0, seconds=1e9)
    assert rows.sampled_blocks == 7
