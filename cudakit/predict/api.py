"""``cudakit.predict`` and ``cudakit.predict_copy``: the time of a launch or a copy on a GPU,
predicted on the CPU.

>>> import numpy as np, cudakit
>>> src = '''
... __global__ void copy(const float *a, float *b, int n) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) b[i] = a[i];
... }'''
>>> n = 1 << 24
>>> p = cudakit.predict(src, grid=(n // 256,), block=(256,),  # doctest: +SKIP
...                     args=[np.zeros(n, np.float32), np.zeros(n, np.float32), np.int32(n)])
>>> p.bound  # doctest: +SKIP
'memory'
>>> predict_copy(1 << 30, "htod").bound
'PCIe'
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from .. import arch
from .. import occupancy as occ
from ..analysis.analyze import Pointer, _dims, device_args, source_of
from ..errors import ArgumentError, LaunchError, UnsupportedError
from ..kernel import find_kernel
from .device import load
from .fetch import (
    fetch_cycles,
    loop_shares,
    loop_sizes,
    paired_fetch,
    pairs_to_probe,
    spread_fetch,
)
from .model import Launch, estimate
from .result import Prediction
from .sample import SECONDS, run_sample
from .sass import (
    aggregates_atomics,
    code_size,
    conflict_cycles,
    global_waits,
    shared_waits,
    spills,
    stall_cycles,
)
from .spills import with_spills
from .traffic import traffic

__all__ = ["Pointer", "predict", "predict_copy"]


def _kernel_name(source_or_kernel, module, kernel_name):
    if kernel_name is not None:
        return kernel_name
    named = getattr(source_or_kernel, "name", None)
    if isinstance(named, str):
        return named
    kernels = list(module.program.compiled.kernels)
    if len(kernels) == 1:
        return kernels[0]
    raise LaunchError(f"the source defines {len(kernels)} kernels ({', '.join(kernels)}); "
                      "name one: predict(source, 'name', ...)")


def _occupancy(device, info, threads: int, shared: int):
    regs, static = info.registers, info.shared_static
    try:
        if device.compute_capability == "9.0":
            return occ.calculate(info, threads, dynamic_shared_memory=shared)
        spec = arch.get(device.compute_capability)
        return occ.calculate(spec, threads, min(regs, spec.max_registers_per_thread),
                             static + shared, barriers=info.barriers)
    except ValueError as exc:
        raise LaunchError(f"this launch cannot run on the {device.key}: {exc}") from None


#: seconds a prediction should take before its cache model and its SASS reading (up to 2 s
#: for the largest lab kernels): compiling, decoding and the sample (issue 19's goal: 5 s)
BUDGET = 2.5
#: seconds that decoding takes per PTX instruction of the kernel on the CI machine's kind,
#: which come out of the sample's budget: lab 12's sgemm_async, 14947 instructions, 1.57 s;
#: sgemm 3928, 0.42 s; matmul_dbuf 1864, 0.12 s (its module compiled, on this machine)
DECODE_SECONDS = 1.0e-4
#: of those, the emulation that finds which loops the blocks sharing TPCs run, when two of
#: the kernel's loops could overflow the instruction cache together (:mod:`.fetch`)
PAIRS_SECONDS = 0.4


@functools.lru_cache(maxsize=8)
def _emulator_module(source: str, options: tuple[str, ...]):
    """``source`` compiled for the emulator, once per process: its kernels are decoded when
    first launched (seconds for lab 12's 240 kB ``sgemm_async``), and the predictions of
    all its launches share them."""
    from .. import emu

    return emu.SourceModule(source, options=list(options), no_extern_c=True)


def predict(source_or_kernel, kernel_name: str | None = None, *, grid, block, args=(),
            shared: int = 0, device: str = "H100") -> Prediction:
    """Predict the time of one launch on ``device`` (``"H100"``, ``"H200"``, ``"A100"``,
    ``"C1060"``).

    Same call as ``cudakit.analyze``: CUDA source text, a compiled module or a ``%%cuda``
    kernel; ``args`` are NumPy arrays (copied to device buffers; the same array object twice
    is one buffer), :class:`Pointer`\\ s into them and NumPy scalars. A sample of the blocks
    runs on the emulator; the counts are scaled to the whole grid and priced with the
    device's figures (see ``cudakit/predict/README.md``).
    """
    from .. import emu

    dev = load(device)
    source = source_of(source_or_kernel)
    grid3, block3 = _dims(grid, "grid"), _dims(block, "block")
    options = tuple(getattr(source_or_kernel, "options", ()) or ())
    module = _emulator_module(source, options)
    name = _kernel_name(source_or_kernel, module, kernel_name)
    function = module.get_function(name)  # LaunchError naming the kernels there
    info = find_kernel(module.program.compiled.kernels, function.kernel.mangled)
    values, buffers = device_args(emu, args, "predict()")
    cubin, mangled = module.program.compiled.cubin, function.kernel.mangled
    reading = threading.Thread(target=shared_waits, args=(cubin, mangled), daemon=True)
    reading.start()  # nvdisasm reads the SASS while the sample runs (it is cached)
    if any("%envreg" in str(ins.operands) for ins in function.kernel.dec.fn.body):
        raise UnsupportedError(
            f"kernel '{function.kernel.name}' synchronises the whole grid (grid.sync()): its "
            "blocks wait for each other, which a sample of blocks cannot show, so "
            "cudakit.predict does not model it; time it on a GPU")
    body = len(function.kernel.dec.fn.body)  # PTX instructions
    sizes = loop_sizes(function, body)  # PTX sizes until the SASS
    probe = pairs_to_probe(sizes, dev, grid3)  # blocks whose loops tell the TPCs' fetch
    # decoding a large kernel comes out of the sample's time, down to half of it, so that a
    # prediction stays within its budget: reckoned from the kernel's size, not timed, so that
    # the same launch always gets the same sample (whether its module was decoded before)
    seconds = min(SECONDS, max(SECONDS / 2, BUDGET - DECODE_SECONDS * body)) - \
        PAIRS_SECONDS * bool(probe)
    threads = block3[0] * block3[1] * block3[2]
    try:  # the blocks resident at once, which the sample's runs are laid out for
        o = _occupancy(dev, info, threads, int(shared))
    except LaunchError:  # a launch shape the emulator refuses first, naming the dimension
        o = None
    sample = run_sample(function, values, grid3, block3, int(shared), seconds=seconds,
                        wave=dev.sm_count * o.active_blocks_per_sm if o else 0)
    o = o or _occupancy(dev, info, threads, int(shared))
    if o.active_blocks_per_sm < 1:
        raise LaunchError(f"this launch cannot run on the {dev.key}: no block fits on an SM "
                          f"(limited by {o.limiter})")
    resident = o.active_blocks_per_sm
    reading.join()
    loop_bytes, instructions = code_size(cubin, mangled) or (0, 0)
    fetch = fetch_cycles(loop_bytes, dev)
    sizes = loop_sizes(function, instructions)  # the loops again, at the SASS's bytes
    spread = spread_fetch(sizes, loop_shares(function.kernel.dec, sample.counter), dev,
                          2 * resident, sample.total_blocks / (dev.sm_count * resident)) \
        if instructions else 0.0
    if probe and instructions:
        fetch = max(fetch, paired_fetch(function, values, grid3, block3, int(shared), dev,
                                        sizes, probe,
                                        PAIRS_SECONDS))
    # L1 is shared by the blocks resident together: at most the occupancy limit, fewer when
    # the grid has fewer blocks per SM than that
    together = min(resident, -(-sample.total_blocks // dev.sm_count))
    shared_per_sm = together * (info.shared_static + int(shared))
    l1 = max(dev.l1_bytes_per_sm - shared_per_sm, 0) / together
    ahead = global_waits(cubin, mangled)
    t = traffic(sample, grid3, buffers, l1_bytes_per_block=l1, l2_bytes=dev.l2_bytes,
                blocks_per_wave=dev.sm_count * resident,
                aggregated=aggregates_atomics(cubin, mangled),
                relaunch=dev.figures.get("l2_relaunch"), atomic_figures=dev.figures,
                stores_together=ahead is None or not ahead.stores_apart)
    c, s = sample.instructions
    classes = {k: v * s for k, v in c.classes.items()}
    if (spilled := spills(cubin, mangled)) is not None:  # ptxas's, not in the PTX run
        t = with_spills(t, spilled, fp32=classes["fp32"], instructions=c.ops * s,
                        frame_bytes=info.stack + info.local, threads_per_sm=together * threads,
                        l1_bytes_per_sm=l1 * together)
    slowest, slowest_shared = c.slowest
    warps = c.warps * s * sample.done  # not scaled by progress
    # a kernel without loops waits no more often than its SASS makes a warp wait
    chain = slowest / sample.done
    grouped = min(1.0, ahead.periods() / chain) \
        if ahead is not None and ahead.straight and chain > 0 else 1.0
    launch = Launch(classes=classes, issued=c.ops * s, cycles=c.cycles * s, warps=warps,
                    periods=c.periods * s * grouped, shared_periods=c.shared_periods * s,
                    chain_periods=chain * grouped,
                    chain_shared_periods=slowest_shared / sample.done,
                    blocks=sample.total_blocks, warps_per_block=o.warps_per_block,
                    blocks_per_sm=resident, traffic=t,
                    schedule=shared_waits(cubin, mangled), stalls=stall_cycles(cubin, mangled),
                    banks=(conflict_cycles(cubin, mangled) or 0.0)
                    if float(dev.compute_capability) >= 7.0 else 0.0,  # Volta's banks on
                    fetch=fetch, fetch_spread=spread, loads_ahead=ahead,
                    bulk_copies=c.bulk_copies * s)
    e = estimate(launch, dev)
    counts = {
        "warp_instructions": classes, "issued_warp_instructions": launch.issued,
        "warps": launch.warps,
        "memory_periods_per_warp": c.periods / max(c.warps, 1) / sample.done,
        "shared_periods_per_warp": c.shared_periods / max(c.warps, 1) / sample.done,
        "slowest_warp_periods": slowest / sample.done,
        "slowest_warp_shared_periods": slowest_shared / sample.done,
        "barriers_per_warp": c.classes["barrier"] / max(c.warps, 1) / sample.done,
        "issue_cycles_per_warp": c.cycles / max(c.warps, 1) / sample.done,
        **{k: v for k, v in vars(t).items()},
        "blocks_sampled": sample.sampled_blocks, "blocks_spread": sample.spread_blocks,
        "blocks_total": sample.total_blocks,
        "sample_seconds": sample.seconds,
    }
    text = e.explanation
    if not sample.finished:
        text = (f"a lower bound: a block still ran after {sample.seconds:.1f} s of emulation "
                f"and no loop counter told how far it had got; {text}")
    return Prediction(e.seconds * 1e3, e.bound, text,
                      {k: v * 1e3 for k, v in e.breakdown.items()}, counts, o.occupancy,
                      e.waves, dev.key, f"{info.name}<<<{grid3}, {block3}>>>",
                      lower_bound=not sample.finished)


_COPY = {("htod", True): "h2d_pinned", ("htod", False): "h2d_pageable",
         ("dtoh", True): "d2h_pinned", ("dtoh", False): "d2h_pageable"}


def curve_us(curve: tuple, nbytes: int) -> float:
    """Microseconds of a copy of ``nbytes`` on a measured curve ``(sizes, us)``: linear
    between the measured sizes, the smallest size's time below them (a copy that small is
    its fixed cost), the last segment's rate beyond them.

    >>> curve_us(((1000, 2000), (10.0, 12.0)), 1500), curve_us(((1000, 2000), (10.0, 12.0)), 4000)
    (11.0, 16.0)
    """
    sizes, us = curve
    if nbytes <= sizes[-1]:
        return float(np.interp(nbytes, sizes, us))
    slope = max(us[-1] - us[-2], 0.0) / (sizes[-1] - sizes[-2])
    return us[-1] + (nbytes - sizes[-1]) * slope


def predict_copy(nbytes: int, direction: str = "htod", pinned: bool = True,
                 device: str = "H100") -> Prediction:
    """Predict a ``cudaMemcpy`` of ``nbytes``.

    ``direction``: ``"htod"``, ``"dtoh"`` (over PCIe; ``pinned`` host memory or pageable) or
    ``"dtod"`` (within device memory). Where the device has measured ``copy_curves``
    (``benchmarks/microbench.py``), the time is read off the curve of that kind of copy
    (:func:`curve_us`), plus, device to device, what a size that is not a multiple of 16
    bytes adds (``d2d_unaligned_us``: the H100 takes 2-4 us more); otherwise latency + bytes
    / bandwidth (device to device: read and write, at the copy rate).
    """
    dev = load(device)
    if direction not in ("htod", "dtoh", "dtod"):
        raise ArgumentError(f"direction must be 'htod', 'dtoh' or 'dtod', got {direction!r}")
    if isinstance(nbytes, bool) or not isinstance(nbytes, int | np.integer) or nbytes < 0:
        raise ArgumentError(f"nbytes must be a non-negative integer, got {nbytes!r}")
    nbytes = int(nbytes)
    kind = "d2d" if direction == "dtod" else _COPY[direction, bool(pinned)]
    memory = "" if direction == "dtod" else f", {'pinned' if pinned else 'pageable'}"
    bound = "memory" if direction == "dtod" else "PCIe"
    curve = dev.figures.get("copy_curves", {}).get(kind)
    unaligned = dev.figures.get("d2d_unaligned_us") if direction == "dtod" and nbytes % 16 \
        else None
    if curve is not None:
        extra = curve_us(unaligned, nbytes) * 1e-3 if unaligned else 0.0
        ms = curve_us(curve, nbytes) * 1e-3 + extra
        rate = nbytes / (ms * 1e6) if ms > 0 else 0.0
        where = "within device memory" if direction == "dtod" else "over PCIe"
        text = (f"{nbytes / 1e6:.3g} MB {where}{memory}: {ms * 1e3:.3g} us on the measured "
                f"curve ({rate:.3g} GB/s effective)")
        if extra:
            text += (f", {extra * 1e3:.2g} us of it because {nbytes} bytes is not a multiple "
                     "of 16 (measured)")
        return Prediction(ms, bound, text, {bound: ms}, {"bytes": nbytes},
                          what=f"copy {direction} of {nbytes} bytes", device=dev.key)
    latency = dev.copy_latency_us * 1e-3
    if direction == "dtod":
        gbs = dev.dram_copy_gbs
        moving = 2 * nbytes / (gbs * 1e9) * 1e3
        how = f"{2 * nbytes / 1e6:.3g} MB read and written in DRAM"
    else:
        gbs = getattr(dev, f"{kind}_gbs")
        moving = nbytes / (gbs * 1e9) * 1e3
        how = f"{nbytes / 1e6:.3g} MB over PCIe{memory}, at {gbs:g} GB/s"
    ms = latency + moving
    if latency >= moving:
        text = f"latency-bound copy: {dev.copy_latency_us:g} us to start, {how}"
        bound = "PCIe" if bound == "PCIe" else "launch"
    else:
        text = f"{how}, {moving / ms:.0%} of the time"
    return Prediction(ms, bound, text, {"latency": latency, bound: moving}, {"bytes": nbytes},
                      what=f"copy {direction} of {nbytes} bytes", device=dev.key)
