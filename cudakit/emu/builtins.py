"""CUDA built-in functions: barriers, math, integer intrinsics, atomics, warp intrinsics,
vector constructors and ``printf``. Each compiles to a closure over all lanes.
"""

from __future__ import annotations

import re
import sys

import numpy as np

from . import c_types as ct
from .c_types import BOOL, DOUBLE, FLOAT, INT, LONG, UINT, ULONG
from .names import Expr, MemoryLV
from .operators import decay, truth
from .values import cast_dtype, float_to_int, full

WARP = 32


def _round_away(x):
    return np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x) if isinstance(
        x, np.ndarray) else np.copysign(np.floor(np.abs(x) + type(x)(0.5)), x)


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


def _fma(a, b, c):
    dt = np.asarray(a).dtype
    if dt == np.float32:
        return (a.astype(np.float64) * b + c).astype(np.float32) if isinstance(
            a, np.ndarray) else np.float32(np.float64(a) * b + c)
    return a * b + c


def _erf(x):
    from math import erf

    return np.vectorize(erf, otypes=[np.asarray(x).dtype])(x)


# name -> (numpy function, number of arguments)
MATH1 = {
    "sqrt": np.sqrt, "rsqrt": _rsqrt, "cbrt": np.cbrt, "exp": np.exp, "exp2": np.exp2,
    "exp10": lambda x: np.power(x.dtype.type(10) if hasattr(x, "dtype") else 10.0, x),
    "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "fabs": np.abs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "round": _round_away, "rint": np.rint, "nearbyint": np.rint, "erf": _erf,
}
MATH2 = {
    "pow": np.power, "atan2": np.arctan2, "fmin": np.fmin, "fmax": np.fmax,
    "fmod": np.fmod, "hypot": np.hypot, "copysign": np.copysign, "fdim":
    lambda a, b: np.maximum(a - b, 0),
}
FAST = {"__expf": "expf", "__logf": "logf", "__sinf": "sinf", "__cosf": "cosf",
        "__tanf": "tanf", "__powf": "powf", "__log2f": "log2f", "__log10f": "log10f",
        "__exp10f": "exp10f", "__fsqrt_rn": "sqrtf", "__frsqrt_rn": "rsqrtf",
        "__dsqrt_rn": "sqrt"}


def call_builtin(c, name: str, arg_nodes, node) -> Expr:
    """Compile a call of the built-in ``name``; unknown names raise UnsupportedError."""
    name = FAST.get(name, name)
    if name in SPECIAL:
        return SPECIAL[name](c, arg_nodes, node)
    args = [c.expr(a) for a in arg_nodes]
    if name.startswith("make_"):
        return make_vector(c, name[5:], args, node)
    if name.startswith("atomic"):
        return atomic(c, name, args, node)
    for table, n in ((MATH1, 1), (MATH2, 2)):
        base = name[:-1] if name.endswith("f") and name[:-1] in table else name
        if base in table and len(args) == n:
            single = base != name or all(a.type == FLOAT for a in args)
            rt = FLOAT if single else DOUBLE
            return apply(table[base], args, [rt] * n, rt, c, node)
    if name in ("fmaf", "fma", "__fmaf_rn", "__fma_rn") and len(args) == 3:
        rt = FLOAT if name != "fma" and name != "__fma_rn" or all(
            a.type == FLOAT for a in args) else DOUBLE
        return apply(_fma, args, [rt] * 3, rt, c, node)
    if name in INT_FUNCS:
        f, ats, rt = INT_FUNCS[name]
        if len(args) != len(ats):
            raise c.unsupported(node, f"'{name}' with {len(args)} arguments")
        return apply(f, args, ats, rt, c, node)
    if name in ("min", "max", "umin", "umax", "llmin", "llmax", "fminf", "fmaxf") or (
            name in ("abs", "llabs", "labs") and len(args) == 1):
        return min_max(c, name, args, node)
    if name in CONVERT:
        f, at, rt = CONVERT[name]
        return apply(f, args, [at] * len(args), rt, c, node)
    if name in ("isnan", "isinf", "isfinite", "signbit", "__isnanf", "__isinff"):
        f = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
             "signbit": np.signbit, "__isnanf": np.isnan, "__isinff": np.isinf}[name]
        t = args[0].type if args[0].type.kind == "float" else DOUBLE
        return apply(f, args, [t], BOOL, c, node)
    raise c.unsupported(node, f"the function '{name}'")


