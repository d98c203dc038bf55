"""What the H100's L2 and DRAM move for chosen launches, by Nsight Compute, against the
traffic the model counts for them (``cudakit.predict``'s counts).

    ncu --csv --metrics $(python -m benchmarks.ncu_probe --metrics) \\
        python -m benchmarks.ncu_probe --launch [SELECTOR ...] > probe.csv   # on the GPU
    python -m benchmarks.ncu_probe --compare probe.csv [SELECTOR ...]         # here
    python -m benchmarks.ncu_probe --compare \\
        benchmarks/fixtures/h100_partial_stores.ncu.csv.gz                     # the fixture
    ncu --csv --page raw $(python -m benchmarks.ncu_probe --sections) \\
        python -m benchmarks.ncu_probe --launch $(python -m benchmarks.ncu_probe --waits-selectors)
    python -m benchmarks.ncu_probe --waits benchmarks/fixtures/h100_period_waits.ncu.csv.gz

A selector names one launch:

* ``LAB:KERNEL[:GRID]``: the first launch of that kernel in the H100 recording of the labs
  (``benchmarks/fixtures/h100_lab_launches.jsonl.gz``), with that grid if given
  (``11_transpose:transpose_padded:94x129x1``), on zero-filled buffers of the recorded sizes;
* ``probe:NAME``: one of :data:`PROBES`, kernels that store parts of 32-byte sectors in
  the patterns the labs' slow kernels have (a warp writing a column; a sector never
  completed; a sector read before it is partly written), each on 256 MiB (more than the
  L2) and on 16 MiB (less).

Without selectors, the launches are :data:`SELECTORS`. The fixture
``benchmarks/fixtures/h100_partial_stores.ncu.csv.gz`` is ncu's CSV of them on the H100
(2026-11-24, with the extra metrics of :data:`EXTRA`). ``--compare`` joins ncu's CSV (in the
order of the selectors) with the model's counts of the same launches: DRAM bytes read and
written, L2 sectors read and written.

``--waits`` reads ncu's raw page (every metric of :data:`SECTIONS`) for :data:`WAITS`, the
launches whose loads wait for DRAM while most of their sectors hit in L1 (lab 21's stencils),
with neighbours that do not (copies, transposes, the matmul steps at 1000^3): how long they
took, the DRAM bandwidth they drew, their L1 hit rate, and the cycles a warp stalled on loads
per instruction issued, against the model's time. The fixture
``benchmarks/fixtures/h100_period_waits.ncu.csv.gz`` is that page on the H100 (2026-11-28,
clocks locked to base by ncu).
Written by hand: it joins two tools' outputs that know nothing of each other.
"""

from __future__ import annotations

import argparse
import csv
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import ncu_number, open_text

METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
           "lts__t_sectors_op_write.sum", "gpu__time_duration.sum", "smsp__inst_executed.sum")

#: measured too for the fixture: L2 lookups of writes and read misses, DRAM sectors
EXTRA = ("lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum",
         "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum",
         "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "dram__sectors_read.sum",
         "dram__sectors_write.sum")

#: the launches of the fixture, in its order
SELECTORS = (
    *(f"probe:{kernel}_{mib}" for mib in (256, 16)
      for kernel in ("column_filled", "sector_head", "rows_filled", "read_then_column")),
    "11_transpose:transpose_naive:256x256x1", "11_transpose:copy:256x256x1",
    "11_transpose:copy:94x129x1", "11_transpose:transpose_padded:94x129x1",
    "11_transpose:transpose_wide:47x65x1", "11_transpose:copy_vec4:12007x1x1",
    "11_transpose:transpose_padded:64x256x1", "11_transpose:copy:64x256x1",
    "03_threads_blocks:scale2d:256x1024x1", "03_threads_blocks:scale2d:2048x128x1",
    "03_threads_blocks:scale2d:8192x32x1", "03_threads_blocks:square_chunks",
    "03_threads_blocks:square_interleaved")

