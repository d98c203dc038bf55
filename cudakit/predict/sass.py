"""How long a warp waits for its shared-memory loads, after each instruction, and for its
register banks, and how far ahead of their use it issues its global loads, from the schedule
and the registers ptxas chose: the SASS of the kernel's cubin, read with ``nvdisasm -hex``
(:func:`read_waits`, :func:`read_stalls`, :func:`read_conflicts`,
:func:`read_global_waits`).

The emulator runs PTX, where each step of an unrolled loop loads from shared memory just
before the multiply-adds that use the values. ptxas moves some of these loads into the
multiply-adds of the step before (software pipelining), so that their latency is hidden,
and leaves others in place, where the warp waits for each step's loads. The PTX does not say
which: lab 12's ``matmul_vec`` and ``matmul_dbuf`` have the same loop, yet in their SASS an
instruction that waits for shared loads comes a median of 3 and of 36.5 instructions after
the first of them (``benchmarks/sass_loads.py``). So the model takes the waits from the
SASS: walking the kernel's instructions in order, an instruction that reads the result of a
pending ``LDS`` waits for every ``LDS`` pending then (the emulator's scoreboard rule,
:mod:`cudakit.emu.counts`), for the latency and the wavefronts of those loads less the
instructions issued since the first of them.

Without ``nvdisasm`` (it comes with the CUDA toolkit and in NVIDIA's
``nvidia-cuda-nvdisasm`` wheel, a dependency of ``cudakit[lab]``) the model keeps the
emulator's count and its own schedule. Written by hand: nvdisasm prints SASS, and nothing
reads a schedule's waits, stall counts or bank conflicts from it.

>>> listing = '''.text._Z1kPf:
...         /*0000*/                   LDS.128 R8, [R2] ;
...         /*0010*/                   LDS.128 R12, [R2+0x10] ;
...         /*0020*/                   FFMA R4, R8, R12, R4 ;
... '''
>>> waits = read_waits(listing)["_Z1kPf"]
>>> waits.loads, waits.events
(2, ((2, 2),))
>>> waits.exposed(latency=30.0, wavefronts=4.0)   # (30 + 2 x 4 - 2) / 2 loads
18.0
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: a function's start: nvdisasm's section label, or cuobjdump's "Function : name"
_FUNCTION = re.compile(r"^(?:\.text\.(\S+):|Function : (\S+))\s*$")
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_REGISTER = re.compile(r"\bR(\d+)\b")
_DESTINATION = re.compile(r"R\d+(\.\w+)*")  # a first operand that is a general register
#: opcodes whose register operands are all read (no destination register)
_NO_DESTINATION = ("ST", "RED", "BAR", "BRA", "EXIT", "BSYNC", "BSSY", "CALL", "RET", "WARPSYNC",
                   "NOP", "DEPBAR", "MEMBAR", "ERRBAR", "CCTL", "YIELD", "ARRIVES", "SYNCS")


@dataclass(frozen=True)
class SharedWaits:
    """The shared-memory waits of one kernel's SASS: how many ``LDS`` it has, and per wait
    (an instruction reading a pending load's result) the loads pending and the instructions
    issued since the first of them."""

    loads: int
    events: tuple[tuple[int, int], ...]

    def exposed(self, latency: float, wavefronts: float) -> float:
        """Cycles a warp alone on its scheduler waits per ``LDS`` it executes: per wait, the
        ``latency`` plus the pending loads' ``wavefronts`` (one per clock) less the
        instructions it issued meanwhile (one per clock), at least nothing."""
        if not self.loads:
            return 0.0
        total = sum(max(0.0, latency + pending * wavefronts - issued)
                    for pending, issued in self.events)
        return total / self.loads


def read_waits(listing: str) -> dict[str, SharedWaits]:
    """Per function of an ``nvdisasm`` (or ``cuobjdump -sass``) listing, by its mangled name,
    its shared waits.

    A branch ends the straight run: what is pending there counts as no wait. At a loop's
    back edge that is right, as those loads are used at the top of the next pass, long after
    they issued (software pipelining); a forward branch over a short guarded block loses a
    wait now and then.
    """
    out: dict[str, SharedWaits] = {}
    name, pending, loads, events, position = None, {}, 0, [], 0

    def close() -> None:
        if name is not None:
            out[name] = SharedWaits(loads, tuple(events))

    for line in listing.splitlines():
        function = _FUNCTION.match(line.strip())
        if function:
            close()
            name = function.group(1) or function.group(2)
            pending, loads, events, position = {}, 0, [], 0
            continue
        match = _INSTRUCTION.search(line)
        if name is None or not match:
            continue
        opcode, operands = match.groups()
        registers = _REGISTER.findall(operands)
        first = operands.split(",", 1)[0].strip()
        writes_first = not opcode.startswith(_NO_DESTINATION) and \
            bool(_DESTINATION.fullmatch(first))
        reads = set(registers[1:] if writes_first else registers)
        if pending and reads & pending.keys():
            start = min(pending.values())
            events.append((len(set(pending.values())), position - start))
            pending = {}
        if opcode.startswith("BRA") and pending:
            pending = {}
        if opcode.startswith("LDS") and registers:
            loads += 1
            width = {"64": 2, "128": 4}.get(opcode.rsplit(".", 1)[-1], 1)
            base = int(registers[0])
            pending.update({str(base + k): position for k in range(width)})
        elif writes_first and registers:
            pending.pop(registers[0], None)  # overwritten: no longer the load's
        position += 1
    close()
    return out


_DEPBAR_BOARD = re.compile(r"\bSB(\d)\b")
_TENSOR = {"HMMA", "IMMA", "DMMA", "HGMMA", "IGMMA", "QGMMA"}  # tensor-core instructions
_HIGH_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")
_SPILL = '(*"SpillRefill"*)'  # nvdisasm's mark on the LDL/STL that ptxas added for spills


#: the emulator's instruction class (:mod:`cudakit.emu.counts`) of a SASS opcode (its base,
#: before the first dot); all others are integer work
_SASS_CLASS = {
    **dict.fromkeys(("FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK",
                     "HFMA2", "HADD2", "HMUL2", "HSETP2", "HMNMX2"), "fp32"),
    **dict.fromkeys(("DFMA", "DADD", "DMUL", "DSETP", "DMNMX"), "fp64"),
    "MUFU": "sfu", **dict.fromkeys(("F2F", "F2I", "I2F", "FRND", "I2FP"), "cvt"),
    **dict.fromkeys(("SHFL", "VOTE", "MATCH", "REDUX"), "shfl"),
    **dict.fromkeys(("LDG", "LDGSTS"), "ld.global"), "STG": "st.global",
    **dict.fromkeys(("LDS", "LDSM"), "ld.shared"), "STS": "st.shared", "LDL": "ld.local",
    "STL": "st.local", "LDC": "ld.const", "ATOMS": "atom.shared",
    **dict.fromkeys(("ATOM", "ATOMG", "RED", "REDG"), "atom.global"), "BAR": "barrier",
    **dict.fromkeys(("BRA", "BRX", "JMP", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "WARPSYNC"),
                    "branch"),
    **dict.fromkeys(("IMAD", "IMUL"), "imad"),
    **dict.fromkeys(("DEPBAR", "LDGDEPBAR", "NOP", "YIELD", "MEMBAR", "FENCE"), "misc"),
}


def _parse(listing: str) -> dict[str, tuple[list[list], list[tuple[int, int]]]]:
    """Per function of an ``nvdisasm -hex`` listing: its instructions as [class, operands,
    branch target, stall count, opcode, scoreboard the instruction sets when its result is
    written (7: none), mask of the scoreboards it waits for, whether nvdisasm marks it as a
    register spill or refill], and its loops as (first, last) instruction indices, one per
    backward branch."""
    functions: dict[str, list] = {}
    labels: dict[tuple[str, str], int] = {}
    name = None
    for line in listing.splitlines():
        function = _FUNCTION.match(line.strip())
        if function:
            name = function.group(1) or function.group(2)
            functions[name] = []
            continue
        if name is None:
            continue
        label = _LABEL.match(line)
        if label:
            labels[name, label.group(1)] = len(functions[name])
            continue
        high = _HIGH_WORD.match(line)
        if high and functions[name] and functions[name][-1][3] is None:
            word = int(high.group(1), 16)  # control bits 105-108, 110-112 and 116-121
            functions[name][-1][3] = max((word >> 41) & 0xF, 1)
            functions[name][-1][5:7] = [(word >> 46) & 0x7, (word >> 52) & 0x3F]
            continue
        match = _INSTRUCTION.search(line)
        if match:
            opcode, operands = match.groups()
            target = _TARGET.search(operands)
            kind = _SASS_CLASS.get(opcode.split(".")[0], "int")
            functions[name].append([kind, operands, target.group(1) if target else None, None,
                                    opcode, 7, 0, _SPILL in line])
    out = {}
    for name, instructions in functions.items():
        # not the branch to itself that ends every kernel, after its EXIT: no loop runs there
        loops = [(start, k) for k, instruction in enumerate(instructions)
                 if (start := labels.get((name, instruction[2]))) is not None and start < k]
        out[name] = (instructions, loops)
    return out


def _loop_instructions(parsed: dict) -> dict[str, list[tuple[str, str, int]]]:
    """Per function of :func:`_parse`'s result, its instructions inside loops (all of them
    when it has none) as (class, operands, stall count), in order."""
    return {name: [(kind, operands, stall or 1)
                   for kind, operands, _, stall, *_ in _in_loops(instructions, loops)]
            for name, (instructions, loops) in parsed.items()}


def _in_loops(instructions: list, loops: list[tuple[int, int]]) -> list:
    """The instructions inside ``loops``, in order; all of them when there are none."""
    inside = np.zeros(len(instructions), bool)
    for start, end in loops:
        inside[start:end + 1] = True
    return [i for i, keep in zip(instructions, inside, strict=True) if keep] \
        if inside.any() else instructions


def read_loop_bytes(listing: str) -> dict[str, int]:
    r"""Per function of an ``nvdisasm`` listing, the bytes of its largest loop (an outermost
    one, with the loops inside it; 16 bytes an instruction, as from Volta on), or 0 without
    loops: the code a warp runs again and again, which the instruction cache must hold.

    >>> read_loop_bytes(".text.k:\n.L_x_0:\n  /*0000*/  FADD R1, R1, R2 ;\n"
    ...                 "  /*0010*/  BRA `(.L_x_0) ;\n  /*0020*/  EXIT ;\n")
    {'k': 32}
    """
    return _loop_bytes(_parse(listing))


def _loop_bytes(parsed: dict) -> dict[str, int]:
    out = {}
    for name, (_, loops) in parsed.items():
        spans: list[list[int]] = []  # outermost loops: overlapping spans joined
        for start, end in sorted(loops):
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        out[name] = max((16 * (end - start + 1) for start, end in spans), default=0)
    return out


@dataclass(frozen=True)
class GlobalWaits:
    """The global-memory waits of one kernel's loops in its SASS: per wait (an instruction
    whose wait mask names a scoreboard that an ``LDG`` or ``LDL`` set), the instructions its
    warp issued since the first of those loads; and apart, per ``DEPBAR`` that waits for
    every group of ``LDGSTS`` copies (``cp.async.wait_group 0``), the instructions since the
    first copy of the oldest group and how many of them were tensor instructions."""

    distances: tuple[int, ...]
    copies: tuple[tuple[int, int], ...] = ()
    #: in a function without loops, per wait: its position and that of the last load it
    #: waits for (:meth:`periods`)
    straight: tuple[tuple[int, int], ...] = ()
    #: whether a branch, call or barrier lies between the function's first and last global
    #: store (as around a double division's slow path): its stores leave the SM apart
    stores_apart: bool = False

    def periods(self) -> int:
        """The memory periods of a function without loops (Hong and Kim's: the loads in
        flight together, ended by the first wait for one of them): a wait for a load issued
        before the period's first wait ends no period of its own. ptxas turns short guarded
        loads into predicated ones and issues them a few at a time (a 5 x 5 filter's 25
        guarded loads: 22 waits in 7 periods), where the PTX uses each load before the next.

        >>> GlobalWaits((10, 9, 8), straight=((10, 0), (11, 2), (30, 20))).periods()
        2
        """
        count, end = 0, -1
        for wait, load in self.straight:
            if load > end:  # issued after the last period ended: this wait ends another
                count, end = count + 1, wait
        return count

    def exposed(self, latency: float, cycles_per_instruction: float,
                turns: float | None = None, per_tensor: float = 0.0) -> float:
        """The share of ``latency`` a warp still waits, on average over these waits, when
        each instruction it issues takes ``cycles_per_instruction`` (1 for a warp alone on
        its scheduler, n for n warps issuing in turn); after an asynchronous copy, each takes
        ``turns`` cycles (the same if not given) and a tensor instruction at least
        ``per_tensor``; 1 without waits to go by.

        >>> GlobalWaits((600, 10)).exposed(latency=400.0, cycles_per_instruction=2.0)
        0.475
        >>> GlobalWaits((), copies=((100, 50),)).exposed(400.0, 1.0, 2.0, 6.0)  # 300 cycles
        0.25
        """
        turns = turns or cycles_per_instruction
        waits = [d * cycles_per_instruction for d in self.distances] + \
            [max(d * turns, t * per_tensor) for d, t in self.copies]
        if not waits or latency <= 0:
            return 1.0
        return sum(max(0.0, latency - w) for w in waits) / (len(waits) * latency)


#: instructions that keep the stores on either side of them apart in time
_BETWEEN_STORES = {"BRA", "BSSY", "BSYNC", "CALL", "BAR", "WARPSYNC", "RET"}


def read_global_waits(listing: str) -> dict[str, GlobalWaits]:
    r"""Per function of an ``nvdisasm -hex`` listing, its :class:`GlobalWaits`.

    Each instruction carries, in bits 110-112, the scoreboard its result sets when it is
    written (for loads of varying latency) and in bits 116-121 the scoreboards it waits for
    before issuing (Jia et al. 2018, section 2.2). Each loop's body is walked twice,
    straight through (both sides of a branch inside it count as issued), and the waits of
    the second pass are kept: a load issued for the next trip (software pipelining: lab 12's
    ``matmul_dbuf`` loads the next tiles, then multiplies the ones in shared memory) is
    waited for a whole body later, a load used at once a few instructions later. A function
    without loops is walked once.

    >>> listing = (".text._Z1kPf:\n.L_x_0:\n"
    ...            "  /*0000*/  FFMA R1, R2, R2, R1 ;  /* 0x0000000202017223 */\n"
    ...            "                                  /* 0x004fe20000000000 */\n"
    ...            "  /*0010*/  LDG.E R2, desc[UR4][R4.64] ;  /* 0x0000000404027981 */\n"
    ...            "                                  /* 0x000ea20000000000 */\n"
    ...            "  /*0020*/  FADD R3, R3, 1 ;  /* 0x3f80000003037421 */\n"
    ...            "                                  /* 0x000fe20000000000 */\n"
    ...            "  /*0030*/  BRA `(.L_x_0) ;  /* 0xfffffffc00f07947 */\n"
    ...            "                                  /* 0x000fea0000000000 */\n")
    >>> read_global_waits(listing)["_Z1kPf"].distances  # the FFMA waits for the LDG
    (3,)
    """
    return _global_waits(_parse(listing))


def _global_waits(parsed: dict) -> dict[str, GlobalWaits]:
    out = {}
    for name, (instructions, loops) in parsed.items():
        distances: list[int] = []
        copies: list[tuple[int, int]] = []
        straight: list[tuple[int, int]] = []
        passes = 2 if loops else 1
        for start, end in loops or [(0, len(instructions) - 1)]:
            pending: dict[int, int] = {}  # scoreboard -> position of its first load
            last: dict[int, int] = {}  # and of its last
            groups: list[int] = []  # committed groups of LDGSTS: the first one's position
            group: int | None = None  # the group being issued
            tensor = [0]  # tensor instructions issued before each position
            for position in range(passes * (end - start + 1)):
                _, operands, _, _, opcode, sets, waits, _ = \
                    instructions[start + position % (end - start + 1)]
                kept = position >= (passes - 1) * (end - start + 1)
                base = opcode.split(".")[0]
                tensor.append(tensor[-1] + (base in _TENSOR))
                if opcode.startswith("DEPBAR"):  # DEPBAR.LE SBn, k: a wait on scoreboard n
                    waits |= sum(1 << int(b) for b in _DEPBAR_BOARD.findall(operands))
                    # and on the LDGSTS groups (cp.async) but the k last; only a wait for all
                    # (k = 0) is a wait the emulator counts (counts.ASYNC_COPIES)
                    left = int(operands.split(",")[-1].strip().rstrip(";").strip(), 0) \
                        if "," in operands else 0
                    while len(groups) > left:
                        first = groups.pop(0)
                        if kept and left == 0:
                            copies.append((position - first, tensor[position] - tensor[first]))
                for board in [b for b in pending if waits >> b & 1]:
                    first = pending.pop(board)
                    if kept:
                        distances.append(position - first)
                    if not loops:
                        straight.append((position, last.pop(board)))
                if base in ("LDG", "LDL") and sets != 7:
                    pending.setdefault(sets, position)
                    last[sets] = position
                elif base == "LDGSTS" and group is None:
                    group = position
                elif base == "LDGDEPBAR" and group is not None:
                    groups.append(group)
                    group = None
        stores = [k for k, instruction in enumerate(instructions)
                  if instruction[4].startswith("STG")]
        apart = bool(stores) and any(instruction[4].split(".")[0] in _BETWEEN_STORES
                                     for instruction in instructions[stores[0]:stores[-1]])
        out[name] = GlobalWaits(tuple(distances), tuple(copies), tuple(straight), apart)
    return out


@dataclass(frozen=True)
class Spills:
    """The register spills of one kernel's loops (all its code when it has none) in its
    SASS: the 128-byte lines its spill loads and stores touch per warp (a lane's 4, 8 or 16
    bytes, 32 lanes interleaved), and beside them the ``fp32`` instructions and all the
    instructions of the same code, by which the emulator's counts (of the PTX, which has no
    spills: ptxas adds them) scale them."""

    load_lines: int
    store_lines: int
    fp32: int
    instructions: int

    def per(self, fp32: float, instructions: float) -> tuple[float, float]:
        """The spill load and store lines of a launch that issued ``fp32`` FP32 and
        ``instructions`` warp instructions in all: in proportion to its FP32 instructions
        when the spilling code has some (PTX and SASS count those alike), else to all.

        >>> Spills(load_lines=2, store_lines=1, fp32=4, instructions=10).per(400.0, 900.0)
        (200.0, 100.0)
        """
        scale = fp32 / self.fp32 if self.fp32 else instructions / max(self.instructions, 1)
        return self.load_lines * scale, self.store_lines * scale


def read_spills(listing: str) -> dict[str, Spills]:
    r"""Per function of an ``nvdisasm -hex`` listing that spills registers, its
    :class:`Spills`.

    >>> listing = (".text._Z1kPf:\n.L_x_0:\n"
    ...            '  /*0000*/  STL [R1+0x4], R2  (*"SpillRefill"*);  /* 0x0 */\n'
    ...            "  /*0010*/  FFMA R2, R2, R2, R3 ;  /* 0x0 */\n"
    ...            '  /*0020*/  LDL.64 R4, [R1+0x8]  (*"SpillRefill"*);  /* 0x0 */\n'
    ...            "  /*0030*/  BRA `(.L_x_0) ;  /* 0x0 */\n")
    >>> read_spills(listing)["_Z1kPf"]
    Spills(load_lines=2, store_lines=1, fp32=1, instructions=4)
    """
    return _spills(_parse(listing))


def _spills(parsed: dict) -> dict[str, Spills]:
    out = {}
    for name, (instructions, loops) in parsed.items():
        # a kernel without loops (lab 04's many_live, unrolled in full) spills in its
        # straight code
        code = _in_loops(instructions, loops)
        lines = {"LDL": 0, "STL": 0}
        for *_, opcode, _, _, spill in code:
            base, *suffix = opcode.split(".")
            if spill and base in lines:
                width = max([{"64": 8, "128": 16}.get(x, 4) for x in suffix] or [4])
                lines[base] += 32 * width // 128
        if lines["LDL"] or lines["STL"]:
            out[name] = Spills(lines["LDL"], lines["STL"],
                               sum(i[0] == "fp32" for i in code), len(code))
    return out


def read_stalls(listing: str) -> dict[str, dict[str, float]]:
    r"""Per function of an ``nvdisasm -hex`` listing, per instruction class of the emulator,
    the cycles that ptxas's stall counts make a warp wait after such an instruction, on
    average over the instructions of the function's loops (all of them when it has none).

    Each Volta-to-Hopper instruction carries, in bits 105-108 of its 128-bit word, the cycles
    its warp waits before issuing the next one (Jia et al., "Dissecting the NVIDIA Volta GPU
    Architecture via Microbenchmarking", 2018, section 2.2): the fixed latencies ptxas covers
    without a scoreboard. A chain of dependent FADDs gets 4-5 each, a run of independent FFMAs
    1. On the H100 (``benchmarks/lone_warp.py``) a lone warp ran FFMA loops in their stall
    sums, and an sgemm-like step in its stall sum plus its shared-memory waits.

    >>> listing = (".text._Z1kPf:\n.L_x_0:\n"
    ...            "  /*0000*/  FADD R1, R1, R2 ;  /* 0x0000000201017221 */\n"
    ...            "                               /* 0x000fca0000000000 */\n"
    ...            "  /*0010*/  BRA `(.L_x_0) ;    /* 0xfffffffc00f87947 */\n"
    ...            "                               /* 0x000fea000383ffff */\n")
    >>> read_stalls(listing)
    {'_Z1kPf': {'fp32': 5.0, 'branch': 5.0}}
    """
    return _stalls(_loop_instructions(_parse(listing)))


def _stalls(loops: dict[str, list]) -> dict[str, dict[str, float]]:
    out = {}
    for name, instructions in loops.items():
        stalls: dict[str, list[int]] = {}
        for kind, _, stall in instructions:
            stalls.setdefault(kind, []).append(stall)
        out[name] = {kind: float(np.mean(v)) for kind, v in stalls.items()}
    return out


#: a source operand read from the register file: a general register, perhaps negated or
#: absolute, perhaps kept in the operand reuse cache for the next instruction
_SOURCE = re.compile(r"^-?\|?R(\d+)\|?(\.reuse)?$")


def bank_reads(operands: str, cached: dict[int, int]) -> tuple[list[int], dict[int, int]]:
    """The register banks (0: even registers, 1: odd) one instruction reads its source
    operands from (its ``operands``, the destination first), and the operand reuse cache it
    leaves: ``cached`` maps an operand slot to the register the previous instruction kept
    there (``.reuse``); such an operand is not read from a bank, and a register read in two
    slots is read once.

    >>> bank_reads("R4, R6, R8.reuse, R10", {})   # FFMA R4, R6, R8, R10: three even registers
    ([0, 0, 0], {1: 8})
    >>> bank_reads("R5, R7, R8, R9", {1: 8})      # R8 from the reuse cache
    ([1, 1], {})
    >>> bank_reads("R3, R6, R6", {})              # FMUL R3, R6, R6: one read
    ([0], {})
    """
    read, kept = {}, {}
    for slot, operand in enumerate(part.strip() for part in operands.split(",")[1:]):
        match = _SOURCE.match(operand)
        if match is None:  # RZ, a constant, an immediate, a predicate
            continue
        register = int(match.group(1))
        if cached.get(slot) != register:
            read[register] = register % 2
        if match.group(2):
            kept[slot] = register
    return list(read.values()), kept


def read_conflicts(listing: str) -> dict[str, float]:
    r"""Per function of an ``nvdisasm`` listing, the cycles per floating-point (``fp32``
    class) instruction of its loops that a warp waits for its register banks.

    The register file has two banks, even and odd registers, and each delivers one operand a
    cycle; an operand that the previous instruction kept in the same slot's reuse cache is
    not read from a bank (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
    Microbenchmarking", 2018, on Volta's register banks). Walking the loops in order, each
    instruction issues when the stall count of the one before allows, or later, once the
    banks have delivered its operands; the reads may start a cycle before the previous
    instruction issues, so a dependent chain's stalls hide its conflicts (a chain of FFMAs,
    each reading two odd registers, ran at its 4 cycles each: ``benchmarks/fetch_probe.py``).
    Checked on the H100 by ``benchmarks/sgemm_blocks.py``: FFMA outer products in registers
    (0.42 such cycles per FFMA) ran in 1483 and 377 cycles per trip, and the model, with
    these cycles, predicts them within 3 %; the cycles hold the scheduler (two warps on it
    took twice as long). Other instructions are not read for banks.

    >>> read_conflicts(".text.k:\n  /*0000*/  FFMA R4, R6, R8, R10 ;\n"
    ...                "  /*0010*/  FFMA R5, R7, R9, R5 ;\n")
    {'k': 1.0}
    """
    return _conflicts(_loop_instructions(_parse(listing)))


def _conflicts(loops: dict[str, list]) -> dict[str, float]:
    out = {}
    for name, instructions in loops.items():
        cached: dict[int, int] = {}
        issued, count = -1, 0  # the cycle the last instruction issued in
        free = [issued, issued]  # the cycle from which each bank can serve a read
        scheduled, wait = -1, 1  # the same without the banks; the last one's stall count
        for kind, operands, stall in instructions:
            ready = issued  # reads start a cycle before the previous instruction issues
            if kind == "fp32":
                banks, cached = bank_reads(operands, cached)
                count += 1
                for bank in banks:
                    cycle = max(free[bank], issued)
                    free[bank] = cycle + 1
                    ready = max(ready, cycle)
            else:
                cached = {}
            issued, scheduled, wait = max(issued + wait, ready), scheduled + wait, stall
        out[name] = (issued - scheduled) / count if count else 0.0
    return out


def read_aggregated(listing: str) -> dict[str, bool]:
    r"""Per function of an ``nvdisasm`` listing: whether ptxas folded a warp's atomic adds
    into one (a ``POPC`` of the voting lanes, then a single ``RED``/``ATOM`` for them all:
    what it makes of ``atomicAdd(p, 1)`` on a warp-uniform address; the PTX still has one
    atomic per lane).

    >>> read_aggregated("\n".join([".text.k:", "  /*0030*/  VOTEU.ANY UR4, UPT, PT ;",
    ...                            "  /*0050*/  POPC R5, UR4 ;",
    ...                            "  /*0080*/  @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;"]))
    {'k': True}
    """
    out: dict[str, bool] = {}
    name, since = None, None  # instructions since the last POPC
    for line in listing.splitlines():
        function = _FUNCTION.match(line.strip())
        if function:
            name, since = function.group(1) or function.group(2), None
            out[name] = False
            continue
        match = _INSTRUCTION.search(line)
        if name is None or not match:
            continue
        opcode = match.group(1)
        if opcode.startswith("POPC"):
            since = 0
        elif since is not None:
            since += 1
            if opcode.split(".")[0] in ("RED", "REDG", "ATOM", "ATOMG") and \
                    ".ADD" in opcode and since <= 8:
                out[name] = True
    return out


def nvdisasm_path() -> str | None:
    """``nvdisasm`` where nvcc would be found (:func:`cudakit.compiler.toolkit_program`)."""
    from ..compiler import toolkit_program

    return toolkit_program("nvdisasm")


class ModuleSass(NamedTuple):
    """What one module's SASS says, per kernel (mangled name): read once, cached."""

    waits: dict[str, SharedWaits]
    stalls: dict[str, dict]
    aggregated: dict[str, bool]
    conflicts: dict[str, float]
    sizes: dict[str, tuple[int, int]]
    global_waits: dict[str, GlobalWaits]
    spills: dict[str, Spills]


_NO_SASS = ModuleSass({}, {}, {}, {}, {}, {}, {})


def _sass_of(cubin: bytes) -> ModuleSass:
    return _module_sass(hashlib.sha1(cubin).hexdigest(), cubin)


@functools.lru_cache(maxsize=64)
def _module_sass(digest: str, cubin: bytes) -> ModuleSass:
    tool = nvdisasm_path()
    if tool is None or not cubin:
        return _NO_SASS
    with tempfile.TemporaryDirectory(prefix="cudakit-sass-") as tmp:
        path = os.path.join(tmp, f"{digest}.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        try:
            done = subprocess.run([tool, "-hex", path], capture_output=True, text=True,
                                  timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return _NO_SASS
    if done.returncode != 0:
        return _NO_SASS
    parsed = _parse(done.stdout)  # read once for the stalls, the banks and the loops
    loops = _loop_instructions(parsed)
    sizes = {name: (loop, len(parsed[name][0])) for name, loop in _loop_bytes(parsed).items()}
    return ModuleSass(read_waits(done.stdout), _stalls(loops), read_aggregated(done.stdout),
                      _conflicts(loops), sizes, _global_waits(parsed), _spills(parsed))


def shared_waits(cubin: bytes, mangled: str) -> SharedWaits | None:
    """The shared waits of kernel ``mangled`` in ``cubin``, or None (no nvdisasm, or no
    such function in its listing)."""
    return _sass_of(cubin).waits.get(mangled)


def stall_cycles(cubin: bytes, mangled: str) -> dict[str, float] | None:
    """Per instruction class, the cycles a warp waits after each instruction of kernel
    ``mangled``'s loops by their stall counts (:func:`read_stalls`), or None (no nvdisasm,
    or no such function)."""
    return _sass_of(cubin).stalls.get(mangled)


def aggregates_atomics(cubin: bytes, mangled: str) -> bool:
    """Whether ptxas folds kernel ``mangled``'s atomic adds per warp (:func:`read_aggregated`;
    False without nvdisasm)."""
    return _sass_of(cubin).aggregated.get(mangled, False)


def conflict_cycles(cubin: bytes, mangled: str) -> float | None:
    """Register-bank cycles per ``fp32`` instruction of kernel ``mangled``'s loops
    (:func:`read_conflicts`), or None (no nvdisasm, or no such function)."""
    return _sass_of(cubin).conflicts.get(mangled)


def code_size(cubin: bytes, mangled: str) -> tuple[int, int] | None:
    """The bytes of kernel ``mangled``'s largest loop (:func:`read_loop_bytes`) and its SASS
    instructions, or None (no nvdisasm, or no such function)."""
    return _sass_of(cubin).sizes.get(mangled)


def global_waits(cubin: bytes, mangled: str) -> GlobalWaits | None:
    """The global waits of kernel ``mangled``'s loops in ``cubin`` (:func:`read_global_waits`),
    or None (no nvdisasm, or no such function)."""
    return _sass_of(cubin).global_waits.get(mangled)


def spills(cubin: bytes, mangled: str) -> Spills | None:
    """The register spills of kernel ``mangled``'s loops in ``cubin`` (:func:`read_spills`),
    or None (no spills, no nvdisasm, or no such function)."""
    return _sass_of(cubin).spills.get(mangled)
