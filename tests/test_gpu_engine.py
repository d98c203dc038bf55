"""The foundation on a real GPU (run by tools/gpu-check on the device machine)."""

from __future__ import annotations

import numpy as np
import pytest

import cudakit
from cudakit import cuda
from cudakit.launcher import run_in_subprocess

pytestmark = pytest.mark.gpu

VEC_ADD = """
__global__ void vec_add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
OUT_OF_BOUNDS = """
__global__ void wild(int *x) { x[threadIdx.x * (1 << 28)] = 1; }
"""


def test_engine_is_the_gpu():
    assert cuda.backend == "gpu"


def test_cuda_cell_kernel_gives_correct_results_on_the_device(shell):
    shell.run_cell(f"%%cuda --name vec\n{VEC_ADD}")
    vec_add = shell.user_ns["vec_add"]
    rng = np.random.default_rng(1)
    n = 1_000_003
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n, np.nan, np.float32)
    vec_add(cuda.In(a), cuda.In(b), cuda.Out(c), n, grid=((n + 255) // 256,), block=(256,))
    np.testing.assert_array_equal(c, a + b)


def test_bad_launches_are_refused_and_the_context_survives(shell):
    shell.run_cell(f"%%cuda --name vec2\n{VEC_ADD}")
    vec_add = shell.user_ns["vec_add"]
    x = cuda.to_device(np.ones(4096, np.float32))
    with pytest.raises(cudakit.LaunchError, match="2048 threads"):
        vec_add(x, x, x, 4096, grid=(2,), block=(2048,))
    with pytest.raises(cudakit.ArgumentError, match="missing n"):
        vec_add(x, x, x, grid=(16,), block=(256,))
    with pytest.raises(cudakit.ArgumentError, match="float64"):
        vec_add(cuda.In(np.ones(4096)), x, x, 4096, grid=(16,), block=(256,))
    vec_add(x, x, x, 4096, grid=(16,), block=(256,))
    out = np.empty(4096, np.float32)
    cuda.memcpy_dtoh(out, x)
    assert (out == 2).all()


def test_kernel_fault_is_reported_clearly_in_its_own_process():
    result = run_in_subprocess(OUT_OF_BOUNDS, "wild", grid=(1,), block=(32,),
                               args=[np.zeros(32, np.int32)], timeout=120)
    assert not result.ok
    assert "KernelFaultError" in result.stderr and "context" in result.stderr


def test_subprocess_launch_returns_the_arrays():
    x = np.arange(64, dtype=np.float32)
    result = run_in_subprocess(VEC_ADD, "vec_add", grid=(1,), block=(64,),
                               args=[x, x, np.zeros_like(x), np.int32(64)])
    assert result.ok, result.stderr
    np.testing.assert_array_equal(result.outputs[2], 2 * x)


def test_event_timer_and_benchmark(shell):
    shell.run_cell(f"%%cuda --name vec3\n{VEC_ADD}")
    vec_add = shell.user_ns["vec_add"]
    n = 1 << 24
    a = cuda.mem_alloc(4 * n)
    run = lambda: vec_add(a, a, a, n, grid=(n // 256,), block=(256,))  # noqa: E731
    bench = cudakit.benchmark(run, warmup=2, repeat=10)
    assert len(bench.samples) == 10 and 0 < bench.min <= bench.median <= bench.max
    assert not bench.emulated
    with cudakit.timer() as t:
        run()
    assert t.ms > 0


def test_benchmark_leaves_out_the_host_launch_cost():
    """A kernel that waits 50 us measures about 50 us, not 50 us plus Python's launch time."""
    from cudakit.timing import gpu_wait

    gpu_wait(1)  # load the waiting kernel before anything is timed
    issue = cudakit.benchmark(lambda: gpu_wait(50), warmup=2, repeat=50, host=True)
    bench = cudakit.benchmark(lambda: gpu_wait(50), warmup=3, repeat=50)
    assert 0.050 <= bench.median < 0.050 + 0.5 * issue.median, (bench, issue)


def test_device_info_matches_the_driver():
    import pycuda.driver as drv

    info = cudakit.device_info()
    dev = drv.Device(0)
    assert info.compute_capability == dev.compute_capability()
    assert info.multiprocessors == dev.get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
    assert info.peak_bandwidth_gbs > 100 and not info.emulated


def test_default_arch_is_the_devices():
    import pycuda.driver as drv

    major, minor = drv.Device(0).compute_capability()
    assert cudakit.compile(VEC_ADD).arch == f"sm_{major}{minor}"


def test_prepared_launches_take_gpuarrays_streams_and_large_shared_memory(shell):
    shell.run_cell(r"""%%cuda --name big
extern __shared__ float staged[];
__global__ void reverse_blocks(const float *in, float *out, int per_block) {
    const float *src = in + blockIdx.x * per_block;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) staged[i] = src[i];
    __syncthreads();
    for (int i = threadIdx.x; i < per_block; i += blockDim.x)
        out[blockIdx.x * per_block + i] = staged[per_block - 1 - i];
}""")
    kernel = shell.user_ns["reverse_blocks"]
    per_block, blocks = 24 * 1024, 8  # 96 KB of dynamic shared memory per block
    x = np.random.default_rng(3).random(per_block * blocks, dtype=np.float32)
    d_in, d_out = cuda.gpuarray.to_gpu(x), cuda.gpuarray.empty_like(cuda.gpuarray.to_gpu(x))
    stream = cuda.Stream()
    kernel(d_in, d_out, per_block, grid=(blocks,), block=(256,), shared=4 * per_block,
           stream=stream)
    stream.synchronize()
    expected = x.reshape(blocks, per_block)[:, ::-1].ravel()
    np.testing.assert_array_equal(d_out.get(), expected)
    with pytest.raises(cudakit.ArgumentError, match="float64"):
        kernel(cuda.gpuarray.to_gpu(x.astype(np.float64)), d_out, per_block, grid=(blocks,),
               block=(256,), shared=4 * per_block)


def test_benchmark_on_the_gpu_gives_the_prediction_and_its_error():
    kernels = cudakit.load(VEC_ADD)
    n = 1 << 24
    a, b, c = (cuda.mem_alloc(4 * n) for _ in range(3))
    result = cudakit.benchmark(
        lambda: kernels["vec_add"](a, b, c, n, grid=(n // 256,), block=(256,)), repeat=10)
    predicted = result.predicted
    assert predicted is not None and predicted.ms > 0
    # 192 MiB through DRAM; the H100 needs about 0.07 ms, the model is not far off. One float
    # per thread and operand keeps too few bytes in flight for the DRAM latency at that
    # bandwidth (Little's law), so the model may name either the bandwidth or the latency
    (name, launch), = predicted.parts
    assert name == "vec_add" and launch.bound in ("memory", "latency"), predicted.why
    assert 0.5 < predicted.ms / result.median < 2, (predicted.ms, result.median)
    error = f"({predicted.ms / result.median - 1:+.0%})"
    assert "cudakit.predict for the H100" in repr(result) and error in repr(result)
