"""How fast global ``atomicAdd`` goes when a launch's atomics fall on few addresses: each of
2^24 threads adds once, to ``sums[key]``, and the keys cover K words packed together, K words
one per 32-byte sector, or K words one per 128-byte line, drawn at random per thread or the
same for a whole warp; ``float`` and ``unsigned``.

    python -m benchmarks.atomic_spread --record benchmarks/fixtures/h100_atomic_spread.json  # GPU
    python -m benchmarks.atomic_spread            # here: the model's predictions beside them

``--record`` times each pattern with CUDA events (3 warm-up launches, then the median of 10
samples of 5 launches back to back) with CuPy, on the same keys the prediction uses.
Written by hand: it joins a key generator, the GPU's clock and the model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.common import batch_ms, gpu_line, probe_main, probe_row

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "h100_atomic_spread.json"
N = 1 << 24
SOURCE = r"""
extern "C" __global__ void add_float(const int *key, float *sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sums[key[i]], 1.0f);
}
extern "C" __global__ void add_unsigned(const int *key, unsigned *sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&sums[key[i]], 1u);
}
"""
#: (name, words apart, distinct words, per warp: the same key for all lanes)
PATTERNS = [(f"{k} packed", 1, k, False) for k in (1, 4, 32, 64, 256, 4096, 1 << 16, 1 << 20)] \
    + [(f"{k} sectors", 8, k, False) for k in (4, 64, 1024)] \
    + [(f"{k} lines", 32, k, False) for k in (4, 64, 1024, 1 << 16)] \
    + [(f"{k} packed, one per warp", 1, k, True) for k in (1, 64, 4096)]


def keys(spacing: int, distinct: int, per_warp: bool, threads: int = N) -> np.ndarray:
    """Each of ``threads`` threads' word (the same for a warp's 32 when ``per_warp``)."""
    r = np.random.default_rng(19)
    if per_warp:
        return np.repeat(r.integers(0, distinct, threads // 32), 32).astype(np.int32) * spacing
    return r.integers(0, distinct, threads).astype(np.int32) * spacing


def record(path: Path) -> None:
    import cupy

    module = cupy.RawModule(code=SOURCE)
    out = {}
    for name, spacing, distinct, per_warp in PATTERNS:
        key = cupy.asarray(keys(spacing, distinct, per_warp))
        for kind in ("float", "unsigned"):
            sums = cupy.zeros(spacing * distinct, cupy.float32 if kind == "float" else cupy.uint32)
            fn = module.get_function(f"add_{kind}")
            out[f"{kind} {name}"] = batch_ms(
                lambda fn=fn, key=key, sums=sums: fn((N // 256,), (256,),
                                                     (key, sums, np.int32(N))))
            print(f"{kind:8s} {name:28s} {out[f'{kind} {name}']:.4f} ms", flush=True)
    path.write_text(json.dumps({"device": gpu_line(), "threads": N, "ms": out}, indent=1) + "\n")


def compare(path: Path = FIXTURE) -> list[dict]:
    import cudakit

    stored = json.loads(path.read_text())["ms"]
    rows = []
    for name, spacing, distinct, per_warp in PATTERNS:
        key = keys(spacing, distinct, per_warp)
        for kind, dtype in (("float", np.float32), ("unsigned", np.uint32)):
            p = cudakit.predict(SOURCE, f"add_{kind}", grid=(N // 256,), block=(256,),
                                args=[key, np.zeros(spacing * distinct, dtype), np.int32(N)])
            measured = stored[f"{kind} {name}"]
            rows.append(probe_row(f"{kind} {name}", measured, p))
            print(f"| {kind} {name} | {measured:.4f} | {p.ms:.4f} | "
                  f"{rows[-1]['error_pct']:+.0f}% | {p.bound} |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    probe_main(argv, __doc__, record, compare,
               "| pattern | H100 ms | predicted ms | error | bound |\n|---|---|---|---|---|")


if __name__ == "__main__":
    main()
