"""Warp matrix operations (``wmma.load``, ``wmma.mma``, ``wmma.store``): the tensor cores'
PTX interface, as ``nvcuda::wmma`` compiles to it.

A fragment is a warp's share of a matrix tile, spread over its 32 lanes' registers. PTX leaves
the element-to-lane mapping unspecified (code that indexes ``frag.x[i]`` may only apply the
same operation to every element), so the emulator picks one, the one ptxas uses on sm_80 and
later for the common tiles: a load instruction moves 8 rows x 4 chunks of 4 bytes, lane ``l``
taking chunk ``l % 4`` of row ``l / 4`` (:func:`pattern`). A fragment of A or B keeps its
memory layout (``wmma.mma`` names the layouts it was loaded with); an accumulator is always
laid out by rows, and a load or store in columns moves it element by element. Where PTX gives
a fragment more registers than its elements need (f16 A and B were replicated on Volta),
register ``r`` repeats register ``r % slots``.

``wmma.mma`` gathers each warp's tiles, multiplies in float64 (int64 for 8-bit integers) and
rounds once to the accumulator's type: the tensor cores' own accumulation order and
truncation are not reproduced, so float results may differ from the GPU's in the last bits.

Written by hand: the emulator interprets PTX, and no library executes PTX's warp matrix
instructions on NumPy arrays.

>>> g = fragment("wmma.load.a.sync.aligned.row.m16n16k16.global.f16")
>>> (g.role, g.rows, g.cols, g.per_register, g.slots)
('a', 16, 16, 2, 4)
>>> rows, cols = coordinates(g)
>>> rows[5, 0].tolist(), cols[5, 0].tolist()   # lane 5, register 0: row 1, columns 2 and 3
([1, 1], [2, 3])
>>> sass_count("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32")
('mma.f16', 2)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..errors import UnsupportedError

#: element types: (NumPy storage type, bits)
ELEMENTS = {"f16": (np.uint16, 16), "bf16": (np.uint16, 16), "tf32": (np.uint32, 32),
            "f32": (np.uint32, 32), "s32": (np.uint32, 32), "s8": (np.uint8, 8),
            "u8": (np.uint8, 8), "f64": (np.uint64, 64), "s4": (np.uint8, 4),
            "u4": (np.uint8, 4)}
#: the 4-bit types: ``mma.sync`` takes them (:mod:`cudakit.emu.mma`); ``nvcuda::wmma``'s
#: experimental sub-byte fragments are left out
SUB_BYTE = {"s4", "u4"}
#: multiply-adds of one SASS tensor instruction per input type on sm_90 (nvdisasm of nvcc
#: 13.0's code: HMMA.16816 for f16/bf16, HMMA.1684 for tf32, DMMA.884, IMMA.16816), and the
#: class each counts in (:mod:`cudakit.emu.counts`)
SASS = {"f16": ("mma.f16", 16 * 8 * 16), "bf16": ("mma.f16", 16 * 8 * 16),
        "tf32": ("mma.tf32", 16 * 8 * 4), "f64": ("mma.f64", 8 * 8 * 4),
        "s8": ("mma.i8", 16 * 8 * 16), "u8": ("mma.i8", 16 * 8 * 16)}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


@dataclass(frozen=True)
class Fragment:
    """One operand of a warp matrix instruction: its role (``a``, ``b``, ``c``/``d``), the
    element type, and the tile in the order its fragment keeps it (``rows`` x ``cols``,
    row-major over memory for A and B, over the matrix for an accumulator)."""

    role: str
    element: str
    m: int
    n: int
    k: int
    layout: str  # row or col: how the tile lies in memory (A and B: also in the fragment)

    @property
    def bits(self) -> int:
        return ELEMENTS[self.element][1]

    @property
    def register_bits(self) -> int:
        return 64 if self.bits == 64 else 32

    @property
    def per_register(self) -> int:
        return self.register_bits // self.bits

    @property
    def matrix(self) -> tuple[int, int]:
        """The tile's shape as a matrix: A is m x k, B k x n, C and D m x n."""
        return {"a": (self.m, self.k), "b": (self.k, self.n)}.get(self.role, (self.m, self.n))

    @property
    def rows(self) -> int:
        r, c = self.matrix
        return c if self.role in "ab" and self.layout == "col" else r

    @property
    def cols(self) -> int:
        r, c = self.matrix
        return r if self.role in "ab" and self.layout == "col" else c

    @property
    def slots(self) -> int:
        """Registers per lane the tile needs (each register once)."""
        return self.rows * self.cols // (32 * self.per_register)

    @property
    def chunk(self) -> int:
        """Elements one lane moves in one access: 4 bytes, 8 for a 32-bit accumulator
        (ptxas stores those in pairs) or a double."""
        return 2 if self.role == "c" and self.bits == 32 else self.per_register

    @property
    def accesses(self) -> int:
        """Loads or stores per lane that move the tile (by rows in memory)."""
        return self.rows * self.cols // (32 * self.chunk)