#: launches of ``--waits``: the 2-D stencils with their copy ceiling, the transposes at 256 MiB,
#: the matmul steps at 1000^3
WAITS = ("21_stencil:copy4", "21_stencil:heat2d:64x4096x1", "21_stencil:heat2d_shared:256x1024x1",
         "21_stencil:heat2d_rows:64x512x1", "21_stencil:heat2d_vec4:64x2048x1",
         "11_transpose:copy:256x256x1", "11_transpose:transpose_padded:256x256x1",
         "11_transpose:transpose_vec4:256x256x1", "12_matmul:matmul_dbuf:8x8x1",
         "12_matmul:sgemm:8x8x2", "12_matmul:sgemm_async:8x8x1")
#: the Nsight Compute sections of ``--waits``
SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Chart",
            "WarpStateStats", "Occupancy", "LaunchStats", "SchedulerStats",
            "ComputeWorkloadAnalysis", "InstructionStats")

#: kernels that store parts of sectors; ``n`` floats, 256 threads per block
PROBE_SOURCE = r"""
// each warp stores one float in each of 32 sectors; the block's 8 warps fill them all
extern "C" __global__ void column_filled(float *out, int n)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    long i = (long)blockIdx.x * 256 + lane * 8 + warp;
    if (i < n) out[i] = 1.0f;
}

// each thread stores the first float of a sector; the other 7 are never written
extern "C" __global__ void sector_head(float *out, int n)
{
    long i = ((long)blockIdx.x * 256 + threadIdx.x) * 8;
    if (i < n) out[i] = 1.0f;
}

// coalesced: a warp stores 32 consecutive floats (the reference)
extern "C" __global__ void rows_filled(float *out, int n)
{
    long i = (long)blockIdx.x * 256 + threadIdx.x;
    if (i < n) out[i] = 1.0f;
}

// a warp reads its block's 256 floats (so their sectors are in L2), then stores as
// column_filled does
extern "C" __global__ void read_then_column(float *out, int n)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    long base = (long)blockIdx.x * 256;
    float v = base + threadIdx.x < n ? out[base + threadIdx.x] : 0.0f;
    __syncthreads();
    long i = base + lane * 8 + warp;
    if (i < n) out[i] = v + 1.0f;
}
"""