def apply(f, args, arg_types, rt, c, node) -> Expr:
    convs = [c.converter(a.type, t, node) for a, t in zip(args, arg_types, strict=False)]
    fns = [a.fn for a in args]
    pure = all(a.pure for a in args)
    dt = rt.dtype
    if len(fns) == 1:
        (f0,), (c0,) = fns, convs
        e = Expr(lambda b: cast_dtype(f(c0(f0(b))), dt), rt, pure=pure)
    else:
        pairs = list(zip(convs, fns, strict=True))
        e = Expr(lambda b: cast_dtype(f(*[cv(fn(b)) for cv, fn in pairs]), dt), rt, pure=pure)
    return c.fold(e, *args)


# -- integer intrinsics --------------------------------------------------------------------

def _popc(x):
    x = np.asarray(x).astype(np.uint64)
    return np.bitwise_count(x).astype(np.int32)[()]


def _clz(bits):
    def f(x):
        u = np.asarray(x).astype(np.uint64) & np.uint64((1 << bits) - 1)
        n = np.full(u.shape, bits, np.int32)
        nz = u != 0
        width = np.zeros(u.shape, np.int32)
        if nz.any():
            width[nz] = np.floor(np.log2(u[nz].astype(np.float64))).astype(np.int32) + 1
            # float log2 can round up just below powers of two; fix by checking the bit
            too_high = (u[nz] >> width[nz].astype(np.uint64)) != 0
            low = (u[nz] >> (width[nz] - 1).astype(np.uint64)) == 0
            width[nz] += too_high.astype(np.int32) - low.astype(np.int32)
        return (n - width)[()]
    return f


def _ffs(bits):
    def f(x):
        u = np.asarray(x).astype(np.uint64) & np.uint64((1 << bits) - 1)
        low = u & (~u + np.uint64(1))
        return np.where(u == 0, 0, _popc(low - np.uint64(1)) + 1).astype(np.int32)[()]
    return f


def _brev(x):
    u = np.asarray(x).astype(np.uint32)
    r = np.zeros(u.shape, np.uint32)
    for i in range(32):
        r |= ((u >> np.uint32(i)) & np.uint32(1)) << np.uint32(31 - i)
    return r[()]


def _mulhi(signed):
    def f(a, b):
        if signed:
            return ((np.asarray(a).astype(np.int64) * b) >> 32).astype(np.int32)[()]
        return ((np.asarray(a).astype(np.uint64) * b) >> np.uint64(32)).astype(np.uint32)[()]
    return f


INT_FUNCS = {
    "__popc": (_popc, [UINT], INT), "__popcll": (_popc, [ULONG], INT),
    "__clz": (_clz(32), [UINT], INT), "__clzll": (_clz(64), [ULONG], INT),
    "__ffs": (_ffs(32), [UINT], INT), "__ffsll": (_ffs(64), [ULONG], INT),
    "__brev": (_brev, [UINT], UINT),
    "__mul24": (lambda a, b: a * b, [INT, INT], INT),
    "__umul24": (lambda a, b: a * b, [UINT, UINT], UINT),
    "__mulhi": (_mulhi(True), [INT, INT], INT), "__umulhi": (_mulhi(False), [UINT, UINT], UINT),
    "__sad": (lambda a, b, c: np.abs(a.astype(np.int64) - b).astype(np.uint32) + c
              if isinstance(a, np.ndarray) else np.uint32(abs(int(a) - int(b))) + c,
              [INT, INT, UINT], UINT),
}

CONVERT = {
    "__int_as_float": (lambda x: np.asarray(x).view(np.float32)[()], INT, FLOAT),
    "__float_as_int": (lambda x: np.asarray(x).view(np.int32)[()], FLOAT, INT),
    "__uint_as_float": (lambda x: np.asarray(x).view(np.float32)[()], UINT, FLOAT),
    "__float_as_uint": (lambda x: np.asarray(x).view(np.uint32)[()], FLOAT, UINT),
    "__double_as_longlong": (lambda x: np.asarray(x).view(np.int64)[()], DOUBLE, LONG),
    "__longlong_as_double": (lambda x: np.asarray(x).view(np.float64)[()], LONG, DOUBLE),
    "__float2int_rn": (lambda x: float_to_int(np.rint(x), np.dtype(np.int32)), FLOAT, INT),
    "__float2int_rz": (lambda x: float_to_int(x, np.dtype(np.int32)), FLOAT, INT),
    "__float2int_rd": (lambda x: float_to_int(np.floor(x), np.dtype(np.int32)), FLOAT, INT),
    "__float2int_ru": (lambda x: float_to_int(np.ceil(x), np.dtype(np.int32)), FLOAT, INT),
    "__int2float_rn": (lambda x: x, FLOAT, FLOAT),
    "__saturatef": (lambda x: np.clip(x, 0, 1), FLOAT, FLOAT),
    "__fdividef": (np.divide, FLOAT, FLOAT), "__fdiv_rn": (np.divide, FLOAT, FLOAT),
    "__fmul_rn": (np.multiply, FLOAT, FLOAT), "__fadd_rn": (np.add, FLOAT, FLOAT),
    "__fsub_rn": (np.subtract, FLOAT, FLOAT), "__frcp_rn": (np.reciprocal, FLOAT, FLOAT),
    "__dmul_rn": (np.multiply, DOUBLE, DOUBLE), "__dadd_rn": (np.add, DOUBLE, DOUBLE),
}


