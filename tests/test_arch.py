"""cudakit.arch: parsing and the per-architecture facts.

Independent references: the CUDA Programming Guide's compute-capability tables
(copied here as literal numbers, not computed), the textbook's Tesla C1060
(section 6-1), and cuda_occupancy.h itself (see test_occupancy_header.py).
"""

from __future__ import annotations

import pytest

from cudakit import arch


@pytest.mark.parametrize(
    "text, expected",
    [
        ("sm_90", (9, 0)),
        ("SM_90a", (9, 0)),
        ("compute_86", (8, 6)),
        ("9.0", (9, 0)),
        ("90", (9, 0)),
        (90, (9, 0)),
        ((9, 0), (9, 0)),
        ("sm_100", (10, 0)),
        ("sm_121", (12, 1)),
        ("10.3", (10, 3)),
        ("sm_13", (1, 3)),
        ("1.3", (1, 3)),
    ],
)
def test_parse_accepts_the_usual_spellings(text, expected):
    assert arch.parse(text) == expected


@pytest.mark.parametrize("bad", ["", "sm_", "nine", "9", "9.0.1", 9, None, 3.5, (9,)])
def test_parse_rejects_garbage_with_the_allowed_forms(bad):
    with pytest.raises(ValueError, match="compute_capability.*'9.0'.*sm_90"):
        arch.parse(bad)


def test_unknown_capability_names_the_known_ones():
    with pytest.raises(ValueError, match=r"4\.0 is unknown.*1\.3.*9\.0.*12\.1"):
        arch.get("sm_40")


def test_known_covers_every_header_architecture_and_the_old_ones():
    known = set(arch.known())
    header = {(7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9), (9, 0),
              (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)}
    old = {(1, 0), (1, 1), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 5), (5, 0),
           (5, 2), (6, 0), (6, 1)}
    assert header <= known and old <= known
    assert arch.known() == sorted(known)


def test_names_round_trip():
    for cc in arch.known():
        spec = arch.get(cc)
        assert arch.parse(spec.name) == cc
        assert arch.parse(spec.version) == cc
        assert arch.get(spec) is spec


# Programming Guide, "Technical Specifications per Compute Capability":
# (threads/SM, blocks/SM, shared memory/SM KB, opt-in per block KB, regs/SM)
GUIDE = {
    (7, 0): (2048, 32, 96, 96, 65536),
    (7, 5): (1024, 16, 64, 64, 65536),
    (8, 0): (2048, 32, 164, 163, 65536),
    (8, 6): (1536, 16, 100, 99, 65536),
    (8, 9): (1536, 24, 100, 99, 65536),
    (9, 0): (2048, 32, 228, 227, 65536),
    (10, 0): (2048, 32, 228, 227, 65536),
    (12, 0): (1536, 24, 100, 99, 65536),
    (5, 2): (2048, 32, 96, 48, 65536),
    (3, 7): (2048, 16, 112, 48, 131072),
}


@pytest.mark.parametrize("cc", sorted(GUIDE))
def test_limits_match_the_programming_guide(cc):
    threads, blocks, smem_kb, optin_kb, regs = GUIDE[cc]
    spec = arch.get(cc)
    assert spec.max_threads_per_sm == threads
    assert spec.max_warps_per_sm == threads // 32
    assert spec.max_blocks_per_sm == blocks
    assert spec.shared_memory_per_sm == smem_kb * 1024
    assert spec.shared_memory_per_block_optin == optin_kb * 1024
    assert spec.registers_per_sm == regs
    assert spec.shared_memory_per_block == 48 * 1024
    assert spec.reserved_shared_memory_per_block == (1024 if cc[0] >= 8 else 0)
    assert spec.max_threads_per_block == 1024
    assert spec.warp_size == 32


def test_tesla_c1060_as_the_textbook_describes_it():
    spec = arch.get("1.3")
    assert spec.family == "Tesla"
    assert spec.max_threads_per_block == 512
    assert spec.max_blocks_per_sm == 8
    assert spec.max_warps_per_sm == 32
    assert spec.registers_per_sm == 16384
    assert spec.register_allocation_unit == 512
    assert spec.register_allocation_granularity == "block"
    assert spec.warp_allocation_granularity == 2
    assert spec.shared_memory_per_sm == 16384
    assert spec.shared_memory_allocation_unit == 512
    assert spec.shared_memory_banks == 16
    assert spec.max_block_dim == (512, 512, 64)
    assert spec.max_grid_dim == (65535, 65535, 1)


def test_hopper_summary():
    spec = arch.get("sm_90")
    assert spec.family == "Hopper"
    assert spec.register_allocation_granularity == "warp"
    assert spec.register_allocation_unit == 256
    assert spec.shared_memory_allocation_unit == 128
    assert spec.shared_memory_carveouts[-1] == spec.shared_memory_per_sm
    assert spec.fp32_lanes_per_sm == 128
    assert spec.max_barriers_per_sm == 64
    assert spec.max_registers_per_thread == 255
    assert spec.shared_memory_banks == 32
