"""Copy the kernels of llm.c's ``dev/cuda`` (Andrej Karpathy et al., MIT licence) for the
third held-out batch of issue 19 (``python -m benchmarks.peer_times --third``).

    python -m benchmarks.llmc.extract /work/.mirror/karpathy+llm.c/repo   # a git directory

Each file is taken from commit :data:`COMMIT` and cut, not edited: everything from
``int main(`` on is dropped, and so is every top-level declaration that names cuBLAS (its
includes, handles, checks and setup: no cuBLAS headers on a machine with only nvcc, and the
kernels never use it). The one addition: ``#include <cuda_bf16.h>`` where ``common.h``
included cuBLAS, whose headers brought in the ``__nv_bfloat16`` type. ``common.h`` keeps its
device helpers (``warpReduceSum``, ``blockReduce``, ``Packed128``, ``floatX``) and host
checks.
Written by hand: a few lines of text surgery, kept so that the copies can be remade.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

COMMIT = "f1e2ace"
FILES = ("common.h", "gelu_forward.cu", "residual_forward.cu", "layernorm_forward.cu",
         "softmax_forward.cu", "encoder_forward.cu", "adamw.cu", "crossentropy_forward.cu",
         "permute.cu", "fused_residual_forward.cu")
HERE = Path(__file__).resolve().parent / "kernels"
CUBLAS = re.compile(r"\bcublas", re.IGNORECASE)
COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')


def declarations(text: str) -> list[str]:
    """Top-level chunks of C++: runs of lines that end where the braces close again, on a
    line ending in ``}`` or ``;``, a preprocessor line or a blank line."""
    chunks, current, depth = [], [], 0
    for line in text.splitlines():
        current.append(line)
        code = STRINGS.sub("", line.split("//")[0])
        depth += code.count("{") - code.count("}")
        stripped = code.strip()
        if depth == 0 and (stripped.endswith(("}", ";")) or stripped.startswith("#")
                           or not stripped):
            chunks.append("\n".join(current))
            current = []
    return chunks + (["\n".join(current)] if current else [])


def cut(text: str) -> str:
    """``text`` up to ``int main(``, without the declarations whose code (not comments)
    names cuBLAS."""
    text = text.split("\nint main(")[0]
    kept = [c if not c.startswith("#include <cublas_v2.h>") else "#include <cuda_bf16.h>"
            for c in declarations(text)
            if c.startswith("#include <cublas_v2.h>") or not CUBLAS.search(COMMENTS.sub("", c))]
    return "\n".join(kept) + "\n"


def main(argv: list[str] | None = None) -> None:
    repo = Path((argv or sys.argv[1:])[0])
    HERE.mkdir(exist_ok=True)
    for name in FILES:
        text = subprocess.run(["git", "--git-dir", str(repo), "show",
                               f"{COMMIT}:dev/cuda/{name}"], check=True, capture_output=True,
                              text=True).stdout
        (HERE / name).write_text(f"// llm.c dev/cuda/{name} at {COMMIT} (MIT licence), cut by "
                                 "benchmarks/llmc/extract.py\n" + cut(text))


if __name__ == "__main__":
    main()
