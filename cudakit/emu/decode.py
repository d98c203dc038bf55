"""The decoder: each PTX instruction becomes one closure ``op(frame, lanes)`` over NumPy
arrays of the active lanes, once per module; control flow becomes basic blocks whose
terminators the scheduler (:mod:`.execute`) interprets.

>>> from .frontend import parse_ptx
>>> m = parse_ptx('''.visible .entry k() {
... .reg .b32 %r<3>;
... mov.u32 %r1, 5;
... add.s32 %r2, %r1, %r1;
... ret;
... }''', "k.cu")
>>> fn = decode_function(m.functions["k"], program=None)
>>> len(fn.blocks), fn.blocks[0].term[0]
(1, 'ret')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedError
from ..i18n.messages import _
from . import mbarrier, mma, wmma
from . import numeric as nm
from .batch import Site
from .counts import (
    SLOW_PATH,
    block_profile,
    expansion,
    hoisted,
    issue_cycles,
    predicable,
    scoreboard_program,
    slow_lanes,
)
from .frontend import Function, Instr, type_size
from .operands import PACKED, Scope, dtype_of
from .vectorize import register_alignment, shared_alignment, vector_groups
from .video import BASES as VIDEO
from .video import h_video
from .warp import atomic_op, match_sync, redux, shfl, vote

TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64",
         "f16", "f32", "f64", "pred", "f16x2", "bf16", "bf16x2", "b128"}
CONTROL = ("bra", "brx", "ret", "exit", "bar", "barrier", "trap")
WARP_LEVEL = ("bar.warp", "barrier.cluster")  # not block barriers: ordinary instructions
WAITS = "mbarrier.try_wait"  # a block of its own: the scheduler parks lanes that must wait


@dataclass
class Block:
    start: int
    ops: list
    term: tuple  # ("next",) ("bra", target, guard) ("brx", reg reader, targets) ("ret",) ...
    line: int
    text: str = ""
    count: int = 0
    pure: list = field(default_factory=list)  # per op: touches only the lane's registers
    classes: np.ndarray | None = None  # warp instructions per class (counts.CLASSES)
    cycles: int = 0  # one warp's issue cycles with dependency stalls (counts.issue_cycles)
    scoreboard: list = field(default_factory=list)  # counts.scoreboard_program's events
    trips: int = 1  # runs of the block that one pass of its scoreboard events stands for
    bulk: int = 0  # bulk copies (cp.async.bulk) in the block: each lane's is one TMA copy


@dataclass
class Decoded:
    name: str
    fn: Function
    scope: Scope
    blocks: list[Block] = field(default_factory=list)
    pc_of_block: dict[int, int] = field(default_factory=dict)
    depot: int = 0  # bytes of local memory the function's frame needs
    pure_exit: set = field(default_factory=set)  # blocks that only return
    tracked: int = 0  # registers the memory-period scoreboard follows
    arrives: bool = False  # any bar.arrive: barriers with a thread count are named barriers


def split_opcode(opcode: str):
    """``ld.global.nc.v4.f32`` -> ``("ld", ["global", "nc", "v4"], "f32")``."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    types = [m for m in mods if m in TYPES]
    rest = [m for m in mods if m not in TYPES]
    return base, rest, types


def decode_function(fn: Function, program) -> Decoded:
    scope = Scope(fn, program)
    dec = Decoded(fn.name, fn, scope)
    dec.arrives = any(ins.opcode.startswith(("bar.arrive", "barrier.arrive")) for ins in fn.body)
    if program is not None:
        dec.depot = program.depot_size(fn)
    leaders = {0} | set(fn.labels.values())
    for k, ins in enumerate(fn.body):
        base = ins.opcode.split(".")[0]
        if (base in CONTROL and not ins.opcode.startswith(WARP_LEVEL)) or \
                ins.opcode.startswith(WAITS):
            leaders.add(k + 1)
            if base in ("bar", "barrier", "mbarrier"):
                leaders.add(k)
    leaders = sorted(x for x in leaders if x <= len(fn.body))
    starts = [x for x in leaders if x < len(fn.body)]
    for bi, s in enumerate(starts):
        dec.pc_of_block[s] = bi
    fused = _contractions(fn, starts)
    merged, followers = _vector_loads(fn, starts, program)
    for bi, s in enumerate(starts):
        end = starts[bi + 1] if bi + 1 < len(starts) else len(fn.body)
        ops, term, pure = [], ("next",), []
        for ins in fn.body[s:end]:
            if id(ins) in followers:  # loaded by its group's vector load
                continue
            if id(ins) in merged:
                ops.append(_vector_load(merged[id(ins)], scope, program))
                pure.append(False)
                continue
            if id(ins) in fused:
                ops.append(_fused(ins, fused[id(ins)], scope))
                pure.append(True)
                continue
            base = ins.opcode.split(".")[0]
            if ins.opcode.startswith(WAITS):
                term = _wait(ins, scope, program)
            elif base in CONTROL and not ins.opcode.startswith(WARP_LEVEL):
                term = _terminator(ins, scope, dec)
            else:
                try:
                    op = decode(ins, scope, program)
                except UnsupportedError as exc:
                    op = _deferred(exc, ins)
                if op is not None:
                    ops.append(_guarded(op, ins, scope) if ins.guard else op)
                    pure.append(HANDLERS.get(base) in PURE)
        first = fn.body[s]
        dec.blocks.append(Block(s, ops, term, first.line, count=end - s, pure=pure,
                                bulk=sum(mbarrier.is_bulk_copy(i.opcode) for i in fn.body[s:end])))
        if not ops and term[0] == "ret":
            dec.pure_exit.add(bi)
    for b in dec.blocks:  # labels -> block numbers
        if b.term[0] == "bra":
            b.term = ("bra", dec.pc_of_block[fn.labels[b.term[1]]], b.term[2])
        elif b.term[0] == "brx":
            b.term = ("brx", b.term[1], [dec.pc_of_block[fn.labels[t]] for t in b.term[2]])
    muls = {id(mul) for mul, _ in fused.values()} | followers
    events = []
    for bi, b in enumerate(dec.blocks):
        end = starts[bi + 1] if bi + 1 < len(starts) else len(fn.body)
        back = b.term[0] == "bra" and b.term[1] <= bi
        unrolled = b.term[0] == "bra" and b.term[1] == bi and b.start not in fn.nounroll
        b.classes, ev, b.trips = block_profile(fn.body[b.start:end], muls, back,
                                               self_loop=unrolled)
        b.cycles = issue_cycles(fn.body[b.start:end], muls, back)
        events.append(ev)
    _if_converted(fn, starts, dec.blocks, events)
    dec.tracked, programs = scoreboard_program([hoisted(e) for e in events])
    for b, program in zip(dec.blocks, programs, strict=True):
        b.scoreboard = program
    return dec


#: the longest guarded block (PTX instructions) taken as if-converted: ptxas predicates short
#: ``if (...) { ... }`` bodies and schedules them with the block before
IF_CONVERTED = 12


