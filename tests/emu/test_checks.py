"""memcheck, racecheck, divergent barriers, endless loops and unsupported code give clear errors."""

from __future__ import annotations

import time

import numpy as np
import pytest

from cudakit import emu
from cudakit.errors import CompileError

from .conftest import build


def launch(src, name, *args, **kw):
    kw.setdefault("block", (32, 1, 1))
    build(src).get_function(name)(*args, **kw)


def test_out_of_bounds_write_names_line_thread_and_buffer():
    a = np.zeros(100, np.float32)
    d = emu.to_device(a)
    src = """__global__ void fill(float* a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        a[i] = 1.0f;
    }"""
    with pytest.raises(emu.MemcheckError) as e:
        launch(src, "fill", d, np.int32(100), grid=(4, 1))
    msg = str(e.value)
    assert "line 3" in msg and "'fill'" in msg and "block (3,0,0) thread (4,0,0)" in msg
    assert "after the end of allocation" in msg and "400 bytes" in msg
    # nothing was written past the buffer: the faulting store wrote no lane
    after = emu.from_device(d, (100,), np.float32)
    assert (after == 0).all()


def test_off_by_one_never_lands_in_the_next_buffer():
    a = emu.to_device(np.zeros(1024, np.float32))  # 4096 bytes: a multiple of the alignment
    b = emu.to_device(np.zeros(1024, np.float32))
    src = """__global__ void k(const float* a, float* b, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i <= n) b[0] += a[i];
    }"""
    with pytest.raises(emu.MemcheckError, match="0 bytes after the end of allocation"):
        launch(src, "k", a, b, np.int32(1024), grid=(5, 1), block=(256, 1, 1), racecheck=False)


def test_read_before_the_buffer():
    d = emu.to_device(np.zeros(64, np.int32))
    with pytest.raises(emu.MemcheckError, match="4 bytes before"):
        launch("__global__ void k(int* a) { int i = threadIdx.x; a[i] = a[i - 1]; }", "k", d)
    # threadIdx.x is unsigned: threadIdx.x - 1 wraps to 2^32 - 1, far past the end
    with pytest.raises(emu.MemcheckError, match="bytes after the end of"):
        launch("__global__ void k(int* a) { a[threadIdx.x] = a[threadIdx.x - 1]; }", "k", d)


def test_misaligned_access():
    d = emu.to_device(np.zeros(64, np.int32))
    with pytest.raises(emu.MemcheckError, match="misaligned"):
        launch("__global__ void k(char* a) { *(int*)(a + 2) = 1; }", "k", d)


def test_shared_array_index_out_of_its_bounds():
    src = """__global__ void k(float* out) {
        __shared__ float tile[32];
        tile[threadIdx.x + 1] = 1.0f;
        out[threadIdx.x] = tile[threadIdx.x];
    }"""
    with pytest.raises(emu.MemcheckError, match="element 32 of array 'tile'"):
        launch(src, "k", emu.mem_alloc(128))


def test_local_array_out_of_bounds():
    src = """__global__ void k(int* out, int n) {
        int acc[4];
        for (int j = 0; j <= n; ++j) acc[j] = j;
        out[threadIdx.x] = acc[0];
    }"""
    # PTX keeps no names of local arrays: the fault names the thread's local frame
    with pytest.raises(emu.MemcheckError, match="line 3.*local memory offset 16 .frame of 16"):
        launch(src, "k", emu.mem_alloc(128), np.int32(4))


RACY_REDUCTION = """__global__ void sum(float* a) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = a[t];
    for (int k = 32; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
    }
    if (t == 0) a[0] = s[0];
}"""


def test_missing_barrier_is_a_read_after_write_race():
    with pytest.raises(emu.RaceError) as e:
        launch(RACY_REDUCTION, "sum", emu.to_device(np.ones(64, np.float32)), block=(64, 1, 1))
    msg = str(e.value)
    assert "read-after-write" in msg and "line 4" in msg and "line 6" in msg
    assert "thread (32,0,0)" in msg and "thread (0,0,0)" in msg


def test_racecheck_can_be_turned_off():
    d = emu.to_device(np.ones(64, np.float32))
    launch(RACY_REDUCTION, "sum", d, block=(64, 1, 1), racecheck=False)
    assert emu.from_device(d, (1,), np.float32)[0] == 64  # lockstep happens to be right