def _parts(opcode: str) -> tuple[list[str], tuple[int, int, int]]:
    parts = opcode.split(".")
    shape = next((_SHAPE.fullmatch(p) for p in parts if _SHAPE.fullmatch(p)), None)
    if shape is None:
        raise UnsupportedError(f"the warp matrix instruction '{opcode}' (no shape)")
    return parts, tuple(int(v) for v in shape.groups())


def fragment(opcode: str) -> Fragment:
    """The fragment a ``wmma.load`` or ``wmma.store`` moves."""
    parts, (m, n, k) = _parts(opcode)
    role = parts[2]  # wmma.load.a, wmma.store.d
    element = parts[-1]
    if element not in ELEMENTS or element in SUB_BYTE:
        raise UnsupportedError(f"warp matrix fragments of type .{element} ('{opcode}')")
    layout = "col" if "col" in parts else "row"
    return Fragment("c" if role == "d" else role, element, m, n, k, layout)


def mma_fragments(opcode: str) -> tuple[Fragment, Fragment, Fragment, Fragment]:
    """A, B, C and D of a ``wmma.mma``: ``.alayout.blayout.shape`` then the types: D and C
    for f16 inputs, else D, A, B, C."""
    parts, (m, n, k) = _parts(opcode)
    layouts = [p for p in parts if p in ("row", "col")]
    types = [p for p in parts if p in ELEMENTS]
    if SUB_BYTE & set(types):
        raise UnsupportedError(f"warp matrix fragments of 4-bit types ('{opcode}')")
    if len(layouts) != 2 or len(types) not in (2, 4):
        raise UnsupportedError(f"the warp matrix instruction '{opcode}'")
    d, a, b, c = (types[0], "f16", "f16", types[1]) if len(types) == 2 else types
    return (Fragment("a", a, m, n, k, layouts[0]), Fragment("b", b, m, n, k, layouts[1]),
            Fragment("c", c, m, n, k, "row"), Fragment("c", d, m, n, k, "row"))


