"""Operands of decoded instructions: registers, special registers, immediates, symbols and
addresses, as small closures ``(frame, lanes) -> values`` bound once per instruction.

Registers are stored as unsigned integer arrays of their declared width (``bool`` for
predicates) and seen through the instruction's type, so ``mov.b32 %f1, %r1`` is a free
reinterpretation as on the GPU.
"""

from __future__ import annotations

import re
import time

import numpy as np

from ..errors import UnsupportedError
from ..i18n.messages import _
from . import numeric as nm
from .frontend import type_size

PACKED = ("f16x2", "bf16x2")


def dtype_of(t: str) -> np.dtype:
    if t in ("bf16", "bf16x2"):
        return np.dtype(np.uint16)
    return np.dtype(nm.DTYPES[t])


def storage_of(t: str) -> np.dtype:
    return np.dtype(np.bool_) if t == "pred" else np.dtype(nm.STORAGE[type_size(t)])


def immediate(text: str, t: str):
    """A typed scalar from a PTX literal (``0f3F800000``, ``-1``, ``0x10``...)."""
    dt = dtype_of(t)
    if text[:2] in ("0f", "0F"):
        v = np.uint32(int(text[2:], 16)).view(np.float32)
        return v.astype(dt) if dt.kind == "f" else np.uint32(int(text[2:], 16)).astype(dt)
    if text[:2] in ("0d", "0D"):
        v = np.uint64(int(text[2:], 16)).view(np.float64)
        return v.astype(dt) if dt.kind == "f" else np.uint64(int(text[2:], 16)).astype(dt)
    raw = text.rstrip("Uu")
    if re.fullmatch(r"-?\d+\.\d*(e[-+]?\d+)?", raw):
        return dt.type(float(raw))
    value = int(raw, 0) if not re.fullmatch(r"-?0\d+", raw) else int(raw, 8)
    if t == "pred":
        return np.bool_(value)
    if dt.kind == "f":
        return dt.type(value)
    bits = 8 * dt.itemsize
    value &= (1 << bits) - 1
    return np.array(value, dtype=nm.STORAGE[dt.itemsize]).view(dt)[()]


SPECIAL_AXES = {"x": 0, "y": 1, "z": 2}


