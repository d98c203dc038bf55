"""The work clock: a sample's budgets count the emulator's work, so that a busy machine
samples what an idle one does, and the wall clock still ends a sample whose counts stall."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest

import cudakit
from cudakit import emu
from cudakit.emu.counts import InstructionCounter
from cudakit.predict import work
from cudakit.predict.sample import run_sample

from .conftest import SOURCE


@pytest.fixture(scope="module")
def module():
    return emu.SourceModule(SOURCE, no_extern_c=True)


@contextlib.contextmanager
def busy(monkeypatch):
    """A busy machine: every basic block the emulator runs takes half a millisecond more."""
    plain = InstructionCounter.block

    def slow(self, *args):
        time.sleep(5e-4)
        return plain(self, *args)

    with monkeypatch.context() as m:
        m.setattr(InstructionCounter, "block", slow)
        yield


def _sample(module, monkeypatch, slowed: bool):
    blocks, k = 512, 1 << 12  # blocks too slow for all to fit the budget: it decides the runs
    a = emu.to_device(np.ones(blocks * 256, np.float32))
    b = emu.mem_alloc(blocks * 256 * 4)
    started = time.perf_counter()
    with busy(monkeypatch) if slowed else contextlib.nullcontext():
        s = run_sample(module.get_function("fma_loop"), [a, b, np.int32(k)], (blocks, 1, 1),
                       (256, 1, 1), 0, seconds=0.3)
    return s, time.perf_counter() - started


def test_a_busy_machine_samples_the_same_blocks_and_counts(module, monkeypatch):
    monkeypatch.setattr(work, "GUARD", 1e9)  # the counts alone decide
    idle, idle_s = _sample(module, monkeypatch, slowed=False)
    slowed, slowed_s = _sample(module, monkeypatch, slowed=True)
    assert 1 < idle.sampled_blocks < 512  # the time budget, not the grid, ended the sample
    assert slowed.runs == idle.runs
    assert slowed.counter.classes == idle.counter.classes
    assert slowed.done == idle.done and slowed.seconds == pytest.approx(idle.seconds)
    assert slowed_s > 1.5 * idle_s  # it did take longer


def test_a_prediction_is_the_same_on_a_busy_machine(monkeypatch):
    monkeypatch.setattr(work, "GUARD", 1e9)
    n, k = 1 << 16, 1 << 14  # 256 blocks, too many for the budget

    def predicted():
        return cudakit.predict(SOURCE, "fma_loop", grid=(n // 256,), block=(256,),
                               args=[np.ones(n, np.float32), np.zeros(n, np.float32),
                                     np.int32(k)])

    idle = predicted()
    with busy(monkeypatch):
        slowed = predicted()
    assert 1 < idle.counts["blocks_sampled"] < idle.counts["blocks_total"]
    assert slowed.ms == idle.ms
    assert slowed.counts == idle.counts


def test_the_wall_clock_ends_what_the_counts_do_not_see(monkeypatch):
    monkeypatch.setattr(work, "GUARD", 2.0)
    clock = work.WorkClock()
    clock.watch(InstructionCounter())
    time.sleep(0.05)
    assert clock() >= 0.025  # nothing counted: half the wall time


def test_a_counter_that_ran_costs_its_counted_seconds(module, monkeypatch):
    monkeypatch.setattr(work, "GUARD", 1e9)
    counter = InstructionCounter()
    clock = work.WorkClock()
    clock.watch(counter)
    a = emu.to_device(np.ones(256, np.float32))
    b = emu.mem_alloc(256 * 4)
    module.get_function("fma_loop")(a, b, np.int32(64), grid=(1,), block=(256,),
                                    counter=counter)
    counted = work.counts(counter)
    assert counted["runs"] > 0 and counted["alu"] >= 64  # one per FMA, over any lanes
    assert counted["lane_steps"] >= 64 * 256 and counted["batches"] == 1
    assert clock() == pytest.approx(sum(work.RATES[k] * v for k, v in counted.items()))


def test_the_fit_gives_back_the_rates_that_priced_the_launches():
    from benchmarks.work_clock import FEATURES, fit

    rng = np.random.default_rng(19)
    rates = dict(zip(FEATURES, rng.uniform(1e-7, 1e-5, len(FEATURES)), strict=True))
    calls = [{"kernel": "k", **{k: float(rng.integers(1000, 100000)) for k in FEATURES}}
             for _ in range(100)]
    for call in calls:
        call["seconds"] = sum(rates[k] * call[k] for k in FEATURES)
    assert min(c["seconds"] for c in calls) > 0.01  # all long enough to be fitted
    assert fit(calls) == pytest.approx(rates, rel=1e-6)
