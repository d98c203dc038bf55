"""Counting what a launch executes, for the performance model (:mod:`cudakit.predict`):
warp instructions per class and, per warp, the times it waits for a load.

Written by hand because no library classifies PTX instructions or replays a warp's
scoreboard; the rules are short and follow the CUDA Programming Guide's throughput table
(which pipe runs what) and Hong & Kim (ISCA 2009) for memory periods.

*Classes.* Each PTX opcode maps to one class (:func:`instruction_class`): ``fp32``, ``fp64``,
``int`` (add, logic, compare, shift), ``imad`` (integer multiply), ``sfu`` (``sin``, ``ex2``,
``rcp``, ``rsqrt``... on the special-function unit), ``cvt`` (conversions involving floats,
but those between ``f32`` and ``f16``/``bf16``: ALU work, ``int``),
``shfl`` (``shfl``/``vote``/``match``/``redux``), ``branch``, ``ld.global``, ``st.global``,
``ld.shared``, ``st.shared``, ``ld.local``, ``st.local``, ``ld.const``, ``atom.global``,
``atom.shared``, ``barrier``, ``misc``, the tensor instructions ``mma.f16`` (f16 and bf16
inputs), ``mma.tf32``, ``mma.f64`` and ``mma.i8`` (one per SASS ``HMMA``, ``DMMA`` or
``IMMA`` a ``wmma.mma`` or ``mma.sync`` runs as; a ``wmma.load`` or ``wmma.store`` counts a
load or store per register it moves: :func:`cudakit.emu.wmma.sass_count`; ``ldmatrix`` and
``stmatrix`` a shared load or store, ``movmatrix`` a shuffle), and ``free`` for what costs no SASS
instruction (``ld.param`` and ``mov`` of a register become operands; ``cvta`` is an identity on
sm_90).
A warp instruction is counted once per warp with at least one active lane, predicated-off
lanes included, as the hardware issues it. Integer division and remainder, IEEE float
division, square root and reciprocal, and 64-bit compares, selects, right shifts and
multiplies count the SASS instructions ptxas expands them into (:func:`sass_slots`).

*Memory periods* (Hong & Kim's waits, on a warp's in-order issue). A load from global or
local memory marks its destination registers pending; the first later instruction that reads
a pending register ends one memory period and clears every pending register of that warp, so
loads issued back to back before any use overlap (memory-level parallelism) and count once.
A register is pending for the lanes that loaded it, as ptxas places waits by each thread's
data flow: lanes of another path that overwrite or read it do not wait (:class:`_Row`).
Shared-memory loads are counted the same way as ``shared_periods``; a wait for a shared load
clears only the shared ones, as a global load issued before it is still in flight. An
asynchronous copy (``cp.async``) is a global load of :data:`ASYNC_COPIES`, which
``cp.async.wait_group 0`` reads (:func:`_async_copy`). Five rules
stand for ptxas's scheduling, which PTX order does not show: loads move up in their basic
block with their address arithmetic, never above a store or a barrier (:func:`hoisted`; a
short guarded block's loads go with the block before it, :func:`predicable`); a counted loop
is unrolled :data:`PTXAS_UNROLL` times, so that a later trip's loads move above an earlier
trip's use (:func:`unrolled_events`); a warp has at most :data:`IN_FLIGHT` registers of
global loads pending, a load beyond them waiting for those first; a
store of pending data puts its wait off to the next other reader, barrier or loop branch
(ptxas turns short guarded blocks such as ``if (k < K) tile[t] = a[i];`` into predicated code
and issues their loads first); and a block's instructions issue in the order of a list
scheduler, not in PTX order (:func:`issue_cycles`).

>>> instruction_class("fma.rn.f32"), instruction_class("ld.global.nc.v4.f32")
('fp32', 'ld.global')
>>> instruction_class("ex2.approx.ftz.f32"), instruction_class("ld.param.u64")
('sfu', 'free')
"""

from __future__ import annotations

import heapq
import re

import numpy as np

from . import mma
from .wmma import sass_count

CLASSES = ("fp32", "fp64", "int", "imad", "sfu", "cvt", "shfl", "branch", "ld.global",
           "st.global", "ld.shared", "st.shared", "ld.local", "st.local", "ld.const",
           "atom.global", "atom.shared", "barrier", "misc", "mma.f16", "mma.tf32", "mma.f64",
           "mma.i8", "free")
INDEX = {c: i for i, c in enumerate(CLASSES)}

_TYPES = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "b8", "b16", "b32", "b64",
          "f16", "f32", "f64", "pred", "f16x2", "bf16", "bf16x2", "b128"}
_SPACES = ("global", "shared", "local", "const", "param")
#: conversions among these are ALU work on sm_90, not the XU's (Nsight Compute counts only
#: the MUFU.TANH of llm.c's bfloat16 GELU on the XU; its F2FP, SHF and PRMT on the ALU)
_HALF_AND_SINGLE = {"f32", "f16", "bf16", "f16x2", "bf16x2"}
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
    if base == "wmma":
        return sass_count(opcode)[0]
    if base == "mma":
        return mma.sass_count(opcode)[0]
    if base in ("ldmatrix", "stmatrix"):  # LDSM, STSM: one shared access of 16-byte rows
        return ("ld." if base == "ldmatrix" else "st.") + "shared"
    if base == "movmatrix":  # MOVM: lanes exchange registers, as a shuffle
        return "shfl"
    if base in ("ld", "ldu"):
        return "free" if space == "param" else f"ld.{space}"
    if base == "st":
        return "free" if space == "param" else f"st.{space}"
    if base in ("atom", "red"):
        return "atom.shared" if space == "shared" else "atom.global"
    if base == "mbarrier" or (base == "cp" and "mbarrier" in mods):
        return "atom.shared"  # an asynchronous barrier's SYNCS operation on shared memory
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
        if set(types) <= _HALF_AND_SINGLE and len(set(types)) > 1:
            return "int"  # f32 <-> f16/bf16: a shift or a permute widens, F2FP narrows
        return "cvt" if any(x.startswith(("f", "bf")) for x in types) else "int"
    floating = t.startswith(("f", "bf"))
    if base in _SFU or (base == "div" and t == "f32"):
        return "fp64" if t == "f64" else "sfu"
    if floating and base in _FLOAT_OPS:
        return "fp64" if t == "f64" else "fp32"
    if base in _IMUL and not floating:
        return "imad"
    return "int"