def _if_converted(fn: Function, starts: list[int], blocks: list, events: list) -> None:
    """Give a short guarded block's scoreboard events to the block that branches around it.

    ``@p bra L; <T>; L:`` with a short ``T`` (no barrier, call or slow-path expansion)
    becomes predicated code in SASS, one block with what precedes it, so ptxas issues ``T``'s
    loads with the block's own (``reduce6``'s ``if (i + blockSize < n) sum += g[i + bs]``:
    both loads of a trip in flight at once). The warp issues ``T`` whether or not its lanes
    take it, so its waits count in either case.
    """
    for bi in range(len(blocks) - 1):
        b, t = blocks[bi], blocks[bi + 1]
        if not (b.term[0] == "bra" and b.term[2] is not None and b.term[1] == bi + 2
                and t.term == ("next",) and t.count <= IF_CONVERTED and events[bi + 1]):
            continue
        if not predicable(fn.body[starts[bi + 1]:starts[bi + 1] + t.count]):
            continue
        events[bi] = events[bi] + events[bi + 1]
        events[bi + 1] = []


def _vector_loads(fn: Function, starts: list[int], program) -> tuple[dict, set]:
    """ptxas's vector loads of shared memory (:mod:`.vectorize`): ``{id(first member in
    program order): group in address order}`` and the ids of the other members."""
    variables = {**(program.module.variables if program is not None else {}), **fn.vars}
    alignment = register_alignment(fn.body, {n: shared_alignment(v) for n, v in variables.items()
                                             if v.space == "shared"})
    merged, followers = {}, set()
    for s, e in zip(starts, starts[1:] + [len(fn.body)], strict=True):
        place = {id(ins): k for k, ins in enumerate(fn.body[s:e])}
        for group in vector_groups(fn.body[s:e], alignment):
            first = min(group, key=lambda ins: place[id(ins)])
            merged[id(first)] = group
            followers |= {id(ins) for ins in group if ins is not first}
    return merged, followers


def _vector_load(group: list[Instr], scope: Scope, program):
    """One load of ``len(group)`` elements for a group of scalar shared loads; where an
    address is not a multiple of the vector's width at run time (the emulator's layout is
    not ptxas's), the members load one by one."""
    t = split_opcode(group[0].opcode)[2][-1]
    dt = dtype_of(t)
    reader, _ = scope.address(group[0].operands[1])
    writes = [scope.write(ins.operands[0], t) for ins in group]
    sites = [_site(ins, program, "ld") for ins in group]
    width = np.uint64(dt.itemsize * len(group))

    def ld(fr, L):
        lanes = fr.b.index(L)
        addr = reader(fr, L)
        if np.any(np.asarray(addr, np.uint64) % width):
            vals = [fr.b.load(addr + np.uint64(k * dt.itemsize), lanes, "shared", dt, 1, site)[0]
                    for k, site in enumerate(sites)]
        else:
            vals = fr.b.load(addr, lanes, "shared", dt, len(group), sites[0])
        for w, v in zip(writes, vals, strict=True):
            w(fr, L, v)
    return ld


_ROUNDED = {"rn", "rz", "rm", "rp", "sat"}


def _contractions(fn: Function, starts: list[int]) -> dict:
    """The ``add``/``sub`` instructions that ptxas fuses with the ``mul`` feeding them.

    Like nvcc's default ``-fmad=true``, ptxas turns ``mul.f32`` + ``add.f32`` (both without
    a rounding modifier, the product used once, in the same basic block) into one FFMA;
    ``__fmul_rn``/``__fadd_rn`` carry ``.rn`` and are never fused. Returns
    ``{id(add): (mul, index of the product among the add's operands)}``.
    """
    uses: dict[str, int] = {}
    defs: dict[str, int] = {}
    for ins in fn.body:
        for k, op in enumerate(ins.operands):
            names = op if isinstance(op, list) else [op]
            for n in names:
                if not isinstance(n, str):
                    continue
                for r in re.findall(r"%[\w.]+", n.split("|")[0] if k == 0 else n):
                    if k == 0 and not n.startswith("["):
                        defs[r] = defs.get(r, 0) + 1
                    else:
                        uses[r] = uses.get(r, 0) + 1
        if ins.guard:
            g = ins.guard.lstrip("!")
            uses[g] = uses.get(g, 0) + 1
    out = {}
    bounds = list(zip(starts, starts[1:] + [len(fn.body)], strict=True))
    for s, e in bounds:
        product: dict[str, tuple] = {}
        for k in range(s, e):
            ins = fn.body[k]
            base, mods, types = split_opcode(ins.opcode)
            t = types[-1] if types else ""
            dst = ins.operands[0] if ins.operands else None
            if (base == "mul" and t in ("f32", "f64") and not _ROUNDED & set(mods)
                    and not ins.guard and defs.get(dst) == 1 and uses.get(dst) == 1):
                product[dst] = (ins, t)
                continue
            if (base in ("add", "sub") and t in ("f32", "f64") and not _ROUNDED & set(mods)
                    and not ins.guard):
                for pos in (1, 2):
                    m = product.get(ins.operands[pos])
                    if m is not None and m[1] == t and ins.operands[1] != ins.operands[2]:
                        out[id(ins)] = (m[0], pos)
                        break
            if isinstance(dst, str):  # a redefinition ends the products that read it
                for r in [r for r, (mi, _) in product.items() if dst in mi.operands[1:]]:
                    del product[r]
    return out


def _fused(ins: Instr, how, scope: Scope):
    mul, pos = how
    base, mods, types = split_opcode(ins.opcode)
    t = types[-1]
    dt = dtype_of(t)
    ma, mb = scope.read(mul.operands[1], t), scope.read(mul.operands[2], t)
    other = scope.read(ins.operands[3 - pos], t)
    w = scope.write(ins.operands[0], t)
    if base == "add":
        return lambda fr, L: w(fr, L, nm.fma(ma(fr, L), mb(fr, L), other(fr, L), dt))
    if pos == 1:  # (a * b) - c
        return lambda fr, L: w(fr, L, nm.fma(ma(fr, L), mb(fr, L),
                                             np.negative(other(fr, L)), dt))
    return lambda fr, L: w(fr, L, nm.fma(np.negative(ma(fr, L)), mb(fr, L), other(fr, L), dt))


def _deferred(exc, ins):
    """An instruction the emulator cannot run fails when (and only if) it is reached."""
    def op(fr, L):
        raise UnsupportedError(_("{what} (line {line} of kernel '{kernel}')").format(
            what=exc, line=ins.line, kernel=fr.kernel_name))
    return op


def _guarded(op, ins: Instr, scope: Scope):
    p = scope.read(ins.guard, "pred")

    def g(fr, L):
        m = p(fr, L)
        if m.all():
            op(fr, L)
        elif m.any():
            op(fr, fr.b.index(L)[m])
    return g


def _terminator(ins: Instr, scope: Scope, dec: Decoded):
    base, mods, types = split_opcode(ins.opcode)
    guard = scope.read(ins.guard, "pred") if ins.guard else None
    if base == "bra":
        return ("bra", ins.operands[0], guard)
    if base == "brx":
        return ("brx", scope.read(ins.operands[0], "u32"), ins.label_targets)
    if base in ("ret", "exit"):
        if guard is not None:
            raise UnsupportedError("a predicated return")
        return ("ret",)
    if base == "trap":
        return ("trap",)
    # bar.sync / barrier.sync / bar.arrive / bar.red: ("bar", reduction, its destination, its
    # predicate, line, barrier number, thread count or None, counted apart from the block's
    # barrier, arrive only)
    if ins.guard:
        raise UnsupportedError("a predicated barrier")
    o = ins.operands
    red = dst = src = None
    if "red" in mods:
        red = [m for m in mods if m in ("popc", "and", "or")][0]
        dst = scope.write(o[0], "u32" if red == "popc" else "pred")
        src = scope.read(o[-1], "pred")
        o = o[1:-1]
    number = scope.read(o[0], "u32") if o else None
    count = scope.read(o[1], "u32") if len(o) > 1 else None
    # a barrier some warps only arrive at is counted apart from the block's, even for the
    # whole block (producers arrive, consumers wait: bar.arrive 1, 256 / bar.sync 1, 256)
    named = "arrive" in mods or (count is not None and dec.arrives)
    return ("bar", red, dst, src, ins.line, number, count, named, "arrive" in mods)