def test_write_after_read_race():
    src = """__global__ void shift(int* a) {
        __shared__ int s[64];
        s[threadIdx.x] = a[threadIdx.x];
        __syncthreads();
        int left = threadIdx.x > 0 ? s[threadIdx.x - 1] : 0;
        s[threadIdx.x] = left;
        a[threadIdx.x] = s[threadIdx.x];
    }"""
    with pytest.raises(emu.RaceError, match="write-after-read"):
        launch(src, "shift", emu.to_device(np.arange(64, dtype=np.int32)), block=(64, 1, 1))


WARP_REDUCE = """__device__ void tail(volatile float* s, int t) {
    s[t] += s[t + 32]; %s
    s[t] += s[t + 16]; %s
}
__global__ void sum(float* a) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    if (t < 32) tail(s, t);
    if (t == 0) a[0] = s[0];
}"""


def test_warp_synchronous_code_without_syncwarp_is_reported():
    src = WARP_REDUCE % ("", "")
    with pytest.raises(emu.RaceError, match="__syncwarp"):
        launch(src, "sum", emu.to_device(np.ones(64, np.float32)), block=(64, 1, 1))


def test_warp_code_with_syncwarp_between_read_and_write_is_clean():
    src = """__global__ void sum(float* a) {
        __shared__ float s[64];
        int t = threadIdx.x;
        s[t] = a[t];
        __syncthreads();
        if (t < 32) {
            for (int k = 32; k > 0; k >>= 1) {
                float v = s[t] + s[t + k];
                __syncwarp();
                s[t] = v;
                __syncwarp();
            }
        }
        if (t == 0) a[0] = s[0];
    }"""
    d = emu.to_device(np.arange(64, dtype=np.float32))
    launch(src, "sum", d, block=(64, 1, 1))
    assert emu.from_device(d, (1,), np.float32)[0] == np.arange(64).sum()


def test_divergent_syncthreads_is_an_error_not_a_hang():
    src = """__global__ void k(int* a) {
        if (threadIdx.x < 16) __syncthreads();
        a[threadIdx.x] = 1;
    }"""
    with pytest.raises(emu.BarrierError, match="line 2.*thread \\(16,0,0\\)"):
        launch(src, "k", emu.mem_alloc(128))


SPLIT_BY_WARPS = """__global__ void staged(const float* in, float* out, int rounds) {
    // warps 0-1 load the next tile while warps 2-3 sum the last one; each half
    // waits at its own __syncthreads(), which the GPU counts as one barrier
    __shared__ float tile[2][64];
    int t = threadIdx.x;
    bool loader = t < 64;
    float acc = 0.0f;
    if (loader) tile[0][t] = in[t];
    __syncthreads();
    for (int r = 1; r <= rounds; ++r) {
        if (loader) {
            if (r < rounds) tile[r % 2][t] = in[r * 64 + t];
            __syncthreads();
        } else {
            acc += tile[(r - 1) % 2][t - 64];
            __syncthreads();
        }
    }
    if (!loader) out[t - 64] = acc;
}"""


def test_warps_may_wait_at_different_barriers():
    rounds = 5
    x = np.arange(rounds * 64, dtype=np.float32)
    d_in, d_out = emu.to_device(x), emu.mem_alloc(64 * 4)
    launch(SPLIT_BY_WARPS, "staged", d_in, d_out, np.int32(rounds), block=(128, 1, 1),
           grid=(3, 1))
    want = x.reshape(rounds, 64).sum(axis=0)
    assert emu.from_device(d_out, (64,), np.float32).tolist() == want.tolist()


def test_one_warp_at_two_barriers_is_an_error():
    src = """__global__ void k(int* a) {
        __shared__ int s[32];
        if (threadIdx.x < 16) { s[threadIdx.x] = 1; __syncthreads(); }
        else { s[threadIdx.x] = 2; __syncthreads(); }
        a[threadIdx.x] = s[31 - threadIdx.x];
    }"""
    with pytest.raises(emu.BarrierError, match="line 3.*thread \\(16,0,0\\)"):
        launch(src, "k", emu.mem_alloc(128))


def test_barrier_after_early_exit_is_allowed():
    src = """__global__ void k(int* a, int n) {
        if (threadIdx.x >= n) return;
        __syncthreads();
        a[threadIdx.x] = 7;
    }"""
    d = emu.to_device(np.zeros(32, np.int32))
    launch(src, "k", d, np.int32(10))
    assert emu.from_device(d, (32,), np.int32).tolist() == [7] * 10 + [0] * 22