# SASS instructions of the PTX operations that sm_90 has no single instruction for: the
# .text size (16 bytes per instruction, NOPs left out) of a kernel doing the operation once,
# minus the same kernel with an add (nvcc 13.0 -O3 -arch=sm_90, on this machine); for float
# division and square root only the fast path (the slow path runs for denormals and such);
# for 64-bit integer division and remainder, the call of the routine and its straight-line
# body in nvdisasm's listing (I2F and F2I as conversions): NVVM's PTX already divides
# operands below 2^32 with a 32-bit instruction (or, and, setp, branch), so a 64-bit one runs
# the whole routine (Nsight Compute: 63 instructions a call in ``bucket_of``, the eighth
# held-out batch, where the listing of a lone ``%`` has 66).
_EXPANDED = {
    ("rem", "u32"): {"int": 13, "imad": 2, "sfu": 1},  # 27 - 11 = 16
    ("div", "u32"): {"int": 13, "imad": 2, "sfu": 1},
    ("rem", "s32"): {"int": 19, "imad": 2, "sfu": 1},  # 33 - 11 = 22
    ("div", "s32"): {"int": 19, "imad": 2, "sfu": 1},
    ("rem", "u64"): {"int": 35, "cvt": 2, "sfu": 1, "imad": 30, "branch": 2},  # 70
    ("div", "u64"): {"int": 41, "cvt": 2, "sfu": 1, "imad": 28, "branch": 2},  # 74
    ("rem", "s64"): {"int": 48, "cvt": 2, "sfu": 1, "imad": 30, "branch": 2},  # 83
    ("div", "s64"): {"int": 52, "cvt": 2, "sfu": 1, "imad": 32, "branch": 2},  # 89
    ("div", "f32"): {"fp32": 6, "sfu": 1, "branch": 1},  # MUFU.RCP, FFMAs, FCHK, branch
    ("sqrt", "f32"): {"fp32": 6, "sfu": 1, "branch": 1},
    ("rcp", "f32"): {"fp32": 6, "sfu": 1, "branch": 1},
    # double precision: the fast path's instructions in the SASS listing (MUFU.RCP64H or
    # .RSQ64H, the DFMA/DMUL Newton steps, the range checks, BSSY/BRA/BSYNC around the call
    # of the slow path)
    ("div", "f64"): {"fp64": 8, "fp32": 3, "sfu": 1, "int": 1, "branch": 3},
    ("rcp", "f64"): {"fp64": 5, "fp32": 1, "sfu": 1, "int": 1, "branch": 3},
    ("sqrt", "f64"): {"fp64": 8, "sfu": 1, "int": 6, "branch": 3},
    # 64-bit integer arithmetic on 32-bit pipes (nvdisasm of nvcc 13.0 -arch=sm_90): a compare
    # is ISETP and ISETP.EX on the carry, a select two SELs, a right shift SHF.R.U64 and
    # SHF.R.U32.HI, a multiply IMAD.WIDE.U32 and two IMADs for the high word (a Collatz
    # step's loop: 9 PTX instructions, 16 in SASS). Adds, left shifts and multiplies by a
    # 32-bit operand (``mul.wide``) are left at one: ptxas folds them into the addressing of
    # the loads they feed (IMAD.WIDE, LEA and LEA.HI.X).
    **{("setp", t): {"int": 2} for t in ("u64", "s64", "b64")},
    **{("selp", t): {"int": 2} for t in ("u64", "s64", "b64")},
    **{("shr", t): {"int": 2} for t in ("u64", "s64", "b64")},
    **{("mul", t): {"imad": 3} for t in ("u64", "s64")},
}

#: what the slow path adds, per warp, when a lane's operands leave the fast path's range
#: (:func:`slow_lanes`): IEEE double division of a zero numerator, counted by Nsight Compute
#: on the H200 in ``pi_mrg`` of ``benchmarks/fresh/monte_carlo.cu`` (22 M calls of
#: ``__cuda_sm20_div_rn_f64_full``, 61 instructions each, and the call's 4 around it)
SLOW_PATH = {("div", "f64"): {"int": 41, "fp64": 12, "fp32": 2, "sfu": 1, "branch": 9}}


def sass_slots(opcode: str, operands=()) -> dict[str, int]:
    """Warp instructions one PTX instruction costs, per class (most cost one).

    >>> sass_slots("rem.u32"), sass_slots("div.approx.f32")
    ({'int': 13, 'imad': 2, 'sfu': 1}, {'sfu': 1})
    """
    if opcode.startswith("wmma."):
        cls, n = sass_count(opcode)
        return {cls: n}
    if opcode.startswith("mma."):
        return mma.sass_slots(opcode)
    key = expansion(opcode)
    return dict(_EXPANDED[key]) if key else {instruction_class(opcode, operands): 1}


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
    if (base == "cp" and ".async" in ins.opcode) or ins.opcode.startswith(_PHASE_WAITS):
        reads, writes = _async_copy(ins.opcode, ins.operands or [], reads, writes)
    return reads, writes


#: the register the scoreboard follows for a warp's asynchronous copies in flight
ASYNC_COPIES = "%cp.async"
_PHASE_WAITS = ("mbarrier.try_wait", "mbarrier.test_wait")


