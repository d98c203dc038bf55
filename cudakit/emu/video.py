"""PTX's SIMD video instructions: two 16-bit or four 8-bit lanes in a 32-bit register.

``vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2`` and their ``4`` forms (PTX ISA,
"SIMD Video Instructions"). CUDA's ``__vabsdiffu4``, ``__vsadu4`` and ``__vsads2`` compile
to them through inline PTX; other kernels write them in ``asm``. Each source element is
picked from the eight bytes (four half-words) of ``{b, a}`` by the operand's selector
(``a.b3210``, ``b.h32``: the digits name the source element of each result element,
highest first), widened by the operand's type; the results are clamped with ``.sat``,
then either merged into ``c`` where the destination's mask leaves them out, or, with
``.add``, summed onto ``c``. The scalar video instructions (``vadd``, ``vshl``, ``vmad``
...) are not handled. Written by hand: no library runs PTX.

>>> import numpy as np
>>> a, b = np.array([0x01FF0A05], np.uint32), np.array([0x03010F01], np.uint32)
>>> hex(int(simd("absdiff", 4, a, b, np.zeros(1, np.uint32))[0]))  # |1-3| |255-1| |10-15| |5-1|
'0x2fe0504'
>>> int(simd("absdiff", 4, a, b, np.full(1, 7, np.uint32), add=True)[0])  # 2+254+5+4+7
272
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError

BASES = {f"v{op}{n}" for op in ("add", "sub", "avrg", "absdiff", "min", "max", "set")
         for n in (2, 4)}
_DEFAULTS = {2: ("10", "32", "10"), 4: ("3210", "7654", "3210")}  # asel, bsel, mask
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}


def elements(a: np.ndarray, b: np.ndarray, n: int, select: str, signed: bool) -> np.ndarray:
    """Per lane the ``n`` elements that ``select`` picks from ``{b, a}``, as int64 (lanes x
    n, element 0 first)."""
    width = 32 // n
    both = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
    out = np.empty((a.size, n), np.int64)
    for i, digit in enumerate(reversed(select)):
        v = ((both >> np.uint64(int(digit) * width)) & np.uint64((1 << width) - 1)).astype(np.int64)
        if signed:
            v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
        out[:, i] = v
    return out


def simd(op: str, n: int, a: np.ndarray, b: np.ndarray, c: np.ndarray, *, signed=(False,) * 3,
         asel: str | None = None, bsel: str | None = None, mask: str | None = None,
         sat: bool = False, add: bool = False, compare: str | None = None) -> np.ndarray:
    """``d`` of ``v<op><n>`` per lane (``signed``: of d, a, b; ``compare`` for ``vset``)."""
    da, db, dm = _DEFAULTS[n]
    width = 32 // n
    va = elements(a, b, n, asel or da, signed[1])
    vb = elements(a, b, n, bsel or db, signed[2])
    if op == "add":
        t = va + vb
    elif op == "sub":
        t = va - vb
    elif op == "avrg":
        s = va + vb
        t = np.where(s >= 0, (s + 1) >> 1, s >> 1)
    elif op == "absdiff":
        t = np.abs(va - vb)
    elif op == "min":
        t = np.minimum(va, vb)
    elif op == "max":
        t = np.maximum(va, vb)
    else:
        t = _COMPARE[compare](va, vb).astype(np.int64)
    if sat:
        half = 1 << (width - 1)
        t = np.clip(t, -half, half - 1) if signed[0] else np.clip(t, 0, 2 * half - 1)
    chosen = np.zeros(n, bool)
    chosen[[int(k) for k in (mask or dm)]] = True
    if add:
        return (c.astype(np.int64) + t[:, chosen].sum(axis=1)).astype(np.uint32)
    keep = elements(c, c, n, dm, False)
    t = np.where(chosen, t, keep) & ((1 << width) - 1)
    return (t << (np.arange(n) * width)).sum(axis=1).astype(np.uint32)


def _selector(operand: str, n: int) -> tuple[str, str | None]:
    """``%r1.b3210`` -> ``("%r1", "3210")``."""
    name, _dot, sel = operand.partition(".")
    if not sel:
        return name, None
    if sel[0] != ("h" if n == 2 else "b") or not sel[1:].isdigit():
        raise UnsupportedError(f"the selector '.{sel}' of a {n}-way video instruction")
    return name, sel[1:]


def h_video(ins, scope, program, base, mods, types, t, o):
    """The closure of one SIMD video instruction."""
    if base not in BASES:
        raise UnsupportedError(f"the scalar video instruction '{ins.opcode}'")
    n = int(base[-1])
    op = base[1:-1]
    (dname, mask), (aname, asel), (bname, bsel), (cname, _c) = \
        [_selector(x, n) for x in o]
    kinds = types if op != "set" else ["u32", *types]
    signed = tuple(k == "s32" for k in kinds)
    compare = next((m for m in mods if m in _COMPARE), None)
    ra, rb, rc = scope.read(aname, "u32"), scope.read(bname, "u32"), scope.read(cname, "u32")
    w = scope.write(dname, "u32")
    sat, add = "sat" in mods, "add" in mods

    def video(fr, L):
        size = fr.b.index(L).size
        a, b, c = (np.broadcast_to(np.asarray(r(fr, L), np.uint32), (size,)) for r in (ra, rb, rc))
        w(fr, L, simd(op, n, a, b, c, signed=signed, asel=asel, bsel=bsel, mask=mask, sat=sat,
                      add=add, compare=compare))
    return video
