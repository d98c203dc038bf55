"""The tensor cores' PTX instructions whose fragments PTX lays out itself: ``mma.sync`` and
the warp-wide 8 x 8 matrix moves ``ldmatrix``, ``stmatrix`` and ``movmatrix``.

Unlike ``wmma`` (:mod:`cudakit.emu.wmma`), which leaves a fragment's element-to-lane mapping
to the compiler, ``mma.sync`` fixes it (PTX ISA, "Matrix fragments for mma.m16n8k*"): lane
``l`` is thread ``t = l % 4`` of group ``g = l / 4``. A register of A holds row ``g`` (or
``g + 8``) and ``32 / bits / 4``-th of a row's chunk of 4 threads; B the same down a column
(column ``g``); C and D two neighbours of row ``g`` (then ``g + 8``). Hand-written kernels
load the fragments with ``ldmatrix``: each of 8 lanes per 8 x 8 matrix of 16-bit elements
gives the address of a row; lane ``l`` receives elements ``2t`` and ``2t + 1`` of row ``g``
(of column ``g`` with ``.trans``).

Products are formed as :func:`cudakit.emu.wmma.multiply` forms them, in float64 (int64 for
8-bit integers), rounded once to D's type.

Written by hand: the emulator interprets PTX, and no library executes these instructions on
NumPy arrays.

>>> a, b, c, d = fragments("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
>>> (a.rows, a.cols, a.slots), (b.rows, b.cols, b.slots), (d.rows, d.cols, d.slots)
((16, 16, 4), (8, 16, 2), (16, 8, 4))
>>> rows, cols = coordinates(a)
>>> rows[5, 2].tolist(), cols[5, 2].tolist()  # lane 5, register 2: row 1, columns 10, 11
([1, 1], [10, 11])
>>> sass_count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")  # 1.48 HMMA.1684
('mma.tf32', 1.477)
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from .wmma import ELEMENTS, SASS, Fragment

#: (m, n, k) ``mma.sync`` takes per input type (PTX ISA 8.x, sm_80 and sm_90 without ``.sp``;
#: not the 1-bit and FP8 types)
SHAPES = {"f16": {(16, 8, 8), (16, 8, 16)}, "bf16": {(16, 8, 8), (16, 8, 16)},
          "tf32": {(16, 8, 4), (16, 8, 8)},
          "f64": {(8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)},
          "s8": {(8, 8, 16), (16, 8, 16), (16, 8, 32)},
          "u8": {(8, 8, 16), (16, 8, 16), (16, 8, 32)},
          "s4": {(8, 8, 32), (16, 8, 32), (16, 8, 64)},
          "u4": {(8, 8, 32), (16, 8, 32), (16, 8, 64)}}

#: input types an mma.sync may pair (signed with unsigned integers of one width)
_KIND = {"u8": "s8", "u4": "s4"}


def fragments(opcode: str) -> tuple[Fragment, Fragment, Fragment, Fragment]:
    """A, B, C and D of ``mma.sync.aligned.mMnNkK.row.col.dtype.atype.btype.ctype``."""
    parts = opcode.split(".")
    if parts[1] != "sync":
        raise UnsupportedError(f"the matrix instruction '{opcode}' (only mma.sync: not "
                               "sparse or block-scaled)")
    shape = next((p for p in parts if p.startswith("m") and "n" in p and "k" in p), "")
    types = [p for p in parts if p in ELEMENTS or p in ("e4m3", "e5m2", "e2m1", "b1")]
    try:
        m, n, k = (int(v) for v in shape[1:].replace("n", " ").replace("k", " ").split())
    except ValueError:
        raise UnsupportedError(f"the matrix instruction '{opcode}' (no shape)") from None
    if len(types) != 4 or any(t not in ELEMENTS for t in types):
        raise UnsupportedError(f"mma.sync of these types: '{opcode}'")
    d, a, b, c = types
    if (m, n, k) not in SHAPES.get(a, ()):
        raise UnsupportedError(f"mma.sync of shape m{m}n{n}k{k} with .{a} inputs ('{opcode}'"
                               "; m8n8k4 of f16 works on quad-pairs and is left out)")
    if _KIND.get(a, a) != _KIND.get(b, b):
        raise UnsupportedError(f"mma.sync mixing .{a} and .{b} inputs ('{opcode}')")
    return (Fragment("a", a, m, n, k, "row"), Fragment("b", b, m, n, k, "col"),
            Fragment("c", c, m, n, k, "row"), Fragment("c", d, m, n, k, "row"))


def coordinates(f: Fragment) -> tuple[np.ndarray, np.ndarray]:
    """Row and column in the fragment's tile (A: m x k; B: n x k, by columns of B; C and D:
    m x n) of each (lane, register, element), as PTX lays them out."""
    lane = np.arange(32)[:, None, None]
    g, t = lane // 4, lane % 4
    r = np.arange(f.slots)[None, :, None]
    j = np.arange(f.per_register)[None, None, :]
    per = f.per_register
    if f.role == "a":  # registers go down the 8-row blocks, then across
        down = f.m // 8
        rows, cols = (r % down) * 8 + g, (r // down) * 4 * per + t * per + j
    elif f.role == "b":
        rows, cols = g + 0 * r, r * 4 * per + t * per + j
    else:  # two neighbours of a row per 8-row block
        e = r * per + j
        rows, cols = (e // 2) * 8 + g, t * 2 + e % 2
    shape = (32, f.slots, per)
    return np.broadcast_to(rows, shape), np.broadcast_to(cols, shape)


#: what one ``mma.sync`` of each input family and shape is worth in its class's unit (the
#: SASS instruction whose rate ``benchmarks/tensor_probe.py`` measured), from the rates
#: ``benchmarks/mma_probe.py`` measured on an H200 (``fixtures/h200_mma_probe.json``): ptxas
#: emits one tensor instruction per ``mma.sync``, and the smaller ones are not proportionally
#: faster (an f16 m16n8k8 is worth 0.68 of an m16n8k16, a tf32 m16n8k8 1.48 m16n8k4's)
UNITS = {("f16", 16, 8, 16): 1.0, ("f16", 16, 8, 8): 0.677,
         ("tf32", 16, 8, 4): 1.0, ("tf32", 16, 8, 8): 1.477,
         ("i8", 16, 8, 16): 1.0, ("i8", 16, 8, 32): 1.486, ("i8", 8, 8, 16): 0.992,
         ("f64", 8, 8, 4): 1.0, ("f64", 16, 8, 4): 1.002, ("f64", 16, 8, 8): 1.994,
         ("f64", 16, 8, 16): 3.992}
_FAMILY = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "s8": "i8", "u8": "i8", "f64": "f64"}
#: 4-bit ``mma.sync`` on sm_90 is a subroutine of ptxas's (``__cuda_sm_9x_mma_sub_byte_
#: internal_*``): per shape, the 8-bit shape of its two ``IMMA``, and per (A signed, B signed)
#: the integer and ``IMAD`` instructions that widen the nibbles (nvdisasm of nvcc 13.0's code;
#: a signed operand costs the sign extension)
FOUR_BIT = {(16, 8, 64): ((16, 8, 32), {(True, True): (138, 47), (True, False): (98, 33),
                                         (False, True): (58, 19), (False, False): (18, 5)}),
            (16, 8, 32): ((16, 8, 16), {(True, True): (69, 26), (True, False): (49, 19),
                                         (False, True): (29, 12), (False, False): (11, 4)}),
            (8, 8, 32): ((8, 8, 16), {(True, True): (46, 17), (True, False): (26, 10),
                                       (False, True): (26, 10), (False, False): (8, 2)})}


def sass_count(opcode: str) -> tuple[str, float]:
    """The tensor class of an ``mma.sync`` and what its SASS tensor instructions are worth in
    that class's unit (:data:`UNITS`; a 4-bit one runs two 8-bit ones)."""
    a = fragments(opcode)[0]
    if a.element in ("s4", "u4"):
        shape, _ = FOUR_BIT[(a.m, a.n, a.k)]
        return "mma.i8", 2 * UNITS[("i8", *shape)]
    return SASS[a.element][0], UNITS[(_FAMILY[a.element], a.m, a.n, a.k)]


