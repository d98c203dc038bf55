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
    # only v.x is used, so nvcc (and the GPU) loads 4 of the float4's 16 bytes
    assert kinds == [(4, "global", "ld", 4), (5, "shared", "st", 4), (7, "shared", "ld", 4),
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


def test_local_and_atomic_accesses_are_traced():
    trace = emu.Trace()
    mod = build("""__global__ void k(int* count, int n) {
        int tmp[4];
        for (int j = 0; j < 4; ++j) tmp[j] = j * n;
        atomicAdd(count, tmp[threadIdx.x % 4]);
    }""")
    count = emu.to_device(np.zeros(1, np.int32))
    mod.get_function("k")(count, np.int32(2), block=(40, 1, 1), trace=trace)
    spaces = [(a.space, a.op, a.size) for a in trace.accesses]
    # nvcc stores the four elements with one 16-byte st.local.v4
    assert spaces == [("local", "st", 16), ("local", "ld", 4), ("global", "atom", 4)]
    local_ld = trace.accesses[1]
    np.testing.assert_array_equal(local_ld.address[0], 4 * (np.arange(32) % 4))
    assert emu.from_device(count, (1,), np.int32)[0] == sum(2 * (t % 4) for t in range(40))


def test_op_counter_counts_only_warps_with_active_lanes():
    mod = build("""__global__ void k(float* a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) a[i] = 2.0f * a[i];
    }""")
    f = mod.get_function("k")
    d = emu.mem_alloc(4 * 256)
    counts = []
    for n in (256, 32, 0):
        c = emu.OpCounter()
        f(d, np.int32(n), grid=(2, 1), block=(128, 1, 1), counter=c)
        counts.append(c.ops)
    # every one of the 8 warps runs the test (n = 0); with i < n the warps whose lanes pass
    # also run the body: all 8 for n = 256, only the first warp for n = 32
    body = (counts[0] - counts[2]) // 8
    assert body > 0 and counts[0] == counts[2] + 8 * body
    assert counts[1] == counts[2] + 1 * body