def _wait(ins: Instr, scope: Scope, program):
    """``mbarrier.try_wait``: ``("wait", done, write)``; ``done(frame, lanes)`` says per lane
    whether the phase it waits for is over, ``write(frame, lanes, values)`` sets its
    predicate."""
    if ins.guard:
        raise UnsupportedError("a predicated mbarrier.try_wait")
    _base, mods, _types = split_opcode(ins.opcode)
    done = mbarrier.waiter(ins, scope, mods, ins.operands, _site(ins, program, "atom"))
    return ("wait", done, scope.write(ins.operands[0], "pred"))


# -- instructions --------------------------------------------------------------------------

def decode(ins: Instr, scope: Scope, program):
    """The closure of one non-control instruction (``None`` for no-ops)."""
    base, mods, types = split_opcode(ins.opcode)
    o = ins.operands
    t = types[-1] if types else "b32"
    handler = HANDLERS.get(base)
    if base in ("bar", "barrier") and mods[:1] == ["warp"]:
        handler = h_syncwarp
    elif base == "barrier" and "cluster" in mods:
        handler = h_noop
    if handler is None:
        raise UnsupportedError(_unsupported_name(base, ins.opcode))
    return handler(ins, scope, program, base, mods, types, t, o)


def _unsupported_name(base: str, opcode: str) -> str:
    if base in ("tex", "tld4", "txq", "suld", "sust", "sured", "suq"):
        return _("texture and surface objects are not supported by the emulator")
    if base == "cp":
        return _("the asynchronous copy '{opcode}' is not supported by the emulator").format(
            opcode=opcode)
    return _("the PTX instruction '{opcode}'").format(opcode=opcode)


def h_mov(ins, scope, program, base, mods, types, t, o):
    dst, src = o
    if isinstance(dst, list):  # unpack: mov.b64 {%r1, %r2}, %rd1
        r = scope.read(src, t)
        part = f"b{8 * type_size(t) // len(dst)}"
        pdt = dtype_of(part)
        ws = [scope.write(d, part) for d in dst]

        def unpack(fr, L):
            v = np.ascontiguousarray(np.asarray(r(fr, L)))
            if v.ndim == 0:
                v = np.full(fr.b.index(L).size, v)
            parts = v.view(pdt).reshape(-1, len(ws))
            for k, w in enumerate(ws):
                w(fr, L, parts[:, k])
        return unpack
    if isinstance(src, list):  # pack: mov.b32 %r1, {%rs1, %rs2}
        part = f"b{8 * type_size(t) // len(src)}"
        rs = [scope.read(s, part) for s in src]
        w = scope.write(dst, t)
        pdt = dtype_of(part)
        tdt = dtype_of(t) if t not in PACKED else np.dtype(np.uint32)

        def pack(fr, L):
            n = fr.b.index(L).size
            cols = np.empty((n, len(rs)), pdt)
            for k, r in enumerate(rs):
                cols[:, k] = r(fr, L)
            w(fr, L, cols.reshape(-1).view(tdt))
        return pack
    r = scope.read(src, t)
    w = scope.write(dst, t)

    def mov(fr, L):
        w(fr, L, r(fr, L))
    return mov


def _arith_type(t):
    if t in ("bf16", "bf16x2"):
        return np.float32
    return dtype_of(t)


def h_binary(ins, scope, program, base, mods, types, t, o):
    dt = _arith_type(t)
    bits = 8 * np.dtype(dt).itemsize
    if base in ("shl", "shr"):
        a = scope.read(o[1], t)
        n = scope.read(o[2], "u32")
        w = scope.write(o[0], t)
        if base == "shl":
            return lambda fr, L: w(fr, L, nm.shift_left(a(fr, L), n(fr, L), bits))
        return lambda fr, L: w(fr, L, nm.shift_right(a(fr, L), n(fr, L), bits))
    if base in ("mul", "mad") and ("wide" in mods):
        wide = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]
        wdt = dtype_of(wide)
        a, b = scope.read(o[1], t), scope.read(o[2], t)
        w = scope.write(o[0], wide)
        if base == "mul":
            return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(wdt) * np.asarray(
                b(fr, L)).astype(wdt))
        c = scope.read(o[3], wide)
        return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(wdt) * np.asarray(
            b(fr, L)).astype(wdt) + c(fr, L))
    if base in ("mul", "mad") and "hi" in mods:
        a, b = scope.read(o[1], t), scope.read(o[2], t)
        w = scope.write(o[0], t)
        if base == "mul":
            return lambda fr, L: w(fr, L, nm.mul_hi(a(fr, L), b(fr, L), dt))
        c = scope.read(o[3], t)
        return lambda fr, L: w(fr, L, (nm.mul_hi(a(fr, L), b(fr, L), dt) + c(fr, L)).astype(dt))
    if base in ("mul24", "mad24"):
        a, b = scope.read(o[1], t), scope.read(o[2], t)
        w = scope.write(o[0], t)
        c = scope.read(o[3], t) if base == "mad24" else (lambda fr, L: dt.type(0))
        sdt = np.int64

        def m24(fr, L):
            x = np.asarray(a(fr, L)).astype(sdt) & 0xFFFFFF
            y = np.asarray(b(fr, L)).astype(sdt) & 0xFFFFFF
            if np.dtype(dt).kind == "i":
                x = np.where(x & 0x800000, x - 0x1000000, x)
                y = np.where(y & 0x800000, y - 0x1000000, y)
            p = x * y
            r = (p >> 16) if "hi" in mods else p
            w(fr, L, (r.astype(dt) + c(fr, L)).astype(dt))
        return m24
    if base in ("mad", "fma") and np.dtype(dt).kind == "f":
        a, b, c = (scope.read(x, t) for x in o[1:4])
        w = scope.write(o[0], t)
        if t in ("f16", "f16x2", "bf16", "bf16x2"):
            return lambda fr, L: w(fr, L, _round_half(nm.fma(a(fr, L), b(fr, L), c(fr, L),
                                                              np.float32), t))
        sat = "sat" in mods
        return lambda fr, L: w(fr, L, _sat(nm.fma(a(fr, L), b(fr, L), c(fr, L), dt), sat))
    if base == "mad":
        a, b, c = (scope.read(x, t) for x in o[1:4])
        w = scope.write(o[0], t)
        return lambda fr, L: w(fr, L, (np.asarray(a(fr, L)) * b(fr, L) + c(fr, L)).astype(dt))
    if base == "sad":
        a, b, c = (scope.read(x, t) for x in o[1:4])
        w = scope.write(o[0], t)
        return lambda fr, L: w(fr, L, (np.where(a(fr, L) > b(fr, L), a(fr, L) - b(fr, L),
                                                b(fr, L) - a(fr, L)) + c(fr, L)).astype(dt))
    a, b = scope.read(o[1], t), scope.read(o[2], t)
    w = scope.write(o[0], t)
    kind = np.dtype(dt).kind
    sat = "sat" in mods
    half = t in ("f16", "f16x2", "bf16", "bf16x2")
    if base == "div":
        f = (lambda x, y: np.asarray(x, dt) / np.asarray(y, dt)) if kind == "f" else nm.div
    elif base == "rem":
        f = nm.rem
    elif base in ("min", "max"):
        g = np.fmin if base == "min" else np.fmax
        if kind == "f" and "NaN" in mods:
            g = np.minimum if base == "min" else np.maximum
        f = g
    elif base == "copysign":
        f = lambda x, y: np.copysign(y, x)  # noqa: E731  (copysign d, a, b: sign of a)
    elif base in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[base]
        if t == "pred":
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[base]
    else:
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[base]
        if kind in "iu" and sat and t == "s32":
            def f(x, y, op=np.add if base == "add" else np.subtract):
                r = op(np.asarray(x).astype(np.int64), np.asarray(y).astype(np.int64))
                return np.clip(r, -2**31, 2**31 - 1)
    if half:
        return lambda fr, L: w(fr, L, _round_half(f(a(fr, L), b(fr, L)), t))
    key = expansion(ins.opcode)
    if key in SLOW_PATH:  # the counter counts the warps that take the SASS's slow path
        def divide(fr, L):
            x, y = a(fr, L), b(fr, L)
            if fr.b.counter is not None:
                lanes = fr.b.index(L)
                fr.b.counter.slow_path(key, lanes[np.broadcast_to(slow_lanes(x, y),
                                                                  lanes.shape)])
            w(fr, L, np.asarray(f(x, y)).astype(dt))
        return divide
    if kind == "f":
        return lambda fr, L: w(fr, L, _sat(np.asarray(f(a(fr, L), b(fr, L))).astype(dt), sat))
    return lambda fr, L: w(fr, L, np.asarray(f(a(fr, L), b(fr, L))).astype(dt))


