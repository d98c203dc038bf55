"""cudakit.widgets.OccupancyCalculator without a browser (see test_browser_occupancy.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cudakit import occupancy
from cudakit.widgets import OccupancyCalculator


def test_shows_the_textbook_example_and_highlights_nothing_wrong():
    calc = OccupancyCalculator(compute_capability="1.3", block_size=480,
                               registers_per_thread=2, shared_memory_per_block=24)
    assert calc.result == occupancy.calculate("1.3", 480, 2, 24)
    assert "94%" in calc.summary.value
    assert "30 of 32" in calc.summary.value
    assert bytes(calc.plot.value[:4]) == b"\x89PNG"


def test_every_control_changes_result_table_and_plot():
    calc = OccupancyCalculator(compute_capability="9.0", block_size=256,
                               registers_per_thread=32, shared_memory_per_block=0)
    seen = {(calc.summary.value, bytes(calc.plot.value))}
    calc.registers_per_thread.value = 64
    assert calc.result.limiter == "registers"
    assert "background:#ffe08a;font-weight:bold'><td>registers per SM" in calc.summary.value
    seen.add((calc.summary.value, bytes(calc.plot.value)))
    calc.shared_memory_per_block.value = 100_000
    assert calc.result.limiter == "shared_memory"
    seen.add((calc.summary.value, bytes(calc.plot.value)))
    calc.block_size.value = 1024
    seen.add((calc.summary.value, bytes(calc.plot.value)))
    calc.carveout.value = calc.carveout.options[3][1]  # 16 KB carveout, too small: ignored
    assert calc.result == occupancy.calculate("9.0", 1024, 64, 100_000,
                                              shared_memory_carveout=calc.carveout.value)
    calc.carveout.value = calc.carveout.options[-3][1]  # 164 KB: 1 KB reserved + 97.7 KB fit once
    assert calc.result.shared_memory_per_sm == 164 * 1024
    assert calc.result.active_blocks_per_sm == 1
    assert len(seen) == 4


def test_architecture_change_refits_the_sliders():
    calc = OccupancyCalculator(compute_capability="9.0", block_size=1024,
                               registers_per_thread=200, shared_memory_per_block=0)
    calc.architecture.value = "1.3"
    assert calc.block_size.max == 512 and calc.block_size.value <= 512
    assert calc.registers_per_thread.max == 128
    assert calc.carveout.disabled
    assert calc.carveout.label.startswith("default")
    assert calc.result.arch.compute_capability == (1, 3)
    calc.architecture.value = "7.5"
    assert [label for label, _ in calc.carveout.options[1:]] == ["32 KB", "64 KB"]


@dataclass
class Info:
    name: str = "stencil"
    arch: str = "sm_86"
    registers: int = 72
    shared_static: int = 6144
    barriers: int = 1


def test_opens_on_a_compiled_kernel():
    calc = OccupancyCalculator(Info(), block_size=128, dynamic_shared_memory=1024)
    assert calc.spec.compute_capability == (8, 6)
    assert calc.registers_per_thread.value == 72
    assert calc.shared_memory_per_block.value == 7168
    assert calc.result == occupancy.calculate(Info(), 128, dynamic_shared_memory=1024)
    assert "stencil" in calc.children[0].value


def test_rejects_something_that_is_not_a_kernel():
    with pytest.raises(ValueError, match="kernel must be a compiled kernel"):
        OccupancyCalculator("sm_90")


@pytest.mark.parametrize("cc", ["7.0", "7.5", "8.0", "8.6", "9.0", "12.0"])
def test_each_carveout_choice_selects_that_carveout(cc):
    calc = OccupancyCalculator(compute_capability=cc, block_size=128, registers_per_thread=32,
                               shared_memory_per_block=0)
    for (label, percent), size in zip(calc.carveout.options[1:],
                                      calc.spec.shared_memory_carveouts, strict=True):
        calc.carveout.value = percent
        # 0 B of shared memory plus the reserved bytes must fit the chosen carveout
        if size >= calc.result.allocated_shared_memory_per_block:
            assert calc.result.shared_memory_per_sm == size, label
