"""What the H100 executes for each kernel of the labs, by Nsight Compute, against what the
emulator counts in PTX: the instruction counts behind issue-bound predictions.

    ncu --csv --metrics $(python -m benchmarks.sass_counts --metrics) \\
        python -m benchmarks.sass_counts --launch > ncu.csv          # on the GPU
    python -m benchmarks.sass_counts --compare ncu.csv                # here: the table
    python -m benchmarks.sass_counts --compare benchmarks/fixtures/h100_sass_counts.ncu.csv.gz
    python -m benchmarks.sass_counts --compare benchmarks/fixtures/h100_pipes.ncu.csv.gz
                                          # the same, with the issue slots used (--pipe-metrics)

The fixture is that CSV from the H100 (2026-11-24; Nsight Compute locks the SM clock at its
base, 1.6 GHz, so its durations are not the labs' times: only the counts are used). A second
CSV, ``fixtures/h100_pipes.ncu.csv.gz`` (session 9), has the same launches with the
instructions per pipe (``smsp__inst_executed_pipe_*``), the pipes' busy shares and the share
of issue slots used (``smsp__issue_active.avg.pct_of_peak_sustained_active``, the table's
last column), measured with :data:`PIPE_METRICS`.

``--launch`` runs, once each, the first recorded launch of every kernel of every lab in the
H100 recording (``benchmarks/fixtures/h100_lab_launches.jsonl.gz``) on zero-filled buffers of
the recorded sizes with the recorded scalars, as ``benchmarks/model.py`` replays them through
the model. ``--compare`` reads Nsight Compute's CSV and prints, per launch, the warp
instructions executed (``smsp__inst_executed.sum``) against the emulator's issued warp
instructions for the same launch (``cudakit.predict``'s counts), the SM clock during the
kernel and its duration. Written by hand: it joins two tools' outputs that know nothing of
each other.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

import numpy as np

from benchmarks.common import ncu_number, open_text

METRICS = ("smsp__inst_executed.sum", "gpu__time_duration.sum",
           "sm__cycles_elapsed.avg.per_second", "smsp__cycles_active.avg",
           "dram__bytes.sum", "smsp__inst_executed_op_shared_ld.sum")


#: the second fixture's metrics: per pipe, and how busy the schedulers and pipes were
PIPE_METRICS = ("smsp__inst_executed.sum", "smsp__inst_executed_pipe_alu.sum",
                "smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_fmaheavy.sum",
                "smsp__inst_executed_pipe_fmalite.sum", "smsp__inst_executed_pipe_lsu.sum",
                "smsp__inst_executed_pipe_adu.sum", "smsp__inst_executed_pipe_cbu.sum",
                "smsp__inst_executed_pipe_xu.sum", "smsp__inst_executed_pipe_uniform.sum",
                "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active",
                "smsp__issue_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum",
                "smsp__cycles_active.avg", "sm__cycles_elapsed.avg.per_second")


def first_launches(path: Path) -> list[tuple[str, dict, dict]]:
    """(lab, launch op, sources) of the first recorded launch of each (lab, kernel)."""
    from benchmarks.model import group, read_lines

    regions, _ = group(read_lines(path))
    seen, out = set(), []
    for region in regions:
        for op in region.ops:
            if op["op"] == "launch" and (region.label, op["kernel"]) not in seen:
                seen.add((region.label, op["kernel"]))
                out.append((region.label, op, region.sources))
    return out


def recorded_arguments(op: dict, cuda, buffers: dict) -> list:
    """The arguments of recorded launch ``op`` on the GPU: the recorded scalars, and device
    pointers into zero-filled buffers of the recorded sizes, one per allocation, made with
    ``cuda`` (``cudakit.cuda`` or ``pycuda.driver``) into ``buffers`` (the caller frees them)."""
    from cudakit.predict.replay import scalar

    args = []
    for arg in op["args"]:
        if "alloc" not in arg:
            args.append(scalar(arg))
            continue
        if arg["alloc"] not in buffers:
            size = max(arg["size"], arg["offset"] + 16)
            buffers[arg["alloc"]] = cuda.mem_alloc(size)
            cuda.memset_d8(buffers[arg["alloc"]], 0, size)
        args.append(np.uint64(int(buffers[arg["alloc"]]) + arg["offset"]))
    return args


def launch_op(op: dict, sources: dict) -> None:
    """One recorded launch, once, on the GPU: zero-filled buffers of the recorded sizes
    (one per allocation), the recorded scalars; freed after it has finished."""
    import cudakit
    from cudakit import cuda

    module = cudakit.load(sources[op["source"]], options=list(op.get("options") or []))
    buffers: dict[int, object] = {}
    try:
        args = recorded_arguments(op, cuda, buffers)
        module[op["kernel"]](*args, grid=tuple(op["grid"]), block=tuple(op["block"]),
                             shared=op["shared"])
        cuda.Context.synchronize()
    finally:
        for buffer in buffers.values():
            buffer.free()


def launch_all(path: Path) -> None:
    """Each first launch once, on the GPU, in the order of :func:`first_launches`."""
    for label, op, sources in first_launches(path):
        try:
            launch_op(op, sources)
            print(f"launched {label} {op['kernel']}", file=sys.stderr, flush=True)
        except Exception as exc:  # one kernel's failure leaves the others
            print(f"failed {label} {op['kernel']}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)


def read_ncu(text: str) -> list[dict]:
    """Nsight Compute's ``--csv`` rows grouped by launch: [{kernel, metric: value}]."""
    start = text.find('"ID"')
    rows = csv.DictReader(io.StringIO(text[start:]))
    launches: dict[str, dict] = {}
    for row in rows:
        entry = launches.setdefault(row["ID"], {"kernel": row["Kernel Name"].split("(")[0]})
        value = ncu_number(row["Metric Value"])
        if value is not None:
            entry[row["Metric Name"]] = value
    return list(launches.values())


