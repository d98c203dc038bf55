"""Multiplies and adds that ptxas fuses into one fused multiply-add.

PTX's floating-point ``mul`` and ``add`` without a rounding modifier may be contracted by the
code generator (PTX ISA, "Floating Point Instructions"; ``ptxas --fmad`` is on by default),
and ptxas contracts a product that feeds one add: CUDA's ``__hmul2`` then ``__hadd2`` (not
their ``_rn`` forms) run on the GPU as one ``HFMA2``, rounded once, where running the PTX as
written rounds twice. The emulator rewrites such a pair into ``fma.rn`` before decoding, so
that its results are the GPU's bit for bit and its counts those of the SASS (one
instruction, not two). nvcc's own ``a * b + c`` is already an ``fma`` in the PTX.

The rules: a ``mul`` and an ``add`` of one type (f16, f16x2, bf16, bf16x2, f32, f64, with
the same ``.ftz``), neither with a rounding modifier or ``.sat``, under the same guard, in
one basic block; the product used by that add alone; neither factor written in between.
Checked against ``nvdisasm`` on sm_90 (``HFMA2`` for ``__hadd2(__hmul2(a, b), c)``) and
against an H200's results (``tests/emu/test_public_idioms.py``).
Written by hand: no library models ptxas's contraction.

>>> from cudakit.emu.frontend import Function, Instr
>>> fn = Function("k", True, body=[Instr("mul.f16x2", ["%r3", "%r1", "%r2"]),
...                                Instr("add.f16x2", ["%r5", "%r4", "%r3"]),
...                                Instr("st.global.b32", ["[%rd1]", "%r5"])])
>>> contract(fn)
>>> [(i.opcode, i.operands) for i in fn.body][0]
('fma.rn.f16x2', ['%r5', '%r1', '%r2', '%r4'])
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import Counter

from .frontend import Function

_FLOATS = {"f16", "f16x2", "bf16", "bf16x2", "f32", "f64"}
_ROUNDING = {"rn", "rz", "rm", "rp", "sat"}
_REGISTER = re.compile(r"%[\w$]+")
_ENDS_BLOCK = ("bra", "brx", "ret", "exit", "call", "bar", "barrier")


def _registers(operand) -> list[str]:
    return _REGISTER.findall(str(operand))


def _contractible(opcode: str, base: str) -> str | None:
    """The type suffix of a ``base`` (mul or add) that ptxas may contract, or None."""
    parts = opcode.split(".")
    if parts[0] != base or parts[-1] not in _FLOATS or _ROUNDING & set(parts[1:]):
        return None
    return ".".join(parts[1:])


def contract(fn: Function) -> None:
    """Rewrite each contractible ``mul``/``add`` pair of ``fn`` into one ``fma.rn`` (the add's
    place and line), dropping the ``mul``; labels and ``nounroll`` marks follow."""
    body = fn.body
    uses = Counter(r for ins in body for op in ins.operands for r in _registers(op))
    leaders = set(fn.labels.values())
    dropped = set()
    for i, mul in enumerate(body):
        suffix = _contractible(mul.opcode, "mul")
        if suffix is None or len(mul.operands) != 3 or uses[mul.operands[0]] != 2:
            continue
        product, factors = mul.operands[0], mul.operands[1:]
        written = set(_registers(factors[0]) + _registers(factors[1]) + _registers(mul.guard))
        for j in range(i + 1, len(body)):
            ins = body[j]
            if j in leaders or ins.opcode.split(".")[0] in _ENDS_BLOCK:
                break
            if product in [r for op in ins.operands for r in _registers(op)]:
                if (_contractible(ins.opcode, "add") == suffix and ins.guard == mul.guard
                        and product in ins.operands[1:3] and len(ins.operands) == 3):
                    addend = ins.operands[2] if ins.operands[1] == product else ins.operands[1]
                    body[j] = dataclasses.replace(
                        ins, opcode=f"fma.rn.{suffix}",
                        operands=[ins.operands[0], *factors, addend])
                    dropped.add(i)
                break
            if ins.operands and written & set(_registers(ins.operands[0])):
                break
    if not dropped:
        return
    kept = [k for k in range(len(body)) if k not in dropped]

    def moved(index: int) -> int:  # the instructions kept before it (a label may sit past
        return bisect.bisect_left(kept, index)  # the last one, or on a dropped mul)

    fn.body = [body[k] for k in kept]
    fn.labels = {name: moved(index) for name, index in fn.labels.items()}
    fn.nounroll = {moved(index) for index in fn.nounroll}
