"""Interactive notebook tools (ipywidgets + matplotlib).

>>> from cudakit.widgets import OccupancyCalculator
>>> calc = OccupancyCalculator(compute_capability="1.3", block_size=480,
...                            registers_per_thread=2, shared_memory_per_block=24)
>>> calc.result.active_warps_per_sm
30
"""

from __future__ import annotations

from .occupancy import OccupancyCalculator

__all__ = ["OccupancyCalculator"]
