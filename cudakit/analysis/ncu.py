"""``cudakit.profile``: the same report as ``analyze``, from Nsight Compute's measured counters.

The launch runs in a child process (:func:`cudakit.launcher.run_in_subprocess`) under
``ncu``, which collects the memory metrics and the per-instruction source counters; ncu's CSV
pages are then read back: ``--page details`` for the totals, ``--page source`` (SASS rows under each
CUDA line, thanks to ``-lineinfo``) for ``by_line``.

>>> rows = read_raw_csv('"ID","Kernel Name","Metric Name","Metric Value"\\n'
...                     '"0","k","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","1,024"\\n')
>>> rows
[('k', {'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum': 1024})]
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import CudakitError, NoDeviceError
from .report import NCU_METRICS, AccessStats, Report, totals

SPACES = {"Global": "global", "Shared": "shared"}
OPS = {"Load": "ld", "Store": "st"}


def _number(text: str) -> int:
    text = text.replace(",", "").strip()
    return int(float(text)) if text not in ("", "-", "n/a") else 0


def read_raw_csv(text: str) -> list[tuple[str, dict[str, int]]]:
    """ncu ``--csv`` metrics (one row per metric) → per profiled launch: (kernel, metrics)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    launches: dict[int, tuple[str, dict[str, int]]] = {}
    for row in csv.DictReader(lines):
        name = row["Kernel Name"].split("(")[0]
        metrics = launches.setdefault(int(row["ID"]), (name, {}))[1]
        metrics[row["Metric Name"]] = _number(row["Metric Value"])
    return [launches[k] for k in sorted(launches)]


def read_source_csv(text: str, source: str = "") -> list[tuple[str, list[AccessStats]]]:
    """ncu ``--page source --print-source cuda,sass --csv`` → per launch: (kernel, accesses).

    The counters come from each CUDA line's own row (one access per line and memory space);
    the SASS rows listed under it (some twice, long lines abridged with ``...``) tell which
    operations the line performs and how many of its memory instructions ran.
    """
    lines = source.splitlines()
    out: list[tuple[str, list[AccessStats]]] = []
    header: list[str] = []
    current: dict[str, AccessStats] = {}
    seen: set[str] = set()
    for row in csv.reader(io.StringIO(text)):
        if len(row) == 2 and row[0] == "Function Name":
            out.append((row[1], []))
        elif row and row[0] == "Line No":
            header = row
        elif out and header and len(row) == len(header):
            cell = dict(zip(header[4:], row[4:], strict=True))
            if row[0].isdigit():
                current, seen = _line_accesses(out[-1], int(row[0]), cell, lines), set()
            elif cell.get("Address Space") in SPACES and row[2] not in seen:
                seen.add(row[2])
                _note_instruction(current, cell)
    return out


def _line_accesses(launch, line: int, cell: dict, lines: list[str]) -> dict[str, AccessStats]:
    spaces = cell.get("Address Space", "-")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    found = {}
    for name, space in SPACES.items():
        if name not in spaces:
            continue
        a = AccessStats(launch[0], line, 0, space, "", 0, source=text)
        if space == "global":
            a.cache_lines = _number(cell.get("L1 Tag Requests Global", "0"))
            a.cost = _number(cell.get("L2 Theoretical Sectors Global", "0"))
            a.ideal = _number(cell.get("L2 Theoretical Sectors Global Ideal", "0"))
        else:
            a.cost = _number(cell.get("L1 Wavefronts Shared", "0"))
            a.ideal = _number(cell.get("L1 Wavefronts Shared Ideal", "0"))
        launch[1].append(a)
        found[space] = a
    return found


