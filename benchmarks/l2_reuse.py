"""How much of a kernel's data the L2 keeps from one launch to the next, against its size.

Kernels are timed launch after launch on the same buffers, so what one launch leaves in L2
the next finds there. The model took that as all or nothing: everything when the launch's
footprint fits in half the L2, nothing beyond (``traffic.written_back``). This probe measures
the curve in between, with Nsight Compute's DRAM bytes per launch:

    ncu --csv --cache-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum,\\
        gpu__time_duration.sum python -m benchmarks.l2_reuse --launch > raw.csv   # GPU
    python -m benchmarks.l2_reuse --time --out times.json                           # GPU
    python -m benchmarks.l2_reuse --parse raw.csv times.json --out fixture.json
    python -m benchmarks.l2_reuse --device-entry fixture.json L2_BYTES   # a device file's entry

The H200's run (2026-11-29, one device call with the softmax rows of session 26): ``fixtures/
h200_l2_reuse.json``, its ncu output ``fixtures/h200_l2_reuse.ncu.csv.gz``; the entry is
``l2_relaunch`` in ``cudakit/predict/devices/h200.json``.

Three kernels of one float4 per thread, blocks of 256 (the labs' pointwise kernels): ``read``
(sums each float4, writes nothing), ``copy`` (two buffers) and ``update`` (``x = 2x + 1`` in
place), each over footprints (distinct bytes touched) from 2 MiB to 160 MiB, launched
:data:`LAUNCHES` times back to back; ``--parse`` keeps the median of the launches after the
first two: DRAM bytes read and written per byte of footprint. ``--time`` times 20 samples of
10 launches between two events (the median per launch) for the same launches, without ncu.
Written by hand: a microbenchmark, no library measures an L2's reuse across launches.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, emit_json, gpu_line, ncu_launches

SOURCE = r"""
__global__ void read(const float4 *x, long n, float *sink) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { float4 v = x[i]; if (v.x + v.y + v.z + v.w == -1.0f) sink[0] = v.x; }
}
__global__ void copy(const float4 *x, float4 *y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
__global__ void update(float4 *x, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) { float4 v = x[i]; x[i] = make_float4(2*v.x+1, 2*v.y+1, 2*v.z+1, 2*v.w+1); }
}
"""
MIB = 1 << 20
FOOTPRINTS = tuple(m * MIB for m in (2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64,
                                     80, 96, 128, 160))
KINDS = ("read", "copy", "update")
LAUNCHES = 8
BLOCK = 256


def _buffers(kind: str, footprint: int) -> int:
    """How many buffers the kernel touches: its footprint splits over them."""
    return 2 if kind == "copy" else 1


def _launcher(kind: str, footprint: int):
    """A function that launches ``kind`` once over ``footprint`` bytes."""
    import cudakit
    from cudakit import cuda

    k = cudakit.load(SOURCE, options=["-O3"])
    n = footprint // _buffers(kind, footprint) // 16
    grid = (-(-n // BLOCK),)

    def zeros(nbytes):
        d = cuda.mem_alloc(nbytes)
        cuda.memset_d8(d, 0, nbytes)
        return d

    x = zeros(16 * n)
    if kind == "read":
        sink = zeros(4)
        return lambda: k["read"](x, np.int64(n), sink, grid=grid, block=(BLOCK,))
    if kind == "copy":
        y = zeros(16 * n)
        return lambda: k["copy"](x, y, np.int64(n), grid=grid, block=(BLOCK,))
    return lambda: k["update"](x, np.int64(n), grid=grid, block=(BLOCK,))


def launch_all() -> None:
    """Every kind and footprint, :data:`LAUNCHES` launches each, in that order (for ncu)."""
    from cudakit import cuda

    for kind in KINDS:
        for footprint in FOOTPRINTS:
            go = _launcher(kind, footprint)
            for _ in range(LAUNCHES):
                go()
            cuda.Context.synchronize()


def time_all() -> dict:
    """Per kind and footprint, the median event time of one launch among 10 back to back."""
    out: dict = {}
    for kind in KINDS:
        for footprint in FOOTPRINTS:
            ms = back_to_back_ms(_launcher(kind, footprint))
            out.setdefault(kind, {})[str(footprint)] = ms
            print(f"{kind:7s} {footprint / MIB:6.0f} MiB {ms * 1e3:8.2f} us", flush=True)
    return out


def parse(raw: str, times: dict | None = None) -> dict:
    """ncu's CSV (one row per launch and metric, in launch order) as the fixture: per kind,
    the footprints and the DRAM bytes read and written per byte of footprint (median of the
    launches after the first two), with ncu's and the events' times.

    >>> rows = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"']
    >>> for i in range(len(KINDS) * len(FOOTPRINTS) * LAUNCHES):
    ...     rows += [f'"{i}","k","dram__bytes_read.sum","byte","{MIB}"',
    ...              f'"{i}","k","dram__bytes_write.sum","byte","0"',
    ...              f'"{i}","k","gpu__time_duration.sum","usecond","5"']
    >>> parse("\\n".join(rows))["read"]["read_share"][:2]
    [0.5, 0.25]
    """
    launches = ncu_launches(raw)
    if len(launches) != len(KINDS) * len(FOOTPRINTS) * LAUNCHES:
        raise ValueError(f"expected {len(KINDS) * len(FOOTPRINTS) * LAUNCHES} launches in the "
                         f"ncu output, found {len(launches)}")
    out: dict = {}
    for k, kind in enumerate(KINDS):
        curve: dict = {"bytes": list(FOOTPRINTS), "read_share": [], "write_share": [],
                       "ncu_us": []}
        for f, footprint in enumerate(FOOTPRINTS):
            first = (k * len(FOOTPRINTS) + f) * LAUNCHES
            steady = launches[first + 2:first + LAUNCHES]
            for key, metric in (("read_share", "dram__bytes_read.sum"),
                                ("write_share", "dram__bytes_write.sum")):
                curve[key].append(round(statistics.median(r[metric] for r in steady)
                                        / footprint, 4))
            curve["ncu_us"].append(round(statistics.median(
                r["gpu__time_duration.sum"] for r in steady) / 1e3, 3))
        if times:
            curve["event_us"] = [round(times[kind][str(fp)] * 1e3, 3) for fp in FOOTPRINTS]
        out[kind] = curve
    return out


#: per kernel: the share of its footprint it writes, and the parts of it that it reads and
#: that it writes (the update reads and writes all of it)
BY_SHARE = (("read", 0.0, 1.0, 0.0), ("copy", 0.5, 0.5, 0.5), ("update", 1.0, 1.0, 1.0))


def device_entry(fixture: dict, l2_bytes: int) -> dict:
    """The fixture as a device's ``l2_relaunch`` (``cudakit.predict.device.read_relaunch``):
    footprints over the L2's size, and per kernel the DRAM bytes read over the bytes it reads
    and written over the bytes it writes (the kernel that writes nothing takes the copy's
    write-backs); capped at 1, rounded to 3 places.

    >>> curve = {"bytes": [1, 2], "read_share": [0.0, 0.5], "write_share": [0.0, 0.5]}
    >>> e = device_entry({"kinds": {"read": curve, "copy": curve, "update": curve}}, 2)
    >>> e["footprint_l2"], e["read_miss"][1], e["write_back"][0]
    ([0.5, 1.0], [0.0, 1.0], [0.0, 1.0])
    """
    kinds = fixture["kinds"]
    x = [round(b / l2_bytes, 4) for b in kinds["read"]["bytes"]]
    reads, writes = [], []
    for kind, _, read, write in BY_SHARE:
        curve = kinds[kind]
        reads.append([round(min(v / read, 1.0), 3) for v in curve["read_share"]])
        curve, write = (curve, write) if write else (kinds["copy"], 0.5)
        writes.append([round(min(v / write, 1.0), 3) for v in curve["write_share"]])
    return {"footprint_l2": x, "read_miss": reads, "write_back": writes}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launch", action="store_true", help="launch everything (under ncu)")
    parser.add_argument("--time", action="store_true", help="time every launch (events)")
    parser.add_argument("--parse", nargs="+", metavar="FILE", help="ncu's CSV [times JSON]")
    parser.add_argument("--device-entry", nargs=2, metavar=("FIXTURE", "L2_BYTES"),
                        help="print the fixture as a device file's l2_relaunch")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.launch:
        launch_all()
        return
    if args.device_entry:
        fixture = json.loads(Path(args.device_entry[0]).read_text())
        emit_json(device_entry(fixture, int(args.device_entry[1])))
        return
    if args.time:
        result = time_all()
    else:
        times = json.loads(Path(args.parse[1]).read_text()) if len(args.parse) > 1 else None
        result = parse(Path(args.parse[0]).read_text(), times)
        result = {"device": gpu_line(), "launches_per_size": LAUNCHES, "kinds": result}
    emit_json(result, args.out)


if __name__ == "__main__":
    main()
