"""C types of the emulated CUDA C++ subset and C's arithmetic conversions.

Every expression gets its type at compile time, so the interpreter only runs
NumPy operations whose dtypes already follow C's rules.

>>> usual_arithmetic(INT, UINT).name
'unsigned int'
>>> usual_arithmetic(SHORT, CHAR).name
'int'
>>> usual_arithmetic(FLOAT, INT).name
'float'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CType:
    """A C type: scalar (``dtype`` set), pointer, array, vector (float4...) or void."""

    name: str
    kind: str  # "int" | "float" | "bool" | "ptr" | "array" | "vec" | "void"
    dtype: np.dtype | None = None
    base: CType | None = None  # pointee, array element or vector component
    dims: tuple[int, ...] = ()  # array extents, or (n,) for vectors
    align: int = 0
    fields: tuple = ()  # struct members: (name, CType, byte offset)
    nbytes: int = 0  # struct size

    @property
    def size(self) -> int:
        """``sizeof`` in bytes."""
        if self.kind == "ptr":
            return 8
        if self.kind == "array":
            return self.base.size * int(np.prod(self.dims))
        if self.kind == "vec":
            return self.align
        if self.kind == "struct":
            return self.nbytes
        if self.kind == "void":
            return 1
        return self.dtype.itemsize

    @property
    def is_arith(self) -> bool:
        return self.kind in ("int", "float", "bool")

    @property
    def signed(self) -> bool:
        return self.dtype is not None and self.dtype.kind in "if"

    def __str__(self) -> str:
        return self.name


def _scalar(name: str, kind: str, dt) -> CType:
    return CType(name, kind, np.dtype(dt))


BOOL = _scalar("bool", "bool", np.bool_)
CHAR = _scalar("char", "int", np.int8)
UCHAR = _scalar("unsigned char", "int", np.uint8)
SHORT = _scalar("short", "int", np.int16)
USHORT = _scalar("unsigned short", "int", np.uint16)
INT = _scalar("int", "int", np.int32)
UINT = _scalar("unsigned int", "int", np.uint32)
LONG = _scalar("long long", "int", np.int64)
ULONG = _scalar("unsigned long long", "int", np.uint64)
FLOAT = _scalar("float", "float", np.float32)
DOUBLE = _scalar("double", "float", np.float64)
VOID = CType("void", "void")


def pointer(base: CType) -> CType:
    """Pointer to ``base``."""
    return CType(f"{base.name}*", "ptr", np.dtype(np.uint64), base=base)


def array(base: CType, dims: tuple[int, ...]) -> CType:
    """Array of ``base`` with the given extents (outermost first)."""
    ext = "".join(f"[{d}]" for d in dims)
    return CType(f"{base.name}{ext}", "array", None, base=base, dims=tuple(dims))


def vector(base: CType, n: int) -> CType:
    """CUDA vector type such as ``float4`` (``base`` = FLOAT, ``n`` = 4)."""
    prefix = {
        "float": "float", "double": "double", "int": "int", "unsigned int": "uint",
        "char": "char", "unsigned char": "uchar", "short": "short", "unsigned short": "ushort",
        "long long": "longlong", "unsigned long long": "ulonglong",
    }[base.name]
    size = base.size * n
    align = size if n != 3 else base.size * 3
    if n == 3:
        return CType(f"{prefix}3", "vec", None, base=base, dims=(3,), align=align)
    return CType(f"{prefix}{n}", "vec", None, base=base, dims=(n,), align=align)


def alignment(t: CType) -> int:
    """Alignment in bytes of a value of type ``t``."""
    if t.kind == "vec":
        return t.base.size if t.dims[0] == 3 else t.size
    if t.kind == "array":
        return alignment(t.base)
    if t.kind == "struct":
        return t.align
    return max(t.size, 1)


def struct(name: str, members: list[tuple[str, CType]]) -> CType:
    """A struct with C layout: each member at its natural alignment.

    >>> s = struct("P", [("c", CHAR), ("f", FLOAT), ("v", VECTORS["float2"])])
    >>> [off for _, _, off in s.fields], s.size
    ([0, 4, 8], 16)
    """
    off, fields, align = 0, [], 1
    for fname, ft in members:
        a = alignment(ft)
        off = -(-off // a) * a
        fields.append((fname, ft, off))
        off += ft.size
        align = max(align, a)
    return CType(name, "struct", None, fields=tuple(fields), align=align,
                 nbytes=-(-off // align) * align)


SCALARS: dict[str, CType] = {
    "bool": BOOL, "char": CHAR, "signed char": CHAR, "unsigned char": UCHAR,
    "short": SHORT, "short int": SHORT, "signed short": SHORT,
    "unsigned short": USHORT, "unsigned short int": USHORT,
    "int": INT, "signed": INT, "signed int": INT, "unsigned": UINT, "unsigned int": UINT,
    "long": LONG, "long int": LONG, "signed long": LONG, "long long": LONG,
    "long long int": LONG, "signed long long": LONG,
    "unsigned long": ULONG, "unsigned long int": ULONG, "unsigned long long": ULONG,
    "unsigned long long int": ULONG,
    "float": FLOAT, "double": DOUBLE, "void": VOID,
    "size_t": ULONG, "ptrdiff_t": LONG, "uint": UINT,
    "int8_t": CHAR, "uint8_t": UCHAR, "int16_t": SHORT, "uint16_t": USHORT,
    "int32_t": INT, "uint32_t": UINT, "int64_t": LONG, "uint64_t": ULONG,
}

VECTORS: dict[str, CType] = {}
for _base in (FLOAT, DOUBLE, INT, UINT, CHAR, UCHAR, SHORT, USHORT, LONG, ULONG):
    for _n in (1, 2, 3, 4):
        _v = vector(_base, _n)
        VECTORS[_v.name] = _v


def lookup(name: str) -> CType | None:
    """The scalar or vector type of a type name, or ``None``."""
    return SCALARS.get(name) or VECTORS.get(name)


def promote(t: CType) -> CType:
    """Integer promotion: types narrower than ``int`` become ``int``."""
    if t.kind == "bool" or (t.kind == "int" and t.size < 4):
        return INT
    return t


def usual_arithmetic(a: CType, b: CType) -> CType:
    """The common type of a binary arithmetic operation (C11 6.3.1.8)."""
    if DOUBLE in (a, b):
        return DOUBLE
    if FLOAT in (a, b):
        return FLOAT
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.size >= b.size else b
    uns, sig = (a, b) if not a.signed else (b, a)
    if uns.size >= sig.size:
        return uns
    return sig

