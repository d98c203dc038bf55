"""Run the benchmarks: ``python -m benchmarks [NAME ...]``.

Without names, the emulator benchmark always runs, and the GPU benchmarks run where a CUDA
device is present; each prints its table (ratios measured in one run).
"""

from __future__ import annotations

import subprocess
import sys

GPU = ["reduction", "transpose", "matmul", "transfers", "streams", "nbody", "stencil",
       "out_of_core", "chooser"]
CPU = ["emu.bench", "widget"]


def main(argv: list[str]) -> int:
    from cudakit.backend import gpu_available

    names = argv or CPU + (GPU if gpu_available() else [])
    if not argv and not gpu_available():
        print("no CUDA device here: running the emulator benchmark only")
    failed = []
    for name in names:
        print(f"\n=== benchmarks.{name}", flush=True)
        if subprocess.run([sys.executable, "-m", f"benchmarks.{name}"], check=False).returncode:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