def sass_slots(opcode: str) -> dict[str, float]:
    """Warp instructions of one ``mma.sync`` per class: its tensor instructions
    (:func:`sass_count`) and, for 4-bit inputs, the integer work of ptxas's subroutine."""
    cls, units = sass_count(opcode)
    slots = {cls: units}
    a, b, _, _ = fragments(opcode)
    if a.element in ("s4", "u4"):
        _, work = FOUR_BIT[(a.m, a.n, a.k)]
        slots["int"], slots["imad"] = work[(a.element == "s4", b.element == "s4")]
        slots["branch"] = 2  # the call and the return
    return slots


def matrices(opcode: str) -> tuple[int, bool]:
    """How many 8 x 8 matrices of 16-bit elements an ``ldmatrix``/``stmatrix``/``movmatrix``
    moves, and whether it transposes them."""
    parts = opcode.split(".")
    if "m8n8" not in parts or "b16" not in parts:
        raise UnsupportedError(f"the matrix move '{opcode}' (only .m8n8 of .b16)")
    count = next((int(p[1]) for p in parts if p in ("x1", "x2", "x4")), 1)
    return count, "trans" in parts


def to_lanes(rows: np.ndarray, trans: bool) -> np.ndarray:
    """(warps, matrices, 8, 8) 16-bit elements, by rows -> (warps, matrices, 32) registers:
    lane ``l`` holds elements ``2t, 2t + 1`` of row ``g`` (of column ``g`` if ``trans``)."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    m = rows.transpose(0, 1, 3, 2) if trans else rows
    low, high = m[:, :, g, 2 * t], m[:, :, g, 2 * t + 1]
    return low.astype(np.uint32) | (high.astype(np.uint32) << np.uint32(16))


def from_lanes(registers: np.ndarray, trans: bool) -> np.ndarray:
    """The inverse of :func:`to_lanes`: (warps, matrices, 32) registers -> the matrices by
    rows, (warps, matrices, 8, 8) 16-bit elements."""
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    out = np.zeros(registers.shape[:2] + (8, 8), np.uint16)
    out[:, :, g, 2 * t] = (registers & np.uint32(0xFFFF)).astype(np.uint16)
    out[:, :, g, 2 * t + 1] = (registers >> np.uint32(16)).astype(np.uint16)
    return out.transpose(0, 1, 3, 2) if trans else out
