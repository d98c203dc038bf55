"""Instruction classes and memory periods counted by the emulator, against counts that follow
from each kernel's source (k FMAs per thread -> k x warps FP32 warp instructions, ...)."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu
from cudakit.emu.counts import (
    DEPENDENT,
    EXPANSION_LATENCY,
    PTXAS_UNROLL,
    SFU_FTZ,
    SFU_SINCOS,
    SLOW_PATH,
    InstructionCounter,
    instruction_class,
)
from cudakit.predict.sass import nvdisasm_path

from .conftest import SOURCE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def module():
    return emu.SourceModule(SOURCE, no_extern_c=True)


def run(module, name, *args, grid, block):
    counter = InstructionCounter()
    module.get_function(name)(*args, grid=grid, block=block, counter=counter)
    return counter


def test_fma_loop_counts_k_per_warp(module):
    k, grid, block = 37, (4,), (128,)
    a = emu.to_device(np.ones(512, np.float32))
    b = emu.mem_alloc(512 * 4)
    c = run(module, "fma_loop", a, b, np.int32(k), grid=grid, block=block)
    warps = 4 * 128 // 32
    assert c.warps == warps
    assert c.classes["fp32"] == k * warps
    assert c.classes["ld.global"] == warps and c.classes["st.global"] == warps
    assert c.classes["sfu"] == 0 and c.classes["barrier"] == 0
    assert c.ops == c.counts.sum() - c.classes["free"]


def test_a_warp_with_no_active_lane_issues_nothing(module):
    k = 11
    b = emu.mem_alloc(256 * 4)
    c = run(module, "fma_half", b, np.int32(k), grid=(2,), block=(128,))
    # per block: warps 0, 2 and 3 run the loop (warp 1 has no active lane there);
    # the float conversion of i is not an FMA; only warps 0 and 1 store
    assert c.classes["fp32"] == k * 3 * 2
    assert c.classes["st.global"] == 2 * 2


def test_sfu_and_barriers(module):
    b = emu.mem_alloc(512 * 4)
    c = run(module, "sines", b, np.int32(9), grid=(2,), block=(256,))
    assert c.classes["sfu"] == 9 * 16
    c = run(module, "barriers", b, np.int32(5), grid=(2,), block=(256,))
    assert c.classes["barrier"] == (2 * 5 + 1) * 16
    assert c.classes["ld.shared"] == (5 * 2 + 1) * 16  # v and s[t] per iteration, s[t] after


def test_independent_loads_are_one_memory_period(module):
    n = 256
    a = emu.to_device(np.ones(4 * n, np.float32))
    b = emu.mem_alloc(n * 4)
    c = run(module, "four_loads", a, b, np.int32(n), grid=(2,), block=(128,))
    assert c.warps == 8 and c.periods == 8


def test_a_warp_waits_again_once_its_loads_fill_the_window(module):
    # 24 independent loads: one period if ptxas issues them all before the first use, two
    # when it issues 16 registers' worth first (the window read from the SASS)
    n = 256
    a = emu.to_device(np.ones(24 * n, np.float32))
    b = emu.mem_alloc(n * 4)
    for window, periods in ((32, 1), (16, 2), (8, 3)):
        counter = InstructionCounter(window)
        module.get_function("many_loads")(a, b, np.int32(n), grid=(2,), block=(128,),
                                          counter=counter)
        assert counter.periods == periods * counter.warps, window


def test_dependent_loads_are_one_period_each(module):
    nxt = emu.to_device(np.roll(np.arange(64, dtype=np.int32), -1))
    out = emu.mem_alloc(64 * 4)
    c = run(module, "chain", nxt, out, np.int32(4), grid=(1,), block=(64,))
    assert c.warps == 2 and c.periods == 4 * 2


def test_a_block_waits_for_its_slowest_warp(module):
    nxt = emu.to_device(np.roll(np.arange(128, dtype=np.int32), -1))
    out = emu.mem_alloc(2 * 128 * 4)
    c = run(module, "uneven", nxt, out, grid=(2,), block=(128,))
    assert c.periods == 2 * (3 + 1 + 1 + 1)
    assert c.slowest == (3.0, 0.0) and c.blocks == 2


def test_blocks_of_a_batch_on_different_paths_keep_their_own_waits(module):
    # one batch of two blocks: block 0 chases two pointers and enters the last line with a
    # load pending (it waits once in its loop, then for q, then for its store's data),
    # block 1 skips the loop (it waits only for its store's data)
    nxt = emu.to_device(np.roll(np.arange(64, dtype=np.int32), -1))
    out = emu.mem_alloc(2 * 64 * 4)
    c = run(module, "block_paths", nxt, out, np.int32(2), grid=(2,), block=(64,))
    assert c.warps == 4 and c.periods == 2 * 3 + 2 * 1
    assert c.slowest == (2.0, 0.0)


def test_a_shared_wait_does_not_end_a_global_one(module):
    # a global and a shared load in flight; the first reader reads only the shared value:
    # its wait (tens of cycles) says nothing of the global load, which is waited for later
    a = emu.to_device(np.ones(128, np.float32))
    b = emu.mem_alloc(128 * 4)
    c = run(module, "mixed_waits", a, b, grid=(1,), block=(128,))
    assert c.warps == 4 and c.shared_periods == 4 and c.periods == 4


def test_a_guarded_second_load_is_in_flight_with_the_first(module):
    # `sum += a[i]; if (i + 32 < n) sum += a[i + 32];` ptxas predicates the guarded block and
    # issues its load, with its address arithmetic, beside the first: one wait a trip, not two
    a = emu.to_device(np.ones(512, np.int32))
    out = emu.mem_alloc(32 * 4)
    c = run(module, "guarded_pair", a, out, np.uint32(512), grid=(1,), block=(32,))
    assert c.warps == 1 and c.periods == 512 // 64


@pytest.mark.parametrize("cols", [128, 100, 102])
def test_lanes_of_two_paths_wait_once_for_their_loads(module, cols):
    # a float4 load where aligned and inside, four guarded loads elsewhere; at cols = 100
    # the warp splits, and the second path zeroes and copies registers the first path's
    # lanes are loading. Each thread's value comes from one path: ptxas waits once a trip,
    # where the paths meet (nvdisasm: both paths' LDGs set one scoreboard, waited on once)
    a = emu.to_device(np.ones(128 * 8, np.float32))
    out = emu.mem_alloc(32 * 4)
    c = run(module, "split_paths", a, out, np.int32(cols), np.int32(8), grid=(1,), block=(32,))
    assert c.warps == 1 and c.periods == 8
    assert np.allclose(emu.from_device(out, (32,), np.float32),
                       [min(4, max(0, cols - 4 * t)) * 8 for t in range(32)])


def test_a_guarded_copy_waits_once_per_warp(module):
    a = emu.to_device(np.ones(1000, np.float32))
    b = emu.mem_alloc(1000 * 4)
    c = run(module, "copy", a, b, np.int32(1000), grid=(4,), block=(256,))
    assert c.warps == 32 and c.periods == 32


def test_guarded_loads_into_shared_memory_overlap(module):
    # if (i + k * 128 < n) v = a[...]; t[k][i] = v;  four times: ptxas predicates the guarded
    # loads and issues all four before the stores, so a warp waits once, then for t[...]
    a = emu.to_device(np.ones(512, np.float32))
    b = emu.mem_alloc(128 * 4)
    c = run(module, "guarded_tile", a, b, np.int32(500), grid=(1,), block=(128,))
    assert c.warps == 4 and c.periods == 4 and c.shared_periods == 4


def test_an_integer_remainder_costs_what_ptxas_expands_it_into(module):
    # sm_90 has no integer divide: a 32-bit unsigned % is 16 SASS instructions, one MUFU.RCP
    # among them (the .text of such a kernel is 16 instructions longer than with an add)
    a = emu.to_device(np.arange(256, dtype=np.uint32))
    c = run(module, "modulo", a, np.uint32(7), grid=(2,), block=(128,))
    assert c.classes["sfu"] == 8
    assert c.classes["int"] + c.classes["imad"] >= 15 * 8


def test_a_chain_of_ieee_divisions_waits_for_the_measured_latency(module):
    # div.rn.f32 is MUFU.RCP and FFMA steps in SASS (and a check beside them), each step
    # needing the previous one: the next division starts 44 cycles after the last (H100)
    k = 256
    a = emu.to_device(np.ones(32, np.float32))
    b = emu.mem_alloc(32 * 4)
    c = run(module, "div_chain", a, b, np.int32(k), grid=(1,), block=(32,))
    latency = EXPANSION_LATENCY[("div", "f32")]
    assert c.classes["sfu"] == k and c.classes["fp32"] >= 6 * k
    assert latency * k <= c.cycles <= latency * k + c.ops


def test_latencies_are_the_h100_measurements():
    # the constants of cudakit.emu.counts are what benchmarks/microbench.py measured on the
    # H100 (cudakit/predict/devices/h100.measured.json), rounded
    measured = json.loads((resources.files("cudakit.predict") / "devices" /
                           "h100.measured.json").read_text())
    pairs = {"sfu_latency_cycles": DEPENDENT["sfu"], "sfu_ftz_latency_cycles": SFU_FTZ,
             "div_f32_latency_cycles": EXPANSION_LATENCY[("div", "f32")],
             "rcp_f32_latency_cycles": EXPANSION_LATENCY[("rcp", "f32")],
             "sqrt_f32_latency_cycles": EXPANSION_LATENCY[("sqrt", "f32")] + 4,  # and an add
             "div_s32_latency_cycles": EXPANSION_LATENCY[("div", "s32")],
             "div_u32_latency_cycles": EXPANSION_LATENCY[("div", "u32")],
             "fp64_latency_cycles": DEPENDENT["fp64"]}
    for key, constant in pairs.items():
        assert abs(measured[key] - constant) <= 1, key
    assert 4 <= measured["fp32_latency_cycles"] <= 5  # 4 and a loop's overhead per 8


def test_shuffle_and_sine_latencies_are_the_h100_chains():
    # benchmarks/stall_chains.py: 8 dependent steps a trip, one warp per scheduler; a step of
    # the shuffle chain is a shuffle and an FADD, of the sine chain one __sinf
    chains = {c["kernel"]: c["cycles_per_trip"] / 8 for c in json.loads(
        (ROOT / "benchmarks" / "fixtures" / "h100_stall_chains.json").read_text())["chains"]}
    assert abs(chains["shfl_chain"] - chains["fadd_chain"] - DEPENDENT["shfl"]) <= 1
    assert abs(chains["sin_chain"] - SFU_SINCOS) <= 1


def test_classes_of_opcodes():
    assert instruction_class("fma.rn.f64") == "fp64"
    assert instruction_class("mul.wide.s32") == "imad"
    assert instruction_class("rsqrt.approx.f32") == "sfu"
    assert instruction_class("cvt.rn.f32.s32") == "cvt"
    assert instruction_class("shfl.sync.down.b32") == "shfl"
    assert instruction_class("atom.shared.add.u32") == "atom.shared"
    assert instruction_class("bar.sync") == "barrier"
    assert instruction_class("bar.warp.sync") == "misc"
    assert instruction_class("mov.u32", ["%r1", "%tid.x"]) == "int"
    assert instruction_class("mov.f32", ["%f1", "%f2"]) == "free"


def test_a_dependent_fma_chain_takes_four_cycles_a_step(module):
    # x = fmaf(x, ...) k times: each FMA needs the previous result, 4 cycles after its issue
    # (Volta's dependent-issue latency), so a warp needs at least 4k cycles; the loop's own
    # instructions (counter, compare, branch) issue in the FMAs' shadow or add a few cycles
    k, grid, block = 1024, (1,), (32,)
    a = emu.to_device(np.ones(32, np.float32))
    b = emu.mem_alloc(32 * 4)
    c = run(module, "fma_loop", a, b, np.int32(k), grid=grid, block=block)
    assert c.classes["fp32"] == k
    assert 4 * k <= c.cycles <= 4 * k + c.ops
    # sixteen independent chains would issue in about one cycle each: here ops << cycles
    assert c.ops < 0.5 * c.cycles


def test_independent_chains_written_one_after_the_other_issue_interleaved(module):
    # four accumulators, each stepped four times in a row (as sgemm_async's `acc[i][j] +=` for
    # four k): in PTX order each chain would wait 4 cycles a step (about 52 cycles a trip);
    # ptxas interleaves the chains, so the 16 FMAs of a trip issue in about 16 cycles
    k = 64
    a = emu.to_device(np.ones(64, np.float32))
    b = emu.mem_alloc(32 * 4)
    c = run(module, "four_chains", a, b, np.int32(k), grid=(1,), block=(32,))
    assert c.classes["fp32"] >= 16 * k
    assert 16 * k <= c.cycles <= 1.25 * 16 * k + c.ops - c.classes["fp32"]


def test_a_counted_loop_pays_its_control_once_per_ptxas_unroll(module):
    # `sines` steps j by a constant: NVVM unrolls it 4x in PTX (nvcc 13.0) and ptxas 4x more
    # (nvdisasm: lab 08's FMA loop and lab 20's force1d), so 64 more sines add 64 / 4 PTX
    # trips whose add, compare and branch count once per 4 of them
    b = emu.mem_alloc(32 * 4)
    c64 = run(module, "sines", b, np.int32(64), grid=(1,), block=(32,))
    c128 = run(module, "sines", b, np.int32(128), grid=(1,), block=(32,))
    trips = (c128.classes["sfu"] - c64.classes["sfu"]) // 4
    assert trips == 16
    assert c128.classes["branch"] - c64.classes["branch"] == trips / PTXAS_UNROLL
    assert c128.classes["int"] - c64.classes["int"] == 2 * trips / PTXAS_UNROLL
    # `#pragma unroll 1` puts `.pragma "nounroll"` in the PTX: ptxas keeps it rolled
    r64 = run(module, "rolled_sines", b, np.int32(64), grid=(1,), block=(32,))
    r128 = run(module, "rolled_sines", b, np.int32(128), grid=(1,), block=(32,))
    assert r128.classes["branch"] - r64.classes["branch"] == 64
    # `grid_sum` steps by gridDim.x * blockDim.x, a register: not unrolled, paid every trip
    n = 32 * 64
    a = emu.to_device(np.ones(n, np.float32))
    out = emu.mem_alloc(32 * 4)
    g = run(module, "grid_sum", a, out, np.int32(n), grid=(1,), block=(32,))
    assert 64 <= g.classes["branch"] <= 64 + 4  # one per trip, and the few outside the loop


def test_half_and_bfloat16_conversions_are_alu_work():
    assert instruction_class("cvt.rn.bf16.f32") == instruction_class("cvt.f32.bf16") == "int"
    assert instruction_class("cvt.rn.f16.f32") == instruction_class("cvt.rn.bf16x2.f32") == "int"
    assert instruction_class("cvt.rn.f16.s32") == instruction_class("cvt.f64.f32") == "cvt"


ASYNC_COPIES = r"""
// a tile of 256 floats per block copied to shared memory by cp.async, `trips` times; the
// copies are waited for at once (wait_group 0) or a trip later (wait_group 1)
template <int LAG>
__global__ void copies(const float *a, float *out, int trips)
{
    __shared__ __align__(16) float tile[2][256];
    float sum = 0.0f;
    for (int s = 0; s < trips; ++s) {
        unsigned to = (unsigned)__cvta_generic_to_shared(&tile[s % 2][threadIdx.x]);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;"
                     :: "r"(to), "l"(a + s * 256 + threadIdx.x));
        asm volatile("cp.async.commit_group;");
        asm volatile("cp.async.wait_group %0;" :: "n"(LAG));
        __syncthreads();
        sum += tile[(s + 1) % 2][255 - threadIdx.x];
        __syncthreads();
    }
    out[threadIdx.x] = sum;
}
template __global__ void copies<0>(const float *, float *, int);
template __global__ void copies<1>(const float *, float *, int);
"""


def test_an_async_copy_waited_for_at_once_is_a_memory_period():
    m = emu.SourceModule(ASYNC_COPIES, no_extern_c=True)
    a = emu.to_device(np.ones(256 * 8, np.float32))
    out = emu.mem_alloc(256 * 4)
    at_once, later = (run(m, f"copies<{lag}>", a, out, np.int32(8), grid=(1,), block=(256,))
                      for lag in (0, 1))
    assert at_once.classes["ld.global"] == later.classes["ld.global"] == 8 * 8
    # wait_group 0 waits for the copy of this trip: one wait per trip and warp; wait_group 1
    # for the one a trip (and a barrier) earlier, taken as arrived
    assert at_once.periods == 8 * 8
    assert later.periods == 0


DOUBLE = r"""
extern "C" __global__ void ddiv(double *a, double b) { a[threadIdx.x] = a[threadIdx.x] / b; }
extern "C" __global__ void drcp(double *a) { a[threadIdx.x] = 1.0 / a[threadIdx.x]; }
extern "C" __global__ void dsqrt(double *a) { a[threadIdx.x] = sqrt(a[threadIdx.x]); }
"""


def _fast_path(listing: str, name: str) -> Counter:
    """Opcodes of kernel ``name``'s SASS up to its first EXIT: the operation's fast path
    (the slow path is a call to code after the EXIT)."""
    body = listing.split(f".text.{name}:")[1].split("EXIT")[0]
    return Counter(re.findall(r"\*/\s+(?:@!?P\w+\s+)?([A-Z][A-Z0-9]*)", body))


@pytest.mark.parametrize("name,args", [("ddiv", (np.float64(3.0),)), ("drcp", ()),
                                       ("dsqrt", ())])
def test_double_division_and_square_root_cost_the_sass_of_their_fast_path(name, args, tmp_path):
    # nvdisasm's listing of the same cubin is the reference: its double-precision
    # instructions (DFMA, DMUL, DADD) and MUFU before the EXIT, one operation per thread
    assert nvdisasm_path(), "nvdisasm missing: tools/setup-venv installs nvidia-cuda-nvdisasm"
    module = emu.SourceModule(DOUBLE, no_extern_c=True)
    cubin = tmp_path / "double.cubin"
    cubin.write_bytes(module.program.compiled.cubin)
    listing = subprocess.run([nvdisasm_path(), str(cubin)], capture_output=True, text=True,
                             check=True).stdout
    sass = _fast_path(listing, name)
    a = emu.to_device(np.linspace(1.0, 2.0, 64))
    c = run(module, name, a, *args, grid=(1,), block=(64,))
    assert c.classes["fp64"] == 2 * sum(n for op, n in sass.items() if op.startswith("D"))
    assert c.classes["sfu"] == 2 * sass["MUFU"] == 2 and c.slow_paths == 0


def test_a_zero_numerator_takes_the_slow_path_of_double_division():
    module = emu.SourceModule(DOUBLE, no_extern_c=True)
    a = np.linspace(1.0, 2.0, 96)
    a[40] = 0.0  # one lane of the second warp
    c = run(module, "ddiv", emu.to_device(a), np.float64(3.0), grid=(1,), block=(96,))
    assert c.slow_paths == 1
    assert c.classes["fp64"] == 3 * 8 + SLOW_PATH[("div", "f64")]["fp64"]


def test_curand_mrg_init_takes_the_slow_path_as_often_as_nsight_compute_counted():
    # pi_mrg (benchmarks/fresh/monte_carlo.cu) on the H200: 22,086,265 calls of the division's
    # slow path over 32,768 warps, all in curand_init (fixtures/h200_monte_carlo_opcodes.json);
    # the emulator, one block at each end of the grid and one trial each
    from benchmarks import ncu_opcodes

    stored = json.loads(ncu_opcodes.FIXTURE.read_text())["kernels"]["pi_mrg"]
    module = emu.SourceModule((ROOT / "benchmarks" / "fresh" / "monte_carlo.cu").read_text(),
                              no_extern_c=True)
    hits = emu.mem_alloc(4 << 20)
    for block in (0, 4095):
        c = InstructionCounter()
        module.get_function("pi_mrg")(np.uint64(1), np.int32(1), hits, grid=(4096,),
                                      block=(256,), counter=c, blocks=[(block, 1)])
        assert c.slow_paths / c.warps == pytest.approx(stored["calls"] / 32768, abs=10)


def test_double_and_64_bit_division_latencies_are_the_h200_measurements():
    measured = json.loads((resources.files("cudakit.predict") / "devices" /
                           "h200.measured.json").read_text())
    assert abs(measured["div_f64_latency_cycles"] - EXPANSION_LATENCY[("div", "f64")]) <= 1
    assert abs(measured["rcp_f64_latency_cycles"] - EXPANSION_LATENCY[("rcp", "f64")]) <= 1
    assert abs(measured["sqrt_f64_latency_cycles"] - 8 - EXPANSION_LATENCY[("sqrt", "f64")]) <= 1
    assert abs(measured["div_u64_latency_cycles"] - EXPANSION_LATENCY[("rem", "u64")]) <= 1
    # the SMs are the H100's: the latencies both measured agree
    h100 = json.loads((resources.files("cudakit.predict") / "devices" /
                       "h100.measured.json").read_text())
    assert abs(h100["div_f32_latency_cycles"] - measured["div_f32_latency_cycles"]) < 0.01


@pytest.mark.parametrize("kernel", ["kepler", "normalize3", "term_frequency", "bucket_of"])
def test_slow_paths_and_instructions_per_warp_are_what_nsight_compute_counted(kernel):
    # the eighth held-out batch (benchmarks/fresh/double_math.cu) on the H200: calls per warp
    # (of the double division's slow path: Newton's residual reaching zero in kepler, a zero
    # count in term_frequency; of the 64-bit remainder's routine in bucket_of, every one of its
    # 16 hashes, which the emulator counts as the remainder's expansion) and warp instructions
    # per warp (fixtures/h200_eighth_batch_opcodes.json); the emulator, 16 blocks over the grid
    from benchmarks import ncu_opcodes, peer_times

    launch = next(x for x in peer_times.EIGHTH if x.kernel == kernel)
    stored = json.loads(ncu_opcodes.EIGHTH_FIXTURE.read_text())["kernels"][kernel]
    warps = np.prod(launch.grid) * np.prod(launch.block) / 32
    module = emu.SourceModule(launch.source, no_extern_c=True)
    args = [emu.to_device(a) if isinstance(a, np.ndarray) else a
            for a in launch.inputs(np.random.default_rng(5))]
    c = InstructionCounter()
    blocks = [(int(b), 1) for b in np.linspace(0, np.prod(launch.grid) - 1, 16)]
    module.get_function(kernel)(*args, grid=launch.grid, block=launch.block, counter=c,
                                blocks=blocks)
    calls = c.slow_paths if kernel != "bucket_of" else c.classes["cvt"] / 2  # I2F and F2I
    assert calls / c.warps == pytest.approx(stored["calls"] / warps, abs=0.05)
    assert c.ops / c.warps == pytest.approx(stored["total"] / warps, rel=0.1)

