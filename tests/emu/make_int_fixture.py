"""Random C integer expressions, evaluated by gcc, stored as a fixture for the emulator.

``python -m tests.emu.make_int_fixture`` writes ``tests/emu/fixtures/int_exprs.json``: each
expression over the variables ``a`` (int), ``u`` (unsigned int), ``c`` (signed char),
``s`` (unsigned short), ``l`` (long long) and ``q`` (unsigned long long), with gcc's result
for each input row. Expressions avoid what C leaves undefined (signed overflow, division by
zero, shifts by the width or more), so the host compiler's answer is the device's answer.
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
from pathlib import Path

VARS = {"a": "int", "u": "unsigned int", "c": "signed char", "s": "unsigned short",
        "l": "long long", "q": "unsigned long long"}
FIXTURE = Path(__file__).parent / "fixtures" / "int_exprs.json"


def expression(rng: random.Random, depth: int = 0) -> str:
    """A random expression whose value is defined for every input (see module docstring)."""
    if depth > 2 or rng.random() < 0.3:
        return rng.choice(list(VARS) + [str(rng.randint(-9, 300)) + rng.choice(["", "u"])])
    x, y = expression(rng, depth + 1), expression(rng, depth + 1)
    op = rng.choice(["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "==", "cast",
                     "?:"])
    if op in ("+", "-", "*"):  # wrap in unsigned arithmetic of the promoted width
        return f"(unsigned long long)({x}) {op} (unsigned long long)({y})"
    if op in ("/", "%"):
        return f"(long long)({x}) {op} (long long)(({y}) % 97 + 100)"
    if op in ("<<", ">>"):
        return f"(unsigned int)({x}) {op} ((unsigned int)({y}) % 31u)"
    if op == "cast":
        return f"({rng.choice(list(VARS.values()))})({x})"
    if op == "?:":
        return f"(({x}) < ({y}) ? ({x}) : ({y}))"
    return f"({x}) {op} ({y})"


def inputs(rng: random.Random, n: int) -> list[dict]:
    rows = []
    for _ in range(n):
        rows.append({"a": rng.randint(-2**31, 2**31 - 1), "u": rng.randint(0, 2**32 - 1),
                     "c": rng.randint(-128, 127), "s": rng.randint(0, 65535),
                     "l": rng.randint(-2**40, 2**40), "q": rng.randint(0, 2**64 - 1)})
    return rows


def main() -> None:
    rng = random.Random(2026)
    exprs = [expression(rng) for _ in range(80)]
    rows = inputs(rng, 16)
    body = "\n".join(f'    printf("%lld\\n", (long long)({e}));' for e in exprs)
    lines = []
    for r in rows:
        decl = " ".join(f"{t} {v} = ({t}){r[v]}{'ULL' if v == 'q' else 'LL'};"
                        for v, t in VARS.items())
        lines.append(f"  {{ {decl}\n{body}\n  }}")
    program = "#include <stdio.h>\nint main(void) {\n" + "\n".join(lines) + "\n  return 0;\n}\n"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "e.c"
        src.write_text(program)
        subprocess.run(["gcc", "-O0", "-fwrapv", "-o", str(Path(tmp) / "e"), str(src)],
                       check=True)
        out = subprocess.run([str(Path(tmp) / "e")], capture_output=True, text=True,
                             check=True).stdout.split()
    values = [int(v) for v in out]
    results = [values[i * len(exprs):(i + 1) * len(exprs)] for i in range(len(rows))]
    FIXTURE.write_text(json.dumps({"compiler": "gcc -O0 -fwrapv (x86-64)", "vars": VARS,
                                   "expressions": exprs, "inputs": rows, "results": results},
                                  indent=1))


if __name__ == "__main__":
    main()