def _async_copy(opcode: str, operands, reads, writes) -> tuple[list[str], list[str]]:
    """``cp.async`` writes no register: it is followed as a load of :data:`ASYNC_COPIES`, and
    ``cp.async.wait_group 0`` (or ``wait_all``), which waits for every copy the warp has
    issued, as its reader. A ``wait_group N`` with N > 0 waits only for groups committed
    before the N last, which double-buffered code issued a trip earlier, before a barrier:
    its copies are taken as arrived (the time a trip between two barriers takes is the
    model's to price: :func:`cudakit.predict.model.hong_kim`)."""
    mods = opcode.split(".")
    if opcode.startswith(_PHASE_WAITS):  # an asynchronous barrier's phase: the copies are in
        return reads + [ASYNC_COPIES], writes
    if "commit_group" in mods or "mbarrier" in mods:  # cp.async.mbarrier.arrive copies none
        return reads, writes
    if "wait_all" in mods or ("wait_group" in mods and str(operands[0]).strip() == "0"):
        return reads + [ASYNC_COPIES], writes
    if "wait_group" in mods:
        return reads, writes
    return reads, writes + [ASYNC_COPIES]


ALU, SHARED, GLOBAL, STORE, FLUSH, SPLIT = range(6)  # scoreboard kinds of instructions
_FLUSH_EVENT = ((), (), FLUSH)


def _kind(ins) -> int:
    """The instruction's part in the scoreboard: a global/local load (long latency), a shared
    load, a store (its data may wait: see :class:`InstructionCounter`), a barrier, or other."""
    cls = instruction_class(ins.opcode, ins.operands)
    returns = ins.opcode.startswith("atom")
    if cls in ("ld.global", "ld.local") or (cls == "atom.global" and returns):
        return GLOBAL
    if cls == "ld.shared" or (cls == "atom.shared" and returns):
        return SHARED
    if cls.startswith(("st.", "atom.")):
        return STORE
    if cls == "barrier":
        return FLUSH
    # an expansion with a slow path (IEEE division, square root, reciprocal; 64-bit integer
    # division) is a branch and a call in SASS: ptxas moves no load above it
    key = expansion(ins.opcode)
    return SPLIT if key and "branch" in _EXPANDED[key] else ALU


#: cycles from an instruction's issue until a dependent one may issue: 4 for the FP32 and
#: integer pipes, 8 for FP64 (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
#: Microbenchmarking", 2018; the H100 measures 4.6 and 8.4 with a loop's overhead,
#: ``fp32_latency_cycles`` and ``fp64_latency_cycles`` of ``benchmarks/microbench.py``); the
#: SFU's 39: ``rsqrtf`` as nvcc builds it (MUFU.RSQ and its range fix-ups), measured on the
#: H100 (``sfu_latency_cycles``); its ``.ftz`` forms are the bare MUFU, 17 cycles
#: (:data:`SFU_FTZ`, ``sfu_ftz_latency_cycles``), and ``__sinf``/``__cosf`` (FMUL and
#: MUFU.SIN) 23 (:data:`SFU_SINCOS`); a shuffle 26 (a chain of ``__shfl_xor_sync`` and an
#: FADD took 30.2 cycles a step against 4.3 for the FADD alone, ``benchmarks/stall_chains.py``,
#: ``fixtures/h100_stall_chains.json``); conversions at the ALU's 4, a lower bound; a tensor
#: instruction the cycles of one ``wmma::mma_sync`` waiting for the one before over the SASS
#: instructions it runs as (f16 31.1 / 2, tf32 37.1 / 4, f64 29.1, 8-bit 29.1 / 2 on an
#: H200's SM, ``benchmarks/tensor_probe.py``). Loads are not here: their waits are the
#: memory periods.
DEPENDENT = {"fp32": 4, "int": 4, "imad": 4, "cvt": 4, "sfu": 39, "shfl": 26, "fp64": 8,
             "branch": 1, "misc": 1, "barrier": 1,
             "mma.f16": 15.6, "mma.tf32": 9.3, "mma.f64": 29.1, "mma.i8": 14.6}
SFU_FTZ = 17
SFU_SINCOS = 23
#: a slow path's cycles, its steps taken as a chain
SLOW_CYCLES = {key: sum(DEPENDENT[c] * n for c, n in slots.items())
               for key, slots in SLOW_PATH.items()}

#: issue-to-result cycles of whole expansions (:data:`_EXPANDED`), measured by
#: ``benchmarks/microbench.py`` (``*_latency_cycles``: one thread, a dependent chain; a
#: square root's chain has an add, 4 or 8 cycles, taken off; a remainder is taken as its
#: division, signed 64-bit as unsigned): single precision and 32-bit integers on the H100,
#: double precision and 64-bit integers on the H200 (session 31; its SMs are the H100's, whose
#: other latencies it measured the same to four digits). Other instructions of several SASS
#: steps (tensor cores) are the sum of their steps' :data:`DEPENDENT` latencies.
EXPANSION_LATENCY = {("div", "f32"): 44, ("rcp", "f32"): 64, ("sqrt", "f32"): 44,
                     ("div", "s32"): 144, ("rem", "s32"): 144, ("div", "u32"): 135,
                     ("rem", "u32"): 135, ("div", "f64"): 112, ("rcp", "f64"): 61,
                     ("sqrt", "f64"): 78,
                     **{(op, t): 308 for op in ("div", "rem") for t in ("u64", "s64")}}


def expansion(opcode: str) -> tuple[str, str] | None:
    """The :data:`_EXPANDED` key of an instruction sm_90 has no single instruction for.

    >>> expansion("setp.gt.u64"), expansion("mul.wide.u32"), expansion("add.s64")
    (('setp', 'u64'), None, None)
    """
    parts = opcode.split(".")
    types = [m for m in parts[1:] if m in _TYPES]
    exact = not ({"approx", "full"} & set(parts[1:]))
    key = (parts[0], types[-1] if types else "")
    if key[1] in ("u16", "u8"):
        key = (key[0], "u32")
    elif key[1] in ("s16", "s8"):
        key = (key[0], "s32")
    return key if key in _EXPANDED and (exact or key[1][:1] != "f") else None


