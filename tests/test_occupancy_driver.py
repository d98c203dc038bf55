"""cudakit.occupancy against the CUDA driver of a real H100.

tools/occupancy-driver-check asked cuOccupancyMaxActiveBlocksPerMultiprocessor
and cuOccupancyMaxPotentialBlockSize about kernels compiled with varied
-maxrregcount, __launch_bounds__, static and dynamic shared memory, named
barriers and carveouts; its answers are stored in
tests/fixtures/occupancy/driver_h100.json (with GPU, driver and CUDA versions).
The CPU test replays them; the GPU test asks the driver live.
"""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from cudakit import arch

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "occupancy-driver-check"
FIXTURE = ROOT / "tests" / "fixtures" / "occupancy" / "driver_h100.json"


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(FIXTURE.read_text())


def test_fixture_says_where_it_was_measured(recorded):
    assert recorded["script"] == "tools/occupancy-driver-check"
    assert "H100" in recorded["gpu"]
    assert recorded["driver_version"] >= 12000
    assert re.search(r"cuda_\d+\.\d+", recorded["cuda"])
    cases = sum(len(k["cases"]) for k in recorded["kernels"])
    assert cases > 1000
    registers = {k["driver_registers"] for k in recorded["kernels"]}
    assert min(registers) < 32 and max(registers) >= 128


def test_calculate_reproduces_every_recorded_driver_answer(recorded):
    compare = runpy.run_path(str(TOOL))["compare"]
    problems = compare(recorded)
    assert not problems, f"{len(problems)} mismatches, e.g. {problems[:5]}"


def test_arch_table_matches_the_device_attributes(recorded):
    a = recorded["device_attributes"]
    spec = arch.get(recorded["arch"])
    assert spec.compute_capability == (a["compute_capability_major"],
                                       a["compute_capability_minor"])
    assert spec.warp_size == a["warp_size"]
    assert spec.max_threads_per_block == a["max_threads_per_block"]
    assert spec.max_threads_per_sm == a["max_threads_per_multiprocessor"]
    assert spec.max_blocks_per_sm == a["max_blocks_per_multiprocessor"]
    assert spec.max_registers_per_block == a["max_registers_per_block"]
    assert spec.registers_per_sm == a["max_registers_per_multiprocessor"]
    assert spec.shared_memory_per_block == a["max_shared_memory_per_block"]
    assert spec.shared_memory_per_block_optin == a["max_shared_memory_per_block_optin"]
    assert spec.shared_memory_per_sm == a["max_shared_memory_per_multiprocessor"]
    assert spec.reserved_shared_memory_per_block == a["reserved_shared_memory_per_block"]
    assert spec.max_block_dim == (a["max_block_dim_x"], a["max_block_dim_y"],
                                  a["max_block_dim_z"])
    assert spec.max_grid_dim == (a["max_grid_dim_x"], a["max_grid_dim_y"], a["max_grid_dim_z"])


@pytest.mark.gpu
def test_live_driver_agrees():
    pytest.importorskip("cuda.bindings.driver")
    run = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
