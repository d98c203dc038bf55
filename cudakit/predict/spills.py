"""The local-memory traffic of register spills, which the emulator does not see.

ptxas spills registers to local memory when a kernel needs more of them than it may have
(``-maxrregcount``, ``__launch_bounds__``, a large array it unrolls into registers). The PTX
that the emulator runs has none of those loads and stores; the SASS has them
(:func:`.sass.read_spills`: the lines they touch per pass of the kernel's loops). They are
scaled by the emulator's count of the same code's FP32 (or all) instructions and added to
the launch's traffic: every line goes through L1, and where the spill frames of the threads
resident on an SM do not fit in the L1 they leave beside shared memory, every line, loaded
or stored, is priced at the L2 too (lab 01's ``chain`` capped at 32 registers: 2048 frames
of 152 bytes, 304 kB for an L1 of 256 kB; with only the share that does not fit counted,
16 %, it came out at 0.68 ms for the H100's 2.61; as it is, 2.13 ms). The frames are taken
to fit in the L2 (that ``chain``'s: 41 MB).

That is not how the hardware splits it, though it lands near the same time: Nsight Compute
on an H200 (the H100's SM and L1; ``benchmarks/spill_probe.py``) shows that ``chain``'s
spill loads hit L1 (96.8 %) and that all its spill stores go on to the L2 (329 M sectors
written, 11 M read): local stores write through. The L2 took those 10.5 GB of writes in
2.3 ms, 4.6 TB/s, 39 % of the rate at which it serves reads; pricing loads and stores at the
read rate comes to the same L2 time. Pricing the stores alone needs the L2's rate for stores,
which no H100 microbenchmark has measured yet. Not priced either: the spill instructions'
issue slots (164 M more warp instructions there, +74 %) and their waits.

Hand-written: nothing else counts a launch's spill traffic without running it on a GPU.

>>> from cudakit.predict.sass import Spills
>>> t = with_spills(Traffic(), Spills(load_lines=1, store_lines=1, fp32=2, instructions=4),
...                 fp32=2000.0, instructions=4000.0, frame_bytes=200, threads_per_sm=2000,
...                 l1_bytes_per_sm=100_000)
>>> t.local_lines, t.l2_read_bytes, t.l2_write_bytes  # 1000 lines each way, past the L1
(2000.0, 128000.0, 128000.0)
"""

from __future__ import annotations

from dataclasses import replace

from .sass import Spills
from .traffic import Traffic

LINE = 128  # bytes


def with_spills(t: Traffic, spills: Spills, *, fp32: float, instructions: float,
                frame_bytes: int, threads_per_sm: int, l1_bytes_per_sm: float) -> Traffic:
    """``t`` with the spill lines of a launch that issued ``fp32`` FP32 and ``instructions``
    warp instructions (the emulator's counts), whose threads have ``frame_bytes`` of local
    memory each, ``threads_per_sm`` of them resident on an SM with ``l1_bytes_per_sm`` of L1
    beside its shared memory."""
    loads, stores = spills.per(fp32, instructions)
    missed = 1.0 if frame_bytes * threads_per_sm > l1_bytes_per_sm else 0.0
    return replace(t, local_lines=t.local_lines + loads + stores,
                   l2_read_requests=t.l2_read_requests + loads * missed,
                   l2_read_bytes=t.l2_read_bytes + LINE * loads * missed,
                   l2_write_bytes=t.l2_write_bytes + LINE * stores * missed)
