"""Tests of cudakit.sanitize: the parser against compute-sanitizer output recorded on the H100.

The recorded outputs below were made on the GPU machine by this file itself::

    python tests/test_sanitizer.py capture OUT.json

which runs each sample kernel under ``compute-sanitizer --tool racecheck|memcheck|synccheck``
(through PyCUDA, so no cudakit code is involved) and writes the raw text. Recorded on
2026-11-22, NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0; the host backtrace frames
("Host Frame" lines) were dropped to keep this file short.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudakit
from cudakit.sanitizer import SanitizerReport, parse_output, sanitize

SAMPLES = {
    "racy": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
""",
    "fixed": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    __syncthreads();
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
""",
    "oob": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = 2 * x[i];
}
""",
    "barrier": r"""
extern "C" __global__ void block_sum(const int *x, int *out)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 256 + t];
    if (t < 128)
        __syncthreads();
    if (t == 0)
        out[blockIdx.x] = s[0] + s[255];
}
""",
}
TOOLS = {"racy": "racecheck", "fixed": "racecheck", "oob": "memcheck", "barrier": "synccheck"}

RECORDED = {
    "racy": (
        "========= COMPUTE-SANITIZER\n"
        "========= Error: Race reported between Write access at block_sum+0x190 in kernel.cu:6\n"
        "=========     and Read access at block_sum+0x130 in kernel.cu:9 [2048 hazards]\n"
        "=========     and Read access at block_sum+0x140 in kernel.cu:9 [896 hazards]\n"
        "=========     and Read access at block_sum+0x150 in kernel.cu:9 [384 hazards]\n"
        "=========     and Read access at block_sum+0x160 in kernel.cu:9 [256 hazards]\n"
        "=========     and Read access at block_sum+0x170 in kernel.cu:9 [64 hazards]\n"
        "=========     and Read access at block_sum+0x180 in kernel.cu:9 [32 hazards]\n"
        "=========     and Read access at block_sum+0x1b0 in kernel.cu:9 [128 hazards]\n"
        "========= \n"
        "========= Error: Race reported between Write access at block_sum+0x1c0 in kernel.cu:9\n"
        "=========     and Read access at block_sum+0x140 in kernel.cu:9 [512 hazards]\n"
        "=========     and Read access at block_sum+0x150 in kernel.cu:9 [384 hazards]\n"
        "=========     and Read access at block_sum+0x1b0 in kernel.cu:9 [128 hazards]\n"
        "=========     and Read access at block_sum+0x1f0 in kernel.cu:9 [16 hazards]\n"
        "========= \n"
        "========= Error: Race reported between Write access at block_sum+0x200 in kernel.cu:9\n"
        "=========     and Read access at block_sum+0x150 in kernel.cu:9 [128 hazards]\n"
        "=========     and Read access at block_sum+0x1f0 in kernel.cu:9 [16 hazards]\n"
        "========= \n"
        "========= RACECHECK SUMMARY: 3 hazards displayed (3 errors, 0 warnings)\n"
    ),
    "fixed": (
        "========= COMPUTE-SANITIZER\n"
        "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    ),
    "oob": (
        "========= COMPUTE-SANITIZER\n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (248,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800fe0 is out of bounds\n"
        "=========     and is 1 bytes after the nearest allocation at 0x7fde10800000 of s"
        "ize 4,064 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (249,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800fe4 is out of bounds\n"
        "=========     and is 5 bytes after the nearest allocation at 0x7fde10800000 of s"
        "ize 4,064 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (250,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800fe8 is out of bounds\n"
        "=========     and is 9 bytes after the nearest allocation at 0x7fde10800000 of s"
        "ize 4,064 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (251,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800fec is out of bounds\n"
        "=========     and is 13 bytes after the nearest allocation at 0x7fde10800000 of "
        "size 4,064 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (252,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800ff0 is out of bounds\n"
        "=========     and is 16 bytes before the nearest allocation at 0x7fde10801000 of"
        " size 4,096 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (253,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800ff4 is out of bounds\n"
        "=========     and is 12 bytes before the nearest allocation at 0x7fde10801000 of"
        " size 4,096 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (254,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800ff8 is out of bounds\n"
        "=========     and is 8 bytes before the nearest allocation at 0x7fde10801000 of "
        "size 4,096 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at block_sum+0x90 in kernel.cu:5\n"
        "=========     by thread (255,0,0) in block (3,0,0)\n"
        "=========     Access to 0x7fde10800ffc is out of bounds\n"
        "=========     and is 4 bytes before the nearest allocation at 0x7fde10801000 of "
        "size 4,096 bytes\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "========= \n"
        "========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to \"unspecified l"
        "aunch failure\" on CUDA API call to cuCtxSynchronize.\n"
        "=========     Saved host backtrace up to driver entry point at error\n"
        "========= \n"
        "========= Target application returned an error\n"
        "========= ERROR SUMMARY: 9 errors\n"
    ),
    "barrier": (
        "========= COMPUTE-SANITIZER\n"
        "========= ERROR SUMMARY: 0 errors\n"
    ),
}


def test_race_report_names_the_write_and_read_lines():
    findings = parse_output("racecheck", RECORDED["racy"])
    assert [f.kind for f in findings] == ["race"] * 3
    assert findings[0].lines == [6, 9, 9, 9, 9, 9, 9, 9]
    assert findings[0].hazards == 2048 + 896 + 384 + 256 + 64 + 32 + 128
    assert sum(f.hazards for f in findings) == 3808 + 1040 + 144


def test_fixed_kernel_is_clean():
    assert parse_output("racecheck", RECORDED["fixed"]) == []


def test_out_of_bounds_reads_are_grouped_with_the_launch_failure_apart():
    findings = parse_output("memcheck", RECORDED["oob"])
    assert [(f.kind, f.count) for f in findings] == [("invalid access", 8), ("api error", 1)]
    first = findings[0]
    assert first.message == "Invalid __global__ read of size 4 bytes"
    assert first.lines == [5]
    assert "by thread (248,0,0) in block (3,0,0)" in first.details
    assert not any(d.startswith("Host Frame") for d in first.details)


def test_divergent_barrier_passes_synccheck_on_sm90():
    # recorded fact: on sm_90 synccheck does not flag `if (t < 128) __syncthreads();`
    assert parse_output("synccheck", RECORDED["barrier"]) == []


def test_report_quotes_the_kernel_lines():
    findings = parse_output("racecheck", RECORDED["racy"])
    text = str(SanitizerReport("racecheck", "compute-sanitizer", findings, SAMPLES["racy"]))
    assert text.startswith("racecheck (compute-sanitizer): 3 problems")
    assert "line 6: s[t] = x[blockIdx.x * 256 + t];" in text
    assert "line 9: s[t] += s[t + stride];" in text
    clean = SanitizerReport("racecheck", "compute-sanitizer", [], SAMPLES["fixed"])
    assert clean.clean and str(clean) == "racecheck (compute-sanitizer): no problems found"


def test_unknown_tool_is_refused():
    with pytest.raises(cudakit.CudakitError, match="initcheck"):
        parse_output("initcheck", "")
    with pytest.raises(cudakit.CudakitError, match="one of memcheck, racecheck, synccheck"):
        sanitize("block_sum", grid=(1,), block=(1,), tool="leakcheck")


def _inputs(case: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(1).integers(0, 1000, 4 * 256).astype(np.int32)
    if case == "oob":
        return x[:-8], np.zeros(4 * 256, np.int32)
    return x, np.zeros(4, np.int32)


@pytest.mark.parametrize(("case", "kinds", "lines"), [
    ("racy", ["race"], [6, 9]), ("fixed", [], []), ("oob", ["invalid access"], [5])])
def test_sanitize_on_this_engine_finds_what_the_sample_holds(case, kinds, lines):
    kernel = cudakit.load(SAMPLES[case])["block_sum"]
    x, out = _inputs(case)
    report = sanitize(kernel, x, out, grid=(4,), block=(256,), tool=TOOLS[case],
                      source=SAMPLES[case])
    assert [f.kind for f in report.findings][:1] == kinds
    assert all(line in report.findings[0].lines for line in lines)
    if case == "fixed":
        assert report.clean
        assert report.outputs[1].tolist() == x.reshape(4, 256).sum(axis=1).tolist()


def test_emulator_flags_the_divergent_barrier():
    from cudakit.sanitizer import _on_emulator

    kernel = cudakit.emu.SourceModule(SAMPLES["barrier"], no_extern_c=True).get_function(
        "block_sum")
    x, out = _inputs("barrier")
    report = _on_emulator(kernel, (x, out), (4, 1, 1), (256, 1, 1), 0, "synccheck",
                          SAMPLES["barrier"])
    assert [(f.kind, f.lines) for f in report.findings] == [("barrier", [8])]


@pytest.mark.gpu
@pytest.mark.parametrize("case", list(TOOLS))
def test_gpu_run_matches_the_recording(case):
    x, out = _inputs(case)
    report = sanitize("block_sum", x, out, grid=(4,), block=(256,), tool=TOOLS[case],
                      source=SAMPLES[case])
    expected = parse_output(TOOLS[case], RECORDED[case])
    # which racing pairs racecheck lists varies from run to run; the kinds and lines do not
    assert {f.kind for f in report.findings} == {f.kind for f in expected}
    assert {n for f in report.findings for n in f.lines} == {n for f in expected for n in f.lines}
    if case == "fixed":
        assert report.outputs[1].tolist() == x.reshape(4, 256).sum(axis=1).tolist()


def _launch(case: str) -> None:
    """Run one sample on the GPU through PyCUDA (the process compute-sanitizer watches)."""
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule

    mod = SourceModule(SAMPLES[case], no_extern_c=True, options=["-lineinfo"])
    blocks = 4
    x = np.arange(blocks * 256, dtype=np.int32)
    out = np.zeros(blocks * 256 if case == "oob" else blocks, dtype=np.int32)
    d_x = drv.to_device(x[: x.size - 8] if case == "oob" else x)
    d_out = drv.mem_alloc(out.nbytes)
    mod.get_function("block_sum")(d_x, d_out, grid=(blocks, 1), block=(256, 1, 1))
    drv.Context.synchronize()


def _capture(path: Path) -> None:
    """Run every sample under its tool; write {case: {tool, exit, stdout, stderr}} as JSON."""
    records = {}
    for case, tool in TOOLS.items():
        run = subprocess.run(
            ["compute-sanitizer", "--tool", tool, sys.executable, __file__, "launch", case],
            capture_output=True, text=True, timeout=60)
        records[case] = {"tool": tool, "exit": run.returncode, "stdout": run.stdout,
                         "stderr": run.stderr}
    path.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "launch":
        _launch(sys.argv[2])
    else:
        _capture(Path(sys.argv[2]))
