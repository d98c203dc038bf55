"""Counting what a launch executes, for the performance model (:mod:`cudakit.predict`):
warp instructions per class and, per warp, the times it waits for a load.

Written by hand because no library classifies PTX instructions or replays a warp's
scoreboard; the rules are short and follow the CUDA Programming Guide's throughput table
(which pipe runs what) and Hong & Kim (ISCA 2009) for memory periods.

*Classes.* Each PTX opcode maps to one class (:func:`instruction_class`): ``fp32``, ``fp64``,
``int`` (add, logic, compare, shift), ``imad`` (integer multiply), ``sfu`` (``sin``, ``ex2``,
``rcp``, ``rsqrt``... on the special-function unit), ``cvt`` (conversions involving floats),
``shfl`` (``shfl``/``vote``/``match``/``redux``), ``branch``, ``ld.global``, ``st.global``,
``ld.shared``, ``st.shared``, ``ld.local``, ``st.local``, ``ld.const``, ``atom.global``,
``atom.shared``, ``barrier``, ``misc``, and ``free`` for what costs no SASS instruction
(``ld.param`` and ``mov`` of a register become operands; ``cvta`` is an identity on sm_90).
A warp instruction is counted once per warp with at least one active lane, predicated-off
lanes included, as the hardware issues it.

*Memory periods.* A load from global or local memory marks its destination registers
pending; the first later instruction that reads a pending register ends one memory period
and clears every pending register of that warp. Loads issued back to back before any use
overlap (memory-level parallelism) and count as one period. Shared-memory loads are counted
the same way as ``shared_periods``.

>>> instruction_class("fma.rn.f32"), instruction_class("ld.global.nc.v4.f32")
('fp32', 'ld.global')
>>> instruction_class("ex2.approx.ftz.f32"), instruction_class("ld.param.u64")
('sfu', 'free')
"""

from __future__ import annotations

import re

import numpy as np

CLASSES = ("fp32", "fp64", "int", "imad", "sfu", "cvt", "shfl", "branch", "ld.global",
           "st.global", "ld.shared", "st.shared", "ld.local", "st.local", "ld.const",
           "atom.global", "atom.shared", "barrier", "misc", "free")
INDEX = {c: i for i, c in enumerate(CLASSES)}

_TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64",
          "f16", "f32", "f64", "pred", "f16x2", "bf16", "bf16x2", "b128"}
_SPACES = ("global", "shared", "local", "const", "param")
_SFU = {"rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"}
_FLOAT_OPS = {"add", "sub", "mul", "fma", "mad", "min", "max", "neg", "abs", "setp", "set",
              "copysign", "testp", "div"}
_IMUL = {"mul", "mad", "mul24", "mad24"}
_WARP = {"shfl", "vote", "match", "redux", "activemask"}
_NOOPS = {"membar", "fence", "prefetch", "prefetchu", "nanosleep", "pmevent", "discard",
          "applypriority", "createpolicy", "griddepcontrol"}
_SPECIAL = re.compile(r"%(tid|ctaid|laneid|warpid|smid|clock|globaltimer)")
_REG = re.compile(r"%[A-Za-z_][\w.]*")


