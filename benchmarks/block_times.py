"""When each block of a launch starts and ends on the GPU, and on which SM: the launch's
kernel with a ``%globaltimer`` stamp at its start and, by each warp as it returns, at its
end (the latest counts), against the CUDA-event time of the unmodified kernel.

    python -m benchmarks.block_times OUT.json SELECTOR ...     # on the GPU
    python -m benchmarks.block_times --table OUT.json          # here: per launch, the blocks

A selector names a launch of the labs' H100 recording as :mod:`benchmarks.ncu_probe` reads
it (``12_matmul:sgemm_async:8x8x1``: that kernel's first launch with that grid, on
zero-filled buffers of the recorded sizes). The model takes a launch of one round as long as
its slowest block; this shows which block that is. Session 13 on the H100
(``fixtures/h100_block_times.json``): lab 12's ``sgemm_async`` at 1000³ (64 blocks, one per
SM) ran 62 of its blocks in 107-113 us and two in 121 and 153 us, the two blocks that shared
a TPC (SMs 126 and 127) while running the kernel's two different loops (interior and edge
blocks); the launch took as long as the slowest. Written by hand: it instruments the
recorded source, which no profiler reports per block.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

import numpy as np

STAMPS = r"""
__device__ unsigned long long cudakit_block_stamps[1 << 16][3];
__device__ __forceinline__ unsigned long long cudakit_now()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned cudakit_sm()
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
__device__ __forceinline__ void cudakit_block_end(unsigned long long *end)
{
    unsigned lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    if (lane == __ffs(__activemask()) - 1)  // one atomic per warp, wherever it returns
        atomicMax(end, cudakit_now());
}
"""
BLOCK = "(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z))"
FIRST = "threadIdx.x + threadIdx.y + threadIdx.z == 0"


def instrument(source: str, kernel: str) -> str:
    """``source`` with kernel ``kernel`` stamping its start (and SM) and its end per block.

    >>> out = instrument("__global__ void k(float *a) { a[0] = 1; }", "k")
    >>> out.count("cudakit_now()") - STAMPS.count("cudakit_now()"), out.count("cudakit_block_end(&")
    (1, 1)
    """
    head = re.search(r"__global__[^{;]*\b" + re.escape(kernel) + r"\s*\([^)]*\)\s*\{", source)
    if head is None:
        raise ValueError(f"no __global__ function {kernel!r} in the source")
    depth, end = 0, head.end() - 1
    for end in range(head.end() - 1, len(source)):
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
    start = (f"\n    if ({FIRST}) {{ cudakit_block_stamps[{BLOCK}][0] = cudakit_now(); "
             f"cudakit_block_stamps[{BLOCK}][2] = cudakit_sm(); }}\n")
    stop = f"\n    cudakit_block_end(&cudakit_block_stamps[{BLOCK}][1]);\n"
    body = source[head.end():end].replace("return;", "{" + stop + "    return; }")
    return STAMPS + source[:head.end()] + start + body + stop + source[end:]


def measure(selector: str, repeats: int = 7) -> dict:
    """The event time of the launch (median of ``repeats``), and of its stamped copy each
    block's start and duration (us, from the first start) and SM."""
    import pycuda.autoinit  # noqa: F401 - a context for the launches
    import pycuda.driver as drv

    from benchmarks.ncu_probe import resolve
    from benchmarks.sass_counts import recorded_arguments
    from cudakit.compiler import compile as compile_cuda

    op, sources = resolve(selector)
    out: dict = {"selector": selector, "grid": op["grid"], "block": op["block"]}
    for variant, text in (("plain", sources[op["source"]]),
                          ("stamped", instrument(sources[op["source"]], op["kernel"]))):
        compiled = compile_cuda(text, options=tuple(op.get("options") or ()), arch="sm_90")
        module = drv.module_from_buffer(compiled.cubin)
        function = module.get_function(compiled.kernels[op["kernel"]].mangled)
        buffers: dict = {}
        args = recorded_arguments(op, drv, buffers)
        times = []
        for _ in range(repeats):
            begin, finish = drv.Event(), drv.Event()
            begin.record()
            function(*args, grid=tuple(op["grid"]), block=tuple(op["block"]), shared=op["shared"])
            finish.record()
            finish.synchronize()
            times.append(finish.time_since(begin) * 1e3)
        out[f"{variant}_event_us"] = statistics.median(times)
        if variant == "stamped":
            pointer, _ = module.get_global("cudakit_block_stamps")
            stamps = np.empty((1 << 16, 3), np.uint64)
            drv.memcpy_dtoh(stamps, pointer)
            stamps = stamps[:int(np.prod(op["grid"]))].astype(np.int64)
            first = stamps[:, 0].min()
            out["start_us"] = ((stamps[:, 0] - first) / 1e3).round(3).tolist()
            out["duration_us"] = ((stamps[:, 1] - stamps[:, 0]) / 1e3).round(3).tolist()
            out["sm"] = stamps[:, 2].tolist()
        for buffer in buffers.values():
            buffer.free()
    return out


def table(path: Path) -> str:
    """Per launch: the event time, the span of the blocks, their durations, the slowest."""
    rows = ["| launch | event us | blocks' span us | block us (min / median / max) | "
            "slowest block (x, y), SM |", "|---|---|---|---|---|"]
    for r in json.loads(path.read_text())["launches"]:
        start, duration = np.array(r["start_us"]), np.array(r["duration_us"])
        slowest = int(duration.argmax())
        x, y = slowest % r["grid"][0], slowest // r["grid"][0] % r["grid"][1]
        rows.append(f"| {r['selector']} | {r['plain_event_us']:.1f} | "
                    f"{(start + duration).max():.1f} | {duration.min():.1f} / "
                    f"{np.median(duration):.1f} / {duration.max():.1f} | ({x}, {y}), "
                    f"{r['sm'][slowest]} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--table"] and len(argv) == 2:
        print(table(Path(argv[1])))
        return 0
    if len(argv) < 2:
        print(__doc__)
        return 2
    launches = [measure(selector) for selector in argv[1:]]
    from cudakit.record import header

    Path(argv[0]).write_text(json.dumps({"header": {**header(), "how": "python -m "
                                                    "benchmarks.block_times"},
                                         "launches": launches}))
    print(table(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
