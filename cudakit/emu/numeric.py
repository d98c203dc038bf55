"""PTX arithmetic on NumPy lane arrays, bit-exact where the ISA defines the bits.

Types: PTX type names map to NumPy dtypes (``bf16`` travels as float32 values and
is rounded to bfloat16 when stored). Integer operations wrap; division by zero
gives all ones as on the GPU; float-to-integer conversions saturate and send NaN
to 0; ``fma`` rounds once (float32 through float64, float64 through an
error-free product).

>>> import numpy as np
>>> int(div(np.array([7], np.int32), np.array([0], np.int32))[0])
-1
>>> cvt_float_to_int(np.array([3.7, -1e20, np.nan]), np.int32, "rzi").tolist()
[3, -2147483648, 0]
"""

from __future__ import annotations

import numpy as np

DTYPES = {
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64, "pred": np.bool_,
    "f16x2": np.float16, "b128": np.uint64,
}
STORAGE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) -> float32 values."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x) -> np.ndarray:
    """float32 values -> bfloat16 bit patterns (round to nearest even, NaN kept)."""
    b = np.asarray(x, np.float32).view(np.uint32)
    r = (b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, (b >> np.uint32(16)) | np.uint32(0x40), r).astype(np.uint16)


def div(a, b):
    """Integer division truncating towards zero; x / 0 is all ones."""
    a = np.asarray(a)
    b = np.asarray(b)
    dt = np.result_type(a, b)
    zero = b == 0
    bs = np.where(zero, 1, b).astype(dt)
    if dt.kind == "u":
        q = a // bs
    else:
        wide = np.int64 if dt.itemsize < 8 else dt
        aw, bw = a.astype(wide), bs.astype(wide)
        q = np.abs(aw) // np.abs(bw)
        q = np.where((aw < 0) != (bw < 0), -q, q)
    return np.where(zero, np.array(-1).astype(dt), q).astype(dt)


def rem(a, b):
    """Integer remainder with the sign of the dividend; x % 0 is x."""
    a = np.asarray(a)
    b = np.asarray(b)
    dt = np.result_type(a, b)
    q = div(a, b)
    r = (a - q * np.where(b == 0, 0, b).astype(dt)).astype(dt)
    return np.where(b == 0, a, r).astype(dt)


def mul_hi(a, b, dt):
    """High half of the double-width product."""
    dt = np.dtype(dt)
    if dt.itemsize < 8:
        wide = np.int64 if dt.kind == "i" else np.uint64
        return ((np.asarray(a).astype(wide) * np.asarray(b).astype(wide))
                >> (8 * dt.itemsize)).astype(dt)
    ua, ub = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    al, ah, bl, bh = ua & m, ua >> s, ub & m, ub >> s
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> s) + (lh & m) + (hl & m)
    hi = hh + (lh >> s) + (hl >> s) + (mid >> s)
    if dt.kind == "i":  # signed correction: subtract b if a < 0, a if b < 0
        sa = np.asarray(a).astype(np.int64) < 0
        sb = np.asarray(b).astype(np.int64) < 0
        hi = hi - np.where(sa, ub, 0).astype(np.uint64) - np.where(sb, ua, 0).astype(np.uint64)
    return hi.astype(dt) if dt.kind == "u" else hi.view(np.int64) if isinstance(hi, np.ndarray) \
        else np.int64(hi)


def fma(a, b, c, dt):
    """``a * b + c`` rounded once."""
    if dt == np.float64:
        return fma64(np.asarray(a, np.float64), np.asarray(b, np.float64),
                     np.asarray(c, np.float64))
    # the product of two floats (or halves) is exact in doubles; one rounding after the sum
    product = np.multiply(a, b, dtype=np.float64)
    return np.add(product, c, dtype=np.float64).astype(dt)


def fma64(a, b, c):
    """Double-precision fused multiply-add through Dekker's exact product (error-free
    transformations: NumPy has no vectorised fma)."""
    p = a * b
    split = 134217729.0
    t = split * a
    ah = t - (t - a)
    al = a - ah
    t = split * b
    bh = t - (t - b)
    bl = b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    e = (p - (s - v)) + (c - v)
    out = s + (e + err)
    bad = ~np.isfinite(p) | ~np.isfinite(out)
    return np.where(bad, p + c, out) if np.ndim(out) else (p + c if bad else out)