@dataclass
class Probe:
    kernel: str
    n: int  # floats in the buffer

    @property
    def grid(self) -> tuple:
        per_block = 256 * 8 if self.kernel == "sector_head" else 256
        return (-(-self.n // per_block), 1, 1)


PROBES = {f"{kernel}_{mib}": Probe(kernel, mib << 18)
          for kernel in ("column_filled", "sector_head", "rows_filled", "read_then_column")
          for mib in (256, 16)}


@functools.cache
def _regions() -> list:
    from benchmarks.model import FIXTURE, group, read_lines

    return group(read_lines(FIXTURE))[0]


def lab_launch(selector: str) -> tuple[dict, dict]:
    """The recorded launch op and its sources named by ``LAB:KERNEL[:GRID]``."""
    lab, kernel, *grid = selector.split(":")
    for region in _regions():
        for op in region.ops:
            if op["op"] == "launch" and region.label == lab and op["kernel"] == kernel and (
                    not grid or "x".join(map(str, op["grid"])) == grid[0]):
                return op, region.sources
    raise SystemExit(f"no recorded launch matches {selector!r}")


def probe_launch(name: str) -> tuple[dict, dict]:
    """A probe as a recorded launch op (one buffer, zero-filled) and its source."""
    if name not in PROBES:
        raise SystemExit(f"no probe {name!r}; there are {', '.join(PROBES)}")
    p = PROBES[name]
    op = {"op": "launch", "kernel": p.kernel, "source": "probe", "grid": list(p.grid),
          "block": [256, 1, 1], "shared": 0, "options": [],
          "args": [{"alloc": 0, "offset": 0, "size": p.n * 4},
                   {"type": "int", "value": p.n}]}
    return op, {"probe": PROBE_SOURCE}


def resolve(selector: str) -> tuple[dict, dict]:
    if selector.startswith("probe:"):
        return probe_launch(selector.split(":", 1)[1])
    return lab_launch(selector)


def launch(selectors: list[str]) -> None:
    """Each selected launch once, on the GPU."""
    from benchmarks.sass_counts import launch_op

    for selector in selectors:
        launch_op(*resolve(selector))
        print(f"launched {selector}", file=sys.stderr, flush=True)


def compare(ncu_csv: Path, selectors: list[str]) -> str:
    """Per selector: ncu's DRAM and L2 figures against the model's counts."""
    from benchmarks.sass_counts import read_ncu_file
    from cudakit.predict.replay import Replay

    measured = read_ncu_file(ncu_csv)
    replay = Replay("H100")
    rows = ["| launch | DRAM read MB (ncu / model) | DRAM write MB | L2 read sectors M | "
            "L2 write sectors M | ncu ms (base clock) | model ms |",
            "|---|---|---|---|---|---|---|"]
    for selector, m in zip(selectors, measured, strict=True):
        op, sources = resolve(selector)
        p = replay.op(op, sources, {})
        c = p.counts
        rows.append(
            f"| {selector} | {m.get('dram__bytes_read.sum', 0) / 1e6:.1f} / "
            f"{c['dram_read_bytes'] / 1e6:.1f} | {m.get('dram__bytes_write.sum', 0) / 1e6:.1f} / "
            f"{c['dram_write_bytes'] / 1e6:.1f} | "
            f"{m.get('lts__t_sectors_op_read.sum', 0) / 1e6:.2f} / "
            f"{c['l2_read_bytes'] / 32e6:.2f} | "
            f"{m.get('lts__t_sectors_op_write.sum', 0) / 1e6:.2f} / "
            f"{c['l2_write_bytes'] / 32e6:.2f} | "
            f"{m.get('gpu__time_duration.sum', 0) / 1e6:.4f} | {p.ms:.4f} |")
    return "\n".join(rows)


def read_raw(path: Path) -> list[dict]:
    """ncu's ``--page raw`` CSV (gzipped or not): one {metric: value} per launch, numbers where
    they parse."""
    with open_text(path) as f:
        lines = [line for line in f if not line.startswith("==")]
    rows = list(csv.DictReader(lines))[1:]  # the first row gives the units
    return [{k: v if (number := ncu_number(v)) is None else number for k, v in row.items()}
            for row in rows]


def waits(ncu_csv: Path, selectors: list[str]) -> str:
    """Per launch of :data:`WAITS`: what ncu measured of its waits, and the model's time."""
    from cudakit.predict.replay import Replay

    measured = read_raw(ncu_csv)
    replay = Replay("H100")
    rows = ["| launch | ncu µs (base clock) | DRAM TB/s | L1 hit % | load stalls per issue | "
            "warps active % | model ms | model's bound |", "|---|---|---|---|---|---|---|---|"]
    for selector, m in zip(selectors, measured, strict=True):
        p = replay.op(*resolve(selector), {})
        stalls = m["smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"]
        rows.append(
            f"| {selector} | {m['gpu__time_duration.sum'] / 1e3:.1f} | "
            f"{m['dram__bytes.sum.per_second'] / 1e12:.2f} | "
            f"{m['l1tex__t_sector_hit_rate.pct']:.0f} | {stalls:.1f} | "
            f"{m['sm__warps_active.avg.pct_of_peak_sustained_active']:.0f} | {p.ms:.4f} | "
            f"{p.bound} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--metrics", action="store_true", help="print the metrics for ncu")
    what.add_argument("--launch", action="store_true", help="run the launches (on a GPU)")
    what.add_argument("--compare", metavar="NCU_CSV", help="the table against ncu's CSV")
    what.add_argument("--sections", action="store_true", help="print --section options for ncu")
    what.add_argument("--waits-selectors", action="store_true", help="print WAITS")
    what.add_argument("--waits", metavar="NCU_RAW_CSV", help="the waits table (ncu --page raw)")
    parser.add_argument("selectors", nargs="*")
    options = parser.parse_args(argv)
    selectors = options.selectors or list(SELECTORS)
    if options.metrics:
        print(",".join(METRICS + EXTRA))
    elif options.sections:
        print(" ".join(f"--section {name}" for name in SECTIONS))
    elif options.waits_selectors:
        print(" ".join(WAITS))
    elif options.waits:
        print(waits(Path(options.waits), options.selectors or list(WAITS)))
    elif options.launch:
        launch(selectors)
    else:
        print(compare(Path(options.compare), selectors))
    return 0


if __name__ == "__main__":
    sys.exit(main())