def test_spinning_kernel_times_out_with_its_line():
    src = """__global__ void wait(volatile int* flag) {
        while (flag[0] == 0) { }
    }"""
    start = time.perf_counter()
    with pytest.raises(emu.KernelTimeout, match="line 2"):
        launch(src, "wait", emu.mem_alloc(4), timeout=0.3)
    assert time.perf_counter() - start < 5


def test_timeout_from_environment(monkeypatch):
    monkeypatch.setenv("CUDAKIT_EMU_TIMEOUT", "0.2")
    with pytest.raises(emu.KernelTimeout):
        launch("__global__ void k(int* a) { for (;;) { a[0] = 1; } }", "k", emu.mem_alloc(4))


def test_the_cpp_nvcc_accepts_runs():
    src = """class P { public: float x; __device__ float twice() const { return 2 * x; } };
    union U { int i; float f; };
    __global__ void k(float* a) {
        P p{a[0]};
        U u; u.f = a[1];
        auto f = [](float v) { return v + 1; };
        if (u.i < 0) goto end;
        a[2] = f(p.twice());
    end:
        a[3] = u.i < 0 ? -1.0f : 1.0f;
    }"""
    a = np.array([3, 2, 0, 0], np.float32)
    launch(src, "k", emu.InOut(a), block=(1, 1, 1))
    assert a.tolist() == [3, 2, 7, 1]


@pytest.mark.parametrize("src, options, what", [
    ("""__global__ void k(cudaTextureObject_t t, float* a) { a[0] = tex1Dfetch<float>(t, 0); }""",
     (), "texture and surface objects"),
    ("""#include <cooperative_groups.h>
    __global__ void k(float* a) { cooperative_groups::this_grid().sync(); a[0] = 1; }""",
     (), "cooperative launch"),
    ("""__global__ void child(float* a) { a[0] = 1; }
    __global__ void k(float* a) { child<<<1, 1>>>(a); }""", ("-rdc=true",),
     "dynamic parallelism"),
])
def test_out_of_scope_features_name_the_feature(src, options, what):
    args = (np.uint64(0), emu.mem_alloc(4)) if "cudaTexture" in src else (emu.mem_alloc(4),)
    with pytest.raises(emu.UnsupportedError, match=f"{what}.*line [12] of kernel 'k'"):
        build(src, options).get_function("k")(*args, block=(1, 1, 1))


def test_syntax_and_name_errors_are_compile_errors():
    with pytest.raises(CompileError, match="line 2"):
        build("__global__ void k(float* a) {\n a[0] = ;\n}")
    with pytest.raises(CompileError, match='"y" is undefined'):  # nvcc's own message
        build("__global__ void k(float* a) { a[0] = y; }")


def test_argument_errors_mirror_pycuda():
    src = "__global__ void k(float* a, int n) { a[0] = n; }"
    d = emu.mem_alloc(4)
    with pytest.raises(emu.ArgumentError, match="np.int32"):
        launch(src, "k", d, 5)
    with pytest.raises(emu.ArgumentError, match="got np.float32"):
        launch(src, "k", d, np.float32(5))
    with pytest.raises(emu.ArgumentError, match="takes 2 arguments"):
        launch(src, "k", d)
    with pytest.raises(emu.ArgumentError, match="device pointer"):
        launch(src, "k", np.zeros(3), np.int32(1))


@pytest.mark.parametrize("kw, match", [
    ({"block": (2048, 1, 1)}, "outside 1..1024"),
    ({"block": (32, 32, 2)}, "2048 threads"),
    ({"block": (32, 1, 1), "shared": 240 * 1024}, "at most 232448"),
    ({"block": (32, 1, 1), "grid": (0, 1)}, "grid.x"),
])
def test_bad_launch_configuration(kw, match):
    with pytest.raises(emu.LaunchError, match=match):
        launch("__global__ void k(float* a) { a[0] = 1; }", "k", emu.mem_alloc(4), **kw)


def test_a_gap_inside_the_emulator_is_reported_with_its_line_not_a_traceback():
    src = """__global__ void k(int* a) {
        int v = threadIdx.x;
        a[threadIdx.x] = __shfl_sync(0xffffffffu, v, 0, threadIdx.x + 1);  // per-lane width
    }"""
    with pytest.raises(emu.UnsupportedError, match="line 3 of kernel 'k'"):
        launch(src, "k", emu.mem_alloc(128))


