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