def slow_lanes(x, y) -> np.ndarray:
    """Lanes whose operands ``x / y`` send an IEEE double division (the one expansion of
    :data:`SLOW_PATH`) to its slow path: the fast path's checks in the SASS read the high words
    as floats, so a numerator that is zero, below about 2^-967 or not finite, or a divisor
    whose reciprocal is near the denormals (|y| beyond 2^1021), zero, denormal or not finite,
    takes the call.

    >>> slow_lanes(np.array([0.0, 3.0, 1e-300]), 7.0).tolist()
    [True, False, True]
    """
    ax, ay = np.abs(np.asarray(x, np.float64)), np.abs(np.asarray(y, np.float64))
    return ~((ax >= 2.0 ** -967) & np.isfinite(ax) & (ay >= 2.0 ** -1022) & (ay < 2.0 ** 1021))


def issue_cycles(instructions, fused_muls: set = frozenset(), back_edge: bool = False) -> int:
    """Cycles one warp needs to issue a basic block, one warp instruction per clock, each
    waiting until its operands are ready (:data:`DEPENDENT`; loaded registers count as ready,
    their wait being a memory period), in the order ptxas's list scheduler would pick
    (:func:`_schedule`). A loop's body (``back_edge``) is issued twice and the second pass
    counted, so a chain carried from one trip to the next counts; registers from other basic
    blocks count as ready.

    >>> from types import SimpleNamespace as I
    >>> chain = [I(opcode="fma.rn.f32", operands=["%f1", "%f1", "%f2", "%f3"], guard=None)] * 3
    >>> issue_cycles(chain), issue_cycles(chain, back_edge=True)   # 0, 4, 8 and then 12
    (9, 12)
    >>> div = I(opcode="div.rn.f32", operands=["%f1", "%f1", "%f2"], guard=None)
    >>> issue_cycles([div, div])   # 44 cycles each (measured); the second waits for the first
    85
    >>> two = [I(opcode="fma.rn.f32", operands=[a, a, "%f2", "%f3"], guard=None)
    ...        for a in ("%f1", "%f1", "%f4", "%f4")]
    >>> issue_cycles(two)   # the chains interleave: f1, f4, (wait) f1, f4
    6
    """
    ready: dict = {}
    first = _schedule(instructions, fused_muls, ready, 0)
    return _schedule(instructions, fused_muls, ready, first) - first if back_edge else first


_ORDERED = ("bra", "brx", "ret", "exit", "call", "trap")


def _schedule(instructions, fused_muls, ready: dict, start: int) -> int:
    """One pass of a list scheduler over a basic block, from cycle ``start``; returns the
    cycle after its last issue and leaves each written register's ready cycle in ``ready``.

    ptxas schedules a block's instructions out of PTX order to hide their latencies (an
    accumulator's four FMAs written one after the other run interleaved with the next
    accumulator's). Each cycle the warp issues the first instruction in PTX order whose
    operands are ready and whose predecessors have issued: the instructions whose results it
    reads, the earlier readers and writers of what it writes, and, for memory operations,
    barriers and branches, the previous such instruction (memory order). An expansion with
    a slow path (:data:`SPLIT`: a branch in SASS) splits the block; its last instruction (a
    branch) issues last. Written by hand: ptxas's scheduler is not a library, and this one
    needs only the latencies the model already has.
    """
    n_ins = len(instructions)
    steps, preds = [], [set() for _ in range(n_ins)]
    last_write: dict = {}
    readers: dict = {}
    last_ordered = fence = -1
    for i, ins in enumerate(instructions):
        reads, writes = _reads_writes(ins)
        slots = {} if id(ins) in fused_muls else sass_slots(ins.opcode, ins.operands)
        kind = _kind(ins)
        p = preds[i]
        p.update(last_write[r] for r in reads if r in last_write)
        for w in writes:
            if w in last_write:
                p.add(last_write[w])
            p.update(readers.get(w, ()))
        if kind == SPLIT or i == n_ins - 1:  # everything before it issues first
            p.update(range(fence + 1, i))
        if fence >= 0:
            p.add(fence)
        if kind != ALU or ins.opcode.split(".")[0] in _ORDERED:
            if last_ordered >= 0:
                p.add(last_ordered)
            last_ordered = i
        if kind == SPLIT:
            fence = i
        for r in reads:
            readers.setdefault(r, []).append(i)
        for w in writes:
            last_write[w] = i
            readers[w] = []
        steps.append((reads, writes, slots, sum(v for k, v in slots.items() if k != "free")))
    after = [[] for _ in range(n_ins)]
    left = [len(p) for p in preds]
    for i, p in enumerate(preds):
        for j in p:
            after[j].append(i)
    waiting = [(start, i) for i in range(n_ins) if not left[i]]  # (earliest cycle, index)
    heapq.heapify(waiting)
    available: list = []  # indices whose operands are ready now
    t = start
    while waiting or available:
        while waiting and waiting[0][0] <= t:
            heapq.heappush(available, heapq.heappop(waiting)[1])
        if not available:
            t = waiting[0][0]
            continue
        i = heapq.heappop(available)
        ins = instructions[i]
        reads, writes, slots, n = steps[i]
        operands = max((ready.get(r, 0) for r in reads), default=0)
        if n and operands > t:  # a register became pending since it was queued
            heapq.heappush(waiting, (operands, i))
            continue
        if not n:  # renamed or folded into an FMA: its result is its operands
            done = operands
        elif n > 1:
            # an expansion (integer division, IEEE division and square root) is a chain of
            # dependent SASS instructions (Newton-Raphson steps on a MUFU estimate, ending in
            # an ALU step); its check-and-branch runs beside it. The warp issues its next
            # instruction once the chain's last step has issued.
            done = t + (EXPANSION_LATENCY.get(expansion(ins.opcode)) or sum(
                DEPENDENT.get(k, 1) * v for k, v in slots.items()
                if k not in ("free", "branch")))
            t = max(t + n, done - DEPENDENT["fp32"] + 1)
        else:
            cls = instruction_class(ins.opcode, ins.operands)
            sfu = ins.opcode.split(".")[0] if cls == "sfu" else ""
            done = t + (SFU_SINCOS if sfu in ("sin", "cos") else
                        SFU_FTZ if sfu and ".ftz" in ins.opcode else DEPENDENT.get(cls, 0))
            t += 1
        for w in writes:
            ready[w] = done
        for j in after[i]:
            left[j] -= 1
            if not left[j]:
                heapq.heappush(waiting, (max([t] + [ready.get(r, 0) for r in steps[j][0]]), j))
    return t


