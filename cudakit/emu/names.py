"""What names and expressions denote at compile time: typed expression closures, the
places (lvalues) they read and write, and the scopes that bind names.

>>> from cudakit.emu.c_types import INT
>>> constant(7, INT).const
np.int32(7)
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from .c_types import CType
from .runtime import Site
from .values import cast_dtype, full, select, zero


class Expr:
    """A compiled expression: ``fn(batch)`` gives its value; ``type`` its C type."""

    __slots__ = ("fn", "type", "lv", "const", "pure", "root")

    def __init__(self, fn, type: CType, lv=None, const=None, pure=True, root=None):
        self.fn = fn
        self.type = type
        self.lv = lv
        self.const = const
        self.pure = pure
        self.root = root  # (name, base address fn, bytes, space) of a declared array indexed


def constant(value, t: CType) -> Expr:
    v = zero(t) if value is None else cast_dtype(np.asarray(value), t.dtype)
    return Expr(lambda b: v, t, const=v)


class RegisterLV:
    """A local variable held per lane in the frame."""

    def __init__(self, slot: int, t: CType):
        self.slot, self.type = slot, t

    def addr(self, b):
        return None

    def load_at(self, b, a):
        return b.frame[self.slot]

    def store_at(self, b, a, v):
        if b.full:
            b.frame[self.slot] = v
        else:
            b.frame[self.slot] = select(b.mask, v, full(b.frame[self.slot], b.size))


class ComponentLV:
    """One component (``.x``, or a struct member) of a vector or struct held in registers."""

    def __init__(self, inner, comp: int, t: CType):
        self.inner, self.comp, self.type = inner, comp, t

    def addr(self, b):
        return None

    def load_at(self, b, a):
        return self.inner.load_at(b, a)[self.comp]

    def store_at(self, b, a, v):
        whole = list(self.inner.load_at(b, a))
        whole[self.comp] = v
        self.inner.store_at(b, a, tuple(whole))  # the register applies the mask


class MemoryLV:
    """An object in memory at a per-lane address."""

    def __init__(self, addr_fn, t: CType, site: Site, bounds=None):
        self.addr_fn, self.type, self.site, self.bounds = addr_fn, t, site, bounds
        self.members = None
        if t.kind == "struct":  # a whole struct: one access per member, at its offset
            self.members = [MemoryLV(offset(addr_fn, off), ft, site) for _, ft, off in t.fields
                            if ft.kind != "array"]
            self.dtype = None
        elif t.kind == "vec":
            self.dtype, self.count, self.align = t.base.dtype, t.dims[0], t.align
            if t.dims[0] == 3:
                self.align = t.base.size
        else:
            self.dtype, self.count, self.align = t.dtype, 1, t.size

    def addr(self, b):
        return self.addr_fn(b)

    def check(self, b, a, op):
        """memcheck against the declared array; return its space if the access is inside."""
        name, base_fn, total, space = self.bounds
        b.check_array(a, base_fn(b), total, self.type.size, name, self.site, op)
        return space if space in ("shared", "local") else None

    def whole_struct(self):
        if len(self.members) != len(self.type.fields):
            raise UnsupportedError(f"line {self.site.line}: copying a struct with an array "
                                   f"member ('{self.type}') as a whole value")
        return self.members

    def load_at(self, b, a):
        if self.members is not None:
            return tuple(m.load_at(b, m.addr(b)) for m in self.whole_struct())
        known = self.check(b, a, "ld") if self.bounds is not None else None
        comps = b.load(a, self.dtype, self.count, self.align, self.site, known)
        return tuple(comps) if self.type.kind == "vec" else comps[0]

    def store_at(self, b, a, v):
        if self.members is not None:
            for m, part in zip(self.whole_struct(), v, strict=True):
                m.store_at(b, m.addr(b), part)
            return
        known = self.check(b, a, "st") if self.bounds is not None else None
        comps = list(v) if self.type.kind == "vec" else [v]
        b.store(a, comps, self.dtype, self.align, self.site, known)


def offset(addr_fn, off: int):
    o = np.uint64(off)
    return lambda b: addr_fn(b) + o


def lv_expr(lv, t: CType, pure: bool) -> Expr:
    return Expr(lambda b: lv.load_at(b, lv.addr(b)), t, lv=lv, pure=pure)


class Scope:
    def __init__(self, parent=None):
        self.parent = parent
        self.names: dict = {}

    def find(self, name):
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


class Binding:
    """What a name means: a register slot, a memory object, a constant or a type."""

    __slots__ = ("kind", "type", "slot", "addr", "value")

    def __init__(self, kind, type=None, slot=None, addr=None, value=None):
        self.kind, self.type, self.slot, self.addr, self.value = kind, type, slot, addr, value
