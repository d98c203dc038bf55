"""What the GPU executes of the seventh and eighth held-out batches' kernels, per SASS opcode
and per call of a slow path, by Nsight Compute's source page: the counts behind the
emulator's expansions of IEEE double division and 64-bit integer division
(``cudakit.emu.counts``, session 31).

    python -m benchmarks.ncu_opcodes --record OUT.json     # on the GPU (nvcc and ncu)
    python -m benchmarks.ncu_opcodes --record OUT.json --eighth   # the eighth batch's
    python -m benchmarks.ncu_opcodes [FIXTURE]              # here: the stored counts

``--record`` builds ``fresh/monte_carlo_main.cu`` (one kernel of ``fresh/monte_carlo.cu``,
2^20 threads of 256 trials, seed 1) and runs, per kernel, ``ncu --section SourceCounters
--page source --print-source sass --csv -k KERNEL -c 1``: one row per SASS instruction with
the warp instructions it executed. Summed per opcode (the mnemonic before its first dot),
with the instructions executed inside each function called (``CALL.REL``: in ``pi_mrg``
IEEE double division's slow path, ``__cuda_sm20_div_rn_f64_full``) and the calls made.
The fixture ``fixtures/h200_monte_carlo_opcodes.json`` is that run on an H200 (2026-11-29);
``fixtures/h200_eighth_batch_opcodes.json`` the same for the eighth held-out batch's kernels
(``peer_times.EIGHTH``, launched once each through PyCUDA: ``--eighth``).
Written by hand: it sums Nsight Compute's per-instruction rows.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

FRESH = Path(__file__).resolve().parent / "fresh"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h200_monte_carlo_opcodes.json"
EIGHTH_FIXTURE = FIXTURE.with_name("h200_eighth_batch_opcodes.json")
KERNELS = ("pi_mrg", "pi_xorwow", "pi_philox")
_OPCODE = re.compile(r"\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")
_CALL = re.compile(r"CALL\.REL\S*\s+(0x[0-9a-f]+)")


def opcodes(text: str) -> dict:
    """Warp instructions executed per opcode in ncu's source-page CSV ``text`` (``total``,
    ``opcodes``), those executed from the first address a ``CALL.REL`` targets onwards
    (``called``; ptxas puts called functions after the kernel's ``EXIT``), and the calls.

    >>> rows = ('"Address","Source","Instructions Executed"\\n'
    ...         '"0x10","DFMA R2, R4, R6, R2","64"\\n"0x20","@P0 CALL.REL.NOINC 0x40","8"\\n'
    ...         '"0x30","EXIT","32"\\n"0x40","MUFU.RCP64H R3, R5","8"\\n')
    >>> counts = opcodes(rows)
    >>> counts["opcodes"], counts["total"], counts["called"], counts["calls"]
    ({'DFMA': 64, 'EXIT': 32, 'CALL': 8, 'MUFU': 8}, 112, 8, 8)
    """
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith('"Address"'))
    rows = list(csv.DictReader(lines[start:]))
    executed = [(int(r["Address"], 16), r["Source"],
                 int(float(r["Instructions Executed"].replace(",", "") or 0))) for r in rows]
    targets = [int(m.group(1), 16) for _, source, _ in executed
               if (m := _CALL.search(source))]
    first_called = min(targets, default=None)
    per_opcode: Counter = Counter()
    called = calls = 0
    for address, source, n in executed:
        if (m := _OPCODE.match(source)) is None:
            continue
        per_opcode[m.group(1)] += n
        if first_called is not None and address >= first_called:
            called += n
        if _CALL.search(source):
            calls += n
    return {"total": sum(per_opcode.values()), "opcodes": dict(per_opcode.most_common()),
            "called": called, "calls": calls}


_NCU = ["ncu", "--section", "SourceCounters", "--page", "source", "--print-source", "sass",
        "--csv", "-c", "1"]
#: the eighth held-out batch's launches, each run once by ``peer_times.record`` for ncu
_PEER = ("from benchmarks import peer_times as pt; pt.record('{tmp}/t.json', warmup=0, "
         "repeat=1, batch=1, launches=[x for x in pt.EIGHTH if x.kernel == '{kernel}'])")
EIGHTH = ("kepler", "normalize3", "term_frequency", "bucket_of")


def record(out: Path, eighth: bool = False) -> None:
    """Run Nsight Compute's source page on each of :data:`KERNELS` (built into the
    harness), or with ``eighth`` on each kernel of :data:`EIGHTH` as ``peer_times`` launches
    it (PyCUDA)."""
    import sys

    from benchmarks.common import gpu_line

    with tempfile.TemporaryDirectory() as tmp:
        if eighth:
            commands = {k: [sys.executable, "-c", _PEER.format(tmp=tmp, kernel=k)]
                        for k in EIGHTH}
        else:
            exe = Path(tmp) / "monte_carlo"
            subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-o", str(exe),
                            str(FRESH / "monte_carlo_main.cu")], check=True)
            commands = {k: [str(exe), k] for k in KERNELS}
        kernels = {}
        for name, command in commands.items():
            done = subprocess.run([*_NCU, "-k", name, *command], capture_output=True,
                                  text=True, timeout=300, check=True)
            kernels[name] = opcodes(done.stdout)
            print(name, kernels[name]["total"], flush=True)
    how = "python -m benchmarks.ncu_opcodes --record" + (" --eighth" if eighth else "")
    out.write_text(json.dumps({"header": {"device": gpu_line(), "how": how},
                               "kernels": kernels}, indent=1) + "\n")


def table(path: Path) -> str:
    """The stored counts as a Markdown table: per kernel, the total and the largest opcodes."""
    kernels = json.loads(path.read_text())["kernels"]
    out = ["| kernel | warp instructions | in called functions | calls | largest opcodes |",
           "|---|---|---|---|---|"]
    for name, k in kernels.items():
        top = ", ".join(f"{op} {n / 1e6:.0f} M" for op, n in list(k["opcodes"].items())[:6])
        out.append(f"| `{name}` | {k['total'] / 1e6:.0f} M | {k['called'] / 1e6:.0f} M | "
                   f"{k['calls'] / 1e6:.1f} M | {top} |")
    return "\n".join(out)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixture", nargs="?", default=str(FIXTURE))
    parser.add_argument("--record", metavar="JSON", help="run Nsight Compute on this GPU")
    parser.add_argument("--eighth", action="store_true",
                        help="the eighth held-out batch (peer_times.EIGHTH) instead")
    args = parser.parse_args(argv)
    if args.record:
        record(Path(args.record), eighth=args.eighth)
    else:
        print(table(Path(args.fixture)))


if __name__ == "__main__":
    main()