#: the most registers a warp's global loads fill before the first of them is used: ptxas
#: issues a loop's independent loads back to back up to about this many, then puts the rest
#: after the first use, so the warp waits again for them (nvdisasm of nvcc 13.0's sm_90
#: code: 16 in a ``gemv`` with a thread per column, unrolled 16 times; 15 in lab 20's
#: ``force1d_register``, whose 16th load the H100 hides behind its adds; 12 in cuda-samples'
#: ``scalarProd``). Reading each kernel's own window from its SASS made ``force1d_register``
#: +57 % (-1 % with 16) and lab 12's ``sgemm`` +16...+20 % (+6...+9 %).
IN_FLIGHT = 16


#: how many trips of a counted single-block loop ptxas puts in one: nvdisasm of nvcc 13.0's
#: sm_90 code shows lab 08's ``work`` (an FMA loop) and lab 20's ``force1d_register`` each
#: unrolled 4x beyond NVVM's PTX, and a grid-stride loop (a stride in a register) not at all;
#: nor a loop marked ``.pragma "nounroll"`` (``#pragma unroll 1``, or what NVVM unrolled
#: by a ``#pragma unroll N`` already)
PTXAS_UNROLL = 4


def loop_control(instructions) -> set[int]:
    """Ids of a single-block loop's control (its backward branch, the ``setp`` deciding it and
    the ``add``/``sub`` stepping its counter by a constant), when the counter steps by a
    constant: ptxas unrolls such a loop (:data:`PTXAS_UNROLL`), paying these once per trips.

    >>> from types import SimpleNamespace as I
    >>> body = [I(opcode="fma.rn.f32", operands=["%f1", "%f1", "%f2", "%f3"], guard=None),
    ...         I(opcode="add.s32", operands=["%r1", "%r1", "-4"], guard=None),
    ...         I(opcode="setp.ne.s32", operands=["%p1", "%r1", "0"], guard=None),
    ...         I(opcode="bra.uni", operands=["$L__BB0_1"], guard="%p1")]
    >>> len(loop_control(body))
    3
    >>> body[1] = I(opcode="add.s32", operands=["%r1", "%r1", "%r9"], guard=None)  # grid-stride
    >>> loop_control(body)
    set()
    """
    if not instructions or not instructions[-1].opcode.startswith("bra"):
        return set()
    branch = instructions[-1]
    predicate = (branch.guard or "").lstrip("!")
    setp = next((ins for ins in reversed(instructions[:-1]) if ins.opcode.startswith("setp")
                 and predicate and _registers(ins.operands[0])[:1] == [predicate]), None)
    if setp is None:
        return set()
    compared = {r for op in setp.operands[1:] for r in _registers(op)}
    for ins in instructions[:-1]:
        ops = ins.operands or []
        if ins.opcode.split(".")[0] in ("add", "sub") and len(ops) == 3 and \
                _registers(ops[0])[:1] == _registers(ops[1])[:1] and \
                set(_registers(ops[0])) & compared and not _registers(ops[2]):
            return {id(branch), id(setp), id(ins)}
    return set()


def block_profile(instructions, fused_muls: set, back_edge: bool = False,
                  self_loop: bool = False):
    """Per basic block: class counts (``fused_muls``: ids of ``mul``s ptxas folds into an FMA;
    a ``self_loop``'s control counts once per :data:`PTXAS_UNROLL` trips, see
    :func:`loop_control`), the scoreboard events ``(names read, names written, kind)`` of its
    instructions in PTX order (:func:`hoisted` schedules them; a block that ends in a
    backward branch, a loop, ends with a flush event), and the trips of the block those
    events stand for: :data:`PTXAS_UNROLL` for a loop ptxas unrolls
    (:func:`unrolled_events`), else 1."""
    counts = np.zeros(len(CLASSES), np.float64)
    control = loop_control(instructions) if self_loop else set()
    events = []
    for ins in instructions:
        if id(ins) not in fused_muls:
            weight = 1 / PTXAS_UNROLL if id(ins) in control else 1
            for cls, n in sass_slots(ins.opcode, ins.operands).items():
                counts[INDEX[cls]] += n * weight
        reads, writes = _reads_writes(ins)
        events.append((reads, writes, _kind(ins)))
    if control:
        unrolled = unrolled_events(events, PTXAS_UNROLL)
        if _steady_waits(hoisted(unrolled)) < PTXAS_UNROLL * _steady_waits(hoisted(events)):
            return counts, unrolled + [_FLUSH_EVENT], PTXAS_UNROLL
    return counts, events + [_FLUSH_EVENT] if back_edge else events, 1


def _steady_waits(events: list) -> int:
    """The waits for loads in a second pass of a loop body's events (the first leaves what
    is pending at its back edge): unrolling a loop whose trips each wait for the trip
    before (a pointer chase) gains nothing, and the body stays as it is.

    >>> _steady_waits([(["p"], ["p"], GLOBAL)])  # p = next[p]: one wait a trip
    1
    """
    pending: set = set()
    waits = 0
    for trip in range(2):
        for reads, writes, kind in events:
            if pending & set(reads):
                pending, waits = set(), waits + trip
            if kind in (SHARED, GLOBAL):
                pending |= set(writes)
            else:
                pending -= set(writes)
    return waits


