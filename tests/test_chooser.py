"""cudakit.chooser: piecewise latency + bandwidth fits and the CPU-or-GPU chooser (CPU only)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from cudakit.chooser import Chooser, Segments, measured_crossover, time_calls


def regimes(sizes, edge=1 << 20):
    """A cache-like curve: 0.002 ms + 20 GB/s up to `edge` bytes, then 5 GB/s beyond."""
    return [0.002 + d / 20e6 if d <= edge else 0.002 + edge / 20e6 + (d - edge) / 5e6
            for d in sizes]


def test_one_regime_gets_one_line():
    sizes = [1 << e for e in range(10, 30, 2)]
    model = Segments.fit(sizes, [0.01 + d / 25e6 for d in sizes])
    assert model.edges == ()
    assert model.lines[0] == pytest.approx((0.01, 25.0), rel=1e-4)


def test_two_regimes_are_found_and_fitted():
    sizes = [1 << e for e in range(12, 30, 2)]
    times = regimes(sizes)
    model = Segments.fit(sizes, times)
    assert len(model.lines) == 2
    assert model.edges == (float(1 << 20),)
    # within 5% at the fitted sizes and between them
    between = [d * 2 for d in sizes[:-1]]
    assert np.all(np.abs(model(sizes) / times - 1) < 0.05)
    assert np.all(np.abs(model(between) / regimes(between) - 1) < 0.1)


def test_a_single_line_misses_the_regimes():
    from cudakit.timing import fit_latency_bandwidth

    sizes = [1 << e for e in range(12, 30, 2)]
    latency, bandwidth = fit_latency_bandwidth(sizes, regimes(sizes))
    line = latency + np.array(sizes) / (bandwidth * 1e6)
    assert np.max(np.abs(line / regimes(sizes) - 1)) > 0.3


@pytest.mark.parametrize("bad", [([1.0], [1.0]), ([1, 2], [1.0]), ([1, 2], [0.0, 1.0])])
def test_bad_fit_input_is_named(bad):
    with pytest.raises(ValueError, match="at least two"):
        Segments.fit(*bad)


def test_chooser_picks_the_faster_prediction_everywhere():
    rng = np.random.default_rng(3)
    cpu_ms = Segments((1e6,), ((0.001, 20.0), (-0.15, 5.0)))
    gpu_ms = Segments((), ((0.05, 12.0),))
    pick = Chooser(lambda s: "cpu", lambda s: "gpu", lambda s: s, cpu_ms, gpu_ms, (1e3, 1e10))
    for s in np.exp(rng.uniform(np.log(2e3), np.log(5e9), 200)):
        want = "gpu" if gpu_ms(s) < cpu_ms(s) else "cpu"
        if abs(gpu_ms(s) / cpu_ms(s) - 1) > 0.02:        # away from the grid's resolution
            assert pick.where(s) == want == pick(s)
    # the crossover lies where the two predictions meet
    c = pick.crossover
    assert gpu_ms(c * 1.05) < cpu_ms(c * 1.05) and gpu_ms(c / 1.05) > cpu_ms(c / 1.05)


def test_chooser_with_two_crossovers_and_with_none():
    def gpu(s):
        return 1.0 if s < 1e5 or s > 1e7 else 3.0

    pick = Chooser(lambda s: "cpu", lambda s: "gpu", lambda s: s, lambda s: 2.0, gpu, (1e3, 1e9))
    assert [pick(s) for s in (1e4, 1e6, 1e8)] == ["gpu", "cpu", "gpu"]
    assert pick.crossover == pytest.approx(1e7, rel=0.05)
    never = Chooser(str, str, lambda s: s, lambda s: 1.0, lambda s: 2.0, (1e3, 1e9))
    assert never.crossover is None and never.where(1e8) == "cpu"


def test_chooser_rejects_a_bad_range():
    with pytest.raises(ValueError, match="low, high"):
        Chooser(str, str, len, float, float, (10, 1))


def test_measured_crossover_interpolates_between_sizes():
    sizes = [1, 2, 4, 8, 16]
    cpu = [1, 2, 4, 8, 16]
    gpu = [3, 3, 3.5, 3.5, 3.5]
    # gpu/cpu crosses 1 between 2 (ratio 1.5) and 4 (0.875), in log scale
    r0, r1 = np.log(1.5), np.log(0.875)
    want = np.exp(np.log(2) + np.log(2) * r0 / (r0 - r1))
    assert measured_crossover(sizes, cpu, gpu) == pytest.approx(want)
    assert measured_crossover(sizes, cpu, [99] * 5) is None


def test_time_calls_orders_a_slow_and_a_fast_call():
    def fast(n):
        return n

    def slow(n):
        time.sleep(0.002)
        return n

    times = time_calls({"fast": fast, "slow": slow}, lambda p: (p,), [1, 2], seconds=0.02)
    assert len(times["slow"]) == 2
    assert all(s >= 2.0 > f for s, f in zip(times["slow"], times["fast"], strict=True))
