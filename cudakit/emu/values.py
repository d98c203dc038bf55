"""Lane values: NumPy arrays (one element per lane) or NumPy scalars (uniform values).

Vector values (``float4``...) are tuples of component values.

>>> import numpy as np
>>> from cudakit.emu.c_types import INT, FLOAT
>>> convert(np.float32(-2.7), FLOAT, INT)
np.int32(-2)
>>> convert(np.float32(1e10), FLOAT, INT)
np.int32(2147483647)
"""

from __future__ import annotations

import numpy as np

from .c_types import BOOL, CType


def cast_dtype(x, dt: np.dtype):
    """``x`` as dtype ``dt`` with C's wrap-around and truncation toward zero."""
    if isinstance(x, tuple):
        raise TypeError("vector value where a scalar was expected")
    if isinstance(x, np.ndarray) and x.ndim:
        return x.astype(dt, copy=False)
    if dt == np.bool_:
        return np.bool_(x != 0)
    return np.asarray(x).astype(dt)[()]


def convert(x, src: CType, dst: CType):
    """Convert a value of C type ``src`` to C type ``dst``."""
    if src == dst:
        return x
    if dst.kind == "vec":
        if src.kind == "vec":
            return tuple(cast_dtype(c, dst.base.dtype) for c in x)
        raise TypeError(f"cannot convert {src} to {dst}")
    if dst == BOOL:
        return x != 0
    if src.kind == "float" and dst.kind == "int":
        return float_to_int(x, dst.dtype)
    if dst.kind in ("int", "float", "ptr"):
        return cast_dtype(x, dst.dtype)
    raise TypeError(f"cannot convert {src} to {dst}")


def float_to_int(x, dt: np.dtype):
    """C cast of a float to an integer type as the GPU's cvt.rzi does it: truncate toward
    zero, saturate at the type's range, NaN becomes 0.

    >>> float_to_int(np.array([3e10, -1.5, np.nan], np.float32), np.dtype(np.int32)).tolist()
    [2147483647, -1, 0]
    >>> float_to_int(np.float32(-3.0), np.dtype(np.uint32))
    np.uint32(0)
    """
    info = np.iinfo(dt)
    top = float(np.nextafter(np.float64(info.max) + 1, 0)) if dt.itemsize == 8 else info.max
    v = np.clip(np.nan_to_num(np.asarray(x, np.float64), nan=0.0), info.min, top)
    return v.astype(dt)[()]


def full(x, n: int):
    """``x`` as an array of ``n`` lanes (copies nothing if it already is one)."""
    if isinstance(x, tuple):
        return tuple(full(c, n) for c in x)
    if isinstance(x, np.ndarray) and x.ndim:
        return x
    return np.full(n, x)


def select(mask, new, old):
    """Per lane: ``new`` where ``mask``, else ``old`` (both of the same type)."""
    if isinstance(new, tuple):
        return tuple(select(mask, n, o) for n, o in zip(new, old, strict=False))
    return np.where(mask, new, old)


def zero(t: CType):
    """The zero value of type ``t`` (uniform)."""
    if t.kind == "vec":
        return tuple(t.base.dtype.type(0) for _ in range(t.dims[0]))
    if t.kind == "struct":
        return tuple(zero(ft) for _, ft, _ in t.fields)
    if t.dtype is None:
        return np.uint64(0)
    return t.dtype.type(0)
