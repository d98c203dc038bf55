"""Shared-memory loads that ptxas merges into one vector load (LDS.64, LDS.128).

An unrolled loop over a row of a shared tile (``sum += As[ty][k] * Bs[k][tx]``) reads
``As[ty][k]``, ``As[ty][k+1]``... from one base register at offsets 0, 4, 8, 12... PTX keeps
one ``ld.shared.f32`` each; ptxas issues one ``LDS.128`` per four of them when it can prove
the address is a multiple of 16 (two per ``LDS.64`` for 8), which changes both the
instructions a warp issues and the shared-memory wavefronts (a broadcast ``LDS.128`` is one
wavefront, four ``LDS`` are four). The emulator runs such a group as one vector load, so its
counts and trace are those of the SASS.

The rules, checked against ``nvdisasm`` on sm_90: loads of one basic block, unguarded, not
volatile, of the same type and 4 or 8 bytes, from the same base register at consecutive
offsets, with no store, atomic, barrier or fence between them and the base not redefined; the
group's first address must be a multiple of its width. Alignment is what ptxas can prove from
the PTX (:func:`register_alignment`): shared arrays of 16 bytes or more start on 16 bytes
(ptxas lays them out; smaller ones are packed, :func:`shared_alignment`), ``shl``/``mul`` by
constants and sums keep the alignment of their terms; a row stride read from a parameter
proves nothing (``s[ty * w + k]`` stays scalar, as in the SASS). ptxas sometimes also shifts an
array so that a run starting off 16 bytes merges; that is not followed.

Written by hand: no library models ptxas's load vectorisation.

>>> from cudakit.emu.frontend import Instr
>>> body = [Instr("shl.b32", ["%r1", "%r0", "7"]), Instr("add.s32", ["%r2", "%r1", "tile"]),
...         Instr("ld.shared.f32", ["%f1", "[%r2]"]), Instr("ld.shared.f32", ["%f2", "[%r2+4]"])]
>>> aligned = register_alignment(body, {"tile": 16})
>>> [[body.index(i) for i in g] for g in vector_groups(body, aligned)]
[[2, 3]]
"""

from __future__ import annotations

import re

WIDEST = 16  # bytes of the widest shared-memory load (LDS.128)
_BARRIERS = ("st", "atom", "red", "bar", "barrier", "membar", "fence", "call", "cp", "ret",
             "exit", "wmma", "mma", "stmatrix", "ldmatrix", "tex", "suld", "sust")
