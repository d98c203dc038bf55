"""Copy the kernels of llm.c's ``dev/cuda`` (Andrej Karpathy et al., MIT licence) for the
third held-out batch of issue 19 (``python -m benchmarks.peer_times --third``).

    python -m benchmarks.llmc.extract /work/.mirror/karpathy+llm.c/repo   # a git directory

Each file is taken from commit :data:`COMMIT` and cut, not edited: everything from ``int
main(`` on is dropped, and so is every top-level declaration that names cuBLAS (its
includes, handles, checks and setup: no cuBLAS headers on a machine with only nvcc, and the
kernels never use it), or a function so dropped (the host dispatchers that call them). The
one addition: ``#include <cuda_bf16.h>`` where ``common.h`` included cuBLAS, whose headers
brought in the ``__nv_bfloat16`` type. ``common.h`` keeps its device helpers
(``warpReduceSum``, ``blockReduce``, ``Packed128``, ``floatX``) and host checks.
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
         "permute.cu", "fused_residual_forward.cu",
         # the fourth batch (session 10)
         "gelu_backward.cu", "layernorm_backward.cu", "encoder_backward.cu",
         "crossentropy_softmax_backward.cu", "matmul_backward_bias.cu", "global_norm.cu",
         "trimat_forward.cu", "matmul_forward.cu")
HERE = Path(__file__).resolve().parent / "kernels"
CUBLAS = re.compile(r"cublas", re.IGNORECASE)
COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
STRINGS = re.compile(r'"(?:\\.|[^"\\])*"')


def _code_of(line: str, in_comment: bool) -> tuple[str, bool]:
    """What of ``line`` lies outside comments, and whether a block comment goes on after it.

    >>> _code_of("a; /* b", False), _code_of("c */ d; // e", True)
    (('a; ', True), (' d; ', False))
    """
    code, i = "", 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return code, True
            in_comment, i = False, end + 2
            continue
        starts = [k for k in (line.find("/*", i), line.find("//", i)) if k >= 0]
        if not starts:
            return code + line[i:], False
        k = min(starts)
        code += line[i:k]
        if line.startswith("//", k):
            return code, False
        in_comment, i = True, k + 2
    return code, in_comment


def declarations(text: str) -> list[str]:
    """Top-level chunks of C++: runs of lines that end where the braces close again, on a
    line ending in ``}`` or ``;``, a preprocessor line or a blank line."""
    chunks, current, depth, comment = [], [], 0, False
    for line in text.splitlines():
        current.append(line)
        code, comment = _code_of(STRINGS.sub("", line), comment)
        depth += code.count("{") - code.count("}")
        stripped = code.strip()
        if not comment and depth == 0 and (stripped.endswith(("}", ";"))
                                           or stripped.startswith("#") or not stripped):
            chunks.append("\n".join(current))
            current = []
    return chunks + (["\n".join(current)] if current else [])


DEFINES = re.compile(r"(\w+)\s*\([^;{]*\)\s*\{")


def cut(text: str) -> str:
    """``text`` up to ``int main(``, without the declarations whose code (not comments)
    names cuBLAS or a function so dropped."""
    text = text.split("\nint main(")[0]
    chunks = declarations(text)
    code = [COMMENTS.sub("", c) for c in chunks]
    dropped = {i for i, c in enumerate(code) if CUBLAS.search(c)
               and not chunks[i].startswith("#include <cublas_v2.h>")}
    while True:
        names = {m.group(1) for i in dropped if (m := DEFINES.search(code[i]))}
        more = {i for i, c in enumerate(code) if i not in dropped and names
                and re.search(r"\b(" + "|".join(map(re.escape, names)) + r")\b", c)}
        if not more:
            break
        dropped |= more
    kept = ["#include <cuda_bf16.h>" if c.startswith("#include <cublas_v2.h>") else c
            for i, c in enumerate(chunks) if i not in dropped]
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