def min_max(c, name, args, node):
    if name in ("abs", "llabs", "labs"):
        t = ct.promote(args[0].type)
        return apply(np.abs, args, [t], t, c, node)
    if len(args) != 2:
        raise c.unsupported(node, f"'{name}' with {len(args)} arguments")
    if name in ("fminf", "fmaxf"):
        t = FLOAT
        f = np.fmin if name == "fminf" else np.fmax
    else:
        t = ct.usual_arithmetic(args[0].type, args[1].type)
        if name.startswith("u"):
            t = UINT
        is_min = "min" in name
        f = (np.fmin if is_min else np.fmax) if t.kind == "float" else (
            np.minimum if is_min else np.maximum)
    return apply(f, args, [t, t], t, c, node)


def make_vector(c, suffix, args, node):
    t = ct.lookup(suffix)
    if t is None or t.kind != "vec" or len(args) != t.dims[0]:
        raise c.unsupported(node, f"make_{suffix} with {len(args)} arguments")
    convs = [c.converter(a.type, t.base, node) for a in args]
    fns = [a.fn for a in args]
    return Expr(lambda b: tuple(cv(f(b)) for cv, f in zip(convs, fns, strict=False)), t,
                pure=all(a.pure for a in args))


# -- barriers and fences ------------------------------------------------------------------

def _sync(c, args, node):
    site = c.site(node)
    return Expr(lambda b: b.syncthreads(site), ct.VOID, pure=False)


def _sync_reduce(kind):
    def build(c, args, node):
        site = c.site(node)
        p = c.expr(args[0])
        fp = p.fn

        def fn(b):
            v = full(truth(fp(b)), b.size) & b.mask
            b.syncthreads(site)
            per_block = v.reshape(b.nb, b.pad)
            if kind == "count":
                r = per_block.sum(axis=1).astype(np.int32)
            elif kind == "and":
                live = b.mask.reshape(b.nb, b.pad)
                r = (~live | per_block).all(axis=1).astype(np.int32)
            else:
                r = per_block.any(axis=1).astype(np.int32)
            return np.repeat(r, b.pad)
        return Expr(fn, INT, pure=False)
    return build


def _syncwarp(c, args, node):
    return Expr(lambda b: b.syncwarp(), ct.VOID, pure=False)


def _noop(rt=ct.VOID):
    def build(c, args, node):
        for a in args:
            c.expr(a)
        return Expr(lambda b: None, rt, pure=False)
    return build


def _clock(c, args, node):
    return Expr(lambda b: np.int64(b.clock()), LONG, pure=False)


def _ldg(c, args, node):
    p = c.expr(args[0])
    t = decay(p.type)
    if t.kind != "ptr":
        raise c.unsupported(node, "__ldg of a non-pointer")
    lv = MemoryLV(p.fn, t.base, c.site(node))
    return Expr(lambda b: lv.load_at(b, lv.addr(b)), t.base, pure=False)


# -- warp intrinsics ----------------------------------------------------------------------

def _lane_view(b, v):
    return full(v, b.size).reshape(-1, WARP)