_SIZES = {"b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}
_ADDRESS = re.compile(r"\[\s*([%$\w.]+?)\s*(?:\+\s*(-?\w+))?\s*\]")


def _pow2(value: int) -> int:
    """The largest power of two dividing ``value`` (at most :data:`WIDEST`)."""
    return WIDEST if value == 0 else min(value & -value, WIDEST)


def _immediate(text) -> int | None:
    if isinstance(text, str) and re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", text):
        return int(text, 0)
    return None


def shared_alignment(var) -> int:
    """Where ptxas starts a shared array (a :class:`~cudakit.emu.frontend.Var`): on 16 bytes
    from 16 bytes up, else on its declared alignment (the emulator lays them out the same)."""
    return max(var.align, var.elem_size, WIDEST if var.size >= WIDEST else 1)


def register_alignment(body, symbols: dict[str, int]) -> dict[str, int]:
    """For each register (and each of ``symbols``, shared arrays with their
    :func:`shared_alignment`), the power of two (at most 16) its value is a proven multiple of.

    A flow-insensitive fixed point over every definition of the register: an immediate counts
    as its own power of two, anything read from memory, a parameter or a special register
    as 1.
    """
    defs = [(ins.opcode.split("."), ins.operands) for ins in body
            if ins.operands and isinstance(ins.operands[0], str)
            and ins.operands[0].startswith("%")]
    align = {ops[0]: WIDEST for _, ops in defs}
    align.update(symbols)

    def of(op) -> int:
        if not isinstance(op, str):
            return 1
        value = _immediate(op)
        if value is not None:
            return _pow2(value)
        return align.get(op, 1)

    def rule(parts: list[str], ops) -> int:
        base, a = parts[0], [of(op) for op in ops[1:]]
        if "hi" in parts:
            return 1
        if base in ("mov", "cvt", "cvta") and len(a) == 1:
            return a[0]
        if base in ("add", "sub", "or", "min", "max") and len(a) == 2:
            return min(a)
        if base == "mul" and len(a) == 2:
            return min(a[0] * a[1], WIDEST)
        if base == "mad" and len(a) == 3:
            return min(a[0] * a[1], a[2], WIDEST)
        if base == "shl" and len(a) == 2 and _immediate(ops[2]) is not None:
            return min(a[0] << min(_immediate(ops[2]), 4), WIDEST)
        if base == "and" and len(a) == 2:
            return max(a)
        return 1

    changed = True
    while changed:
        changed = False
        for parts, ops in defs:
            new = min(align[ops[0]], rule(parts, ops))
            if new < align[ops[0]]:
                align[ops[0]], changed = new, True
    return align


def _candidate(ins):
    """``(base register, offset, size, type)`` of a load that may merge, else None."""
    parts = ins.opcode.split(".")
    if parts[0] != "ld" or "shared" not in parts or ins.guard or "volatile" in parts \
            or any(p in ("v2", "v4", "v8") for p in parts) or len(ins.operands) != 2:
        return None
    size = _SIZES.get(parts[-1])
    m = _ADDRESS.fullmatch(ins.operands[1].strip()) if isinstance(ins.operands[1], str) else None
    if size is None or m is None or not isinstance(ins.operands[0], str):
        return None
    return m.group(1), int(m.group(2) or "0", 0), size, parts[-1]


def _names(operand) -> list[str]:
    texts = operand if isinstance(operand, list) else [operand]
    return [r for t in texts if isinstance(t, str) for r in re.findall(r"%[\w.]+", t)]


def vector_groups(body, alignment: dict[str, int]) -> list[list]:
    """The groups of loads of ``body`` (one basic block) that ptxas issues as one vector load,
    each in order of address; groups of one are left out."""
    open_loads: dict[tuple, dict[int, tuple]] = {}  # (base, type) -> offset -> (index, ins)
    touched: list[set[str]] = []  # per instruction: the registers it reads or writes
    windows: list[dict[int, tuple]] = []
    for k, ins in enumerate(body):
        base = ins.opcode.split(".")[0]
        names = {r for op in ins.operands for r in _names(op)}
        touched.append(names)
        if base in _BARRIERS:
            windows += open_loads.values()
            open_loads = {}
            continue
        found = _candidate(ins)
        if found is not None:
            reg, offset, size, type_ = found
            loads = open_loads.setdefault((reg, type_), {})
            if offset in loads:  # the same address again: start a new window
                windows.append(open_loads.pop((reg, type_)))
                loads = open_loads.setdefault((reg, type_), {})
            loads[offset] = (k, ins)
        written = _names(ins.operands[0]) if ins.operands and base != "st" else []
        for key in [key for key in open_loads if key[0] in written]:
            windows.append(open_loads.pop(key))
    windows += open_loads.values()
    groups = []
    for loads in windows:
        groups += _split(loads, alignment, touched)
    return groups


def _split(loads: dict[int, tuple], alignment: dict[str, int], touched) -> list[list]:
    """Aligned runs of 16 bytes, else 8, from the lowest offset up."""
    first = next(iter(loads.values()))[1]
    reg, _, size, _ = _candidate(first)
    proven = alignment.get(reg, 1)
    groups, done = [], set()
    for offset in sorted(loads):
        if offset in done:
            continue
        for width in (16, 8):
            run = [offset + size * j for j in range(width // size)]
            if width > size and width <= proven and offset % width == 0 \
                    and all(o in loads and o not in done for o in run) \
                    and _movable([loads[o] for o in run], touched):
                groups.append([loads[o][1] for o in run])
                done.update(run)
                break
    return groups


def _movable(members: list[tuple], touched) -> bool:
    """Every member can load at the first member's place: no instruction between reads or
    writes its destination."""
    start = min(k for k, _ in members)
    for k, ins in members:
        dst = ins.operands[0]
        if any(dst in touched[j] for j in range(start + 1, k)):
            return False
    return True
