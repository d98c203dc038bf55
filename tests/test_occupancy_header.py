"""cudakit.occupancy against the installed CUDA's cuda_occupancy.h.

tests/occupancy_harness/harness.cpp is compiled host-only with g++ against the
header and fed thousands of random configurations per architecture; every
answer (active blocks, each limit, the limiting factors, the allocations) must
match. The header knows compute capability 3.0 and newer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cudakit import arch, occupancy

HARNESS = Path(__file__).parent / "occupancy_harness" / "harness.cpp"
CONFIGS_PER_ARCH = 4000
INT_MAX = 2**31 - 1
SM_COUNT = 132


def _cuda_include() -> Path | None:
    candidates = []
    if os.environ.get("CUDA_HOME"):
        candidates.append(Path(os.environ["CUDA_HOME"]) / "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(Path(nvcc).resolve().parent.parent / "include")
    candidates.append(Path("/usr/local/cuda/include"))
    return next((c for c in candidates if (c / "cuda_occupancy.h").is_file()), None)


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    include = _cuda_include()
    if include is None:
        pytest.skip("no cuda_occupancy.h found (set CUDA_HOME or put nvcc on PATH)")
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    exe = tmp_path_factory.mktemp("occ") / "harness"
    subprocess.run(["g++", "-O1", f"-I{include}", str(HARNESS), "-o", str(exe)], check=True)
    return exe


def _device_line(mode: str, spec: arch.ArchSpec) -> str:
    major, minor = spec.compute_capability
    return " ".join(str(v) for v in (
        mode, major, minor, spec.max_threads_per_block, spec.max_threads_per_sm,
        spec.max_registers_per_block, spec.registers_per_sm, spec.shared_memory_per_block,
        spec.shared_memory_per_sm, spec.shared_memory_per_block_optin,
        spec.reserved_shared_memory_per_block, SM_COUNT))


def _ask(exe: Path, mode: str, spec: arch.ArchSpec, rows=()) -> list[list[int]]:
    text = _device_line(mode, spec) + "\n" + "\n".join(" ".join(map(str, r)) for r in rows)
    out = subprocess.run([str(exe)], input=text + "\n", capture_output=True, text=True,
                         check=True).stdout
    return [[int(v) for v in line.split()] for line in out.splitlines()]


HEADER_ARCHS = [cc for cc in arch.known() if cc[0] >= 3]


def _random_configs(spec: arch.ArchSpec, rng: np.random.Generator, n: int) -> dict:
    block = np.where(rng.random(n) < 0.5, 32 * rng.integers(1, 33, n), rng.integers(1, 1025, n))
    regs = rng.integers(0, spec.max_registers_per_thread + 1, n)
    limit = spec.shared_memory_per_block_optin
    smem = np.select(
        [rng.random(n) < 0.2, rng.random(n) < 0.5],
        [0, rng.integers(0, 4096, n)],
        rng.integers(0, limit + 8192, n),
    )
    modern = spec.compute_capability[0] >= 7
    carveout = np.where(modern & (rng.random(n) < 0.5), rng.integers(0, 101, n), -1)
    barriers = np.where(rng.random(n) < 0.7, 1, rng.integers(0, 17, n))
    return dict(block=block, regs=regs, smem=smem, carveout=carveout, barriers=barriers)


@pytest.mark.parametrize("cc", HEADER_ARCHS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
def test_random_configurations_match_the_header(harness, cc):
    spec = arch.get(cc)
    rng = np.random.default_rng(1000 * cc[0] + cc[1])
    c = _random_configs(spec, rng, CONFIGS_PER_ARCH)
    rows = np.stack([c["block"], c["regs"], c["smem"], c["carveout"], c["barriers"]], axis=1)
    ref = np.array(_ask(harness, "occ", spec, rows))
    assert (ref[:, 0] == 0).all(), "the header refused a configuration"

    results = []
    for carve in (None, *range(101)):
        sel = c["carveout"] == (-1 if carve is None else carve)
        if not sel.any():
            continue
        s = occupancy.sweep(spec, c["block"][sel], c["regs"][sel], c["smem"][sel],
                            shared_memory_carveout=carve, barriers=c["barriers"][sel])
        limits = [np.where(s.block_limits[k] == occupancy.UNLIMITED, INT_MAX, s.block_limits[k])
                  for k in ("registers", "shared_memory", "warps", "blocks", "barriers")]
        ours = np.stack([s.active_blocks_per_sm, s.limiting, *limits,
                         s.allocated_registers_per_block,
                         s.allocated_shared_memory_per_block], axis=1)
        theirs = ref[sel][:, 1:].copy()
        # The header's limitingFactors keeps bits set before it applies the barrier
        # limit; compare the factors whose own limit equals the final answer.
        header_limits = theirs[:, [4, 2, 3, 5, 6]]  # in occupancy.LIMITS order
        binding = header_limits == theirs[:, [0]]
        theirs[:, 1] = (binding << np.arange(len(occupancy.LIMITS))).sum(axis=1)
        mismatch = np.flatnonzero((ours != theirs).any(axis=1))
        results.append((rows[sel][mismatch], ours[mismatch], theirs[mismatch]))
    bad = [(r, o, t) for rs, os_, ts in results for r, o, t in zip(rs, os_, ts, strict=True)]
    assert not bad, f"{len(bad)} mismatches, first (config, ours, header): {bad[:3]}"


@pytest.mark.parametrize("cc", HEADER_ARCHS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
def test_architecture_facts_match_the_header(harness, cc):
    spec = arch.get(cc)
    out = _ask(harness, "facts", spec)
    max_blocks, smem_unit, reg_unit, _, partitions = out[0]
    assert spec.max_blocks_per_sm == max_blocks
    assert spec.shared_memory_allocation_unit == smem_unit
    assert spec.register_allocation_unit == reg_unit
    assert spec.register_file_partitions == partitions
    if cc[0] >= 7:
        aligned = {a for _, a in out[1:] if a >= 0}
        assert aligned == set(spec.shared_memory_carveouts)
        assert spec.shared_memory_carveouts[-1] == spec.shared_memory_per_sm


@pytest.mark.parametrize("cc", HEADER_ARCHS, ids=lambda cc: f"sm_{cc[0]}{cc[1]}")
def test_best_block_size_matches_the_header(harness, cc):
    spec = arch.get(cc)
    rng = np.random.default_rng(7 + cc[0] * 10 + cc[1])
    n = 60
    regs = rng.integers(0, spec.max_registers_per_thread + 1, n)
    kind = rng.integers(0, 2, n)
    smem = np.where(kind == 0, rng.integers(0, spec.shared_memory_per_block_optin, n),
                    rng.integers(0, 200, n))
    max_threads = np.where(rng.random(n) < 0.7, 1024, rng.integers(1, 1025, n))
    carveout = np.where((cc[0] >= 7) & (rng.random(n) < 0.3), rng.integers(0, 101, n), -1)
    barriers = np.ones(n, dtype=np.int64)
    ref = np.array(_ask(harness, "best", spec, np.stack([regs, kind, smem, max_threads, carveout,
                                                barriers], axis=1)))
    for i in range(n):
        per_thread = int(smem[i])
        amount = (lambda b, p=per_thread: p * b) if kind[i] else int(smem[i])
        got = occupancy.max_potential_block_size(
            spec, int(regs[i]), amount, max_block_size=int(max_threads[i]), sm_count=SM_COUNT,
            shared_memory_carveout=None if carveout[i] < 0 else int(carveout[i]))
        assert ref[i, 0] == 0
        assert (got.min_grid_size, got.block_size) == (ref[i, 1], ref[i, 2]), (
            f"config {i}: regs {regs[i]}, smem kind {kind[i]} {smem[i]}, "
            f"max {max_threads[i]}, carveout {carveout[i]}")
