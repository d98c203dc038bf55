"""A second device row for issue 19: Harris's published reduction times on the GeForce 8800 GTX
against ``cudakit.predict(..., device="8800GTX")``.

    python -m benchmarks.model_g80 [--json FILE]

Mark Harris's "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007) times the whole reduction
of 2^22 integers (every pass, until one sum is left) on a G80 (GeForce 8800 GTX, 16 SMs at
1.35 GHz, 86.4 GB/s) for his kernels 1-7; lab 10's reduce0 ... reduce6 are those kernels
(written for today's GPUs: 256 threads per block where Harris used 128, ``__syncwarp()`` in the
unrolled warp). Each kernel's passes are predicted as lab 10 launches them (the lab's own source,
read from the notebook) and summed. The device's figures are published ones
(``cudakit/predict/devices/g80.json``, every entry with its source); nothing is fitted to
Harris's times. What the model leaves out on this GPU is said in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import nbformat
import numpy as np

LAB = Path(__file__).resolve().parents[1] / "labs" / "10_reduction.ipynb"
N = 1 << 22
BLOCK = 256
# Harris's table: kernel -> ms for 2^22 ints on the 8800 GTX (his kernels 1-7)
HARRIS_MS = {"reduce0": 8.054, "reduce1": 3.456, "reduce2": 1.722, "reduce3": 0.965,
             "reduce4": 0.536, "reduce5": 0.381, "reduce6": 0.268}
# elements per block, and whether the kernel takes its shared memory at launch (as lab 10)
LAUNCH = {"reduce0": (1, True), "reduce1": (1, True), "reduce2": (1, True),
          "reduce3": (2, True), "reduce4": (2, True), "reduce5": (2, False),
          "reduce6": (2, False)}


def lab_source(kernel: str) -> str:
    """The ``%%cuda`` cell of lab 10 that defines ``kernel`` (without the magic line)."""
    nb = nbformat.read(LAB, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("%%cuda") and \
                f"void {kernel}(" in cell.source:
            return cell.source.split("\n", 1)[1]
    raise KeyError(f"{LAB.name} defines no kernel {kernel}")


def predict_reduction(kernel: str, device: str) -> float:
    """The predicted time of all passes of ``kernel`` over N integers, ms."""
    import cudakit
    from cudakit import occupancy

    source = lab_source(kernel)
    per_block, dynamic = LAUNCH[kernel]
    per_block *= BLOCK
    cap = None
    if kernel == "reduce6":  # one wave of blocks, as lab 10 sizes it for the device at hand;
        # 16 registers per thread is assumed (CUDA 13 cannot compile for compute capability 1.x)
        spec = cudakit.predict.load(device)
        resident = occupancy.calculate(spec.compute_capability, BLOCK,
                                       registers_per_thread=16,
                                       shared_memory_per_block=BLOCK * 4)
        cap = resident.active_blocks_per_sm * spec.sm_count
    data, partial = np.zeros(N, np.int32), np.zeros(-(-N // per_block), np.int32)
    other = np.zeros_like(partial)
    source_array, total, count = data, 0.0, N
    while True:
        blocks = -(-count // per_block)
        if cap is not None:
            blocks = min(blocks, cap)
        p = cudakit.predict(source, kernel, grid=(blocks,), block=(BLOCK,),
                            shared=BLOCK * 4 if dynamic else 0,
                            args=[source_array, partial, np.uint32(count)], device=device)
        total += p.ms
        if blocks == 1:
            return total
        source_array, partial, other, count = partial, other, partial, blocks


def compare(device: str = "8800GTX") -> dict:
    rows = []
    for kernel, published in HARRIS_MS.items():
        predicted = predict_reduction(kernel, device)
        rows.append({"kernel": kernel, "harris_ms": published, "predicted_ms": predicted,
                     "error_pct": 100 * (predicted / published - 1)})
    errors = [abs(r["error_pct"]) for r in rows]
    order = sorted(HARRIS_MS, key=HARRIS_MS.get) == sorted(
        HARRIS_MS, key=lambda k: next(r["predicted_ms"] for r in rows if r["kernel"] == k))
    return {"device": device, "n": N, "block": BLOCK, "rows": rows,
            "median_abs_error_pct": statistics.median(errors),
            "share_within_30pct": sum(e <= 30 for e in errors) / len(errors),
            "same_order": order}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="8800GTX")
    parser.add_argument("--json", default=None, metavar="FILE")
    options = parser.parse_args(argv)
    result = compare(options.device)
    print(f"| kernel | Harris, {options.device} (ms) | predicted (ms) | error |")
    print("|---|---|---|---|")
    for r in result["rows"]:
        print(f"| {r['kernel']} | {r['harris_ms']:.3f} | {r['predicted_ms']:.3f} | "
              f"{r['error_pct']:+.0f}% |")
    print(f"\nmedian |error| {result['median_abs_error_pct']:.0f}%, within +-30%: "
          f"{result['share_within_30pct']:.0%}, predicted order = Harris's order: "
          f"{result['same_order']}")
    if options.json:
        Path(options.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
