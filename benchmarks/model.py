"""Measured against predicted: every recorded timed region of the labs, replayed through the model.

    python -m benchmarks.model                      # benchmarks/fixtures/h100_lab_launches.jsonl.gz
    python -m benchmarks.model RECORDING --json out.json

The recording is what ``tools/gpu-check --record`` wrote on the H100 (one JSON line per
``cudakit.benchmark``/``cudakit.timer`` region, :mod:`cudakit.record`). Lines of the GPU engine
only are used (``--engine emu`` reads an emulator recording, for tests). Regions are grouped:
identical regions of a lab (same operations and sizes) count once, measured as the median of
their measurements (times more than a quarter apart timed other data: separate regions).
Each region is replayed: every launch through ``cudakit.predict`` with zero-filled NumPy
buffers of the recorded allocation sizes (one array per allocation, so
aliasing stays; pointers inside an allocation as ``Pointer(array, offset)``), every copy
through ``cudakit.predict_copy``; the region's prediction is ``cudakit.predict.sequence_ms``
of them: one after another on the device, none before the host has issued it (with
``cudakit.benchmark``'s head start for its regions; operations of different streams
overlap where they use different engines). Left out, and counted: host-clock
benchmarks, regions with no recorded operation (CuPy, NumPy) or with dropped operations.

The table gives lab, cell, kernels, configuration, measured and predicted ms and the error;
the summary the figures of issue 19: median |error|, the share within +-30%, and for each
sequence (the regions timed in one notebook cell) whether the predicted order of the times is
the measured order (pairs closer than the measurement's own spread are ties), with the share
of pairs in order.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import open_text
from cudakit.predict.replay import Replay

FIXTURE = Path(__file__).parent / "fixtures" / "h100_lab_launches.jsonl.gz"


@dataclass
class Region:
    """One distinct timed region of a lab, with all its measurements."""

    label: str
    cell: int | None
    kind: str
    ops: list[dict]
    sources: dict[str, str]
    measured: list[float] = field(default_factory=list)
    fastest: list[float] = field(default_factory=list)  # each recording's min (or its time)
    predicted: float | None = None
    bound: str = ""  # of the operation that takes longest
    terms: dict = field(default_factory=dict)  # that operation's breakdown, ms
    note: str = ""

    @property
    def measured_ms(self) -> float:
        return statistics.median(self.measured)

    @property
    def spread_ms(self) -> float:
        """The measurement's own spread: its median less the fastest run recorded."""
        return max(self.measured_ms - min(self.fastest, default=self.measured_ms), 0.0)

    @property
    def error(self) -> float | None:
        if self.predicted is None:
            return None
        return (self.predicted - self.measured_ms) / self.measured_ms * 100

    def kernels(self) -> str:
        names: list[str] = []
        for op in self.ops:
            if op["op"] not in ("launch", "memcpy"):  # events and waits
                continue
            name = op["kernel"] if op["op"] == "launch" else f"memcpy {op['direction']}"
            if names and names[-1].split(" x")[0] == name:
                count = int(names[-1].rsplit(" x", 1)[1]) + 1 if " x" in names[-1] else 2
                names[-1] = f"{name} x{count}"
            else:
                names.append(name)
        return ", ".join(names)

    def config(self) -> str:
        launches = [op for op in self.ops if op["op"] == "launch"]
        parts = []
        if launches:
            first = launches[0]
            grid = "x".join(str(d) for d in first["grid"])
            block = "x".join(str(d) for d in first["block"])
            parts.append(f"<<<{grid}, {block}" + (f", {first['shared']}" if first["shared"]
                                                   else "") + ">>>")
        copies = sum(op["bytes"] for op in self.ops if op["op"] == "memcpy")
        if copies:
            parts.append(f"{copies / 2**20:.1f} MiB copied")
        streams = {op["stream"] for op in self.ops if op["op"] in ("launch", "memcpy")}
        if len(streams) > 1:
            parts.append(f"{len(streams)} streams")
        return " ".join(parts)


