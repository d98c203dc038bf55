"""The tensor cores' rate per ``mma.sync`` shape: how much of a tensor class's measured
instruction (``benchmarks/tensor_probe.py``) each shape's SASS instruction is worth.

ptxas turns each ``mma.sync`` into one SASS tensor instruction, but they are not all the same
size, and their rates do not follow their multiply-adds (an f16 m16n8k8, half an m16n8k16's
work, runs at 1.5 times its rate, not twice; a DMMA.16x8x4 at DMMA.8x8x4's rate with twice its
work). Each warp runs ``TRIPS`` rounds of ``ACC`` independent ``mma.sync`` on fragments kept in
registers, timed with ``clock64()`` per warp and SM, in 4 and 8 blocks of 4 warps per SM; the
rate is the best of the two (as ``tensor_probe``: :func:`benchmarks.tensor_probe.spans`).
``cudakit/emu/mma.py``'s ``UNITS`` are these rates' ratios to the unit of each class.

    python -m benchmarks.mma_probe --record OUT.json   # on the GPU
    python -m benchmarks.mma_probe                     # here: the stored rates and units

Written by hand: a microbenchmark.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import back_to_back_ms, gpu_line, open_text, probe_main
from benchmarks.tensor_probe import spans

STORED = Path(__file__).parent / "fixtures" / "h200_mma_probe.json"
TRIPS = 4096
ACC = 4
#: name: (the mma.sync, registers of A, of B, of C, constraint of A and B, of C)
KINDS = {
    "f16_m16n8k16": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, "r", "f"),
    "f16_m16n8k8": ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, "r", "f"),
    "tf32_m16n8k8": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, "r", "f"),
    "tf32_m16n8k4": ("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 2, 1, 4, "r", "f"),
    "s8_m16n8k32": ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4, "r", "r"),
    "s8_m16n8k16": ("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 2, 1, 4, "r", "r"),
    "s8_m8n8k16": ("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32", 1, 1, 2, "r", "r"),
    "f64_m8n8k4": ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, "d", "d"),
    "f64_m16n8k4": ("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", 2, 1, 4, "d", "d"),
    "f64_m16n8k8": ("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", 4, 2, 4, "d", "d"),
    "f64_m16n8k16": ("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", 8, 4, 4, "d", "d"),
}
#: each class's unit: the shape whose SASS instruction ``tensor_probe`` measured
UNIT = {"f16": "f16_m16n8k16", "tf32": "tf32_m16n8k4", "s8": "s8_m16n8k16",
        "f64": "f64_m8n8k4"}
SETUPS = (4, 8)  # blocks of 128 threads per SM


def _kernel(name: str, opcode: str, na: int, nb: int, nc: int, ab: str, c: str) -> str:
    ctype = {"r": "unsigned", "f": "float", "d": "double"}[c]
    atype = {"r": "unsigned", "d": "double"}[ab]
    d_ops = ",".join(f"%{i}" for i in range(nc))
    a_ops = ",".join(f"%{nc + i}" for i in range(na))
    b_ops = ",".join(f"%{nc + na + i}" for i in range(nb))
    inputs = ", ".join([f'"{ab}"(a[{i}])' for i in range(na)] +
                       [f'"{ab}"(b[{i}])' for i in range(nb)])
    body = "".join(
        f'asm volatile("{opcode} {{{d_ops}}}, {{{a_ops}}}, {{{b_ops}}}, {{{d_ops}}};" : '
        + ", ".join(f'"+{c}"(acc[{q}][{i}])' for i in range(nc)) + f" : {inputs});\n"
        for q in range(ACC))
    return f"""
extern "C" __global__ void {name}(const {atype} *src, double *out, int trips, long long *cycles)
{{
    {atype} a[{na}], b[{nb}];
    for (int i = 0; i < {na}; ++i) a[i] = src[i];
    for (int i = 0; i < {nb}; ++i) b[i] = src[i];
    {ctype} acc[{ACC}][{nc}] = {{}};
    __syncwarp();
    long long start = clock64();
    for (int s = 0; s < trips; ++s) {{
{body}    }}
    __syncwarp();
    long long stop = clock64();
    double sum = 0;
    for (int q = 0; q < {ACC}; ++q) sum += (double)acc[q][0];
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (sum == 12345.0) out[warp] = sum;  // never: keeps the products
    unsigned sm;
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    if (threadIdx.x % 32 == 0) {{
        cycles[3 * warp] = start;
        cycles[3 * warp + 1] = stop;
        cycles[3 * warp + 2] = sm;
    }}
}}
"""


SOURCE = "".join(_kernel(name, *kind) for name, kind in KINDS.items())


def record(out: Path) -> None:
    """Time every kind in both setups on this GPU and write the rows to ``out``."""
    import cudakit
    from cudakit import cuda

    kernels = cudakit.load(SOURCE, options=["-O3"])
    sms = cudakit.device_info().multiprocessors
    src = cuda.gpuarray.zeros(64, np.float64)  # zeros: no overflow in any type
    rows = []
    for name in KINDS:
        for per_sm in SETUPS:
            blocks = sms * per_sm
            warps = blocks * 4
            out_buf = cuda.gpuarray.zeros(warps, np.float64)
            cycles = cuda.gpuarray.zeros(3 * warps, np.int64)

            def launch(kernel=kernels[name], out_buf=out_buf, cycles=cycles, blocks=blocks):
                kernel(src.gpudata, out_buf.gpudata, np.int32(TRIPS), cycles, grid=(blocks,),
                       block=(128,))
            ms = back_to_back_ms(launch, batch=1, warmup=3, repeat=10)
            rows.append({"kind": name, "blocks_per_sm": per_sm, "warps": warps, "ms": ms,
                         **spans(cycles.get().reshape(-1, 3))})
    out.write_text(json.dumps({"device": gpu_line(), "sms": sms, "trips": TRIPS,
                               "accumulators": ACC, "rows": rows}, indent=1))


def rates(stored: dict) -> dict[str, float]:
    """Per kind: its SASS instructions per clock per SM, the best of the setups."""
    out: dict[str, float] = {}
    for row in stored["rows"]:
        rate = row["warps_per_sm_max"] * stored["trips"] * stored["accumulators"] / \
            row["sm_cycles_median"]
        out[row["kind"]] = max(out.get(row["kind"], 0.0), rate)
    return out


def units(stored: dict) -> dict[str, float]:
    """Per kind: its class's measured instructions one of its instructions is worth (the
    unit's rate over its own)."""
    r = rates(stored)
    return {kind: r[UNIT[kind.split("_")[0]]] / rate for kind, rate in r.items()}


def show() -> None:
    with open_text(STORED) as f:
        stored = json.load(f)
    print(f"{stored['device']}: mma.sync instructions per clock per SM, and what each is "
          "worth in its class's unit")
    print("| kind | per clock per SM | units |")
    print("|---|---|---|")
    u = units(stored)
    for kind, rate in rates(stored).items():
        print(f"| {kind} | {rate:.3f} | {u[kind]:.3f} |")


def main(argv=None) -> None:
    probe_main(argv, __doc__, record, show)


if __name__ == "__main__":
    main()