def instruction_class(opcode: str, operands=()) -> str:
    """The class of one PTX instruction (``operands`` decide only for ``mov``)."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    types = [m for m in mods if m in _TYPES]
    t = types[-1] if types else ""
    space = next((m for m in mods if m in _SPACES), "global")
    if base in ("ld", "ldu"):
        return "free" if space == "param" else f"ld.{space}"
    if base == "st":
        return "free" if space == "param" else f"st.{space}"
    if base in ("atom", "red"):
        return "atom.shared" if space == "shared" else "atom.global"
    if base == "cp":
        return "ld.global" if "async" in mods and not ({"commit_group", "wait_group",
                                                         "wait_all"} & set(mods)) else "misc"
    if base in ("bar", "barrier"):
        return "misc" if mods[:1] == ["warp"] or "cluster" in mods else "barrier"
    if base in ("bra", "brx", "ret", "exit", "call", "trap"):
        return "branch"
    if base in _WARP:
        return "shfl"
    if base in ("mov", "cvta"):
        text = " ".join(str(o) for o in operands)
        return "int" if base == "mov" and _SPECIAL.search(text) else "free"
    if base in _NOOPS:
        return "misc"
    if base == "cvt":
        return "cvt" if any(x.startswith(("f", "bf")) for x in types) else "int"
    floating = t.startswith(("f", "bf"))
    if base in _SFU or (base == "div" and t == "f32"):
        return "fp64" if t == "f64" else "sfu"
    if floating and base in _FLOAT_OPS:
        return "fp64" if t == "f64" else "fp32"
    if base in _IMUL and not floating:
        return "imad"
    return "int"


def _registers(operand) -> list[str]:
    names = operand if isinstance(operand, list) else [operand]
    return [r for n in names if isinstance(n, str) for r in _REG.findall(n)]


def _reads_writes(ins) -> tuple[list[str], list[str]]:
    """Registers an instruction reads and writes (addresses and guards are reads)."""
    ops = ins.operands or []
    base = ins.opcode.split(".")[0]
    reads = _registers(ins.guard.lstrip("!")) if ins.guard else []
    writes: list[str] = []
    stores = base in ("st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "trap") or \
        (base == "cp")
    for k, op in enumerate(ops):
        if k == 0 and not stores and not (isinstance(op, str) and op.startswith("[")):
            for part in (op.split("|") if isinstance(op, str) else [op]):
                writes += _registers(part)
        else:
            reads += _registers(op)
    return reads, writes


def _load_tag(ins) -> int:
    """2 for a global/local load (long latency), 1 for a shared load, 0 otherwise."""
    cls = instruction_class(ins.opcode, ins.operands)
    if cls in ("ld.global", "ld.local") or (cls == "atom.global" and
                                             ins.opcode.startswith("atom")):
        return 2
    return 1 if cls == "ld.shared" or cls == "atom.shared" and ins.opcode.startswith("atom") \
        else 0


def block_profile(instructions, fused_muls: set) -> tuple[np.ndarray, list]:
    """Per basic block: class counts (``fused_muls``: ids of ``mul``s ptxas folds into an FMA)
    and the scoreboard events ``(names read, names written, tag)`` of its instructions."""
    counts = np.zeros(len(CLASSES), np.int64)
    events = []
    for ins in instructions:
        if id(ins) not in fused_muls:
            counts[INDEX[instruction_class(ins.opcode, ins.operands)]] += 1
        reads, writes = _reads_writes(ins)
        events.append((reads, writes, _load_tag(ins)))
    return counts, events


def scoreboard_program(blocks_events: list[list]) -> tuple[int, list[list]]:
    """Index the registers loads write; keep only the events that touch them.

    Returns ``(number of tracked registers, per block [(read idx, write idx, tag, the same
    indices as tuples)])``.
    """
    tracked: dict[str, int] = {}
    for events in blocks_events:
        for _, writes, tag in events:
            if tag:
                for r in writes:
                    tracked.setdefault(r, len(tracked))
    out = []
    for events in blocks_events:
        kept = []
        for reads, writes, tag in events:
            r = np.array(sorted({tracked[x] for x in reads if x in tracked}), np.int64)
            w = np.array(sorted({tracked[x] for x in writes if x in tracked}), np.int64) \
                if tag else np.zeros(0, np.int64)
            if r.size or w.size:
                kept.append((r, w, tag, tuple(r.tolist()), tuple(w.tolist())))
        out.append(kept)
    return len(tracked), out


class InstructionCounter:
    """Counts warp instructions per class, memory periods and warps of a launch.

    Pass it as ``counter=`` to an emulator launch; ``classes`` maps each class of
    :data:`CLASSES` to warp instructions, ``periods``/``shared_periods`` sum over warps.

    >>> c = InstructionCounter()
    >>> c.classes["fp32"], c.periods
    (0, 0)
    """

    def __init__(self):
        self.counts = np.zeros(len(CLASSES), np.int64)
        self.periods = 0
        self.shared_periods = 0
        self.warps = 0
        self._batch = None
        self._pending: dict = {}

    @property
    def classes(self) -> dict[str, int]:
        return {c: int(v) for c, v in zip(CLASSES, self.counts, strict=True)}

    @property
    def ops(self) -> int:
        """Warp instructions issued (every class except ``free``)."""
        return int(self.counts.sum() - self.counts[INDEX["free"]])

    def block(self, b, blk, L, dec) -> None:
        """One basic block ``blk`` of function ``dec`` executed by lanes ``L`` of batch ``b``."""
        if b is not self._batch:
            self._batch = b
            self._pending = {}
            self._all = np.flatnonzero(b.valid.reshape(-1, 32).any(axis=1))
            self.warps += int(self._all.size)
        if isinstance(L, slice) or L.size == b.size:
            warps = self._all
        else:
            w = L >> 5
            warps = w[np.r_[True, w[1:] != w[:-1]]]  # L is sorted
        self.counts += blk.classes * warps.size
        events = blk.scoreboard
        if not events:
            return
        state = self._pending.get(id(dec))
        if isinstance(state, list):  # every warp so far ran together: one row stands for all
            if warps is self._all:
                return self._uniform(state, events, warps.size)
            state = np.tile(np.array(state, np.int8), (b.size // 32, 1))
        elif state is None:
            state = [0] * dec.tracked
            self._pending[id(dec)] = state
            if warps is self._all:
                return self._uniform(state, events, warps.size)
            state = np.zeros((b.size // 32, dec.tracked), np.int8)
        self._pending[id(dec)] = state
        for reads, writes, tag, _, _ in events:
            if reads.size:
                now = state[np.ix_(warps, reads)].max(axis=1)
                if now.any():
                    self.periods += int(np.count_nonzero(now == 2))
                    self.shared_periods += int(np.count_nonzero(now == 1))
                    state[warps[now > 0]] = 0
            if writes.size:
                state[np.ix_(warps, writes)] = tag

    def _uniform(self, row: list, events, nwarps: int) -> None:
        """The scoreboard of warps that all ran the same instructions: one row, in Python."""
        for _, _, tag, reads, writes in events:
            if reads:
                now = max(row[r] for r in reads)
                if now:
                    if now == 2:
                        self.periods += nwarps
                    else:
                        self.shared_periods += nwarps
                    row[:] = [0] * len(row)
            for w in writes:
                row[w] = tag