def test_large_dynamic_shared_memory_like_the_h100():
    src = """__global__ void k(int* out) {
        extern __shared__ int big[];
        big[threadIdx.x * 1024] = threadIdx.x;
        __syncthreads();
        out[threadIdx.x] = big[(31 - threadIdx.x) * 1024];
    }"""
    out = np.zeros(32, np.int32)
    build(src).get_function("k")(emu.Out(out), block=(32, 1, 1), shared=200 * 1024)
    assert out.tolist() == list(range(31, -1, -1))
    with pytest.raises(emu.MemcheckError, match="0 bytes after the end of shared array 'big"):
        build(src).get_function("k")(emu.Out(out), block=(32, 1, 1), shared=31 * 4096)
    with pytest.raises(CompileError, match="too much shared data"):  # ptxas's own limit
        build("__global__ void k(int* a) { __shared__ int s[16384]; s[a[0]] = 1; "
              "__syncthreads(); a[0] = s[a[1]]; }")


HISTOGRAM = """__global__ void histo(const int* data, unsigned int* bins, int n) {
    __shared__ unsigned int h[16];
    if (threadIdx.x < 16) h[threadIdx.x] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&h[data[i] % 16], 1u);
    BARRIER
    if (threadIdx.x < 16) atomicAdd(&bins[threadIdx.x], h[threadIdx.x]);
}"""


def test_reading_shared_atomics_results_without_a_barrier_is_a_race():
    data = np.arange(200, dtype=np.int32)
    with pytest.raises(emu.RaceError, match="read-after-write.*line 5.*line 7"):
        launch(HISTOGRAM.replace("BARRIER", ""), "histo", emu.In(data), emu.mem_alloc(64),
               np.int32(200), block=(64, 1, 1))
    bins = np.zeros(16, np.uint32)
    launch(HISTOGRAM.replace("BARRIER", "__syncthreads();"), "histo", emu.In(data), emu.Out(bins),
           np.int32(200), block=(64, 1, 1))  # atomics among themselves never race
    np.testing.assert_array_equal(bins, np.bincount(data % 16, minlength=16))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.uint8])
def test_integer_division_by_zero_gives_all_ones_in_the_operands_type(dtype):
    from cudakit.emu.numeric import div as c_div

    x = np.array([7, 9, 0], dtype=dtype)
    y = np.array([2, 0, 0], dtype=dtype)
    q = c_div(x, y)
    assert q.dtype == np.dtype(dtype)
    assert q[0] == 3
    assert q[1] == q[2] == np.array(-1, dtype=np.int64).astype(dtype)


def test_trap_is_a_kernel_fault_naming_line_and_thread():
    src = """__global__ void k(int* a) {
        if (threadIdx.x == 5) __trap();
        a[threadIdx.x] = 1;
    }"""
    with pytest.raises(emu.KernelFaultError, match="line 2.*thread \\(5,0,0\\)"):
        launch(src, "k", emu.mem_alloc(128))


def test_a_fault_in_a_kernel_a_header_defines_names_the_header_line(tmp_path):
    (tmp_path / "fill.cuh").write_text(
        "#pragma once\n"
        "__global__ void fill(float* a) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    a[i] = 1.0f;\n"
        "}\n")
    module = build('#include "fill.cuh"\n', options=[f"-I{tmp_path}"])
    with pytest.raises(emu.MemcheckError, match=r"at line 4 \(fill\.cuh:4: a\[i\] = 1\.0f;\)"):
        module.get_function("fill")(emu.mem_alloc(100 * 4), grid=(4, 1), block=(32, 1, 1))


def test_a_fault_in_a_header_function_a_header_kernel_calls_names_the_functions_line(tmp_path):
    """Code a header inlines into the user's code is the user's call (the line they wrote);
    a header function inlined into a header kernel keeps its own header line."""
    (tmp_path / "store.cuh").write_text(
        "#pragma once\n"
        "__device__ void store(float* a, int i) {\n"
        "    a[i + 1000] = 1.0f;\n"
        "}\n"
        "__global__ void fill(float* a) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    store(a, i);\n"
        "}\n")
    module = build('#include "store.cuh"\n'
                   "__global__ void mine(float* a) {\n"
                   "    store(a, threadIdx.x);\n"
                   "}\n", options=[f"-I{tmp_path}"])
    with pytest.raises(emu.MemcheckError,
                       match=r"at line 3 \(store\.cuh:3: a\[i \+ 1000\] = 1\.0f;\)"):
        module.get_function("fill")(emu.mem_alloc(100 * 4), grid=(4, 1), block=(32, 1, 1))
    with pytest.raises(emu.MemcheckError, match=r"at line 3 \(store\(a, threadIdx\.x\);\)"):
        module.get_function("mine")(emu.mem_alloc(100 * 4), grid=(1, 1), block=(32, 1, 1))