def _round_half(v, t):
    if t in ("f16", "f16x2"):
        return np.asarray(v).astype(np.float16)
    return nm.bf16_to_f32(nm.f32_to_bf16(np.asarray(v, np.float32)))


def _sat(v, sat):
    if not sat:
        return v
    return np.where(np.isnan(v), 0, np.clip(v, 0, 1)).astype(np.asarray(v).dtype)


def h_unary(ins, scope, program, base, mods, types, t, o):
    dt = _arith_type(t)
    a = scope.read(o[1], t)
    w = scope.write(o[0], t)
    bits = 8 * np.dtype(dt).itemsize
    if base in ("popc", "clz", "bfind"):
        w = scope.write(o[0], "u32")
        if base == "popc":
            return lambda fr, L: w(fr, L, nm.popc(a(fr, L)))
        if base == "clz":
            return lambda fr, L: w(fr, L, nm.clz(a(fr, L), bits))
        return lambda fr, L: w(fr, L, nm.bfind(a(fr, L), bits, t.startswith("s"),
                                               "shiftamt" in mods))
    if base == "brev":
        return lambda fr, L: w(fr, L, nm.brev(a(fr, L), bits))
    if base == "not":
        if t == "pred":
            return lambda fr, L: w(fr, L, ~a(fr, L))
        return lambda fr, L: w(fr, L, ~np.asarray(a(fr, L)))
    if base == "cnot":
        return lambda fr, L: w(fr, L, (np.asarray(a(fr, L)) == 0).astype(dt))
    if base == "neg":
        return lambda fr, L: w(fr, L, np.negative(np.asarray(a(fr, L))).astype(dt))
    if base == "abs":
        return lambda fr, L: w(fr, L, np.abs(np.asarray(a(fr, L))).astype(dt))
    half = t in ("f16", "f16x2", "bf16", "bf16x2")
    ftz = "ftz" in mods
    fns = {
        "rcp": lambda x: np.asarray(1, dt) / x,
        "sqrt": np.sqrt,
        "rsqrt": lambda x: (np.asarray(1, np.float64) / np.sqrt(np.asarray(x, np.float64))),
        "sin": lambda x: np.sin(np.asarray(x, np.float64)),
        "cos": lambda x: np.cos(np.asarray(x, np.float64)),
        "lg2": lambda x: np.log2(np.asarray(x, np.float64)),
        "ex2": lambda x: np.exp2(np.asarray(x, np.float64)),
        "tanh": lambda x: np.tanh(np.asarray(x, np.float64)),
    }
    f = fns[base]

    def flush(x):
        if not ftz or np.dtype(dt) != np.float32:
            return x
        x = np.asarray(x, dt)
        return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0, x), x).astype(dt)
    if half:
        return lambda fr, L: w(fr, L, _round_half(f(np.asarray(a(fr, L), np.float32)), t))
    return lambda fr, L: w(fr, L, flush(np.asarray(f(flush(a(fr, L)))).astype(dt)))


def h_setp(ins, scope, program, base, mods, types, t, o):
    dt = _arith_type(t)
    cmp = mods[0]
    combine = mods[1] if len(mods) > 1 and mods[1] in ("and", "or", "xor") else None
    dsts = o[0].split("|")
    a, b = scope.read(o[1], t), scope.read(o[2], t)
    c = scope.read(o[3], "pred") if combine else None
    wp = scope.write(dsts[0], "pred")
    wq = scope.write(dsts[1], "pred") if len(dsts) > 1 else None
    if np.dtype(dt).kind == "f":
        def compare(x, y):
            return nm.float_compare(cmp, x, y)
    else:
        op = nm.INT_COMPARE[cmp]
        if cmp in ("lo", "ls", "hi", "hs") and np.dtype(dt).kind == "i":
            udt = nm.STORAGE[np.dtype(dt).itemsize]

            def compare(x, y):
                return op(np.asarray(x).astype(udt), np.asarray(y).astype(udt))
        else:
            compare = op
    half = t in ("f16x2", "bf16x2")
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(combine)
    if half:
        raise UnsupportedError("setp on packed half pairs")
    if base == "set":
        wd = scope.write(o[0], types[0])
        ddt = dtype_of(types[0])
        one = np.array(1.0, ddt) if ddt.kind == "f" else np.array(-1).astype(ddt)

        def set_(fr, L):
            r = np.asarray(compare(a(fr, L), b(fr, L)))
            if comb:
                r = comb(r, c(fr, L))
            wd(fr, L, np.where(r, one, np.zeros((), ddt)).astype(ddt))
        return set_

    def setp(fr, L):
        r = np.asarray(compare(a(fr, L), b(fr, L)))
        if r.ndim == 0:
            r = np.full(fr.b.index(L).size, bool(r))
        if comb:
            p = c(fr, L)
            wp(fr, L, comb(r, p))
            if wq:
                wq(fr, L, comb(~r, p))
        else:
            wp(fr, L, r)
            if wq:
                wq(fr, L, ~r)
    return setp


