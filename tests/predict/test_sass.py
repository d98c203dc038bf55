"""The shared-memory waits read from ptxas's schedule (``cudakit.predict.sass``): the reading
rules on listings written by hand, the same waits as ``cuobjdump`` showed on the H100's
machine for the labs' kernels (``benchmarks/fixtures/h100_sass_waits.json``, made by
``benchmarks/sass_loads.py``), and the model's use of them."""

from __future__ import annotations

import json

import pytest

import cudakit
from benchmarks.sass_loads import WAITS, sources
from cudakit.predict import load
from cudakit.predict.model import Launch, shared_wait
from cudakit.predict.sass import SharedWaits, nvdisasm_path, read_waits, shared_waits
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
