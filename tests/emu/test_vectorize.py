"""ptxas's merged shared loads (cudakit/emu/vectorize.py) against its SASS for sm_90.

tests/emu/vectorize/sass.json holds the LDS, LDS.64 and LDS.128 instructions of each kernel of
tests/emu/vectorize/kernels.cu, counted with nvdisasm by tests/emu/vectorize/record_sass.py.
Each kernel runs once per warp through its loads, so the emulator's shared-load warp
instructions must be the SASS's count times the warps, and its results NumPy's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu.counts import InstructionCounter
from cudakit.emu.frontend import Instr
from cudakit.emu.vectorize import register_alignment, vector_groups

HERE = Path(__file__).parent / "vectorize"
SASS = json.loads((HERE / "sass.json").read_text())
ROWS = 4  # blockDim.y: rows of 32 threads


@pytest.fixture(scope="module")
def module():
    return emu.SourceModule((HERE / "kernels.cu").read_text(), no_extern_c=True)


def _row_sums(x, count=16):
    return np.repeat(x[:, :count].sum(axis=1, keepdims=True), 32, axis=1)


CASES = {  # kernel -> (dtype, shared bytes, extra arguments, expected output from the input)
    "padded": (np.float32, 0, (), _row_sums),
    "pairs": (np.float32, 0, (), _row_sums),
    "dynamic": (np.float32, ROWS * 32 * 4, (), _row_sums),
    "doubles": (np.float64, 0, (), _row_sums),
    "row_width": (np.float32, ROWS * 32 * 4, (np.int32(32),), _row_sums),
    "store_between": (np.float32, 0, (), lambda x: np.repeat(x[:, :1] + x[:, 1:2], 32, axis=1)),
    "packed": (np.float32, 0, (), lambda x: np.full_like(x, x.flat[0] + x.flat[3] * x.flat[4])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shared_loads_are_the_sass_loads(module, name):
    dtype, shared, extra, expected = CASES[name]
    x = np.random.default_rng(1).random((ROWS, 32)).astype(dtype)
    out = np.zeros_like(x)
    counter = InstructionCounter()
    module.get_function(name)(emu.In(x), emu.Out(out), *extra, grid=(1,), block=(32, ROWS),
                              shared=shared, counter=counter)
    np.testing.assert_allclose(out, expected(x), rtol=1e-6)
    assert counter.classes["ld.shared"] == ROWS * sum(SASS[name].values())


def test_tiled_matmul_issues_eight_lds128_per_tile(module):
    n = 32
    a, b = (np.random.default_rng(k).random((n, n)).astype(np.float32) for k in (2, 3))
    c = np.zeros((n, n), np.float32)
    counter = InstructionCounter()
    module.get_function("tiled")(emu.In(a), emu.In(b), emu.Out(c), np.int32(n), grid=(1,),
                                 block=(32, 32), counter=counter)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    assert SASS["tiled"] == {"LDS": 32, "LDS.64": 0, "LDS.128": 8}
    assert counter.classes["ld.shared"] == 32 * sum(SASS["tiled"].values())


def test_four_loads_per_thread_become_one(module):
    x = np.random.default_rng(4).random(1024).astype(np.float32)
    out = np.zeros(256, np.float32)
    counter = InstructionCounter()
    module.get_function("per_thread")(emu.In(x), emu.Out(out), grid=(1,), block=(256,),
                                      counter=counter)
    np.testing.assert_allclose(out, x.reshape(256, 4).sum(axis=1), rtol=1e-6)
    assert counter.classes["ld.shared"] == 8 * SASS["per_thread"]["LDS.128"]


def test_an_address_misaligned_at_run_time_loads_element_by_element(monkeypatch):
    # Were the alignment proof wrong, a merged group must still load the right values
    # (element by element), never fault: take every register as 16-byte aligned and run the
    # kernel whose rows of 33 floats start off 16 bytes.
    import cudakit.emu.decode as decode

    class Everything16(dict):
        def get(self, key, default=None):
            return 16

    monkeypatch.setattr(decode, "register_alignment", lambda body, symbols: Everything16())
    x = np.random.default_rng(5).random((ROWS, 32)).astype(np.float32)
    out = np.zeros_like(x)
    counter = InstructionCounter()
    source = (HERE / "kernels.cu").read_text() + "// decoded afresh\n"
    emu.SourceModule(source, no_extern_c=True).get_function("padded")(
        emu.In(x), emu.Out(out), grid=(1,), block=(32, ROWS), counter=counter)
    np.testing.assert_allclose(out, _row_sums(x), rtol=1e-6)
    assert counter.classes["ld.shared"] == ROWS * 4  # four LDS.128 as the wrong proof says


def test_alignment_follows_shifts_products_and_sums():
    body = [Instr("mov.u32", ["%r1", "%tid.y"]), Instr("shl.b32", ["%r2", "%r1", "3"]),
            Instr("mul.lo.s32", ["%r3", "%r1", "12"]), Instr("add.s32", ["%r4", "%r2", "tile"]),
            Instr("ld.param.u32", ["%r5", "[w]"]),
            Instr("mad.lo.s32", ["%r6", "%r1", "%r5", "tile"]),
            Instr("mul.hi.s32", ["%r7", "%r1", "64"])]
    a = register_alignment(body, {"tile": 16})
    assert (a["%r2"], a["%r3"], a["%r4"], a["%r6"], a["%r7"]) == (8, 4, 8, 1, 1)


def test_no_group_across_a_barrier_or_a_use_of_a_later_destination():
    load = lambda d, off: Instr("ld.shared.f32", [d, f"[%r1+{off}]"])  # noqa: E731
    align = {"%r1": 16}
    across = [load("%f1", 0), load("%f2", 4), Instr("bar.sync", ["0"]), load("%f3", 8),
              load("%f4", 12)]
    assert [[i.operands[0] for i in g] for g in vector_groups(across, align)] == \
        [["%f1", "%f2"], ["%f3", "%f4"]]
    used = [load("%f1", 0), Instr("add.f32", ["%f9", "%f2", "%f2"]), load("%f2", 4)]
    assert vector_groups(used, align) == []