def h_selp(ins, scope, program, base, mods, types, t, o):
    a, b = scope.read(o[1], t), scope.read(o[2], t)
    w = scope.write(o[0], t)
    if base == "selp":
        p = scope.read(o[3], "pred")
        return lambda fr, L: w(fr, L, np.where(p(fr, L), a(fr, L), b(fr, L)))
    c = scope.read(o[3], types[-1])  # slct.t.s32 d, a, b, c: c >= 0 ? a : b
    return lambda fr, L: w(fr, L, np.where(np.asarray(c(fr, L)) >= 0, a(fr, L), b(fr, L)))


def h_cvt(ins, scope, program, base, mods, types, t, o):
    if "tf32" in mods:  # cvt.rna.tf32.f32: f32 bits with the low 13 of the mantissa cleared
        return _to_tf32(scope, o, next((m for m in mods if m in ("rna", "rn", "rz")), "rn"))
    if len(types) != 2:
        raise UnsupportedError(f"the conversion '{ins.opcode}'")
    dst_t, src_t = types[0], types[1]
    rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")),
               None)
    sat = "sat" in mods
    ftz = "ftz" in mods
    if src_t in ("f16x2", "bf16x2") or dst_t in ("f16x2", "bf16x2"):
        if len(o) == 3:  # cvt.rn.f16x2.f32 d, a, b: a in the upper half
            a, b = scope.read(o[1], src_t), scope.read(o[2], src_t)
            w = scope.write(o[0], dst_t)

            def pack(fr, L):
                hi, lo = np.asarray(a(fr, L), np.float32), np.asarray(b(fr, L), np.float32)
                n = fr.b.index(L).size
                pair = np.empty((n, 2), np.float32)
                pair[:, 0], pair[:, 1] = lo, hi
                w(fr, L, pair.reshape(-1) if dst_t == "bf16x2" else pair.reshape(-1)
                  .astype(np.float16))
            return pack
        raise UnsupportedError(f"the conversion '{ins.opcode}'")
    a = scope.read(o[1], src_t)
    w = scope.write(o[0], dst_t)
    ddt, sdt = _arith_type(dst_t), _arith_type(src_t)
    dk, sk = np.dtype(ddt).kind, np.dtype(sdt).kind

    def flush(x):
        if ftz:
            x = np.asarray(x)
            return np.where(np.abs(x) < np.finfo(np.float32).tiny, np.copysign(0, x), x)
        return x
    if dk in "iu" and sk == "f":
        return lambda fr, L: w(fr, L, nm.cvt_float_to_int(a(fr, L), ddt, rnd or "rzi"))
    if dk == "f" and sk == "f":
        if rnd in ("rni", "rzi", "rmi", "rpi"):
            return lambda fr, L: w(fr, L, _sat(np.asarray(nm.round_float(flush(a(fr, L)),
                                                                         rnd)).astype(ddt), sat))
        if dst_t == "bf16":
            return lambda fr, L: w(fr, L, np.asarray(a(fr, L), np.float32))
        return lambda fr, L: w(fr, L, _sat(flush(np.asarray(a(fr, L)).astype(ddt)), sat))
    if dk == "f":  # integer -> float
        if dst_t == "bf16":
            return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(np.float32))
        return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(ddt))
    # integer -> integer: the source's value (sign or zero extended), then wrap or saturate
    if sat:
        lo, hi = nm._INT_LIMITS[np.dtype(ddt)]
        return lambda fr, L: w(fr, L, np.clip(np.asarray(a(fr, L)).astype(np.float64) if
                                              np.dtype(sdt).itemsize == 8 else
                                              np.asarray(a(fr, L)).astype(np.int64),
                                              lo, hi).astype(ddt))
    return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(ddt))


def _to_tf32(scope, o, rounding: str):
    """TensorFloat-32 kept in a 32-bit register: the f32 rounded to 10 mantissa bits
    (to nearest, ties away from zero for ``rna``, to even for ``rn``; ``rz`` truncates);
    infinities and NaNs pass unchanged."""
    a = scope.read(o[1], "b32")
    w = scope.write(o[0], "b32")

    def tf32(fr, L):
        bits = np.asarray(a(fr, L), np.uint32)
        if rounding == "rna":
            up = np.uint32(0x1000)
        elif rounding == "rn":
            up = np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))
        else:
            up = np.uint32(0)
        finite = (bits & np.uint32(0x7F800000)) != np.uint32(0x7F800000)
        w(fr, L, np.where(finite, (bits + up) & np.uint32(0xFFFFE000), bits))
    return tf32


def h_cvta(ins, scope, program, base, mods, types, t, o):
    from .memory import LOCAL_BASE, SHARED_BASE

    space = [m for m in mods if m in ("global", "shared", "local", "const", "param")][0]
    a = scope.read(o[1], t)
    w = scope.write(o[0], t)
    off = {"shared": SHARED_BASE, "local": LOCAL_BASE}.get(space, 0)
    if not off:
        return lambda fr, L: w(fr, L, a(fr, L))
    if "to" in mods:
        return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(np.uint64) - np.uint64(off))
    return lambda fr, L: w(fr, L, np.asarray(a(fr, L)).astype(np.uint64) + np.uint64(off))


def h_isspacep(ins, scope, program, base, mods, types, t, o):
    from .memory import HEAP_BASE, LOCAL_BASE, SHARED_BASE, WINDOW

    a = scope.read(o[1], "u64")
    w = scope.write(o[0], "pred")
    space = mods[0]
    lo, hi = {"shared": (SHARED_BASE, SHARED_BASE + WINDOW), "local": (LOCAL_BASE, LOCAL_BASE +
              WINDOW), "global": (HEAP_BASE, 2**64 - 1), "const": (HEAP_BASE, 2**64 - 1)}[space]
    return lambda fr, L: w(fr, L, (np.asarray(a(fr, L)) >= np.uint64(lo)) &
                           (np.asarray(a(fr, L)) < np.uint64(hi)))


def _space(mods):
    for m in mods:
        if m in ("global", "shared", "local", "const", "param"):
            return m
    return "generic"


def _site(ins, program, op):
    if program is None:
        return Site(0, ins.line, ins.column, "")
    return program.site(ins, op)


def h_ld(ins, scope, program, base, mods, types, t, o):
    space = _space(mods)
    vec = next((int(m[1]) for m in mods if re.fullmatch(r"v[248]", m)), 1)
    dst, addr = o[0], o[1]
    dsts = dst if isinstance(dst, list) else [dst]
    ld_t = t if t not in ("b128",) else "b64"
    count = vec * (2 if t == "b128" else 1)
    if t == "b128":
        raise UnsupportedError("128-bit loads")
    dt = dtype_of(ld_t) if ld_t not in PACKED else np.dtype(np.uint32)
    reader, sym_space = scope.address(addr)
    if isinstance(sym_space, tuple) or space == "param":
        return _ld_param(scope, program, sym_space, addr, dsts, ld_t, dt)
    if sym_space and space == "generic":
        space = sym_space
    ws = [scope.write(d, ld_t if ld_t not in ("bf16",) else "b16") for d in dsts]
    site = _site(ins, program, "ld")

    def ld(fr, L):
        lanes = fr.b.index(L)
        vals = fr.b.load(reader(fr, L), lanes, space, dt, count, site)
        for w, v in zip(ws, vals, strict=False):
            w(fr, L, v)
    return ld