def _note_instruction(current: dict[str, AccessStats], cell: dict) -> None:
    a = current.get(SPACES[cell["Address Space"]])
    if a is None:
        return
    op = OPS.get(cell["Access Operation"], "atom")
    a.op = op if a.op in ("", op) else "ld+st"
    a.size = max(a.size, _number(cell.get("Access Size", "0")) // 8)
    a.requests += _number(cell.get("Instructions Executed", "0"))


def measured_report(kernel: str, metrics: dict[str, int], accesses: list[AccessStats],
                    grid=None) -> Report:
    """A :class:`Report` whose totals are ncu's own counters (derived figures added)."""
    merged = {**totals(accesses), **metrics}
    for op, word in (("ld", "load"), ("st", "store")):
        req = metrics.get(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum", 0)
        sec = metrics.get(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum", 0)
        merged[f"global_{word}_requests"] = req
        merged[f"global_{word}_bytes_moved"] = sec * 32
        if req:
            merged[f"global_{word}_sectors_per_request"] = sec / req
        ideal = sum(a.ideal for a in accesses if a.space == "global" and a.op == op)
        if ideal and sec:
            merged[f"global_{word}_efficiency_pct"] = 100.0 * ideal / sec
    return Report(kernel, accesses, origin="Nsight Compute", metrics=merged, grid=grid)


def find_ncu() -> str:
    """Path of Nsight Compute's command-line tool, or NoDeviceError saying what is missing."""
    found = shutil.which("ncu") or next(
        (p for p in ("/usr/local/cuda/bin/ncu",) if os.access(p, os.X_OK)), None)
    if not found:
        raise NoDeviceError(
            "cudakit.profile needs Nsight Compute's 'ncu' (part of the CUDA toolkit) on PATH; "
            "it was not found. On a machine without a GPU use cudakit.analyze (the emulator).")
    return found


def _check(output: str, kernel: str) -> None:
    if "ERR_NVGPUCTRPERM" in output:
        raise CudakitError(
            "ncu may not read the GPU's performance counters for this user (ERR_NVGPUCTRPERM): "
            "run as an administrator, or load the driver with "
            "NVreg_RestrictProfilingToAdminUsers=0.")
    if "No kernels were profiled" in output:
        raise CudakitError(f"ncu profiled no launch of '{kernel}':\n{output[-2000:]}")


def profile(source_or_module, kernel_name: str, *, grid, block, args=(), shared: int = 0,
            timeout: float = 300) -> Report:
    """Run one launch under Nsight Compute on the GPU and report its measured memory traffic."""
    from ..backend import gpu_available
    from ..launcher import run_in_subprocess
    from .analyze import source_of

    ncu = find_ncu()
    if not gpu_available():
        raise NoDeviceError("cudakit.profile needs a CUDA GPU and PyCUDA; none is available here")
    source = source_of(source_or_module)
    with tempfile.TemporaryDirectory(prefix="cudakit-ncu-") as tmp:
        report_file = Path(tmp) / "profile"
        wrapper = [ncu, "--metrics", ",".join(NCU_METRICS), "--section", "SourceCounters",
                   "--import-source", "yes", "--kernel-name", kernel_name, "--launch-count", "1",
                   "-f", "-o", str(report_file)]
        result = run_in_subprocess(source, kernel_name, grid=grid, block=block, args=list(args),
                                   shared=shared, wrapper=wrapper, timeout=timeout)
        _check(result.stdout + result.stderr, kernel_name)
        if not result.ok:
            output = (result.stdout + result.stderr)[-2000:]
            raise CudakitError(f"the profiled launch failed:\n{output}")
        rep = f"{report_file}.ncu-rep"
        raw = _export(ncu, rep, ["--page", "details", "--csv", "--print-units", "base"])
        lines = _export(ncu, rep, ["--page", "source", "--csv", "--print-source", "cuda,sass"])
    launches, by_line = read_raw_csv(raw), read_source_csv(lines, source)
    if not launches:
        raise CudakitError(f"ncu reported no metrics for '{kernel_name}'")
    accesses = by_line[0][1] if by_line else []
    return measured_report(kernel_name, launches[0][1], accesses, grid=grid)


def _export(ncu: str, report: str, page: list[str]) -> str:
    done = subprocess.run([ncu, "-i", report, *page], capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode:
        raise CudakitError(f"ncu could not read its report: {done.stderr[-1000:]}")
    return done.stdout