def read_lines(path: Path) -> Iterable[dict]:
    """The JSON lines of a recording (.jsonl or .jsonl.gz)."""
    with open_text(path) as f:
        for number, text in enumerate(f, 1):
            if text.strip():
                try:
                    yield json.loads(text)
                except json.JSONDecodeError as exc:
                    raise SystemExit(f"{path}:{number}: not a JSON line ({exc})") from None


#: lines of the same operations whose times differ by more than this part are kept apart:
#: they did not time the same work (lab 09 runs one kernel on four patterns of flags, 0.087
#: and 0.167 ms), and the recording holds no data to tell them apart
SAME_WORK = 0.25


def group(lines: Iterable[dict], engine: str = "gpu") -> tuple[list[Region], dict[str, int]]:
    """Distinct regions in order of first appearance, and how many lines were left out, why.

    Lines of one lab with the same operations are one region, measured as the median of
    their times, unless their GPU times differ by more than :data:`SAME_WORK`: then each
    such group is a region of its own, noted as running on other data (predicted on zeros).
    Emulator times are the host's, too noisy to tell data apart: they are never split."""
    regions: dict[tuple, list[Region]] = {}
    order: list[Region] = []
    skipped: dict[str, int] = {}

    def skip(why: str) -> None:
        skipped[why] = skipped.get(why, 0) + 1

    for line in lines:
        if "header" in line:
            continue
        if line.get("engine") != engine:
            skip(f"engine {line.get('engine')}")
        elif line.get("clock") == "host":
            skip("host-clock benchmark")
        elif not line.get("ops"):
            skip("no recorded operation (CuPy, NumPy or host work)")
        elif line.get("ops_dropped"):
            skip("operations dropped")
        else:
            ms = line["median_ms"] if "median_ms" in line else line["ms"]
            same = regions.setdefault((line["label"], json.dumps(line["ops"], sort_keys=True)),
                                      [])
            region = next((r for r in same if engine != "gpu"
                           or abs(ms / r.measured_ms - 1) <= SAME_WORK), None)
            if region is None:
                region = Region(line["label"], line.get("cell"), line["kind"], line["ops"],
                                line.get("sources", {}))
                same.append(region)
                order.append(region)
                if len(same) > 1:
                    for r in same:
                        r.note = "the same operations timed on other data (predicted on zeros)"
            region.measured.append(ms)
            region.fastest.append(line.get("min_ms", ms))
    return order, skipped


def replay(region: Region, replayer: Replay) -> None:
    """Predict ``region`` (its ``predicted`` and ``note``); a failure is noted, not raised."""
    try:
        result = replayer.region(region.ops, region.sources,
                                 head_start=region.kind == "benchmark")
    except Exception as exc:  # one region's failure is reported, the others still count
        region.note = f"prediction failed: {type(exc).__name__}: {str(exc)[:200]}"
        return
    region.predicted = result.ms
    longest = max(result.parts, key=lambda part: part[1].ms)[1] if result.parts else None
    region.bound = getattr(longest, "bound", "")
    region.terms = {k: v for k, v in getattr(longest, "breakdown", {}).items() if v > 0}
    if result.streams > 1:
        region.note = "; ".join(filter(None, [region.note, f"{result.streams} streams: "
                                              "overlap by engine (SMs, copy engines)"]))


#: the sequences issue 19 names, each: a name, its lab, the cells its regions come from and
#: which of those regions (a test on the kernels' names); within them, the regions that
#: work on the same data (the same largest buffer) are one sequence
NAMED = (
    ("reduce0 ... reduce7", "10_reduction", (6, 9, 12, 16, 19, 22, 27, 30), "reduce"),
    ("the transpose variants", "11_transpose", (6, 9, 12, 15, 20, 21, 28), ""),
    ("the matmul steps", "12_matmul", (7, 10, 15, 19, 22, 27, 31, 32), ""),
    ("the stencil variants", "21_stencil", (17, 22, 26), ""),
    ("the stream counts", "08_streams", (15, 16), "memcpy htod, work"),
)


def largest_buffer(region: Region) -> int:
    """The size of the largest buffer a region's operations use (its problem size)."""
    sizes = [arg["size"] for op in region.ops for arg in op.get("args", ()) if "alloc" in arg]
    sizes += [op["bytes"] for op in region.ops if op["op"] == "memcpy"]
    return max(sizes, default=0)