def _ld_param(scope, program, sym_space, addr, dsts, t, dt):
    inner = addr.strip()[1:-1].replace(" ", "")
    name, _, off = inner.partition("+")
    off = int(off or 0)
    ws = [scope.write(d, t) for d in dsts]
    size = dt.itemsize

    def ldp(fr, L):
        buf = fr.param_buffer(name)
        for k, w in enumerate(ws):
            raw = buf[:, off + k * size: off + (k + 1) * size]
            v = np.ascontiguousarray(raw).view(dt)[:, 0]
            w(fr, L, v[0] if buf.shape[0] == 1 else v[L])
    return ldp


def h_st(ins, scope, program, base, mods, types, t, o):
    space = _space(mods)
    addr, src = o[0], o[1]
    srcs = src if isinstance(src, list) else [src]
    dt = dtype_of(t) if t not in PACKED else np.dtype(np.uint32)
    rt = t if t != "bf16" else "b16"
    rs = [scope.read(s, rt) for s in srcs]
    reader, sym_space = scope.address(addr)
    if isinstance(sym_space, tuple) or space == "param":
        inner = addr.strip()[1:-1].replace(" ", "")
        name, _, off = inner.partition("+")
        off = int(off or 0)
        size = dt.itemsize

        def stp(fr, L):
            buf = fr.param_buffer(name)
            for k, r in enumerate(rs):
                v = np.asarray(r(fr, L)).astype(dt)
                buf[L, off + k * size: off + (k + 1) * size] = \
                    np.broadcast_to(v, (fr.b.index(L).size,)).reshape(-1, 1).view(np.uint8)
        return stp
    if sym_space and space == "generic":
        space = sym_space
    site = _site(ins, program, "st")

    def st(fr, L):
        lanes = fr.b.index(L)
        fr.b.store(reader(fr, L), lanes, space, [np.asarray(r(fr, L)).astype(dt, copy=False)
                                                 for r in rs], dt, site)
    return st


def h_mbarrier(ins, scope, program, base, mods, types, t, o):
    return mbarrier.decode(ins, scope, mods, o, _site(ins, program, "atom"))


def h_atom(ins, scope, program, base, mods, types, t, o):
    space = _space(mods)
    ops = [m for m in mods if m in ("add", "min", "max", "inc", "dec", "and", "or", "xor",
                                     "exch", "cas")]
    if not ops:
        raise UnsupportedError(f"the atomic '{ins.opcode}'")
    op = ops[0]
    if base == "atom":
        dst, addr, args = o[0], o[1], o[2:]
        w = scope.write(dst, t)
    else:
        addr, args = o[0], o[1:]
        w = None
    if t in PACKED or t in ("f16", "bf16"):
        raise UnsupportedError(f"half-precision atomics ('{ins.opcode}')")
    dt = dtype_of(t)
    rs = [scope.read(a, t) for a in args]
    reader, sym_space = scope.address(addr)
    if sym_space and space == "generic":
        space = sym_space
    site = _site(ins, program, "atom")

    def atom(fr, L):
        lanes = fr.b.index(L)
        vals = [np.broadcast_to(np.asarray(r(fr, L)).astype(dt), lanes.shape) for r in rs]
        old = np.zeros(lanes.size, dt)
        for view, idx, pos in fr.b.atomic_targets(reader(fr, L), lanes, space, dt, site):
            old[pos] = atomic_op(op, view, idx, [v[pos] for v in vals], dt)
        if w is not None:
            w(fr, L, old)
    return atom


def h_shfl(ins, scope, program, base, mods, types, t, o):
    mode = [m for m in mods if m in ("up", "down", "bfly", "idx")][0]
    dsts = o[0].split("|")
    a = scope.read(o[1], "b32")
    b = scope.read(o[2], "u32")
    c = scope.read(o[3], "u32")
    mask = scope.read(o[4], "u32") if len(o) > 4 else (lambda fr, L: np.uint32(0xFFFFFFFF))
    w = scope.write(dsts[0], "b32")
    wp = scope.write(dsts[1], "pred") if len(dsts) > 1 else None
    line = ins.line

    def op(fr, L):
        v, p = shfl(fr, L, mode, a, b(fr, L), c(fr, L), mask(fr, L), line)
        w(fr, L, v)
        if wp:
            wp(fr, L, p)
    return op


def h_vote(ins, scope, program, base, mods, types, t, o):
    mode = [m for m in mods if m in ("all", "any", "uni", "ballot")][0]
    src = scope.read(o[1], "pred")
    w = scope.write(o[0], "b32" if mode == "ballot" else "pred")
    m = scope.read(o[2], "b32") if len(o) > 2 else (lambda fr, L: None)
    return lambda fr, L: w(fr, L, vote(fr, L, mode, src(fr, L), m(fr, L)))


def h_activemask(ins, scope, program, base, mods, types, t, o):
    w = scope.write(o[0], "b32")
    return lambda fr, L: w(fr, L, vote(fr, L, "ballot", np.ones(fr.b.index(L).size, bool)))


def h_match(ins, scope, program, base, mods, types, t, o):
    mode = "all" if "all" in mods else "any"
    dsts = o[0].split("|")
    a = scope.read(o[1], t)
    w = scope.write(dsts[0], "b32")
    wp = scope.write(dsts[1], "pred") if len(dsts) > 1 else None
    mk = scope.read(o[2], "b32") if len(o) > 2 else (lambda fr, L: None)

    def op(fr, L):
        m, p = match_sync(fr, L, mode, np.asarray(a(fr, L)), mk(fr, L))
        w(fr, L, m)
        if wp:
            wp(fr, L, p)
    return op


def h_redux(ins, scope, program, base, mods, types, t, o):
    kind = [m for m in mods if m in ("add", "min", "max", "and", "or", "xor")][0]
    a = scope.read(o[1], t)
    w = scope.write(o[0], t)
    dt = dtype_of(t)
    mk = scope.read(o[2], "b32") if len(o) > 2 else (lambda fr, L: None)
    return lambda fr, L: w(fr, L, redux(fr, L, kind, np.asarray(a(fr, L)).astype(dt),
                                        mk(fr, L)))


def h_syncwarp(ins, scope, program, base, mods, types, t, o):
    def op(fr, L):
        if fr.b.race is not None:
            fr.b.race.syncwarp(fr.b.warp_key[L])
    return op


def h_noop(ins, scope, program, base, mods, types, t, o):
    return None


