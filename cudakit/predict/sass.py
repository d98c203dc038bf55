"""How long a warp waits for its shared-memory loads, from the schedule ptxas made: the SASS
of the kernel's cubin, read with ``nvdisasm``.

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
emulator's count. Written by hand: nvdisasm prints SASS, and nothing reads a schedule's
waits from it.

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


def nvdisasm_path() -> str | None:
    """``nvdisasm`` where nvcc would be found (:func:`cudakit.compiler.toolkit_program`)."""
    from ..compiler import toolkit_program

    return toolkit_program("nvdisasm")


@functools.lru_cache(maxsize=64)
def _module_waits(digest: str, cubin: bytes) -> dict[str, SharedWaits]:
    tool = nvdisasm_path()
    if tool is None or not cubin:
        return {}
    with tempfile.TemporaryDirectory(prefix="cudakit-sass-") as tmp:
        path = os.path.join(tmp, f"{digest}.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        try:
            done = subprocess.run([tool, path], capture_output=True, text=True, timeout=60,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return {}
    return read_waits(done.stdout) if done.returncode == 0 else {}


def shared_waits(cubin: bytes, mangled: str) -> SharedWaits | None:
    """The shared waits of kernel ``mangled`` in ``cubin``, or None (no nvdisasm, or no
    such function in its listing)."""
    return _module_waits(hashlib.sha1(cubin).hexdigest(), cubin).get(mangled)
