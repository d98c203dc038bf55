"""Integer semantics against gcc: random C expressions and gcc's values for them.

``tests/emu/fixtures/int_exprs.json`` was written by ``tests/emu/make_int_fixture.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cudakit import emu

from .conftest import build

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "int_exprs.json").read_text())
DTYPES = {"a": np.int32, "u": np.uint32, "c": np.int8, "s": np.uint16, "l": np.int64,
          "q": np.uint64}


def test_random_integer_expressions_match_gcc():
    exprs, rows = FIXTURE["expressions"], FIXTURE["inputs"]
    params = ", ".join(f"const {t}* in_{v}" for v, t in FIXTURE["vars"].items())
    loads = " ".join(f"{t} {v} = in_{v}[t];" for v, t in FIXTURE["vars"].items())
    stores = "\n".join(f"    out[t * {len(exprs)} + {k}] = (long long)({e});"
                       for k, e in enumerate(exprs))
    src = (f"__global__ void exprs({params}, long long* out) {{\n"
           f"    int t = threadIdx.x;\n    {loads}\n{stores}\n}}")
    columns = [emu.In(np.array([r[v] for r in rows], dtype=dt)) for v, dt in DTYPES.items()]
    out = np.zeros(len(rows) * len(exprs), np.int64)
    build(src).get_function("exprs")(*columns, emu.Out(out), block=(len(rows), 1, 1))
    expected = np.array(FIXTURE["results"], np.int64).reshape(-1)
    bad = np.flatnonzero(out != expected)
    assert bad.size == 0, [(exprs[i % len(exprs)], int(out[i]), int(expected[i]))
                           for i in bad[:5]]