@cache
def pattern(rows: int, cols: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and first column of each (lane, access) of a tile kept by rows: an access moves
    ``chunk`` neighbours of a row; one access of the 32 lanes covers R rows x 32 / R chunks
    (8 x 4 where the tile allows)."""
    chunks = cols // chunk
    across = min(chunks, max(4, 32 // rows))
    down = 32 // across
    if down * across != 32 or rows % down or chunks % across:
        raise UnsupportedError(f"a warp matrix tile of {rows} x {cols}")
    lane = np.arange(32)
    g, t = lane // across, lane % across
    blocks_down = rows // down
    access = np.arange(blocks_down * (chunks // across))
    rb, cb = access % blocks_down, access // blocks_down
    row = rb[None, :] * down + g[:, None]
    col = (cb[None, :] * across + t[:, None]) * chunk
    return row, col


def coordinates(f: Fragment) -> tuple[np.ndarray, np.ndarray]:
    """Row and column in the fragment's tile of each (lane, register, element)."""
    row, col = pattern(f.rows, f.cols, f.chunk)
    per = f.chunk // f.per_register  # registers per access
    r = np.arange(f.slots)
    j = np.arange(f.per_register)
    rows = np.broadcast_to(row[:, r // per, None], (32, f.slots, f.per_register))
    cols = col[:, r // per, None] + ((r % per) * f.per_register)[None, :, None] + j
    return rows, cols


def sass_count(opcode: str) -> tuple[str, int]:
    """The class and number of SASS instructions one ``wmma`` instruction runs as: tensor
    instructions for ``wmma.mma`` (its multiply-adds over one instruction's), one memory
    instruction per register moved for a load or store."""
    parts, (m, n, k) = _parts(opcode)
    if parts[1] == "mma":
        a = mma_fragments(opcode)[0]
        cls, fmas = SASS[a.element]
        return cls, max(1, m * n * k // fmas)
    f = fragment(opcode)
    space = next((p for p in parts if p in ("global", "shared")), "global")
    moves = f.accesses if f.role in "ab" or f.layout == "row" else f.slots * f.per_register
    return ("ld." if parts[1] == "load" else "st.") + space, moves


def full_warps(lanes: np.ndarray, what: str) -> np.ndarray:
    """``lanes`` as (warps, 32), or an error if a warp is not all there."""
    if lanes.size % 32 == 0:
        w = lanes.reshape(-1, 32)
        if (w == w[:, :1] + np.arange(32)).all() and not (w[:, 0] % 32).any():
            return w
    raise UnsupportedError(f"{what} needs all 32 threads of each warp (the warp diverged)")


def element_offsets(f: Fragment) -> tuple[np.ndarray, np.ndarray]:
    """Per (lane, register, element): the element's place in memory as (outer, inner) for
    a row-major view with the stride between outer rows."""
    rows, cols = coordinates(f)
    if f.role == "c" and f.layout == "col":  # the accumulator is kept by rows
        return cols, rows
    return rows, cols


def decode_values(bits: np.ndarray, element: str) -> np.ndarray:
    """Stored elements as numbers (float64, or int64 for integers)."""
    if element == "f16":
        return bits.view(np.float16).astype(np.float64)
    if element == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if element == "tf32":  # the tensor cores read the 19 high bits
        return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if element == "f32":
        return bits.view(np.float32).astype(np.float64)
    if element == "f64":
        return bits.view(np.float64)
    if element == "s8":
        return bits.view(np.int8).astype(np.int64)
    if element == "u8" or element == "u4":
        return bits.astype(np.int64)
    if element == "s4":  # two's complement in the low 4 bits
        v = bits.astype(np.int64)
        return np.where(v >= 8, v - 16, v)
    return bits.view(np.int32).astype(np.int64)  # s32


def encode_values(values: np.ndarray, element: str, saturate: bool = False) -> np.ndarray:
    """Numbers rounded to ``element`` and returned as its stored bits."""
    if element == "f16":
        return values.astype(np.float16).view(np.uint16)
    if element == "f32":
        return values.astype(np.float32).view(np.uint32)
    if element == "f64":
        return values.astype(np.float64).view(np.uint64)
    if saturate:
        values = np.clip(values, -2**31, 2**31 - 1)
    return (values.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)  # s32 wraps


def join(elements: np.ndarray, f: Fragment) -> np.ndarray:
    """Stored elements (..., per register) -> the registers' bits (...)."""
    store = np.uint64 if f.register_bits == 64 else np.uint32
    shifts = (np.arange(f.per_register) * f.bits).astype(store)
    return (elements.astype(store) << shifts).sum(axis=-1, dtype=store)


def split(bits: np.ndarray, f: Fragment) -> np.ndarray:
    """Registers' bits (...) -> their stored elements (..., per register)."""
    store = np.uint64 if f.register_bits == 64 else np.uint32
    shifts = (np.arange(f.per_register) * f.bits).astype(store)
    elements = (np.asarray(bits).astype(store)[..., None] >> shifts) & store(2**f.bits - 1)
    return elements.astype(ELEMENTS[f.element][0])


def unpack(registers: list[np.ndarray], f: Fragment, where=coordinates) -> np.ndarray:
    """(warps, 32) register bits, one array per register -> the warps' tiles in fragment
    order, (warps, rows, cols) of numbers (``where``: the fragment's layout, as
    :func:`coordinates` gives it)."""
    values = decode_values(split(np.stack(registers[: f.slots], axis=-1), f), f.element)
    rows, cols = where(f)
    tile = np.zeros((values.shape[0], f.rows, f.cols), values.dtype)
    tile[:, rows, cols] = values
    return tile


def pack(tile: np.ndarray, f: Fragment, saturate: bool = False,
         where=coordinates) -> list[np.ndarray]:
    """(warps, rows, cols) numbers -> per register, the bits of every lane (warps * 32)."""
    rows, cols = where(f)
    regs = join(encode_values(tile[:, rows, cols], f.element, saturate), f)
    return [regs[:, :, s].reshape(-1) for s in range(f.slots)]


def multiply(a: np.ndarray, b: np.ndarray, c: np.ndarray, fa: Fragment,
             fb: Fragment) -> np.ndarray:
    """D = A B + C on tiles in fragment order (A and B by their layouts), in fragment order."""
    am = a if fa.layout == "row" else a.transpose(0, 2, 1)
    bm = b if fb.layout == "row" else b.transpose(0, 2, 1)
    return am @ bm + c