def special(name: str):
    """``%tid.x`` and friends -> ``(frame, lanes) -> uint32 values``."""
    base, axis = name[1:].partition(".")[::2]
    k = SPECIAL_AXES.get(axis, 0)
    if base == "tid":
        attr = ("tx", "ty", "tz")[k]
        return lambda fr, L: getattr(fr.b, attr)[L]
    if base == "ctaid":
        attr = ("bx", "by", "bz")[k]
        return lambda fr, L: getattr(fr.b, attr)[L]
    if base == "ntid":
        return lambda fr, L: fr.b.block_dim[k]
    if base == "nctaid":
        return lambda fr, L: fr.b.grid_dim[k]
    if base == "laneid":
        return lambda fr, L: fr.b.laneid[L]
    if base == "warpid":
        return lambda fr, L: (fr.b.tib[L] // 32).astype(np.uint32)
    if base == "nwarpid":
        return lambda fr, L: np.uint32(fr.b.wpb)
    if base in ("smid", "gridid", "cluster_ctarank", "is_explicit_cluster"):
        return lambda fr, L: np.uint32(0)
    if base in ("nsmid",):
        return lambda fr, L: np.uint32(132)
    if base in ("cluster_nctarank",):
        return lambda fr, L: np.uint32(1)
    if base in ("clusterid", "cluster_ctaid"):
        if base == "clusterid":
            attr = ("bx", "by", "bz")[k]
            return lambda fr, L: getattr(fr.b, attr)[L]
        return lambda fr, L: np.uint32(0)
    if base in ("nclusterid",):
        return lambda fr, L: fr.b.grid_dim[k]
    if base in ("cluster_nctaid",):
        return lambda fr, L: np.uint32(1)
    if base.startswith("lanemask_"):
        kind = base[9:]

        def mask(fr, L):
            lane = fr.b.laneid[L].astype(np.uint64)
            one = np.uint64(1)
            if kind == "eq":
                v = one << lane
            elif kind == "lt":
                v = (one << lane) - one
            elif kind == "le":
                v = (one << (lane + one)) - one
            elif kind == "gt":
                v = np.uint64(0xFFFFFFFF) ^ ((one << (lane + one)) - one)
            else:
                v = np.uint64(0xFFFFFFFF) ^ ((one << lane) - one)
            return (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return mask
    if base in ("clock", "clock64", "globaltimer", "globaltimer_lo"):
        return lambda fr, L: np.uint64(time.perf_counter_ns())
    if base == "dynamic_smem_size":
        return lambda fr, L: np.uint32(fr.b.shared_bytes - fr.b.dyn_offset)
    if base == "total_smem_size":
        return lambda fr, L: np.uint32(fr.b.shared_bytes)
    if base.startswith("reserved_smem_offset"):  # the block's reserved shared words (the
        # scratch of cooperative groups' block_tile_memory), past the user's shared memory
        which = base.rsplit("_", 1)[-1]
        if which == "cap":
            return lambda fr, L: np.uint32(fr.b.stride - fr.b.shared_bytes)
        if which == "end":
            return lambda fr, L: np.uint32(fr.b.stride)
        extra = {"1": 8}.get(which, 0)
        return lambda fr, L: np.uint32(-(-fr.b.shared_bytes // 16) * 16 + extra)
    if base in ("envreg1", "envreg2"):  # the grid barrier's address, high and low word
        shift = np.uint64(32 if base == "envreg1" else 0)

        def workspace(fr, L):
            if not fr.b.grid_workspace:
                raise UnsupportedError(_(
                    "grid-wide synchronisation (cooperative_groups::this_grid() / grid.sync()) "
                    "needs a cooperative launch: call the kernel with cooperative=True (line "
                    "{line} of kernel '{kernel}')").format(line=fr.b.line,
                                                          kernel=fr.kernel_name))
            return np.uint32((np.uint64(fr.b.grid_workspace) >> shift) & np.uint64(0xFFFFFFFF))
        return workspace
    if base.startswith("envreg"):
        return lambda fr, L: np.uint32(0)
    raise UnsupportedError(_("the special register '{name}'").format(name=name))


class Scope:
    """What names mean inside one function: registers, variables, module symbols."""

    def __init__(self, fn, program):
        self.fn = fn
        self.program = program
        self.reg_index: dict[str, int] = {}
        self.storage: list[np.dtype] = []
        for name, var in fn.regs.items():
            self.reg_index[name] = len(self.storage)
            self.storage.append(storage_of(var.type))

    # -- symbols -----------------------------------------------------------------------
    def symbol(self, name: str):
        """Address of a variable as ``(frame) -> scalar``, with its state space."""
        if name in self.fn.vars:
            v = self.fn.vars[name]
            if v.space == "local":
                off = self.program.local_offset(self.fn, name)
                return (lambda fr: np.uint64(fr.local_base + off)), "local"
            if v.space == "shared":
                return self.program.shared_symbol(name, self.fn)
            if v.space == "param":
                return (lambda fr: np.uint64(0)), ("param", name)
        if any(p.name == name for p in self.fn.params + self.fn.returns):
            return (lambda fr: np.uint64(0)), ("param", name)
        return self.program.module_symbol(name)

    # -- readers -----------------------------------------------------------------------
    def read(self, op, t: str):
        """A reader ``(frame, lanes) -> values`` of operand text ``op`` as type ``t``."""
        if isinstance(op, list):
            raise UnsupportedError(f"a vector operand {{{', '.join(op)}}} here")
        neg = False
        if op.startswith("!"):
            neg, op = True, op[1:]
        if op in self.reg_index:
            f = self._reg_reader(self.reg_index[op], t)
            return (lambda fr, L: ~f(fr, L)) if neg else f
        if op.startswith("%"):
            sp = special(op)
            if t in ("u64", "b64", "s64"):
                dt = dtype_of(t)
                return lambda fr, L: np.asarray(sp(fr, L)).astype(dt)
            return sp
        if re.match(r"^-?(0[xXfFdD][0-9a-fA-F]+|\d)", op):
            v = immediate(op, t)
            if t in ("bf16", "bf16x2"):
                v = nm.bf16_to_f32(v)
            return lambda fr, L: v
        m = re.fullmatch(r"([$\w.]+)(?:\+(-?\d+))?", op)
        if m:  # a symbol's address (mov.u64 %rd1, sym)
            f, space = self.symbol(m.group(1))
            off = int(m.group(2) or 0)
            dt = dtype_of(t)
            return lambda fr, L: (f(fr) + np.uint64(off)).astype(dt)
        raise UnsupportedError(f"the operand '{op}'")

    def _reg_reader(self, i: int, t: str):
        st = self.storage[i]
        if t == "pred" or st == np.bool_:
            if st != np.bool_:
                return lambda fr, L: fr.R[i][L] != 0
            return lambda fr, L: fr.R[i][L]
        if t == "bf16":
            return lambda fr, L: nm.bf16_to_f32(fr.R[i][L].astype(np.uint16))
        if t == "bf16x2":
            return lambda fr, L: nm.bf16_to_f32(fr.R[i][L].view(np.uint16))
        if t == "f16x2":
            return lambda fr, L: fr.R[i][L].view(np.float16)
        dt = dtype_of(t)
        if dt.itemsize == st.itemsize:
            if dt == st:
                return lambda fr, L: fr.R[i][L]
            return lambda fr, L: fr.R[i][L].view(dt)
        if dt.itemsize < st.itemsize:
            narrow = nm.STORAGE[dt.itemsize]
            return lambda fr, L: fr.R[i][L].astype(narrow).view(dt)
        wide = nm.STORAGE[dt.itemsize]
        return lambda fr, L: fr.R[i][L].astype(wide).view(dt)

    # -- writers -----------------------------------------------------------------------
    def write(self, op, t: str):
        """A writer ``(frame, lanes, values)`` of type ``t`` into register ``op``."""
        if op == "_":
            return lambda fr, L, v: None
        if op not in self.reg_index:
            raise UnsupportedError(f"writing to '{op}'")
        i = self.reg_index[op]
        st = self.storage[i]
        if st == np.bool_:
            def wp(fr, L, v):
                fr.R[i][L] = v
            return wp
        if t == "bf16":
            def wb(fr, L, v):
                fr.R[i][L] = nm.f32_to_bf16(v)
            return wb
        if t == "bf16x2":
            def wb2(fr, L, v):
                fr.R[i][L] = nm.f32_to_bf16(v).view(np.uint32)
            return wb2
        if t == "f16x2":
            def wh2(fr, L, v):
                fr.R[i][L] = np.asarray(v, np.float16).view(np.uint32)
            return wh2
        if t == "pred":
            def wpb(fr, L, v):
                fr.R[i][L] = v
            return wpb
        dt = dtype_of(t)
        if dt.itemsize == st.itemsize:
            def w(fr, L, v):
                fr.R[i].view(dt)[L] = v
            return w
        # a narrower or wider value into this register: sign- or zero-extend / truncate
        signed = dt.kind == "i"

        def wx(fr, L, v):
            v = np.asarray(v).astype(dt)
            if signed and dt.itemsize < st.itemsize:
                v = v.astype(nm.SIGNED[st.itemsize])
            fr.R[i][L] = v.astype(st) if v.dtype.kind != "f" else \
                v.view(nm.STORAGE[v.dtype.itemsize]).astype(st)
        return wx

    # -- addresses ---------------------------------------------------------------------
    def address(self, op: str):
        """``[base+off]`` -> ``(reader of the address, space of a symbol base or None)``."""
        inner = op.strip()[1:-1].replace(" ", "")
        m = re.fullmatch(r"([%$\w.]+?)(?:\+(-?\w+))?", inner)
        if not m:
            raise UnsupportedError(f"the address '{op}'")
        base, off = m.group(1), int(m.group(2) or "0", 0)
        if base in self.reg_index:
            i = self.reg_index[base]
            if self.storage[i].itemsize == 4:  # 32-bit (shared/local) addresses wrap at 2^32
                r32 = self._reg_reader(i, "u32")
                o32 = np.uint32(off & 0xFFFFFFFF)
                return (lambda fr, L: (r32(fr, L) + o32).astype(np.uint64)), None
            r = self._reg_reader(i, "u64")
            if off:
                o = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
                return (lambda fr, L: r(fr, L) + o), None
            return r, None
        if re.fullmatch(r"-?\d+|0x[0-9a-fA-F]+", base):
            v = np.uint64(int(base, 0) + off)
            return (lambda fr, L: v), None
        f, space = self.symbol(base)
        o = np.uint64(off)
        return (lambda fr, L: f(fr) + o), space