def read_ncu_file(path: Path) -> list[dict]:
    """:func:`read_ncu` of a CSV file, gzipped (``.gz``) or not."""
    with open_text(path) as f:
        return read_ncu(f.read())


def compare(path: Path, ncu_csv: Path) -> str:
    """The table: per launch, SASS warp instructions executed against the PTX count."""
    from cudakit.predict.replay import Replay

    measured = read_ncu_file(ncu_csv)
    launches = first_launches(path)
    replay = Replay("H100")
    rows = ["| lab | kernel | config | SASS warp instr. | emulator (PTX) | PTX / SASS | "
            "SM clock GHz | ms | issue slots used |", "|---|---|---|---|---|---|---|---|---|"]
    by_kernel: dict[str, list[dict]] = {}
    for m in measured:
        by_kernel.setdefault(m["kernel"], []).append(m)
    ratios = []
    for label, op, sources in launches:
        found = by_kernel.get(op["kernel"])
        if not found:
            continue
        m = found.pop(0)
        counts = replay.op(op, sources, {}).counts
        ptx = counts["issued_warp_instructions"]
        sass = m.get("smsp__inst_executed.sum", 0.0)
        if sass > 0:
            ratios.append(ptx / sass)
        active = m.get("smsp__issue_active.avg.pct_of_peak_sustained_active")
        issued = "-" if active is None else f"{active:.0f} %"
        grid = "x".join(map(str, op["grid"]))
        block = "x".join(map(str, op["block"]))
        rows.append(f"| {label} | {op['kernel']} | <<<{grid}, {block}>>> | {sass:.4g} | "
                    f"{ptx:.4g} | {ptx / sass if sass else float('nan'):.2f} | "
                    f"{m.get('sm__cycles_elapsed.avg.per_second', 0) / 1e9:.2f} | "
                    f"{m.get('gpu__time_duration.sum', 0) / 1e6:.4f} | {issued} |")
    if ratios:
        r = np.array(ratios)
        rows.append(f"\n{r.size} launches: PTX / SASS median {np.median(r):.2f}, geometric "
                    f"mean {np.exp(np.log(r).mean()):.2f}; within 0.8-1.25: "
                    f"{np.mean((r >= 0.8) & (r <= 1.25)):.0%}")
    return "\n".join(rows)


def main(argv=None) -> int:
    from benchmarks.model import FIXTURE

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recording", default=str(FIXTURE))
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--metrics", action="store_true", help="print the metrics for ncu")
    what.add_argument("--pipe-metrics", action="store_true",
                      help="print the second fixture's metrics for ncu")
    what.add_argument("--launch", action="store_true", help="run the launches (on a GPU)")
    what.add_argument("--compare", metavar="NCU_CSV", help="the table against ncu's CSV")
    options = parser.parse_args(argv)
    if options.metrics or options.pipe_metrics:
        print(",".join(METRICS if options.metrics else PIPE_METRICS))
    elif options.launch:
        launch_all(Path(options.recording))
    else:
        print(compare(Path(options.recording), Path(options.compare)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
