"""cudakit.benchmark on the emulator predicts the H100's time of the work it timed."""

import numpy as np
import pytest

import cudakit
from cudakit import cuda

SOURCE = r"""
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


@pytest.fixture(autouse=True)
def emulator(monkeypatch):
    monkeypatch.setenv("CUDAKIT_BACKEND", "emu")
    monkeypatch.delenv("CUDAKIT_RECORD_LAUNCHES", raising=False)


def test_a_timed_launch_and_copy_are_predicted_as_predict_would():
    kernels = cudakit.load(SOURCE)
    n = 1 << 15
    host = np.ones(n, np.float32)
    device = cuda.to_device(host)

    def work():
        cuda.memcpy_htod(device, host)
        kernels["scale"](device, np.float32(2), np.int32(n), grid=(n // 256,), block=(256,))

    result = cudakit.benchmark(work, warmup=1, repeat=2)
    alone = cudakit.predict(SOURCE, "scale", grid=(n // 256,), block=(256,),
                            args=[np.zeros(n, np.float32), np.float32(2), np.int32(n)])
    copy = cudakit.predict_copy(host.nbytes, "htod", pinned=False)
    # a synchronous copy, then a launch of 3 arguments, issued from Python with benchmark's
    # head start
    d = cudakit.predict.load("H100")
    issue = d.launch_issue_us + 3 * d.figures.get("launch_issue_per_arg_us", 0.0)
    expected = cudakit.predict.sequence_ms(
        [("sync", copy.ms), ("launch", alone.ms, 0, "compute", issue)], head_start=True)
    assert result.predicted.ms == pytest.approx(expected, rel=1e-9)
    assert result.predicted.ms >= alone.ms + copy.ms
    assert [name for name, _ in result.predicted.parts] == ["memcpy htod 0.125 MiB", "scale"]
    assert "predicted on the H100" in repr(result)


def test_host_clock_and_empty_work_have_no_prediction():
    assert cudakit.benchmark(lambda: None, warmup=0, repeat=2, host=True).predicted is None
    assert cudakit.benchmark(lambda: None, warmup=0, repeat=2).predicted is None


TWO_PATHS = r"""
__global__ void two_paths(float *x, const int *flag, int n, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (flag[i]) { for (int k = 0; k < steps; ++k) v = fmaf(v, 0.999f, 0.001f); }
    else         { for (int k = 0; k < steps; ++k) v = fmaf(v, 0.998f, 0.002f); }
    x[i] = v;
}
"""


def test_the_prediction_replays_the_call_on_its_own_data():
    """Lab 09's divergence patterns: flags that split every warp make it run both loops. The
    prediction replays the timed call on the flags it used (the emulator keeps them); on
    zeros every pattern would be one path and predicted the same."""
    kernels = cudakit.load(TWO_PATHS)
    n, steps = 2048, 4096
    d_x = cuda.to_device(np.ones(n, np.float32))
    times = {}
    for name, flag in {"all the same": np.ones(n, np.int32),
                       "alternate per thread": (np.arange(n) % 2).astype(np.int32)}.items():
        d_flag = cuda.to_device(flag)
        call = cudakit.benchmark(
            lambda d_flag=d_flag: kernels["two_paths"](d_x, d_flag, np.int32(n), np.int32(steps),
                                                       grid=(n // 256,), block=(256,)),
            warmup=0, repeat=1)
        times[name] = call.predicted.ms
    split = cudakit.predict(TWO_PATHS, "two_paths", grid=(n // 256,), block=(256,),
                            args=[np.ones(n, np.float32), (np.arange(n) % 2).astype(np.int32),
                                  np.int32(n), np.int32(steps)])
    assert times["alternate per thread"] == pytest.approx(split.ms, rel=1e-6)
    assert times["alternate per thread"] > 1.6 * times["all the same"]
