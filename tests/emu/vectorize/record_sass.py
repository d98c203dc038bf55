"""Count the shared-memory loads of tests/emu/vectorize/kernels.cu in ptxas's SASS for sm_90.

    python tests/emu/vectorize/record_sass.py     # needs nvcc and nvdisasm on PATH (or $NVDISASM)

Writes sass.json next to this file: per kernel, how many LDS, LDS.64 and LDS.128 instructions
the cubin holds (nvcc -O3 -arch=sm_90, the flags cudakit compiles with).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    nvdisasm = os.environ.get("NVDISASM", "nvdisasm")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "k.cubin"
        subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-o", str(cubin),
                        str(HERE / "kernels.cu")], check=True)
        sass = subprocess.run([nvdisasm, str(cubin)], check=True, capture_output=True,
                              text=True).stdout
    counts: dict[str, Counter] = {}
    kernel = None
    for line in sass.splitlines():
        header = re.match(r"\s*\.text\.(\S+):", line)
        if header:
            mangled = re.match(r"_Z(\d+)(.*)", header.group(1))  # _Z5tiledPKf... -> tiled
            kernel = mangled.group(2)[:int(mangled.group(1))]
            counts[kernel] = Counter()
        op = re.search(r"\b(LDS(?:\.64|\.128)?)\b", line)
        if op and kernel:
            counts[kernel][op.group(1)] += 1
    out = {k: {op: c[op] for op in ("LDS", "LDS.64", "LDS.128")} for k, c in counts.items()}
    (HERE / "sass.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
