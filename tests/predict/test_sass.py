"""The shared-memory waits and the stall counts read from ptxas's schedule
(``cudakit.predict.sass``): the reading rules on listings written by hand, the same waits as
``cuobjdump`` showed on the H100's machine for the labs' kernels
(``benchmarks/fixtures/h100_sass_waits.json``, made by ``benchmarks/sass_loads.py``), the
stall counts of kernels compiled here, the register-bank conflicts against the H100's times of
FFMA outer products, and the model's use of them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import cudakit
from benchmarks.sass_loads import WAITS, sources
from cudakit.predict import load
from cudakit.predict.model import (
    Launch,
    hidden_waits,
    hong_kim,
    own_path,
    period_wait,
    shared_wait,
    transfer_cycles,
)
from cudakit.predict.sass import (
    GlobalWaits,
    SharedWaits,
    conflict_cycles,
    global_waits,
    nvdisasm_path,
    read_conflicts,
    read_global_waits,
    read_stalls,
    read_waits,
    shared_waits,
    stall_cycles,
)
from cudakit.predict.traffic import Traffic


def listing(*lines: str, name: str = "_Z1kPf") -> str:
    body = "\n".join(f"        /*{16 * i:04x}*/                   {line} ;"
                     for i, line in enumerate(lines))
    return f".text.{name}:\n{body}\n"


def test_a_load_used_at_once_waits_and_one_used_later_does_not_count_twice():
    waits = read_waits(listing("LDS R4, [R2]", "IADD3 R5, R4, 0x1, RZ",
                               "LDS R6, [R2+0x4]", "FFMA R7, R1, R1, R1", "FFMA R8, R1, R1, R1",
                               "FADD R9, R6, R7"))["_Z1kPf"]
    assert waits.loads == 2
    assert waits.events == ((1, 1), (1, 3))  # one load pending each time, 1 and 3 apart


def test_loads_issued_together_are_one_wait_counted_from_the_first():
    waits = read_waits(listing("LDS.128 R8, [R2]", "LDS.64 R12, [R2+0x20]",
                               "FFMA R4, R13, R1, R4", "FFMA R5, R8, R1, R5"))["_Z1kPf"]
    assert waits.events == ((2, 2),)  # the second FFMA finds nothing pending any more


def test_a_compare_reads_its_registers_and_an_overwrite_ends_a_pending_load():
    compare = read_waits(listing("LDS R4, [R2]", "ISETP.GE.AND P0, PT, R4, 0x1, PT"))
    assert compare["_Z1kPf"].events == ((1, 1),)
    overwritten = read_waits(listing("LDS R4, [R2]", "MOV R4, R1", "IADD3 R5, R4, R4, RZ"))
    assert overwritten["_Z1kPf"].events == ()


def test_a_backward_branch_hides_what_the_pass_left_pending():
    waits = read_waits(listing("LDS R4, [R2]", "BRA 0x0", "FADD R5, R4, R4"))["_Z1kPf"]
    assert waits.events == ()


def test_cuobjdump_headers_and_several_functions():
    text = ("        Function : _Z1aPf\n" + listing("LDS R4, [R2]", "FADD R5, R4, R4").split(
        "\n", 1)[1] + "        Function : _Z1bPf\n" + listing("FADD R5, R4, R4").split("\n", 1)[1])
    waits = read_waits(text)
    assert waits["_Z1aPf"].loads == 1 and waits["_Z1bPf"] == SharedWaits(0, ())


def test_exposed_cycles_are_the_latency_and_wavefronts_less_the_cover():
    waits = SharedWaits(loads=8, events=((4, 2), (4, 60)))
    # the first wait: 30 + 4 x 4 - 2 = 44 cycles; the second is covered; per load 44 / 8
    assert waits.exposed(latency=30.0, wavefronts=4.0) == pytest.approx(5.5)
    assert SharedWaits(0, ()).exposed(30.0, 1.0) == 0.0


def test_nvdisasm_reads_the_schedule_cuobjdump_showed_on_the_h100():
    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    fixture = json.loads(WAITS.read_text())
    labs = sources()
    wanted = {"_Z10matmul_vecPKfS0_Pfiii", "_Z11matmul_dbufPKfS0_Pfiii", "_Z7reduce4PKiPij",
              "_Z16transpose_paddedPKfPfii"}
    checked = 0
    for key, kernels in fixture.items():
        for name, stored in kernels.items():
            if name not in wanted:
                continue
            text, options = labs[key]
            got = shared_waits(cudakit.compile(text, options=options).cubin, name)
            assert got is not None and got.loads == stored["loads"]
            assert [list(e) for e in got.events] == stored["events"]
            checked += 1
    assert checked == len(wanted)


def _launch(schedule) -> Launch:
    traffic = Traffic(shared_wavefronts=32 * 4 * 64, shared_load_wavefronts=32 * 4 * 64)
    return Launch(classes={"ld.shared": 32 * 64, "fp32": 512 * 64}, issued=600 * 64,
                  cycles=600 * 64, warps=64, periods=0, shared_periods=64,
                  chain_periods=0, chain_shared_periods=1, blocks=8, warps_per_block=8,
                  blocks_per_sm=1, traffic=traffic, schedule=schedule)


def test_the_model_takes_the_waits_of_the_schedule_per_period():
    d = load("H100")
    # the emulator counts one period for 32 loads; the SASS waits 8 times, 2 instructions
    # after the first of 4 loads of 4 wavefronts each: 8 x (latency + 16 - 2) per period
    kept = SharedWaits(32, ((4, 2),) * 8)
    assert shared_wait(_launch(kept), d) == pytest.approx(8 * (d.shared_latency_cycles + 14))
    assert shared_wait(_launch(None), d) == d.shared_latency_cycles
    hidden = SharedWaits(32, ((4, 60),) * 8)  # software-pipelined: nothing left to wait
    assert shared_wait(_launch(hidden), d) == 0.0
    # shared data read through generic loads (LD, not LDS): the SASS says nothing
    assert shared_wait(_launch(SharedWaits(0, ())), d) == d.shared_latency_cycles


STALL_KERNELS = r"""
__global__ void chain(float *out, int n) {
    float a = threadIdx.x;
    for (int i = 0; i < n; ++i) a = a + 1.5f;  // each add waits for the one before
    out[threadIdx.x] = a;
}
__global__ void independent(float *out, int n) {
    float a[8];
    for (int j = 0; j < 8; ++j) a[j] = threadIdx.x + j;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < 8; ++j) a[j] = fmaf(a[j], 1.0001f, 0.5f);  // 8 chains side by side
    float s = 0.0f;
    for (int j = 0; j < 8; ++j) s += a[j];
    out[threadIdx.x] = s;
}
"""


def test_stall_counts_of_a_dependent_chain_and_of_independent_work():
    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    cubin = cudakit.compile(STALL_KERNELS, options=["-O3"]).cubin
    chain, independent = (stall_cycles(cubin, name)["fp32"]
                          for name in ("_Z5chainPfi", "_Z11independentPfi"))
    # the ALU's latency of 4 cycles, waited out after each add that the next one needs (the
    # unrolled loop's last add is followed by its counter's work)
    assert chain >= 3.0
    assert independent < 1.25  # one FFMA a clock (the H100 measured 92-97 %, lone_warp.py)


def test_a_lone_warp_is_no_faster_than_its_stall_counts():
    listing_ = (".text._Z1kPf:\n.L_x_0:\n"
                "  /*0000*/  FADD R1, R1, R2 ;  /* 0x0000000201017221 */\n"
                "                               /* 0x000fca0000000000 */\n"
                "  /*0010*/  BRA `(.L_x_0) ;    /* 0xfffffffc00f87947 */\n"
                "                               /* 0x000fea000383ffff */\n")
    stalls = read_stalls(listing_)["_Z1kPf"]
    x = Launch(classes={"fp32": 1000, "branch": 10}, issued=1010, cycles=1010, warps=1,
               periods=0, shared_periods=0, chain_periods=0, chain_shared_periods=0, blocks=1,
               warps_per_block=1, blocks_per_sm=1, traffic=Traffic(), stalls=stalls)
    # 5 cycles after each FADD (the stall field, bits 105-108); integer and control work,
    # which ptxas rewrites, at one a clock
    assert own_path(x) == 1000 * 5 + 10
    assert own_path(Launch(**{**vars(x), "stalls": None})) == 1010


def test_the_branch_to_itself_after_exit_is_not_a_loop():
    """Every kernel's SASS ends in ``EXIT`` and a ``BRA`` to itself; a kernel without loops
    (a transpose's tile, a stencil's point) has its stalls read over all its code, not over
    that one branch, and no loop for the instruction cache to hold."""
    from cudakit.predict.sass import read_loop_bytes

    def word(stall: int) -> str:
        return f"                               /* 0x{stall << 41:016x} */\n"

    straight = (".text._Z1kPf:\n"
                "  /*0000*/  FADD R1, R1, R2 ;  /* 0x0000000201017221 */\n" + word(5) +
                "  /*0010*/  EXIT ;  /* 0x000000000000794d */\n" + word(5) +
                ".L_x_0:\n  /*0020*/  BRA `(.L_x_0) ;  /* 0xfffffffc00f87947 */\n" + word(0))
    assert read_loop_bytes(straight) == {"_Z1kPf": 0}
    assert read_stalls(straight)["_Z1kPf"]["fp32"] == 5.0


def test_bank_reads_skip_the_reuse_cache_and_conflicts_queue_on_one_bank():
    # three FFMAs: the first reads R6, R8, R10 (even bank, three cycles) and keeps R8; the
    # second takes R8 from the cache and reads R5 and R7 (odd); the third reads R9 and R11,
    # both odd, after the second's odd reads
    conflicts = read_conflicts(listing("FFMA R4, R6, R8.reuse, R10", "FFMA R12, R5, R8, R7",
                                       "FFMA R13, R9, R2, R11"))["_Z1kPf"]
    # the first's reads at -1, 0, 1 (from a cycle before the loop starts; issue 1); the
    # second's odd reads at 1, 2 (issue 2); the third's: R9 at 3, R2 (even) at 2, R11 at 4
    # (issue 4): 2 cycles more than 3 FFMAs in a row
    assert conflicts == pytest.approx(2 / 3)
    # an integer instruction between them empties the reuse cache and reads no banks (issue
    # 2); the FFMA after it reads R5 and R8 at 2, R7 at 3 and issues at 3, in step: the
    # first's cycle is all (1 over 2 FFMAs); a register read twice (FMUL R3, R6, R6) is read
    # once
    assert read_conflicts(listing("FFMA R4, R6, R8.reuse, R10", "IADD3 R1, R1, 0x1, RZ",
                                  "FFMA R12, R5, R8, R7"))["_Z1kPf"] == pytest.approx(0.5)
    assert read_conflicts(listing("FMUL R3, R6, R6", "FMUL R5, R7, R7"))["_Z1kPf"] == 0.0


def test_bank_conflicts_give_the_h100_times_of_ffma_outer_products():
    """``benchmarks/sgemm_blocks.py``'s register-only FFMA outer products: the H100 ran them
    at 0.7 FFMA per clock with one warp per scheduler and with two; the model, with the bank
    conflicts of their SASS, within 5 % of each stored time (without: 24 % fast)."""
    from benchmarks import sgemm_blocks

    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    stored = json.loads(sgemm_blocks.FIXTURE.read_text())["outer"]
    for run in stored:
        predicted = sgemm_blocks.predicted(run)
        assert predicted == pytest.approx(run["cycles_per_trip"], rel=0.05), run


def test_bank_conflicts_are_the_dispatch_stalls_nsight_compute_sampled():
    """The outer product's loop, compiled here with the probe's options: the register-bank
    cycles per instruction :func:`read_conflicts` finds are the ``dispatch`` stalls per
    instruction issued that Nsight Compute sampled in that loop on the H100
    (``fixtures/h100_outer_source.ncu.csv.gz``, 0.417)."""
    from benchmarks import sgemm_blocks

    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    loop, _ = sgemm_blocks.loop_stalls(
        sgemm_blocks.FIXTURE.with_name("h100_outer_source.ncu.csv.gz"), "outer_8_16")
    cubin = cudakit.compile('extern "C" {\n' + sgemm_blocks.OUTER + "\n}\n",
                            options=["-O3"]).cubin
    per_ffma = conflict_cycles(cubin, "outer_8_16")
    per_instruction = per_ffma * 1024 / loop["instructions"]  # 1024 FFMA in the loop
    assert per_instruction == pytest.approx(loop["per_issue"]["dispatch"], abs=0.03)


def test_a_dependent_chain_hides_its_bank_conflicts_in_its_stalls():
    """Each FFMA of a chain reads two odd registers (one conflict) but waits 4 cycles for the
    one before: the conflict costs nothing (the H200's GH100 SMs ran such a chain at 4.03
    cycles per FFMA, ``fixtures/h200_fetch_probe.json.gz``)."""
    def chain(stall: int) -> str:
        return (".text._Z1kPf:\n.L_x_0:\n" + "".join(
            f"  /*{16 * k:04x}*/  FFMA R13, R13, R11, R10 ;  /* 0x0000000b0d0d7223 */\n"
            f"                   /* 0x{stall << 41:016x} */\n"
            for k in range(4)) + "  /*0040*/  BRA `(.L_x_0) ;  /* 0xfffffffc00f87947 */\n")
    assert read_stalls(chain(4))["_Z1kPf"]["fp32"] == 4.0
    assert read_conflicts(chain(4))["_Z1kPf"] == 0.0
    assert read_conflicts(chain(1))["_Z1kPf"] == pytest.approx(0.75)  # 2 cycles after the 1st


def test_loops_larger_than_the_instruction_cache_run_at_the_measured_fetch_rate():
    """``benchmarks/fetch_probe.py``: loops of independent FFMAs, one warp per scheduler, ran
    on the H200's GH100 SMs at 1.04-1.16 cycles per FFMA up to 32 kB, 1.87 at 36 kB and 2.43
    from 40 kB on; the model, reading each loop's size from its SASS, within 8 % of each
    (and of a dependent chain at 4 cycles per FFMA, which fetching does not slow)."""
    from benchmarks import fetch_probe

    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    stored = fetch_probe.stored()["rows"]
    measured = {(r["ffma"], r["chains"]): float(np.median(fetch_probe.cycles_per_ffma(r)))
                for r in stored if r["mode"] == 0 and r["threads"] == 128}
    for key in ((1024, 16), (2048, 16), (2304, 16), (2560, 16), (8192, 16), (3072, 1)):
        assert fetch_probe.predicted(*key, 128) == pytest.approx(measured[key], rel=0.08), key


COLUMNS = r"""
__global__ void columns(const float *a, const float *x, float *y, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int r = 0; r < rows; r++) sum += a[(size_t)r * cols + c] * x[r];
    y[c] = sum;
}
"""


def sass_waits_per_load(cubin: bytes, mangled: str) -> float:
    """The reference: in the SASS of the kernel's largest loop, the waits per ``LDG`` by the
    emulator's rule (an instruction reading a pending load's register waits for all of
    them), over a second pass of the loop, so that loads pending at its back edge count."""
    import re
    import subprocess
    import tempfile

    from cudakit.predict.sass import _FUNCTION, _INSTRUCTION, _parse

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        text = subprocess.run([nvdisasm_path(), "-hex", f.name], capture_output=True,
                              text=True, check=True).stdout
    _, loops = _parse(text)[mangled]
    name, code = None, []  # (opcode, operands) of the kernel, in _parse's order
    for line in text.splitlines():
        function = _FUNCTION.match(line.strip())
        if function:
            name = function.group(1) or function.group(2)
        elif name == mangled and (match := _INSTRUCTION.search(line)):
            code.append(match.groups())
    start, end = max(loops, key=lambda span: span[1] - span[0])
    pending: set = set()
    waits = loads = 0
    for trip in range(2):
        for opcode, operands in code[start:end + 1]:
            registers = re.findall(r"\bR\d+\b", operands)
            if set(registers[1:] if opcode.startswith("LDG") else registers) & pending:
                pending, waits = set(), waits + trip
            if opcode.startswith("LDG"):
                pending.add(registers[0])
                loads += trip
    return waits / loads


def test_a_loops_waits_per_global_load_are_those_of_the_sass():
    """ptxas unrolls a counted loop 4 times beyond the PTX and issues its loads back to back,
    16 registers' worth, before the first use: the emulator's memory periods per global load
    in such a loop (one warp, a long loop) are the SASS's waits per LDG. (The window varies
    with the registers left: in lab 20's ``force1d_register`` ptxas issues 15 loads, then the
    16th after the first use, a wait the H100 hides behind the adds; the model keeps 16.)"""
    from cudakit import emu
    from cudakit.emu.counts import InstructionCounter

    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    cubin = cudakit.compile(COLUMNS, options=["-O3"]).cubin
    module = emu.SourceModule(COLUMNS, no_extern_c=True)
    n = 1024
    x = emu.to_device(np.ones(n * 32, np.float32))
    out = emu.mem_alloc(32 * 4)
    counter = InstructionCounter()
    module.get_function("columns")(x, x, out, np.int32(n), np.int32(32), grid=(1,),
                                   block=(32,), counter=counter)
    emulated = counter.periods / counter.classes["ld.global"]
    assert emulated == pytest.approx(sass_waits_per_load(cubin, "_Z7columnsPKfS0_Pfii"),
                                     rel=0.15)
    # without the unrolling the warp would wait once a PTX pass (4 trips, 8 loads)
    assert emulated < 0.75 / 8


AHEAD_KERNELS = r"""
__global__ void ahead(const float *a, float *out, int steps) {
    __shared__ float tile[256];
    float next = a[threadIdx.x], acc = 0.0f;
    for (int s = 0; s < steps; ++s) {
        tile[threadIdx.x] = next;      // waits for the load of the trip before
        __syncthreads();
        if (s + 1 < steps) next = a[(s + 1) * 256 + threadIdx.x];  // the next trip's
#pragma unroll
        for (int k = 0; k < 64; ++k) acc = fmaf(acc, tile[(threadIdx.x + k) % 256], 1.0f);
        __syncthreads();
    }
    out[threadIdx.x] = acc;
}
__global__ void at_once(const float *a, float *out, int steps) {
    float acc = 0.0f;
    for (int s = 0; s < steps; ++s) acc = fmaf(acc, 0.5f, a[s * 256 + threadIdx.x]);
    out[threadIdx.x] = acc;
}
"""


def test_a_load_for_the_next_trip_is_waited_for_a_loop_body_later():
    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    cubin = cudakit.compile(AHEAD_KERNELS, options=["-O3"]).cubin
    ahead = global_waits(cubin, "_Z5aheadPKfPfi").distances
    at_once = global_waits(cubin, "_Z7at_oncePKfPfi").distances
    # ptxas issues the next trip's load among the multiply-adds, 52 instructions (nvcc
    # 13.0) before the store at the top of the next trip waits for it
    assert ahead and min(ahead) >= 40
    # an unrolled sum uses its loads a few instructions after the first of them
    assert at_once and max(at_once) < 16


def test_a_block_in_step_hides_the_loads_issued_a_body_ahead():
    d = load("H100")
    traffic = Traffic(l2_read_requests=64 * 100, l2_read_bytes=64 * 100 * 128,
                      global_lines=64 * 100)
    # two blocks of 4 warps on the SM: no block waits for the SM's share of the L2 alone
    # (test_a_block_alone_on_its_sm_waits_for_all_its_warps_data)
    x = Launch(classes={"fp32": 64 * 100 * 600, "barrier": 64 * 200}, issued=64 * 100 * 640,
               cycles=64 * 100 * 640, warps=64, periods=64 * 100, shared_periods=0,
               chain_periods=100, chain_shared_periods=0, blocks=16, warps_per_block=4,
               blocks_per_sm=2, traffic=traffic)
    plain, _ = hong_kim(x, d, 8)
    load_ = period_wait(x, d)
    # the loads come back 640 instructions, at least 640 cycles, after they issued
    far = Launch(**{**vars(x), "loads_ahead": GlobalWaits((640,))})
    assert hidden_waits(far, load_) == pytest.approx(100 * load_)
    assert hong_kim(far, d, 8)[0] == pytest.approx(plain - 100 * load_)
    # used at once: nothing hidden; 100 instructions later: 100 cycles of each wait
    near = Launch(**{**vars(x), "loads_ahead": GlobalWaits((0,))})
    assert hong_kim(near, d, 8)[0] == pytest.approx(plain)
    some = Launch(**{**vars(x), "loads_ahead": GlobalWaits((100,))})
    assert hong_kim(some, d, 8)[0] == pytest.approx(plain - 100 * 100)


def test_a_block_in_step_hides_a_load_behind_its_own_instructions_as_measured():
    """``benchmarks/ahead_probe.py`` on an H200 (the H100's SM): a load, D independent FMAs,
    the wait, two barriers; n warps per scheduler. A trip takes max(L - d, 0) + n x D cycles
    (L: the trip without FMAs, d: ptxas's distance from the load to its wait), the rule of
    ``hidden_waits``: the warp's own instructions hide the latency, the other warps' turns do
    not (with them, n x d cycles would hide it: a third off at 8 warps and D = 32)."""
    from benchmarks.ahead_probe import STORED, sass_distances

    stored = json.loads(STORED.read_text())
    clock = stored["sm_clock_khz"] * 1e3
    cycles = {(r["warps"], r["fmas"]): r["ms"] * 1e-3 * clock / stored["trips"]
              for r in stored["rows"]}
    distance = sass_distances()
    for (warps, fmas), measured in cycles.items():
        if fmas > 256:  # ptxas moves the load of the longest trip later (380 of 512)
            continue
        n, latency = warps // 4, cycles[warps, 0]
        own = GlobalWaits((distance[fmas],)).exposed(latency, 1.0) * latency + n * fmas
        assert own == pytest.approx(measured, rel=0.05), (warps, fmas)
    turns = GlobalWaits((distance[32],)).exposed(cycles[32, 0], 8.0) * cycles[32, 0] + 8 * 32
    assert turns < 0.75 * cycles[32, 32]


def test_a_depbar_on_the_loads_scoreboard_is_their_wait():
    def line(address: int, text: str, high: int) -> str:
        return f"  /*{address:04x}*/  {text} ;  /* 0x0000000000000000 */\n" \
               f"                                  /* 0x{high:016x} */\n"

    sets_sb0, plain = 0x000e220000000000, 0x000fe20000000000  # LDG sets SB0; no wait
    text = (".text._Z1kPf:\n.L_x_0:\n" + line(0, "LDG.E R2, desc[UR4][R4.64]", sets_sb0)
            + line(16, "FADD R3, R3, 1", plain) + line(32, "DEPBAR.LE SB0, 0x0", plain)
            + line(48, "FADD R5, R2, R3", plain) + line(64, "BRA `(.L_x_0)", plain))
    assert read_global_waits(text)["_Z1kPf"].distances == (2,)


def test_a_depbar_for_every_copy_group_waits_for_the_oldest_group():
    def line(address: int, text: str) -> str:
        return f"  /*{address:04x}*/  {text} ;  /* 0x0000000000000000 */\n" \
               "                                  /* 0x000fe20000000000 */\n"

    def loop(keep: int) -> str:  # two copies, a commit, three more instructions, the wait
        body = ["LDGSTS.E [R2], desc[UR4][R4.64]", "LDGSTS.E [R3], desc[UR4][R6.64]",
                "LDGDEPBAR", "FADD R3, R3, 1", "FADD R3, R3, 1", "FADD R3, R3, 1",
                f"DEPBAR.LE SB0, 0x{keep}", "BRA `(.L_x_0)"]
        return ".text._Z1kPf:\n.L_x_0:\n" + "".join(line(16 * i, t) for i, t in
                                                    enumerate(body))

    at_once = read_global_waits(loop(0))["_Z1kPf"]
    assert at_once.copies == ((6, 0),) and at_once.distances == ()  # no tensor instructions
    # waiting for all groups but the last: the emulator counts no wait there
    assert read_global_waits(loop(1))["_Z1kPf"].copies == ()


def test_copies_are_hidden_by_the_work_of_the_warps_in_step():
    d = load("H100")
    traffic = Traffic(l2_read_requests=64 * 100, l2_read_bytes=64 * 100 * 128,
                      global_lines=64 * 100)
    x = Launch(classes={"fp32": 64 * 100 * 60, "barrier": 64 * 200}, issued=64 * 100 * 64,
               cycles=64 * 100 * 64, warps=64, periods=64 * 100, shared_periods=0,
               chain_periods=100, chain_shared_periods=0, blocks=16, warps_per_block=4,
               blocks_per_sm=2, traffic=traffic)
    load_ = period_wait(x, d)
    # waited for 40 instructions after it left: a load so waited hides 40 cycles; a copy
    # the other warps' turns too (40 x 8 warps / 4 schedulers), or the tensor cores' time
    # for the 10 HMMAs among them if longer (10 x 8 warps x 3 cycles)
    ldg = Launch(**{**vars(x), "loads_ahead": GlobalWaits((40,))})
    copy = Launch(**{**vars(x), "loads_ahead": GlobalWaits((), copies=((40, 10),))})
    assert hidden_waits(ldg, load_) == pytest.approx(100 * 40)
    assert hidden_waits(copy, load_, turns=2.0) == pytest.approx(100 * 80)
    assert hidden_waits(copy, load_, turns=2.0, per_tensor=24.0) == pytest.approx(100 * 240)
    assert hong_kim(copy, d, 8)[0] < hong_kim(ldg, d, 8)[0]


def test_a_block_alone_on_its_sm_waits_for_all_its_warps_data():
    """A tile loaded, waited for and followed by a barrier: the block goes on once the last
    byte its 8 warps asked for has come, at the SM's share of the L2's bandwidth. Blocks
    sharing an SM drift apart and share it over time instead (the throughput terms)."""
    d = load("H100")
    traffic = Traffic(l2_read_requests=64 * 100 * 4, l2_read_bytes=64 * 100 * 4 * 128,
                      global_lines=64 * 100 * 4)
    alone = Launch(classes={"fp32": 64 * 100 * 60, "barrier": 64 * 200},
                   issued=64 * 100 * 64, cycles=64 * 100 * 64, warps=64, periods=64 * 100,
                   shared_periods=0, chain_periods=100, chain_shared_periods=0, blocks=8,
                   warps_per_block=8, blocks_per_sm=1, traffic=traffic)
    shared = Launch(**{**vars(alone), "warps_per_block": 4, "blocks_per_sm": 2})
    transfer = transfer_cycles(alone, d, 8)  # 8 warps x 512 bytes at the SM's share
    per_clock = d.l2_read_gbs * 1e9 / d.sm_count / d.clock_hz
    assert transfer == pytest.approx(8 * 4 * 128 / per_clock)
    assert hong_kim(alone, d, 8)[0] == pytest.approx(hong_kim(shared, d, 8)[0] + 100 * transfer)


def test_stores_with_a_division_between_them_leave_apart():
    """The particle update's four stores are one straight run in its SASS, so a warp's
    parts of a sector merge; a normalisation's three stores each follow a double division,
    whose slow path is a call behind a branch, and the H200 took them apart (its time was the
    parts merged one by one)."""
    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    from benchmarks.peer_times import FRESH

    for file, kernel, apart in (("eleventh.cu", "particles_step", False),
                                ("double_math.cu", "normalize3", True)):
        compiled = cudakit.compile((FRESH / file).read_text())
        info = next(k for k in compiled.kernels.values() if k.name == kernel)
        assert global_waits(compiled.cubin, info.mangled).stores_apart is apart, kernel