_INT_LIMITS = {np.dtype(t): (np.iinfo(t).min, np.iinfo(t).max) for t in
               (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}


def round_float(x, mode: str):
    """Round to an integral value: rni (nearest even), rzi, rmi (floor), rpi (ceil)."""
    return {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil,
            "rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}[mode](x)


def cvt_float_to_int(x, dt, mode: str):
    """Float -> integer with the rounding ``mode``, saturating, NaN -> 0."""
    dt = np.dtype(dt)
    lo, hi = _INT_LIMITS[dt]
    r = round_float(np.asarray(x, np.float64), mode or "rzi")
    nan = np.isnan(r)
    r = np.where(nan, 0, r)
    if dt.itemsize == 8:
        out = np.where(r >= float(hi), hi, 0).astype(dt)
        low = r <= float(lo)
        mid = ~(r >= float(hi)) & ~low
        out = np.where(low, np.array(lo).astype(dt), out)
        return np.where(mid, np.clip(r, float(lo), float(hi)).astype(dt, casting="unsafe"),
                        out).astype(dt)
    return np.clip(r, lo, hi).astype(dt)


def shift_left(a, n, bits):
    n = np.asarray(n).astype(np.uint32)
    big = n >= bits
    return np.where(big, 0, np.asarray(a) << np.where(big, 0, n).astype(np.asarray(a).dtype)
                    ).astype(np.asarray(a).dtype)


def shift_right(a, n, bits):
    a = np.asarray(a)
    n = np.asarray(n).astype(np.uint32)
    big = n >= bits
    s = np.where(big, bits - 1 if a.dtype.kind == "i" else 0, n).astype(a.dtype)
    out = a >> s
    if a.dtype.kind == "u":
        out = np.where(big, 0, out)
    return out.astype(a.dtype)


def popc(a):
    a = np.asarray(a)
    return np.bitwise_count(a).astype(np.uint32)


def clz(a, bits):
    a = np.asarray(a).astype(np.uint64)
    out = np.full(a.shape, bits, np.uint32)
    nz = a != 0
    if np.any(nz):
        lg = np.floor(np.log2(np.where(nz, a, 1).astype(np.float64))).astype(np.int64)
        # float log2 may round up near powers of two: fix by checking the bit
        lg = np.where((np.uint64(1) << lg.astype(np.uint64)) > a, lg - 1, lg)
        out = np.where(nz, bits - 1 - lg, bits).astype(np.uint32)
    return out


def brev(a, bits):
    a = np.asarray(a).astype(np.uint64)
    out = np.zeros(a.shape, np.uint64)
    for i in range(bits):
        out |= ((a >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
    return out.astype(STORAGE[bits // 8])


def bfind(a, bits, signed, shiftamt):
    a = np.asarray(a)
    v = a.astype(np.int64) if signed else a.astype(np.uint64)
    if signed:
        v = np.where(v < 0, ~v, v)
    v = v.astype(np.uint64)
    msb = bits - 1 - clz(v, bits).astype(np.int64)
    out = np.where(v == 0, 0xFFFFFFFF, (bits - 1 - msb) if shiftamt else msb)
    return out.astype(np.int64).astype(np.uint32)


def bfe(a, pos, length, bits, signed):
    a = np.asarray(a)
    pos = np.minimum(np.asarray(pos).astype(np.int64) & 0xFF, 255)
    length = np.minimum(np.asarray(length).astype(np.int64) & 0xFF, 255)
    u = a.astype(STORAGE[bits // 8]).astype(np.uint64)
    p = np.minimum(pos, 63).astype(np.uint64)
    ln = np.minimum(length, 64).astype(np.uint64)
    mask = np.where(ln >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1))
    field = np.where(pos >= bits, 0, u >> p) & mask
    if signed:
        sbit_pos = np.minimum(pos + length - 1, bits - 1)
        sbit = np.where(length == 0, 0, (u >> sbit_pos.astype(np.uint64)) & np.uint64(1))
        ext = np.where((sbit == 1) & (ln < 64), ~mask, 0)
        field = field | ext
    out = field.astype(STORAGE[bits // 8])
    return out.view(SIGNED[bits // 8]) if signed else out


def bfi(a, b, pos, length, bits):
    st = STORAGE[bits // 8]
    a = np.asarray(a).astype(np.uint64)
    b = np.asarray(b).astype(np.uint64)
    pos = np.asarray(pos).astype(np.int64) & 0xFF
    length = np.asarray(length).astype(np.int64) & 0xFF
    ln = np.minimum(length, np.maximum(bits - pos, 0)).astype(np.uint64)
    p = np.minimum(pos, 63).astype(np.uint64)
    mask = np.where(ln >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(ln, 63)) - np.uint64(1)) << p
    out = np.where(pos >= bits, b, (b & ~mask) | ((a << p) & mask))
    return out.astype(st)


def prmt(a, b, c, mode: str):
    """Byte permute (``prmt.b32``), the default mode and f4e/b4e/rc8/ecl/ecr/rc16."""
    a = np.asarray(a).astype(np.uint64)
    b = np.asarray(b).astype(np.uint64)
    c = np.asarray(c).astype(np.uint64)
    src = a | (b << np.uint64(32))
    shape = np.broadcast(a, b, c).shape
    out = np.zeros(shape, np.uint64)
    byte = lambda k: (src >> np.uint64(8) * k.astype(np.uint64)) & np.uint64(0xFF)  # noqa: E731
    if not mode:
        for i in range(4):
            sel = (c >> np.uint64(4 * i)) & np.uint64(0xF)
            v = byte(sel & np.uint64(7))
            sign = (sel & np.uint64(8)) != 0
            msb = (v >> np.uint64(7)) & np.uint64(1)
            v = np.where(sign, np.where(msb == 1, np.uint64(0xFF), np.uint64(0)), v)
            out |= v << np.uint64(8 * i)
        return out.astype(np.uint32)
    s = c & np.uint64(3)
    tables = {
        "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
        "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
        "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
        "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
        "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
        "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
    }[mode]
    for i in range(4):
        sel = np.choose(s.astype(np.int64), [np.uint64(t[i]) for t in tables])
        out |= byte(np.asarray(sel, np.uint64)) << np.uint64(8 * i)
    return out.astype(np.uint32)


def lop3(a, b, c, lut: int):
    out = np.zeros(np.broadcast(a, b, c).shape, np.asarray(a).dtype)
    for k in range(8):
        if lut >> k & 1:
            ta = a if k & 4 else ~a
            tb = b if k & 2 else ~b
            tc = c if k & 1 else ~c
            out = out | (ta & tb & tc)
    return out


def funnel(a, b, n, left: bool, wrap: bool):
    """``shf.l``/``shf.r``: shift the 64-bit value ``b:a`` and keep 32 bits."""
    n = np.asarray(n).astype(np.uint64)
    n = n & np.uint64(31) if wrap else np.minimum(n, np.uint64(32))
    v = np.asarray(a).astype(np.uint64) | (np.asarray(b).astype(np.uint64) << np.uint64(32))
    if left:
        return ((v << n) >> np.uint64(32)).astype(np.uint32)
    return (v >> n).astype(np.uint32)


def float_compare(op: str, a, b):
    """``setp`` comparisons: ordered ones are False with NaN, ``u`` ones are True."""
    unordered = op.endswith("u") and op not in ("num",)
    base = op[:-1] if unordered and op != "nan" else op
    if op == "num":
        return ~(np.isnan(a) | np.isnan(b))
    if op == "nan":
        return np.isnan(a) | np.isnan(b)
    res = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}[base](a, b)
    if unordered:
        return res | np.isnan(a) | np.isnan(b)
    if base == "ne":
        return res & ~(np.isnan(a) | np.isnan(b))
    return res


INT_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
               "hi": np.greater, "hs": np.greater_equal}
