"""Timing GPU code the careful way: CUDA events, warm-up, many repeats, the median.

On the emulator the same calls work, but every result says it is emulated CPU time,
never GPU time.

>>> bandwidth_gbs(2 * 4 * (1 << 24), 0.05)  # read + write of 16 Mi floats in 50 us
2684.35456
>>> gflops(2 * 1024**3, 1.0)
2147.483648
>>> fit_latency_bandwidth([1e3, 1e6, 1e9], [0.02 + d / 25e6 for d in (1e3, 1e6, 1e9)])
(0.02, 25.0)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np


def bandwidth_gbs(bytes_moved: float, ms: float) -> float:
    """Effective bandwidth in GB/s (1e9 B/s) for bytes read plus written in ``ms``."""
    return bytes_moved / (ms * 1e-3) / 1e9


def gflops(flop: float, ms: float) -> float:
    """Arithmetic rate in GFLOP/s (1e9 flop/s)."""
    return flop / (ms * 1e-3) / 1e9


def fit_latency_bandwidth(sizes: Sequence[float], ms: Sequence[float]) -> tuple[float, float]:
    """Fit the textbook's transfer model ``ms = latency + bytes / bandwidth`` (section 5-5).

    Least squares on the relative error (each point weighted by 1/ms), so small and large
    sizes count alike. Returns (latency in ms, bandwidth in GB/s), to 6 significant digits.
    """
    d, t = np.asarray(sizes, float), np.asarray(ms, float)
    if d.shape != t.shape or d.size < 2:
        raise ValueError("need at least two (size, time) pairs of equal length")
    a = np.stack([np.ones_like(d), d], axis=1) / t[:, None]
    (latency, slope), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return float(f"{latency:.6g}"), float(f"{1e-6 / slope:.6g}")


def crossover(sizes: Sequence[float], first_ms: Sequence[float], second_ms: Sequence[float]):
    """The first size from which ``second_ms`` stays below ``first_ms``; None if it never does.

    >>> crossover([1, 2, 4, 8], [1, 2, 4, 8], [3, 3, 3, 3])
    4
    """
    faster = np.asarray(second_ms) < np.asarray(first_ms)
    for i, size in enumerate(sizes):
        if faster[i:].all():
            return size
    return None


def _emulated() -> bool:
    from .backend import backend_name

    return backend_name() == "emu"


# A kernel that only waits: launched just before the start event, it keeps the GPU busy while
# the host issues the timed work, so that launch overhead on the host does not show up as GPU
# time (the "blocking kernel" of NVIDIA's nvbench, here a fixed wait on the global timer).
_WAIT_SOURCE = r"""
__global__ void cudakit_wait(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""
MAX_HEAD_START_US = 20_000.0


@functools.cache
def _wait_kernel():
    from .binding import load

    return load(_WAIT_SOURCE, name="cudakit_wait")["cudakit_wait"]


def gpu_wait(microseconds: float, stream=None) -> None:
    """Queue a kernel that keeps the GPU busy for ``microseconds`` on ``stream`` (GPU only).

    >>> gpu_wait(100)  # doctest: +SKIP
    """
    _wait_kernel()(np.uint64(microseconds * 1e3), grid=(1,), block=(1,), stream=stream)


@dataclass
class Timer:
    """What :func:`timer` yields; ``ms`` is set when the ``with`` block ends."""

    ms: float | None = None
    emulated: bool = False

    def __repr__(self) -> str:
        if self.ms is None:
            return "<Timer running>"
        note = " (emulated on the CPU, not GPU time)" if self.emulated else ""
        return f"<Timer {self.ms:.4f} ms{note}>"


@contextmanager
def timer(stream=None):
    """Time a region of device work with CUDA events on ``stream``.

    On an idle GPU the region's time includes the host's time to issue its first launch;
    :func:`benchmark` leaves that out.

    >>> with timer() as t:  # doctest: +SKIP
    ...     kernel(d_x, n, grid=(g,), block=(256,))
    >>> t.ms  # doctest: +SKIP
    0.0123
    """
    from . import cuda, record

    region = record.start("timer")  # CUDAKIT_RECORD_LAUNCHES: this region's operations
    result = Timer(emulated=_emulated())
    start, end = cuda.Event(), cuda.Event()
    start.record(stream) if stream is not None else start.record()
    if region is not None:
        record.current = region
    try:
        yield result
    except BaseException:
        record.abandon(region)
        raise
    finally:
        if region is not None:
            record.current = None
    end.record(stream) if stream is not None else end.record()
    end.synchronize()
    result.ms = float(start.time_till(end))
    record.finish(region, clock="events", ms=result.ms)


@dataclass
class Benchmark:
    """All samples of :func:`benchmark` (ms) and their summary."""

    samples: np.ndarray
    emulated: bool = False
    host: bool = False
    operations: object = field(default=None, repr=False)  # the work of one timed call

    @functools.cached_property
    def predicted(self):
        """The H100's predicted time of one call of the function
        (:func:`cudakit.predict.replay.predict_region` on its launches and copies, run on the
        emulator even on a GPU machine; on the emulator with the data the call ran on, on a
        GPU with zero-filled buffers); None for host-clock benchmarks and for functions that
        did no device work."""
        if self.operations is None or not self.operations.ops:
            return None
        from .predict.replay import predict_region

        ops = self.operations.records()
        return predict_region(ops, self.operations.sources, head_start=True,
                              data=self.operations.data)

    @property
    def min(self) -> float:
        return float(self.samples.min())

    @property
    def median(self) -> float:
        return float(np.median(self.samples))

    @property
    def max(self) -> float:
        return float(self.samples.max())

    @property
    def mean(self) -> float:
        return float(self.samples.mean())

    def __repr__(self) -> str:
        clock = "host clock" if self.host else "CUDA events"
        note = ", emulated on the CPU, not GPU time" if self.emulated and not self.host else ""
        predicted = self.predicted
        if predicted is not None and self.emulated:
            note += f"; predicted on the {predicted.device}: {predicted.ms:.4f} ms, {predicted.why}"
        elif predicted is not None:
            error = predicted.ms / self.median - 1
            note += (f"; cudakit.predict for the {predicted.device}: {predicted.ms:.4f} ms "
                     f"({error:+.0%}), {predicted.why}")
        return (
            f"<Benchmark median {self.median:.4f} ms (min {self.min:.4f}, max {self.max:.4f}; "
            f"{len(self.samples)} runs, {clock}{note})>"
        )


def head_start(host_us: float) -> float:
    """Microseconds of head start :func:`benchmark` gives the device before a timed call
    whose issue took the host ``host_us`` in the warm-up: twice that plus 20 us, at most
    ``MAX_HEAD_START_US``.

    >>> head_start(100.0), head_start(1e6)
    (220.0, 20000.0)
    """
    return min(2.0 * host_us + 20.0, MAX_HEAD_START_US)


def benchmark(
    fn: Callable[[], object], *, warmup: int = 3, repeat: int = 20, stream=None, host: bool = False
) -> Benchmark:
    """Run ``fn`` ``warmup`` times untimed, then ``repeat`` times timed; return every sample.

    Device work is timed with CUDA events around each call on ``stream``; with
    ``host=True`` the host clock times ``fn`` instead (for NumPy or whole pipelines
    that synchronize themselves).

    On a GPU each timed call gets a head start: a waiting kernel (:func:`gpu_wait`), twice
    as long as ``fn`` took the host in the warm-up, runs before the start event, so ``fn``'s
    work is already queued when the clock starts. The samples then measure the device work,
    not the microseconds Python needs to launch it (at most 20 ms of head start).

    >>> b = benchmark(lambda: sum(range(1000)), warmup=1, repeat=5, host=True)
    >>> len(b.samples), b.min <= b.median <= b.max
    (5, True)
    """
    if repeat < 1 or warmup < 0:
        raise ValueError(f"need repeat >= 1 and warmup >= 0, got repeat={repeat}, warmup={warmup}")
    from . import record

    # the first timed call's work: recorded (CUDAKIT_RECORD_LAUNCHES) and kept to predict its
    # GPU time
    region = record.start("benchmark", capture=not host)
    try:
        result = _benchmark(fn, warmup, repeat, stream, host, region)
    except BaseException:
        record.abandon(region)
        raise
    clock = "host" if result.host else "events"
    record.finish(region, clock=clock, median_ms=result.median, min_ms=result.min,
                  max_ms=result.max, samples=len(result.samples))
    if not result.host and region is not None and not region.dropped:
        result.operations = region
    return result


def _recorded(fn, region):
    """Call ``fn`` with its device operations captured in ``region``."""
    from . import record

    record.current = region
    try:
        fn()
    finally:
        record.current = None


def _benchmark(fn, warmup: int, repeat: int, stream, host: bool, region) -> Benchmark:
    issue_s = []
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        issue_s.append(time.perf_counter() - t0)
    samples = np.empty(repeat)
    if host:
        for i in range(repeat):
            t0 = time.perf_counter()
            _recorded(fn, region) if region is not None and i == 0 else fn()
            samples[i] = (time.perf_counter() - t0) * 1e3
        return Benchmark(samples, emulated=False, host=True)
    from . import cuda

    emulated = _emulated()
    head_start_us = head_start(min(issue_s, default=1e-4) * 1e6)
    if stream is None:
        cuda.Context.synchronize()
    for i in range(repeat):
        if not emulated:
            gpu_wait(head_start_us, stream)
        with timer(stream) as t:
            _recorded(fn, region) if region is not None and i == 0 else fn()
        samples[i] = t.ms
    return Benchmark(samples, emulated=emulated)