def unrolled_events(events: list, copies: int) -> list:
    """The scoreboard events of ``copies`` trips of a loop body, as ptxas lays them out when
    it unrolls the loop: one after the other, each copy's registers renamed so that
    :func:`hoisted` can move a later trip's loads above an earlier trip's use (the last copy
    keeps the PTX names, which the code after the loop reads; a register the body reads
    before writing it is the previous copy's).

    gemv's ``sum += a[r * cols + c] * x[r]``, 4 trips a pass: ptxas issues the 8 loads of
    the 4 trips, then the 4 FMAs, so a warp waits once per pass, not once per trip.

    >>> body = [(["i"], ["v"], 2), (["v", "s"], ["s"], 0), (["i"], ["i"], 0)]
    >>> [e[1] for e in unrolled_events(body, 2)]  # what each event writes
    [['v#0'], ['s#0'], ['i#0'], ['v'], ['s'], ['i']]
    >>> [e[0] for e in unrolled_events(body, 2)]  # what it reads
    [['i'], ['v#0', 's'], ['i'], ['i#0'], ['v', 's#0'], ['i#0']]
    """
    written = {w for _, writes, _ in events for w in writes}
    out, previous = [], {}  # previous: a name -> what the copy before called it
    for copy in range(copies):
        last = copy == copies - 1
        current: dict[str, str] = {}
        for reads, writes, kind in events:
            renamed = [current.get(r, previous.get(r, r)) for r in reads]
            for w in writes:
                current[w] = w if last else f"{w}#{copy}"
            out.append((renamed, [current[w] for w in writes], kind))
        previous = {w: current.get(w, previous.get(w, w)) for w in written}
    return out


def hoisted(events: list) -> list:
    """Loads moved up in their basic block, each with the instructions that compute its
    address (its backward slice), as ptxas schedules independent loads early so that their
    latencies overlap; never above a store or a barrier (memory order), an expansion with a
    slow path (:data:`SPLIT`: in SASS a branch and a call end the block) or the load whose
    result the address needs, nor above an instruction that reads or writes what the moved
    ones write or that writes what they read. The SPLIT events come back as ALU ones.

    >>> [e[2] for e in hoisted([(["a"], ["b"], 0), (["x"], ["y"], 2), (["y"], [], 0)])]
    [2, 0, 0]
    >>> [e[2] for e in hoisted([(["a"], ["b"], 5), (["x"], ["y"], 2)])]
    [0, 2]
    >>> # acc += p[i]; q = p + 4 (an address); acc += q[0]: the second load goes up with
    >>> # its address, so both loads are in flight before the first reader
    >>> ev = [([], ["v1"], 2), (["v1", "acc"], ["acc"], 0), (["p"], ["q"], 0),
    ...       (["q"], ["v2"], 2), (["v2", "acc"], ["acc"], 0)]
    >>> [e[1] for e in hoisted(ev)]
    [['q'], ['v2'], ['v1'], ['acc'], ['acc']]
    """
    out: list = []
    fenced = 0  # out[:fenced] ends with the last store, barrier or slow path: loads stay below
    for event in events:
        reads, writes, kind = event
        if kind not in (SHARED, GLOBAL):
            out.append(event)
            if kind in (STORE, FLUSH, SPLIT):
                fenced = len(out)
            continue
        lo = fenced
        need, chosen = set(reads), []
        for k in range(len(out) - 1, lo - 1, -1):
            if need & set(out[k][1]):
                if out[k][2] != ALU:  # the address needs a loaded value: stay below it
                    lo = k + 1
                    break
                chosen.append(k)
                need |= set(out[k][0])
        moving = {k for k in chosen if k >= lo}
        # what the events crossing out[k] read and write: those below it that move, and the load
        group_reads, group_writes = set(reads), set(writes)
        pos = len(out)
        while pos > lo:
            k = pos - 1
            r, w, _ = out[k]
            if k in moving:
                group_reads |= set(r)
                group_writes |= set(w)
            elif group_reads & set(w) or group_writes & set(r) or group_writes & set(w):
                break
            pos -= 1
        out = (out[:pos] + [out[k] for k in sorted(moving) if k >= pos] + [event]
               + [e for k, e in enumerate(out[pos:], pos) if k not in moving])
    return [(r, w, ALU if k == SPLIT else k) for r, w, k in out]


def predicable(instructions) -> bool:
    """Can ptxas turn this guarded block into predicated code (no barrier, call or expansion
    with a slow path: those end a SASS block)?"""
    return not any(_kind(ins) in (FLUSH, SPLIT) or ins.opcode.startswith("call")
                   for ins in instructions)