def h_bitfield(ins, scope, program, base, mods, types, t, o):
    bits = 8 * type_size(t)
    w = scope.write(o[0], t)
    if base == "bfe":
        a, p, n = scope.read(o[1], t), scope.read(o[2], "u32"), scope.read(o[3], "u32")
        return lambda fr, L: w(fr, L, nm.bfe(a(fr, L), p(fr, L), n(fr, L), bits,
                                             t.startswith("s")))
    if base == "bfi":
        a, b = scope.read(o[1], t), scope.read(o[2], t)
        p, n = scope.read(o[3], "u32"), scope.read(o[4], "u32")
        return lambda fr, L: w(fr, L, nm.bfi(a(fr, L), b(fr, L), p(fr, L), n(fr, L), bits))
    if base == "prmt":
        a, b, c = scope.read(o[1], "b32"), scope.read(o[2], "b32"), scope.read(o[3], "b32")
        mode = next((m for m in mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), "")
        return lambda fr, L: w(fr, L, nm.prmt(a(fr, L), b(fr, L), c(fr, L), mode))
    if base == "bmsk":  # a mask of b bits starting at bit a
        a, b = scope.read(o[1], "u32"), scope.read(o[2], "u32")
        wrap = "wrap" in mods

        def bmsk(fr, L):
            pos = np.asarray(a(fr, L)).astype(np.uint64)
            n = np.asarray(b(fr, L)).astype(np.uint64)
            if wrap:
                pos, n = pos & np.uint64(31), n & np.uint64(31)
            else:
                pos, n = np.minimum(pos, np.uint64(32)), np.minimum(n, np.uint64(32))
            m = ((np.uint64(1) << n) - np.uint64(1)) << pos
            w(fr, L, (m & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        return bmsk
    if base == "lop3":
        a, b, c = (scope.read(x, t) for x in o[1:4])
        lut = int(o[4], 0)
        return lambda fr, L: w(fr, L, nm.lop3(np.asarray(a(fr, L)), np.asarray(b(fr, L)),
                                              np.asarray(c(fr, L)), lut))
    if base == "shf":
        a, b, n = scope.read(o[1], "b32"), scope.read(o[2], "b32"), scope.read(o[3], "u32")
        left = "l" in mods
        wrap = "wrap" in mods
        return lambda fr, L: w(fr, L, nm.funnel(a(fr, L), b(fr, L), n(fr, L), left, wrap))
    raise UnsupportedError(f"the PTX instruction '{ins.opcode}'")


def h_testp(ins, scope, program, base, mods, types, t, o):
    a = scope.read(o[1], t)
    w = scope.write(o[0], "pred")
    kind = mods[0]
    f = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
         "notanumber": np.isnan,
         "normal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
         "subnormal": lambda x: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)}[kind]
    return lambda fr, L: w(fr, L, f(np.asarray(a(fr, L))))


def h_dp4a(ins, scope, program, base, mods, types, t, o):
    ta, tb = types[0], types[1]
    a, b, c = scope.read(o[1], "b32"), scope.read(o[2], "b32"), scope.read(o[3], types[0])
    w = scope.write(o[0], "s32" if "s32" in (ta, tb) else "u32")
    n = 4 if base == "dp4a" else 2

    def op(fr, L):
        x = np.asarray(a(fr, L)).astype(np.uint32).reshape(-1, 1).view(
            np.int8 if ta == "s32" else np.uint8).astype(np.int64)
        bw = np.asarray(b(fr, L)).astype(np.uint32).reshape(-1, 1)
        if n == 4:
            y = bw.view(np.int8 if tb == "s32" else np.uint8).astype(np.int64)
            s = (x * y).sum(axis=1)
        else:
            y = bw.view(np.int16 if tb == "s32" else np.uint16).astype(np.int64)
            half = 2 if "hi" in mods else 0
            s = (x[:, half:half + 2] * y).sum(axis=1)
        w(fr, L, (s + np.asarray(c(fr, L)).astype(np.int64)).astype(np.int64).astype(np.uint32))
    return op


def h_call(ins, scope, program, base, mods, types, t, o):
    rets, name, args = o
    return program.call_op(scope, ins, rets, name, args)


def h_cp_async(ins, scope, program, base, mods, types, t, o):
    if "reduce" in mods:
        raise UnsupportedError(_unsupported_name(base, ins.opcode))
    if "async" not in mods or ("commit_group" in mods or "wait_group" in mods or
                               "wait_all" in mods):
        return None
    if "mbarrier" in mods:  # cp.async.mbarrier.arrive
        return mbarrier.copy_arrive(ins, scope, mods, o, _site(ins, program, "atom"))
    if "bulk" in mods:
        return mbarrier.bulk_copy(ins, scope, mods, o, _site(ins, program, "ld"))
    dst, src, size = o[0], o[1], int(o[2], 0)
    src_size = scope.read(o[3], "u32") if len(o) > 3 else None
    dr, _ = scope.address(dst)
    sr, _ = scope.address(src)
    site_ld = _site(ins, program, "ld")
    unit = {4: np.uint32, 8: np.uint64, 16: np.uint32}[size]
    count = 4 if size == 16 else 1

    def op(fr, L):
        lanes = fr.b.index(L)
        vals = fr.b.load(sr(fr, L), lanes, "global", unit, count, site_ld)
        if src_size is not None:
            n = np.asarray(src_size(fr, L))
            if np.any(n < size):
                raise UnsupportedError("cp.async with a partial source size")
        fr.b.store(dr(fr, L), lanes, "shared", vals, unit, site_ld)
    return op


def _matrix_multiply(ins, scope, mods, o, fragments, where):
    """D = A B + C of a warp's fragments (``wmma.mma``, ``mma.sync``), laid out by
    ``where``."""
    what = f"'{ins.opcode}' (line {ins.line})"
    fa, fb, fc, fd = fragments
    saturate = "satfinite" in mods
    reads = [[scope.read(r, f"b{f.register_bits}") for r in regs]
             for f, regs in ((fa, o[1]), (fb, o[2]), (fc, o[3]))]
    ws = [scope.write(r, f"b{fd.register_bits}") for r in o[0]]

    def mma(fr, L):
        warps = wmma.full_warps(fr.b.index(L), what).shape[0]
        tiles = []
        for f, rs in zip((fa, fb, fc), reads, strict=True):
            regs = [np.broadcast_to(r(fr, L), (warps * 32,)).reshape(warps, 32) for r in rs]
            tiles.append(wmma.unpack(regs, f, where))
        d = wmma.multiply(*tiles, fa, fb)
        regs = wmma.pack(d, fd, saturate, where)
        for k, w in enumerate(ws):
            w(fr, L, regs[k % fd.slots])
    return mma


def h_mma(ins, scope, program, base, mods, types, t, o):
    """``mma.sync`` (:mod:`cudakit.emu.mma`)."""
    return _matrix_multiply(ins, scope, mods, o, mma.fragments(ins.opcode), mma.coordinates)


def _warp_rows(fr, L, reader, count, what):
    """The warps of lanes ``L`` (warps, 32) and the row addresses their first ``8 count``
    lanes give, flattened, with those lanes."""
    lanes = wmma.full_warps(fr.b.index(L), what)
    addr = np.broadcast_to(np.asarray(reader(fr, L), np.uint64).reshape(-1), (lanes.size,))
    used = np.arange(32) < 8 * count
    return lanes, addr.reshape(lanes.shape)[:, used].reshape(-1), \
        lanes[:, used].reshape(-1)