def _shuffle(kind):
    def build(c, args, node):
        if len(args) not in (3, 4):
            raise c.unsupported(node, f"__shfl{kind}_sync with {len(args)} arguments")
        var = c.expr(args[1])
        x = c.expr(args[2])
        w = c.expr(args[3]) if len(args) == 4 else None
        fv, fx = var.fn, x.fn
        fw = w.fn if w is not None else None

        def shuffle_one(b, v, src):
            vv = _lane_view(b, v)
            return np.take_along_axis(vv, src, axis=1).reshape(-1)

        def fn(b):
            width = int(fw(b)) if fw is not None else WARP
            lane = np.arange(WARP)[None, :]
            seg = (lane // width) * width
            xv = full(cast_dtype(fx(b), np.dtype(np.int64)), b.size).reshape(-1, WARP)
            if kind == "":
                src = seg + xv % width
            elif kind == "_up":
                src = np.where(lane - seg >= xv, lane - xv, lane)
            elif kind == "_down":
                src = np.where(lane - seg + xv < width, lane + xv, lane)
            else:
                t = lane ^ xv
                src = np.where(t // width == lane // width, t, lane)
            src = np.broadcast_to(src, xv.shape).astype(np.int64)
            v = fv(b)
            if isinstance(v, tuple):
                return tuple(shuffle_one(b, comp, src) for comp in v)
            return shuffle_one(b, v, src)
        return Expr(fn, var.type, pure=False)
    return build


def _vote(kind):
    def build(c, args, node):
        p = c.expr(args[-1]) if kind != "activemask" else None
        fp = p.fn if p is not None else None
        rt = UINT if kind in ("ballot", "activemask") else INT

        def fn(b):
            m = b.mask.reshape(-1, WARP)
            v = m if fp is None else (full(truth(fp(b)), b.size).reshape(-1, WARP) & m)
            if kind in ("ballot", "activemask"):
                bits = (v.astype(np.uint64) << np.arange(WARP, dtype=np.uint64)).sum(axis=1)
                r = bits.astype(np.uint32)
            elif kind == "any":
                r = v.any(axis=1).astype(np.int32)
            else:
                r = (v | ~m).all(axis=1).astype(np.int32)
            return np.repeat(r, WARP)
        return Expr(fn, rt, pure=False)
    return build


# -- atomics -------------------------------------------------------------------------------

ATOMIC_OPS = {
    "atomicAdd": np.add, "atomicSub": np.subtract, "atomicMin": np.minimum,
    "atomicMax": np.maximum, "atomicAnd": np.bitwise_and, "atomicOr": np.bitwise_or,
    "atomicXor": np.bitwise_xor,
}


def atomic(c, name, args, node):
    base = re.sub(r"_(block|system)$", "", name)
    if not args:
        raise c.unsupported(node, f"{name} without arguments")
    pt = decay(args[0].type)
    if pt.kind != "ptr" or not pt.base.is_arith:
        raise c.unsupported(node, f"{name} on '{args[0].type}'")
    t = pt.base
    dt = t.dtype
    site = c.site(node)
    fp = args[0].fn
    vals = [(c.converter(a.type, t, node), a.fn) for a in args[1:]]
    nargs = {"atomicCAS": 2, "atomicInc": 1, "atomicDec": 1, "atomicExch": 1}.get(base, 1)
    if len(vals) != nargs:
        raise c.unsupported(node, f"{name} with {len(args)} arguments")
    if base not in ATOMIC_OPS and base not in ("atomicCAS", "atomicInc", "atomicDec",
                                                "atomicExch"):
        raise c.unsupported(node, f"the atomic '{name}'")

    def fn(b):
        operands = [full(cv(f(b)), b.size) for cv, f in vals]
        old = np.zeros(b.size, dt)
        for view, idx, lanes in b.atomic_targets(fp(b), dt, site):
            ops = [o[lanes] for o in operands]
            old[lanes] = _atomic_apply(base, view, idx, ops, dt)
        return old
    return Expr(fn, t, pure=False)


def _atomic_apply(base, view, idx, ops, dt):
    """Apply an atomic op for lanes in lane order; return each lane's old value."""
    if base in ("atomicAdd", "atomicSub") and idx.size:
        order = np.argsort(idx, kind="stable")
        si = idx[order]
        v = ops[0][order].astype(dt)
        if base == "atomicSub":
            v = np.negative(v)
        starts = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
        counts = np.diff(np.r_[starts, si.size])
        csum = np.cumsum(v, dtype=dt)
        before = np.repeat(csum[starts] - v[starts], counts)
        excl = (csum - v - before).astype(dt)
        cur = view[si]
        old_sorted = (cur + excl).astype(dt)
        last = starts + counts - 1
        view[si[last]] = (cur[last] + excl[last] + v[last]).astype(dt)
        old = np.empty(idx.size, dt)
        old[order] = old_sorted
        return old
    old = np.empty(idx.size, dt)
    pending = np.arange(idx.size)
    while pending.size:
        _, first = np.unique(idx[pending], return_index=True)
        now = pending[first]
        i = idx[now]
        cur = view[i].copy()
        old[now] = cur
        a = [o[now] for o in ops]
        if base in ATOMIC_OPS:
            new = ATOMIC_OPS[base](cur, a[0])
        elif base == "atomicExch":
            new = a[0]
        elif base == "atomicCAS":
            new = np.where(cur == a[0], a[1], cur)
        elif base == "atomicInc":
            new = np.where(cur >= a[0], 0, cur + 1)
        else:
            new = np.where((cur == 0) | (cur > a[0]), a[0], cur - 1)
        view[i] = np.asarray(new).astype(dt)
        pending = np.delete(pending, first)
    return old


# -- printf --------------------------------------------------------------------------------

_SPEC = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|z|j|t)?([diouxXeEfFgGcsp%])")


def _printf(c, args, node):
    if not args or args[0].type not in ("string_literal", "concatenated_string"):
        raise c.unsupported(node, "printf without a literal format string")
    fmt = "".join(_string(s) for s in (args[0].named_children if args[0].type ==
                                        "concatenated_string" else [args[0]]))
    specs = [m for m in _SPEC.finditer(fmt) if m.group(3) != "%"]
    if len(args) - 1 != len(specs):
        raise c.unsupported(node, f"printf with {len(specs)} conversions but "
                                  f"{len(args) - 1} arguments")
    pieces, convs = [], []
    pos = 0
    for m, arg in zip(specs, args[1:], strict=True):
        flags, conv = m.group(1), m.group(3)
        pieces.append(fmt[pos:m.start()])
        pos = m.end()
        if conv == "s":  # only literal strings: printed into the template now
            if arg.type != "string_literal":
                raise c.unsupported(arg, "printf %s of something other than a literal string")
            pieces.append((f"%{flags}s" % _string(arg)).replace("%", "%%"))
            continue
        v = c.expr(arg)
        t = decay(v.type)
        if conv in "di":
            target, py = LONG, "d"
        elif conv in "ouxX":
            target = ULONG if t.size == 8 else UINT
            py = conv.replace("u", "d")
        elif conv == "c":
            target, py = INT, "c"
        elif conv == "p":
            target, py = ULONG, "#x"
        else:
            target, py = DOUBLE, conv
        pieces.append("%" + flags + py if py != "#x" else "0x%" + flags + "x")
        convs.append((c.converter(t, target, node), v.fn, target))
    pieces.append(fmt[pos:])
    template = "".join(pieces)

    def fn(b):
        lanes = np.flatnonzero(b.mask)
        cols = [full(cv(f(b)), b.size)[lanes] for cv, f, _ in convs]
        out = sys.stdout
        for row in zip(*cols, strict=False) if cols else ([()] * lanes.size):
            out.write(template % tuple(x.item() for x in row))
        return np.int32(0)
    return Expr(fn, INT, pure=False)


def _string(node) -> str:
    raw = node.text.decode()
    body = raw[raw.index('"') + 1: raw.rindex('"')]
    return body.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _sincos(c, args, node):
    x = c.expr(args[0])
    outs = [c.expr(a) for a in args[1:]]
    for o in outs:
        if decay(o.type).kind != "ptr":
            raise c.unsupported(node, "sincos with non-pointer outputs")
    t = FLOAT if node.child_by_field_name("function").text.decode() == "sincosf" else DOUBLE
    conv = c.converter(x.type, t, node)
    lvs = [MemoryLV(o.fn, t, c.site(node)) for o in outs]
    fx = x.fn

    def fn(b):
        v = conv(fx(b))
        for lv, f in zip(lvs, (np.sin, np.cos), strict=False):
            lv.store_at(b, lv.addr(b), cast_dtype(f(v), t.dtype))
    return Expr(fn, ct.VOID, pure=False)


def _assert(c, args, node):
    e = c.expr(args[0])
    f = e.fn
    line = c.line(node)

    def fn(b):
        ok = full(truth(f(b)), b.size) | ~b.mask
        if not ok.all():
            from ..errors import KernelFaultError

            lane = int(np.argmin(ok))
            raise KernelFaultError(f"assert failed at line {line} in {b.who(lane)}")
    return Expr(fn, ct.VOID, pure=False)


SPECIAL = {
    "__syncthreads": _sync, "__syncthreads_count": _sync_reduce("count"),
    "__syncthreads_and": _sync_reduce("and"), "__syncthreads_or": _sync_reduce("or"),
    "__syncwarp": _syncwarp, "__threadfence": _noop(), "__threadfence_block": _noop(),
    "__threadfence_system": _noop(), "__nanosleep": _noop(),
    "clock": _clock, "clock64": _clock, "__ldg": _ldg,
    "__shfl_sync": _shuffle(""), "__shfl_up_sync": _shuffle("_up"),
    "__shfl_down_sync": _shuffle("_down"), "__shfl_xor_sync": _shuffle("_xor"),
    "__ballot_sync": _vote("ballot"), "__any_sync": _vote("any"),
    "__all_sync": _vote("all"), "__activemask": _vote("activemask"),
    "printf": _printf, "sincosf": _sincos, "sincos": _sincos, "assert": _assert,
}

