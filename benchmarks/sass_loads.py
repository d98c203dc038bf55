"""Where ptxas puts the shared-memory loads: the waits of every lab kernel's SASS, as
``cuobjdump`` shows it on the H100's machine, for :mod:`cudakit.predict.sass` (which reads
the same schedule with ``nvdisasm``) and ``tests/predict/test_sass.py``.

    python -m benchmarks.sass_loads --dump raw.json.gz       # there: needs cuobjdump
    python -m benchmarks.sass_loads --waits raw.json.gz      # the fixture, from that dump
    python -m benchmarks.sass_loads                          # the table, from the fixture

``--dump`` compiles each distinct source of the H100 recording
(``benchmarks/fixtures/h100_lab_launches.jsonl.gz``) as ``cudakit.compile`` does (``nvcc
-cubin -arch=sm_90 -lineinfo`` and the cell's options), with the probe kernels of
:mod:`benchmarks.lone_warp` and the held-out kernels of :mod:`benchmarks.peer_times`, and
keeps ``cuobjdump -sass`` of each (1.1 MB gzipped: not stored). ``--waits`` keeps, per lab
kernel with shared loads, :func:`cudakit.predict.sass.read_waits`' count: the loads and,
per wait, the loads pending and the instructions since the first of them
(``fixtures/h100_sass_waits.json``). The table gives per kernel the median distance from a
shared load to its first use and the cycles a lone warp waits per load on the H100 (the
measured latency, 4 wavefronts per load). Session 12: ``matmul_vec`` 3 instructions,
``matmul_dbuf`` 36.5, the same loop in PTX. Written by hand: it joins a disassembler's
listing to the labs' recording.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.model import FIXTURE, group, read_lines
from cudakit.predict.sass import read_waits

WAITS = Path(__file__).parent / "fixtures" / "h100_sass_waits.json"


def sources(path: Path = FIXTURE) -> dict[str, tuple[str, list[str]]]:
    """Each distinct (source, options) of the recording, by a key: hash and options."""
    regions, _ = group(read_lines(path))
    out: dict[str, tuple[str, list[str]]] = {}
    for region in regions:
        for op in region.ops:
            if op["op"] == "launch" and op["source"] in region.sources:
                options = list(op.get("options") or [])
                out[" ".join([op["source"], *options])] = (region.sources[op["source"]],
                                                           options)
    return out


def dump(out: Path) -> None:
    """``cuobjdump -sass`` of every source (see the module's docstring), gzipped JSON."""
    from benchmarks import peer_times
    from benchmarks.lone_warp import SRC

    todo = sources()
    todo["lone_warp -O3"] = (SRC, ["-O3"])
    for launch in peer_times.FIFTH + peer_times.SEVENTH + peer_times.EIGHTH:
        todo.setdefault(" ".join([launch.file, *launch.options]),
                        (launch.source, list(launch.options)))
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key, (text, options) in todo.items():
            cu, cubin = Path(tmp) / "k.cu", Path(tmp) / "k.cubin"
            cu.write_text(text)
            made = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-lineinfo", *options,
                                   "-o", str(cubin), str(cu)], capture_output=True, text=True)
            if made.returncode:
                result[key] = {"error": made.stderr[-2000:]}
                continue
            sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True,
                                  text=True)
            result[key] = {"sass": sass.stdout, "options": options}
            print(key, len(sass.stdout), flush=True)
    with gzip.open(out, "wt") as f:
        json.dump(result, f)


def waits(raw: Path) -> dict:
    """The fixture: per lab source key, per kernel with shared loads, its waits."""
    with gzip.open(raw, "rt") as f:
        data = json.load(f)
    labs = sources()
    out = {}
    for key, entry in data.items():
        key = key.strip()  # the dump of session 12 wrote "hash " for a source without options
        if key not in labs:
            continue
        kernels = {name: {"loads": w.loads, "events": [list(e) for e in w.events]}
                   for name, w in read_waits(entry.get("sass", "")).items() if w.loads}
        if kernels:
            out[key] = kernels
    return out


def table(fixture: dict, latency: float = 28.6, wavefronts: float = 4.0) -> str:
    from cudakit.predict.sass import SharedWaits

    rows = ["| kernel | LDS | waits | median instructions load to use | lone-warp cycles per LDS |",
            "|---|---|---|---|---|"]
    for kernels in fixture.values():
        for name, w in kernels.items():
            waits_ = SharedWaits(w["loads"], tuple(tuple(e) for e in w["events"]))
            distance = statistics.median(d for _, d in waits_.events) if waits_.events else "-"
            rows.append(f"| {name} | {waits_.loads} | {len(waits_.events)} | {distance} | "
                        f"{waits_.exposed(latency, wavefronts):.1f} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", metavar="RAW")
    parser.add_argument("--waits", metavar="RAW")
    args = parser.parse_args(argv)
    if args.dump:
        dump(Path(args.dump))
    elif args.waits:
        WAITS.write_text(json.dumps(waits(Path(args.waits)), indent=0, sort_keys=True) + "\n")
        print(f"wrote {WAITS}")
    else:
        print(table(json.loads(WAITS.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