def h_matrix_move(ins, scope, program, base, mods, types, t, o):
    """``ldmatrix``, ``stmatrix`` and ``movmatrix``: 8 x 8 matrices of 16-bit elements between
    rows in shared memory (or a register per lane) and the fragment layout of ``mma.sync``
    (:func:`cudakit.emu.mma.to_lanes`)."""
    what = f"'{ins.opcode}' (line {ins.line})"
    count, trans = mma.matrices(ins.opcode)
    if base == "movmatrix":
        if not trans:
            raise UnsupportedError(f"'{ins.opcode}' without .trans")
        read, write = scope.read(o[1], "b32"), scope.write(o[0], "b32")

        def move(fr, L):
            warps = wmma.full_warps(fr.b.index(L), what).shape[0]
            regs = np.broadcast_to(read(fr, L), (warps * 32,)).reshape(warps, 1, 32)
            write(fr, L, mma.to_lanes(mma.from_lanes(regs, False), True).reshape(-1))
        return move
    loading = base == "ldmatrix"
    reader, _ = scope.address(o[1] if loading else o[0])
    regs = o[0] if loading else o[1]
    regs = regs if isinstance(regs, list) else [regs]
    site = _site(ins, program, "ld" if loading else "st")
    if loading:
        ws = [scope.write(r, "b32") for r in regs]

        def load(fr, L):
            lanes, addr, used = _warp_rows(fr, L, reader, count, what)
            words = np.stack(fr.b.load(addr, used, "shared", np.uint32, 4, site), axis=-1)
            rows = words.view(np.uint16).reshape(lanes.shape[0], count, 8, 8)
            out = mma.to_lanes(rows, trans)
            for k, w in enumerate(ws):
                w(fr, L, out[:, k].reshape(-1))
        return load
    rs = [scope.read(r, "b32") for r in regs]

    def store(fr, L):
        lanes, addr, used = _warp_rows(fr, L, reader, count, what)
        n = lanes.size
        held = np.stack([np.broadcast_to(r(fr, L), (n,)).reshape(lanes.shape) for r in rs],
                        axis=1).astype(np.uint32)
        rows = np.ascontiguousarray(mma.from_lanes(held, trans)).view(np.uint32)
        words = rows.reshape(-1, 4)  # one row of 16 bytes per address lane
        fr.b.store(addr, used, "shared", list(words.T), np.uint32, site)
    return store


def h_wmma(ins, scope, program, base, mods, types, t, o):
    """``wmma.load``, ``wmma.store`` and ``wmma.mma`` (:mod:`cudakit.emu.wmma`)."""
    if mods[0] == "mma":
        return _matrix_multiply(ins, scope, mods, o, wmma.mma_fragments(ins.opcode),
                                wmma.coordinates)
    what = f"'{ins.opcode}' (line {ins.line})"
    f = wmma.fragment(ins.opcode)
    space = _space(mods)
    reader, sym_space = scope.address(o[1] if mods[0] == "load" else o[0])
    if sym_space and space == "generic":
        space = sym_space
    regs = o[0] if mods[0] == "load" else o[1]
    stride = scope.read(o[2], "u32") if len(o) > 2 else None
    outer, inner = wmma.element_offsets(f)  # (lane, register, element)
    dtype = wmma.ELEMENTS[f.element][0]
    size = np.dtype(dtype).itemsize
    whole = f.role in "ab" or f.layout == "row"  # a register's elements lie side by side
    rtype = f"b{f.register_bits}"
    site = _site(ins, program, "ld" if mods[0] == "load" else "st")

    def addresses(fr, L):
        lanes = wmma.full_warps(fr.b.index(L), what)
        first = np.asarray(reader(fr, L), np.uint64).reshape(-1)
        first = np.broadcast_to(first, (lanes.size,)).reshape(lanes.shape)[:, :1]
        step = f.cols if stride is None else np.broadcast_to(
            np.asarray(stride(fr, L), np.int64), (lanes.size,)).reshape(lanes.shape)[:, :1]
        offset = (outer[None] * np.asarray(step)[..., None, None] + inner[None]) * size
        return lanes, first[..., None, None] + offset.astype(np.uint64)

    per = f.chunk // f.per_register  # registers per access

    def moves(addr):
        """(addresses per lane, registers, element count) of each access: a chunk of a row
        at once, or element by element for an accumulator laid out in columns."""
        if whole:
            return [(addr[:, :, a * per, 0].reshape(-1), range(a * per, (a + 1) * per), f.chunk)
                    for a in range(f.accesses)]
        return [(addr[:, :, r, j].reshape(-1), (r, j), 1)
                for r in range(f.slots) for j in range(f.per_register)]

    if mods[0] == "load":
        ws = [scope.write(r, rtype) for r in regs]

        def load(fr, L):
            lanes, addr = addresses(fr, L)
            flat = lanes.reshape(-1)
            values = np.zeros((flat.size, f.slots, f.per_register), dtype)
            for where, which, count in moves(addr):
                parts = np.stack(fr.b.load(where, flat, space, dtype, count, site), axis=-1)
                if whole:
                    values[:, which.start:which.stop, :] = parts.reshape(flat.size, per, -1)
                else:
                    values[:, which[0], which[1]] = parts[:, 0]
            bits = wmma.join(values, f)
            for k, w in enumerate(ws):
                w(fr, L, bits[:, k % f.slots])
        return load

    rs = [scope.read(r, rtype) for r in regs[: f.slots]]

    def store(fr, L):
        lanes, addr = addresses(fr, L)
        flat = lanes.reshape(-1)
        values = wmma.split(np.stack([np.broadcast_to(r(fr, L), (flat.size,)) for r in rs],
                                     axis=-1), f)  # (lanes, register, element)
        for where, which, count in moves(addr):
            if whole:
                chunk = values[:, which.start:which.stop, :].reshape(flat.size, count)
                fr.b.store(where, flat, space, list(chunk.T), dtype, site)
            else:
                fr.b.store(where, flat, space, [values[:, which[0], which[1]]], dtype, site)
    return store

HANDLERS = {
    "mov": h_mov,
    **{k: h_binary for k in ("add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max",
                             "and", "or", "xor", "shl", "shr", "copysign", "mul24", "mad24",
                             "sad")},
    **{k: h_unary for k in ("abs", "neg", "not", "cnot", "popc", "clz", "brev", "bfind", "rcp",
                            "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh")},
    "setp": h_setp, "set": h_setp, "selp": h_selp, "slct": h_selp,
    "cvt": h_cvt, "cvta": h_cvta, "isspacep": h_isspacep,
    "ld": h_ld, "ldu": h_ld, "st": h_st, "atom": h_atom, "red": h_atom,
    "shfl": h_shfl, "vote": h_vote, "activemask": h_activemask, "match": h_match,
    "redux": h_redux,
    "membar": h_noop, "fence": h_noop, "prefetch": h_noop, "prefetchu": h_noop,
    "nanosleep": h_noop, "pmevent": h_noop, "discard": h_noop, "applypriority": h_noop,
    "createpolicy": h_noop,
    "griddepcontrol": h_noop,
    "bfe": h_bitfield, "bfi": h_bitfield, "bmsk": h_bitfield, "prmt": h_bitfield,
    "lop3": h_bitfield,
    "shf": h_bitfield, "testp": h_testp, "dp4a": h_dp4a, "dp2a": h_dp4a,
    "call": h_call, "cp": h_cp_async, "mbarrier": h_mbarrier, "wmma": h_wmma, "mma": h_mma,
    "ldmatrix": h_matrix_move, "stmatrix": h_matrix_move, "movmatrix": h_matrix_move,
    **{k: h_video for k in VIDEO | {"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl",
                                          "vshr", "vmad", "vset"}},
}

# Instructions that read and write only the executing lane's registers: when every live lane
# of the batch is at them, they may run over all lanes (exited and padding lanes included,
# whose registers nobody reads), which spares NumPy the gathers of a lane subset.
PURE = {h_mov, h_binary, h_unary, h_setp, h_selp, h_cvt, h_cvta, h_isspacep, h_bitfield,
        h_testp, h_dp4a, h_video}