def in_order(label: str, cell, rs: list[Region]) -> dict:
    """Is the predicted order of ``rs`` the measured one?

    Two regions whose measured times differ by no more than the larger of their own spreads
    (median less the fastest run recorded) are a tie: the measurement does not order them, so
    the pair is left out. Every other pair must come out in the measured order, strictly;
    ``out_of_order`` names those that do not, with their times.
    """
    measured = [r.measured_ms for r in rs]
    predicted = [r.predicted for r in rs]
    pairs = [(i, j) for i in range(len(rs)) for j in range(i + 1, len(rs))
             if abs(measured[i] - measured[j]) > max(rs[i].spread_ms, rs[j].spread_ms)]
    wrong = [(i, j) for i, j in pairs
             if (measured[i] - measured[j]) * (predicted[i] - predicted[j]) <= 0]
    agree = len(pairs) - len(wrong)
    return {"lab": label, "cell": cell, "regions": len(rs), "pairs": len(pairs),
            "ties": len(rs) * (len(rs) - 1) // 2 - len(pairs), "same_order": agree == len(pairs),
            "pairs_in_order": agree / len(pairs) if pairs else 1.0,
            "out_of_order": [[f"{rs[k].kernels()} {rs[k].config()}: measured "
                              f"{measured[k]:.4g}, predicted {predicted[k]:.4g} ms" for k in pair]
                             for pair in wrong]}


def named_sequences(regions: list[Region]) -> list[dict]:
    """The sequences of :data:`NAMED`: per name, per problem size, the order (:func:`in_order`).

    >>> named_sequences([])
    []
    """
    result = []
    for name, lab, cells, kernels in NAMED:
        groups: dict[int, list[Region]] = {}
        for r in regions:
            if r.label == lab and r.cell in cells and r.predicted is not None \
                    and r.kernels().startswith(kernels):
                groups.setdefault(largest_buffer(r), []).append(r)
        for size, rs in groups.items():
            if len(rs) >= 2:
                result.append({"name": name, "bytes": size,
                               "kernels": [r.kernels() for r in rs],
                               **in_order(lab, sorted({r.cell for r in rs}), rs)})
    return result


def sequences(regions: list[Region]) -> list[dict]:
    """For each notebook cell with two or more predicted regions: is the order the same
    (:func:`in_order`)?"""
    cells: dict[tuple, list[Region]] = {}
    for r in regions:
        if r.predicted is not None and r.cell is not None:
            cells.setdefault((r.label, r.cell), []).append(r)
    return [in_order(label, cell, rs) for (label, cell), rs in cells.items() if len(rs) >= 2]


def summary(regions: list[Region], skipped: dict[str, int]) -> dict:
    errors = [abs(r.error) for r in regions if r.error is not None]
    seqs, named = sequences(regions), named_sequences(regions)
    return {
        "regions": len(regions),
        "predicted": len(errors),
        "failed": sum(r.predicted is None for r in regions),
        "median_abs_error_pct": statistics.median(errors) if errors else None,
        "share_within_30pct": sum(e <= 30 for e in errors) / len(errors) if errors else None,
        "sequences": len(seqs),
        "sequences_in_order": sum(s["same_order"] for s in seqs),
        "named_sequences": len(named),
        "named_sequences_in_order": sum(s["same_order"] for s in named),
        "pairs_in_order": (sum(s["pairs_in_order"] * s["pairs"] for s in seqs)
                           / max(sum(s["pairs"] for s in seqs), 1)),
        "skipped_lines": skipped,
    }


def table(regions: list[Region]) -> str:
    rows = ["| lab | cell | kernels | config | measured ms | predicted ms | error | note |",
            "|---|---|---|---|---|---|---|---|"]
    for r in regions:
        predicted = "-" if r.predicted is None else f"{r.predicted:.4f}"
        error = "-" if r.error is None else f"{r.error:+.0f}%"
        kernels = r.kernels()
        kernels = kernels if len(kernels) <= 60 else kernels[:57] + "..."
        rows.append(f"| {r.label} | {r.cell} | {kernels} | {r.config()} | "
                    f"{r.measured_ms:.4f} | {predicted} | {error} | {r.note} |")
    return "\n".join(rows)


