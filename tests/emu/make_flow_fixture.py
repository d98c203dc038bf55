"""Random divergent control flow, run per thread by gcc, stored as a fixture for the emulator.

``python -m tests.emu.make_flow_fixture`` writes ``tests/emu/fixtures/flow_programs.json``:
device functions ``unsigned int f(unsigned int t)`` built from nested ``if``/``else``,
bounded ``for``/``while``/``do`` loops with ``break`` and ``continue``, ``switch`` with
fall-through and early ``return``, and gcc's value of ``f(t)`` for t = 0..69. Every
thread takes its own path, so the emulator's masks are checked against sequential C.
"""

from __future__ import annotations

import json
import random
import subprocess
import tempfile
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "flow_programs.json"
THREADS = 70


class Generator:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.loops = 0

    def cond(self) -> str:
        r = self.rng
        return r.choice([
            f"x % {r.randint(2, 7)}u == {r.randint(0, 1)}u",
            f"t % {r.randint(2, 9)}u < {r.randint(1, 4)}u",
            f"(x >> {r.randint(0, 5)}) & 1u",
            f"x > {r.randint(10, 5000)}u",
        ])

    def assign(self) -> str:
        r = self.rng
        return r.choice([
            f"x = x * {r.randint(2, 9)}u + t;",
            f"x ^= x >> {r.randint(1, 7)};",
            f"x += {r.randint(1, 99)}u;",
            f"x = (x + t) % {r.randint(50, 9999)}u;",
        ])

    def block(self, depth: int, in_loop: bool) -> str:
        return "\n".join(self.stmt(depth, in_loop) for _ in range(self.rng.randint(1, 3)))

    def stmt(self, depth: int, in_loop: bool) -> str:
        r = self.rng
        kinds = ["assign", "assign"]
        if depth < 3:
            kinds += ["if", "for", "while", "do", "switch"]
        if in_loop:
            kinds += ["break", "continue"]
        kinds.append("return")
        kind = r.choice(kinds)
        if kind == "assign":
            return self.assign()
        if kind == "if":
            alt = f" else {{\n{self.block(depth + 1, in_loop)}\n}}" if r.random() < 0.5 else ""
            return f"if ({self.cond()}) {{\n{self.block(depth + 1, in_loop)}\n}}{alt}"
        if kind in ("break", "continue"):
            return f"if ({self.cond()}) {kind};"
        if kind == "return":
            return f"if ({self.cond()}) return x + {r.randint(1, 9)}u;"
        self.loops += 1
        n = self.loops
        if kind == "for":
            return (f"for (unsigned int i{n} = 0; i{n} < {r.randint(1, 6)}u; ++i{n}) {{\n"
                    f"x += i{n};\n{self.block(depth + 1, True)}\n}}")
        if kind == "while":
            return (f"{{ unsigned int w{n} = 0;\nwhile (w{n} < {r.randint(1, 5)}u) {{\n"
                    f"++w{n};\n{self.block(depth + 1, True)}\n}} }}")
        if kind == "do":
            return (f"{{ unsigned int d{n} = 0;\ndo {{\n++d{n};\n{self.block(depth + 1, True)}\n"
                    f"}} while (d{n} < {r.randint(1, 4)}u); }}")
        cases = []
        for label in range(3):
            end = " break;" if r.random() < 0.6 else ""
            cases.append(f"case {label}: {{\n{self.block(depth + 1, in_loop)}\n}}{end}")
        cases.append(f"default: {{\n{self.block(depth + 1, in_loop)}\n}}")
        return "switch (x % 4u) {\n" + "\n".join(cases) + "\n}"


def program(rng: random.Random) -> str:
    body = Generator(rng).block(0, False)
    return f"unsigned int f(unsigned int t) {{\nunsigned int x = t;\n{body}\nreturn x;\n}}"


def main() -> None:
    rng = random.Random(70)
    programs = [program(rng) for _ in range(30)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in programs:
            src = Path(tmp) / "f.c"
            src.write_text("#include <stdio.h>\n" + p + "\nint main(void) { for (unsigned int t = "
                           f"0; t < {THREADS}; ++t) printf(\"%u\\n\", f(t)); return 0; }}\n")
            subprocess.run(["gcc", "-O0", "-o", str(Path(tmp) / "f"), str(src)], check=True)
            out = subprocess.run([str(Path(tmp) / "f")], capture_output=True, text=True,
                                 check=True).stdout.split()
            results.append([int(v) for v in out])
    FIXTURE.write_text(json.dumps({"compiler": "gcc -O0 (x86-64)", "threads": THREADS,
                                   "programs": programs, "results": results}, indent=1))


if __name__ == "__main__":
    main()
