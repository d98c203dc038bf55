"""Coalescing and bank-conflict analysis: ``analyze`` (emulator model) and ``profile`` (ncu).

Both return a :class:`Report` with Nsight Compute's metric names in ``metrics``, the accesses
worst first in ``by_line``, an HTML table in notebooks, pictures and ``compare``.

>>> from cudakit.analysis import NCU_METRICS
>>> NCU_METRICS[1]
'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum'
"""

from __future__ import annotations

from .analyze import analyze
from .ncu import profile
from .report import NCU_METRICS, AccessStats, Comparison, Report, from_trace

__all__ = ["NCU_METRICS", "AccessStats", "Comparison", "Report", "analyze", "from_trace",
           "profile"]