def compare(path: Path, engine: str = "gpu", device: str = "H100", predictor=None,
            labs: list[str] | None = None) -> dict:
    """Group, replay and summarise a recording; the dict ``--json`` writes. ``labs``: only
    the regions of labs whose name starts with one of these (``"08"``, ``"21_stencil"``)."""
    regions, skipped = group(read_lines(path), engine)
    if labs:
        regions = [r for r in regions if r.label.startswith(tuple(labs))]
    replayer = Replay(device, predictor)
    for region in regions:
        replay(region, replayer)
    launches = sorted((s for name, s in replayer.seconds if not name.startswith("memcpy")),
                      reverse=True)
    return {
        "recording": str(path), "engine": engine, "device": device,
        "summary": {**summary(regions, skipped),
                    "launches_predicted": len(launches),
                    "slowest_prediction_s": launches[0] if launches else None,
                    "predictions_over_5s": sum(s > 5 for s in launches)},
        "prediction_seconds": sorted(replayer.seconds, key=lambda p: -p[1]),
        "sequences": sequences(regions),
        "named_sequences": named_sequences(regions),
        "regions": [{"lab": r.label, "cell": r.cell, "kind": r.kind, "kernels": r.kernels(),
                     "config": r.config(), "measured_ms": r.measured_ms,
                     "measurements": len(r.measured), "predicted_ms": r.predicted,
                     "error_pct": r.error, "bound": r.bound, "terms": r.terms,
                     "note": r.note}
                    for r in regions],
        "table": table(regions),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recording", nargs="?", default=str(FIXTURE))
    parser.add_argument("--engine", default="gpu", choices=("gpu", "emu"),
                        help="which lines to use (emu: only to test this script)")
    parser.add_argument("--device", default="H100")
    parser.add_argument("--labs", nargs="+", default=None, metavar="LAB",
                        help="only these labs (name prefixes: 08 21_stencil); a subset's "
                             "figures are not the issue's figures")
    parser.add_argument("--json", default=None, metavar="FILE")
    parser.add_argument("--labs-json", default=None, metavar="FILE",
                        help="write the labs' stored comparison (labs/h100_predicted.json)")
    options = parser.parse_args(argv)
    path = Path(options.recording)
    if not path.exists():
        raise SystemExit(f"benchmarks.model: no recording at {path} (tools/gpu-check --record)")
    if options.labs and options.labs_json:
        raise SystemExit("benchmarks.model: --labs-json needs every lab (leave out --labs)")
    result = compare(path, options.engine, options.device, labs=options.labs)
    print(result["table"])
    s = result["summary"]
    median, within = s["median_abs_error_pct"], s["share_within_30pct"]
    print(f"\n{s['predicted']} of {s['regions']} distinct regions predicted "
          f"({s['failed']} failed); median |error| "
          f"{'-' if median is None else f'{median:.1f}%'}, within +-30%: "
          f"{'-' if within is None else f'{within:.0%}'}; sequences in measured order: "
          f"{s['sequences_in_order']} of {s['sequences']} (pairs in order: "
          f"{s['pairs_in_order']:.0%}); the issue's sequences in measured order: "
          f"{s['named_sequences_in_order']} of {s['named_sequences']}; "
          f"left out: {s['skipped_lines']}")
    for seq in result["named_sequences"]:
        for pair in seq["out_of_order"]:
            print(f"out of order ({seq['name']}, {seq['bytes']} bytes): " + " / ".join(pair))
    if s["launches_predicted"]:
        print(f"CPU time per launch predicted (this machine): {s['launches_predicted']} "
              f"launches, the slowest {s['slowest_prediction_s']:.1f} s, "
              f"{s['predictions_over_5s']} over 5 s")
    if options.json:
        Path(options.json).write_text(json.dumps(result, indent=1) + "\n")
    if options.labs_json:
        keep = ("lab", "cell", "kernels", "config", "measured_ms", "predicted_ms", "bound")
        stored = {"device": options.device, "recording": path.name,
                  "regions": [{k: r[k] for k in keep} for r in result["regions"]]}
        Path(options.labs_json).write_text(json.dumps(stored, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
