"""C operators on lane values: arithmetic with C's truncating division, conversions
between types, and nvcc's fused multiply-add.

>>> import numpy as np
>>> int(c_div(np.int32(-7), np.int32(2))), int(c_mod(np.int32(-7), np.int32(2)))
(-3, -1)
"""

from __future__ import annotations

import numpy as np

from . import c_types as ct
from .c_types import DOUBLE, CType
from .names import Expr
from .values import cast_dtype, convert


def truth(v):
    """C truth value of a scalar value (bool array or bool)."""
    return v != 0


# numpy operation per C operator, for operands already converted to the common type
def c_div(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.divide(x, y)
    zero_div = y == 0
    ys = np.where(zero_div, 1, y).astype(np.asarray(y).dtype)
    q = np.floor_divide(x, ys)
    if np.asarray(x).dtype.kind == "i":
        r = x - q * ys
        q = q + ((r != 0) & ((x < 0) != (ys < 0))).astype(q.dtype)
    # the GPU's quotient for a zero divisor is all ones (-1, or the largest unsigned value);
    # made in the quotient's own type, since NumPy 2.5 refuses an out-of-range Python -1
    all_ones = np.array(-1, dtype=np.int64).astype(np.asarray(q).dtype)
    return np.where(zero_div, all_ones, q)[()]


def c_mod(x, y):
    if np.asarray(x).dtype.kind == "f":
        return np.fmod(x, y)
    ys = np.where(y == 0, 1, y).astype(np.asarray(y).dtype)
    return np.fmod(x, ys)


ARITH = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": c_div, "%": c_mod,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
}
COMPARE = {"<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
           "==": np.equal, "!=": np.not_equal}
SHIFT = {"<<": np.left_shift, ">>": np.right_shift}


def caster(src: CType, dst: CType):
    if src == dst or (src.dtype is not None and src.dtype == dst.dtype):
        return None
    return lambda x: convert(x, src, dst)


def decay(t: CType) -> CType:
    return ct.pointer(t.base) if t.kind == "array" else t


def fused(x: Expr, y: Expr, other: Expr, op: str, product_first: bool):
    """Closure for ``x*y + other`` (``product_first``) or ``other +/- x*y`` rounded once."""
    f64 = np.dtype(np.float64)
    cx, cy, co = (caster(e.type, DOUBLE) or (lambda v: v) for e in (x, y, other))
    fx, fy, fo = x.fn, y.fn, other.fn
    to_float = np.dtype(np.float32)

    def fn(b):
        p = cast_dtype(cx(cast_dtype(fx(b), to_float)), f64) * cy(cast_dtype(fy(b), to_float))
        o = co(cast_dtype(fo(b), to_float))
        if op == "+":
            r = p + o
        elif product_first:
            r = p - o
        else:
            r = o - p
        return cast_dtype(r, to_float)
    return fn