def scoreboard_program(blocks_events: list[list]) -> tuple[int, list[list]]:
    """Index the registers loads write; keep only the events that touch them.

    Returns ``(number of tracked registers, per block [(read idx, write idx, kind, the same
    indices as tuples)])``.
    """
    tracked: dict[str, int] = {}
    for events in blocks_events:
        for _, writes, kind in events:
            if kind in (SHARED, GLOBAL):
                for r in writes:
                    tracked.setdefault(r, len(tracked))
    out = []
    for events in blocks_events:
        kept = []
        for reads, writes, kind in events:
            # an instruction other than a load that writes a tracked register is kept too:
            # the value its lanes read afterwards is no longer the load's
            r = np.array(sorted({tracked[x] for x in reads if x in tracked}), np.int64)
            w = np.array(sorted({tracked[x] for x in writes if x in tracked}), np.int64)
            if r.size or w.size or kind == FLUSH:
                kept.append((r, w, kind, tuple(r.tolist()), tuple(w.tolist())))
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

    def __init__(self, in_flight: int = IN_FLIGHT):
        self.in_flight = in_flight  # registers of global loads a warp has in flight at most
        self.counts = np.zeros(len(CLASSES), np.float64)
        self.cycles = 0  # issue cycles with dependency stalls (issue_cycles), summed over warps
        self._periods = 0
        self._shared_periods = 0
        self.warps = 0
        self._batch = None
        self._pending: dict = {}
        self.visits: dict[int, int] = {}  # id of a basic block -> times it ran
        self.warp_visits: dict[int, int] = {}  # and the warps that ran it, summed over those
        self.blocks = 0
        self._slowest = np.zeros(2)  # summed over blocks: shared, global waits
        # the emulator's own work, which cudakit.predict's work clock reads: basic blocks
        # run, their instructions per class (each run over all its active lanes at once),
        # the lanes those instructions went over, and batches of blocks started
        self.runs = self.lane_steps = self.batches = 0
        self.steps = np.zeros(len(CLASSES), np.float64)
        self.slow_paths = 0  # warp instructions that took a slow path (:meth:`slow_path`)
        self.bulk_copies = 0  # lanes' bulk copies (each one TMA copy; ptxas issues them
        # one lane at a time)

    @property
    def periods(self) -> float:
        """Memory periods (waits for global or local loads), summed over warps (a loop that
        ptxas unrolls counts its waits per pass of the unrolled loop, in parts per trip)."""
        self._finish()
        return self._periods

    @property
    def shared_periods(self) -> float:
        """Waits for shared-memory loads, summed over warps."""
        self._finish()
        return self._shared_periods

    @property
    def slowest(self) -> tuple[float, float]:
        """Per block, the waits of its slowest warp (global, shared), averaged over blocks:
        a block's barriers make it wait for that warp."""
        self._finish()
        n = max(self.blocks, 1)
        return self._slowest[1] / n, self._slowest[0] / n

    def _finish(self) -> None:
        """The waits that stores put off until their warps ended; the slowest warps."""
        if self._batch is None or not self._pending:
            return
        b = self._batch
        per_warp = np.zeros((2, b.size // 32))
        for state in self._pending.values():
            if isinstance(state, _Row):
                self._count(state.run([_FLUSH_EVENT + ((), ())]), self._all.size)
            else:
                self._count(state.run([(None, None, FLUSH, (), ())],
                                      np.arange(state.deferred.size)), 1)
            per_warp += state.per_warp(b.size // 32)
        self._slowest += per_warp.reshape(2, b.nb, -1).max(axis=2).sum(axis=1)
        self._pending = {}

    @property
    def classes(self) -> dict[str, int]:
        return {c: round(v) for c, v in zip(CLASSES, self.counts, strict=True)}

    @property
    def ops(self) -> int:
        """Warp instructions issued (every class except ``free``)."""
        return round(self.counts.sum() - self.counts[INDEX["free"]])

    def block(self, b, blk, L, dec) -> None:
        """One basic block ``blk`` of function ``dec`` executed by lanes ``L`` of batch ``b``."""
        if b is not self._batch:
            self._finish()
            self._batch = b
            self.blocks += b.nb
            self._all = np.flatnonzero(b.valid.reshape(-1, 32).any(axis=1))
            self.warps += int(self._all.size)
            self.batches += 1
        self.runs += 1
        self.steps += blk.classes
        active = None  # every lane of each warp
        if isinstance(L, slice) or L.size == b.size:
            warps = self._all
            self.lane_steps += len(blk.ops) * b.size
        else:
            self.lane_steps += len(blk.ops) * L.size
            w = L >> 5
            starts = np.flatnonzero(np.r_[True, w[1:] != w[:-1]])  # L is sorted
            warps = w[starts]
            active = np.bitwise_or.reduceat(np.left_shift(1, L & 31).astype(np.int64), starts)
        self.counts += blk.classes * warps.size
        self.cycles += blk.cycles * warps.size
        if blk.bulk:
            lanes = int(b.valid.sum()) if isinstance(L, slice) else L.size
            self.bulk_copies += blk.bulk * lanes
        self.visits[id(blk)] = self.visits.get(id(blk), 0) + 1
        self.warp_visits[id(blk)] = self.warp_visits.get(id(blk), 0) + warps.size
        events = blk.scoreboard
        if not events:
            return
        state = self._pending.get(id(dec))
        if state is None:
            state = self._pending[id(dec)] = _Row(dec.tracked, self.in_flight)
        share = 1 / blk.trips
        if isinstance(state, _Row):  # every warp so far ran together: one row stands for all
            if warps is self._all:
                return self._count(state.run(events, share), warps.size)
            state = self._pending[id(dec)] = _Rows(state, b.size // 32)
        for kind, n in state.run(events, warps, share, active):
            self._count(((kind, n),), 1)

    def slow_path(self, key: tuple[str, str], lanes: np.ndarray) -> None:
        """Lanes ``lanes`` (batch lane numbers) of an expansion took its slow path
        (:data:`SLOW_PATH`): each warp among them issues the path's instructions, and waits
        for them one after another (:data:`SLOW_CYCLES`)."""
        if lanes.size:
            warps = np.unique(lanes >> 5).size
            self.slow_paths += warps
            for cls, n in SLOW_PATH[key].items():
                self.counts[INDEX[cls]] += n * warps
            self.cycles += SLOW_CYCLES[key] * warps

    def _count(self, waits, nwarps: int) -> None:
        for kind, n in waits:
            if kind == GLOBAL:
                self._periods += n * nwarps
            else:
                self._shared_periods += n * nwarps


#: a warp's 32 lanes as a mask
ALL_LANES = (1 << 32) - 1


class _Row:
    """The scoreboard of warps that all ran the same instructions: one row, in Python.

    ``pending[r]`` is the kind of load register ``r`` waits for; ``deferred`` the wait that
    a store of pending data has put off (ptxas moves independent loads above such stores, as
    when short guarded blocks become predicated code: the wait happens at the next other
    reader, barrier or loop branch). ``lanes`` (None while every lane ran every instruction)
    is, per register, the lanes whose load of it is pending: ptxas places its waits by each
    thread's data flow, so lanes that did not load a register do not wait to read it. Where
    a warp splits over ``if (aligned) v = *(float4 *)p; else { v.x = 0; ... }``, the
    second path's lanes overwrite and read what the first path's lanes are loading, and
    neither waits (in the SASS the two paths' loads wait on one scoreboard, at their use
    after the paths meet)."""

    def __init__(self, registers: int, in_flight: int = IN_FLIGHT):
        self.in_flight = in_flight
        self.pending = [0] * registers
        self.lanes: list[int] | None = None
        self.deferred = 0
        self.waits = [0.0, 0.0, 0.0]  # of each warp, by kind (index SHARED, GLOBAL)

    def per_warp(self, nwarps: int) -> np.ndarray:
        """Waits of each warp: (2, nwarps), shared then global."""
        return np.array([[self.waits[SHARED]] * nwarps, [self.waits[GLOBAL]] * nwarps])

    def run(self, events, share: float = 1.0) -> list[tuple[int, float]]:
        """Run ``events``; their waits, each counted as ``share`` of one (the part of an
        unrolled loop's pass that one trip is)."""
        waits = [(kind, n * share) for kind, n in self._run(events)]
        for kind, n in waits:
            self.waits[kind] += n
        return waits

    def _run(self, events, active: int = ALL_LANES) -> list[tuple[int, int]]:
        """Run ``events`` on the lanes of mask ``active``."""
        waits = []
        row, lanes = self.pending, self.lanes
        for _, _, kind, reads, writes in events:
            if kind == FLUSH:
                if self.deferred:
                    waits.append((self.deferred, 1))
                    self._clear(self.deferred)
                continue
            if lanes is None:
                now = max((row[r] for r in reads), default=0)
            else:
                now = max((row[r] for r in reads if lanes[r] & active), default=0)
            if now:
                if kind == STORE:
                    self.deferred = max(self.deferred, now)
                else:
                    waits.append((max(now, self.deferred), 1))
                    self._clear(max(now, self.deferred))
            if kind == GLOBAL and row.count(GLOBAL) + len(writes) > self.in_flight:
                waits.append((GLOBAL, 1))  # ptxas puts this load after the first use
                self._clear(GLOBAL)
            loads = kind in (SHARED, GLOBAL)
            for w in writes:
                if lanes is None:
                    row[w] = kind if loads else 0
                elif loads:
                    row[w], lanes[w] = kind, lanes[w] | active
                else:  # overwritten in these lanes: other lanes' load may still be pending
                    lanes[w] &= ~active
                    row[w] = row[w] if lanes[w] else 0
        return waits

    def _clear(self, kind: int) -> None:
        """After a wait for a load of ``kind``: every load issued before it is back when
        that was a global load; only the shared ones when it was a shared load (a global
        load still in flight stays pending)."""
        self.pending[:] = [0 if kind == GLOBAL or k == SHARED else k for k in self.pending]
        if self.lanes is not None:
            self.lanes[:] = [m if k else 0 for k, m in zip(self.pending, self.lanes, strict=True)]
        self.deferred = 0 if kind == GLOBAL or self.deferred == SHARED else self.deferred


class _Rows:
    """The same scoreboard, one row per warp of the batch (once warps have diverged), with
    the lanes of each pending register (:class:`_Row`)."""

    def __init__(self, row: _Row, nwarps: int):
        self.in_flight = row.in_flight
        self.pending = np.tile(np.array(row.pending, np.int8), (nwarps, 1))
        self.lanes = np.where(self.pending > 0, ALL_LANES, 0).astype(np.int64)
        self.deferred = np.full(nwarps, row.deferred, np.int8)
        self.waits = row.per_warp(nwarps).astype(np.float64)

    def per_warp(self, nwarps: int) -> np.ndarray:
        return self.waits

    def _wait(self, warps, kinds, waits, share: float) -> None:
        hit = kinds > 0
        if hit.any():
            for row, kind in enumerate((SHARED, GLOBAL)):
                which = warps[kinds == kind]
                waits.append((kind, which.size * share))
                self.waits[row, which] += share
            # as _Row._clear: a global wait ends every pending load, a shared one the shared
            self.pending[warps[kinds == GLOBAL]] = 0
            shared = warps[kinds == SHARED]
            rows = self.pending[shared]
            rows[rows == SHARED] = 0
            self.pending[shared] = rows
            self.lanes[warps[hit]] *= self.pending[warps[hit]] > 0
            self.deferred[warps[kinds == GLOBAL]] = 0
            self.deferred[shared] = np.where(self.deferred[shared] == SHARED, 0,
                                             self.deferred[shared])

    def run(self, events, warps, share: float = 1.0, active=None) -> list[tuple[int, float]]:
        """Run ``events`` on ``warps``, their lanes ``active`` (a mask per warp; None: all)."""
        if active is None:
            active = np.full(warps.size, ALL_LANES, np.int64)
        first = warps[0]
        if (self.pending[warps] == self.pending[first]).all() and \
                (self.lanes[warps] == self.lanes[first]).all() and \
                (self.deferred[warps] == self.deferred[first]).all() and \
                (active == active[0]).all():
            return self._run_alike(events, warps, share, int(active[0]))
        waits: list = []
        for reads, writes, kind, _, _ in events:
            if kind == FLUSH:
                self._wait(warps, self.deferred[warps], waits, share)
                continue
            if reads.size:
                mine = (self.lanes[np.ix_(warps, reads)] & active[:, None]) != 0
                now = np.where(mine, self.pending[np.ix_(warps, reads)], 0).max(axis=1)
                if kind == STORE:
                    self.deferred[warps] = np.maximum(self.deferred[warps], now)
                else:
                    self._wait(warps, np.where(now > 0, np.maximum(now, self.deferred[warps]),
                                               0), waits, share)
            if kind == GLOBAL:
                full = (self.pending[warps] == GLOBAL).sum(axis=1) + writes.size > \
                    self.in_flight
                self._wait(warps, np.where(full, GLOBAL, 0), waits, share)
            if writes.size:
                at = np.ix_(warps, writes)
                if kind in (SHARED, GLOBAL):
                    self.pending[at] = kind
                    self.lanes[at] |= active[:, None]
                else:
                    self.lanes[at] &= ~active[:, None]
                    self.pending[at] *= self.lanes[at] != 0
        return waits

    def _run_alike(self, events, warps, share: float, active: int) -> list[tuple[int, float]]:
        """:meth:`run` for warps whose scoreboards and lanes are the same (the warps of one
        path after blocks of a batch took different paths): one row in Python, copied back
        to them."""
        row = _Row(0, self.in_flight)
        row.pending, row.deferred = self.pending[warps[0]].tolist(), int(self.deferred[warps[0]])
        row.lanes = self.lanes[warps[0]].tolist()
        waits = row._run(events, active)
        self.pending[warps] = row.pending
        self.lanes[warps] = row.lanes
        self.deferred[warps] = row.deferred
        for kind, n in waits:
            self.waits[0 if kind == SHARED else 1, warps] += n * share
        return [(kind, n * share * warps.size) for kind, n in waits]
