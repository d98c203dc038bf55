"""The memory trace follows the contract in ARCHITECTURE.md ("Memory trace")."""

from __future__ import annotations

import numpy as np

from cudakit import emu

from .conftest import build

SRC = """__global__ void copy(const float4* in, float* out, double* d) {
    __shared__ float s[64];
    int t = threadIdx.x;
    float4 v = in[t];
    s[t] = v.x;
    __syncthreads();
    if (t % 2 == 0) out[t] = s[63 - t];
    d[t] = 1.0;
}"""


def run_traced(block=48, grid=2):
    trace = emu.Trace()
    mod = build(SRC)
    out = emu.mem_alloc(4 * 64)
    d = emu.mem_alloc(8 * 64)
    src = emu.to_device(np.zeros((64, 4), np.float32))
    mod.get_function("copy")(src, out, d, grid=(grid, 1), block=(block, 1, 1), trace=trace)
    return trace, int(src), int(out)


def test_one_batch_per_instruction_with_real_warps():
    trace, src, out = run_traced()
    kinds = [(a.line, a.space, a.op, a.size) for a in trace.accesses]
    assert kinds == [(4, "global", "ld", 16), (5, "shared", "st", 4), (7, "shared", "ld", 4),
                     (7, "global", "st", 4), (8, "global", "st", 8)]
    ld = trace.accesses[0]
    # 2 blocks of 48 threads = 2 warps each, the second warp of each block half full
    assert ld.warps == 4
    assert ld.warp.tolist() == [0, 1, 0, 1]
    assert ld.block.tolist() == [[0, 0, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0]]
    assert ld.mask.sum(axis=1).tolist() == [32, 16, 32, 16]
    expect = src + 16 * np.arange(32, dtype=np.uint64)
    np.testing.assert_array_equal(ld.address[0], expect)
    assert ld.column == 16 and ld.kernel == "copy"


def test_shared_addresses_are_offsets_and_divergent_lanes_masked():
    trace, _, out = run_traced()
    st_shared, ld_shared, st_out = trace.accesses[1], trace.accesses[2], trace.accesses[3]
    sym_offset = int(st_shared.address[0, 0])
    np.testing.assert_array_equal(st_shared.address[0], sym_offset + 4 * np.arange(32))
    assert ld_shared.mask[0].tolist() == [lane % 2 == 0 for lane in range(32)]
    assert int(ld_shared.address[0, 0]) == sym_offset + 4 * 63
    assert int(st_out.address[1, 0]) == out + 4 * 32
    sites = {a.site for a in trace.accesses}
    assert len(sites) == 5


def test_no_trace_by_default_and_clear():
    trace, _, _ = run_traced()
    assert trace.accesses
    trace.clear()
    assert trace.accesses == []
