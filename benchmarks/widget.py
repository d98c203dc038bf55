"""How long the occupancy calculator widget takes to redraw after one change (CPU time).

    python -m benchmarks.widget

The issue asks for "well under a second per change"; this prints the median over changes of
block size, registers and shared memory, on the architectures a participant meets most.
"""

from __future__ import annotations

import time

import numpy as np

from cudakit.widgets import OccupancyCalculator

from .common import environment_line, markdown_table


def seconds_per_change(calc: OccupancyCalculator, changes) -> list[float]:
    samples = []
    for widget, value in changes:
        start = time.process_time()
        widget.value = value
        samples.append(time.process_time() - start)
    return samples


def main() -> None:
    rows = []
    for cc in ("1.3", "8.6", "9.0"):
        calc = OccupancyCalculator(compute_capability=cc)
        changes = [(calc.block_size, b) for b in (64, 128, 256, 512, 96, 192)]
        changes += [(calc.registers_per_thread, r) for r in (16, 24, 32, 40)]
        changes += [(calc.shared_memory_per_block, s) for s in (0, 1024, 4096, 8192)]
        samples = seconds_per_change(calc, changes)
        rows.append(
            [cc, len(samples), f"{1e3 * np.median(samples):.0f}", f"{1e3 * max(samples):.0f}"]
        )
    print(environment_line())
    print(markdown_table(["compute capability", "changes", "median ms", "max ms"], rows))


if __name__ == "__main__":
    main()
