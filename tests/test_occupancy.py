"""cudakit.occupancy: the textbook's worked examples, input checking, kernels.

The exhaustive comparison with cuda_occupancy.h is in test_occupancy_header.py,
the comparison with the H100's driver in test_occupancy_driver.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import cudakit
from cudakit import occupancy


def test_textbook_figure_6_1_14_calculator_example():
    # 480 threads, 2 registers, 8+16 bytes of shared memory on a Tesla C1060
    r = occupancy.calculate("1.3", 480, 2, 24)
    assert r.active_threads_per_sm == 960
    assert r.active_warps_per_sm == 30
    assert r.active_blocks_per_sm == 2
    assert round(100 * r.occupancy) == 94
    assert r.warps_per_block == 15
    assert r.allocated_registers_per_block == 1024
    assert r.allocated_shared_memory_per_block == 512


def test_textbook_figure_6_1_6_resident_warps_per_block_size():
    # top row of each column: the most warps per SM for 1..16 warps per block
    printed = [8, 16, 24, 32, 30, 30, 28, 32, 27, 30, 22, 24, 26, 28, 30, 32]
    got = [occupancy.calculate((1, 3), 32 * w, 0, 0).active_warps_per_sm for w in range(1, 17)]
    assert got == printed


@pytest.mark.parametrize("regs, blocks", [(16, 2), (17, 1), (32, 1), (33, 0), (60, 0)])
def test_textbook_figure_6_1_10_register_limit_at_512_threads(regs, blocks):
    r = occupancy.calculate("sm_13", 512, regs, 0)
    assert r.active_blocks_per_sm == blocks
    if blocks < 2:
        assert r.limiter == "registers"


@pytest.mark.parametrize("regs, warps", [(1, 30), (16, 30), (17, 15), (20, 15), (32, 15),
                                          (33, 0)])
def test_textbook_figure_6_1_16_register_graph_at_480_threads(regs, warps):
    assert occupancy.calculate("1.3", 480, regs, 24).active_warps_per_sm == warps


def test_tesla_shared_memory_limit_in_512_byte_units():
    assert occupancy.calculate("1.3", 480, 2, 8192).active_blocks_per_sm == 2
    r = occupancy.calculate("1.3", 480, 2, 8193)
    assert (r.active_blocks_per_sm, r.limiter) == (1, "shared_memory")
    assert r.allocated_shared_memory_per_block == 8704
    r = occupancy.calculate("1.3", 64, 2, 16385)
    assert (r.active_blocks_per_sm, r.limiter) == (0, "shared_memory")


def test_hopper_full_and_register_limited():
    r = occupancy.calculate("9.0", 256, 32, 0)
    assert (r.active_blocks_per_sm, r.active_warps_per_sm, r.occupancy) == (8, 64, 1.0)
    assert r.limiter == "warps"
    # 64 regs: 2048 regs per warp, 8 warps per 16K partition, 32 warps per SM
    r = occupancy.calculate("9.0", 256, 64, 0)
    assert (r.active_blocks_per_sm, r.occupancy, r.limiter) == (4, 0.5, "registers")
    assert r.block_limits == {"warps": 8, "registers": 4, "shared_memory": 228,
                              "blocks": 32, "barriers": 64}


def test_shared_memory_above_opt_in_cannot_launch():
    r = occupancy.calculate("sm_90", 128, 32, 227 * 1024 + 1)
    assert r.active_blocks_per_sm == 0
    assert r.limiter == "shared_memory"
    assert r.occupancy == 0.0
    assert occupancy.calculate("sm_90", 128, 32, 227 * 1024).active_blocks_per_sm == 1


def test_carveout_limits_blocks_when_the_preference_is_small():
    # 50 % of 228 KB rounds up to the 132 KB carveout: 132 KB / (16 KB + 1 KB) = 7
    r = occupancy.calculate("9.0", 128, 32, 16 * 1024, shared_memory_carveout=50)
    assert (r.shared_memory_per_sm, r.active_blocks_per_sm) == (132 * 1024, 7)
    assert occupancy.calculate("9.0", 128, 32, 16 * 1024).active_blocks_per_sm == 13


@pytest.mark.parametrize(
    "args, kwargs, field",
    [
        (("9.0", 0, 32, 0), {}, "block_size"),
        (("9.0", 1025, 32, 0), {}, "block_size"),
        (("1.3", 513, 16, 0), {}, "block_size"),
        (("9.0", 128, -1, 0), {}, "registers_per_thread"),
        (("9.0", 128, 256, 0), {}, "registers_per_thread"),
        (("2.0", 128, 64, 0), {}, "registers_per_thread"),
        (("9.0", 128, 32, -4), {}, "shared_memory_per_block"),
        (("9.0", 128.0, 32, 0), {}, "block_size"),
        (("9.0", 128, 32, 0), {"shared_memory_carveout": 101}, "shared_memory_carveout"),
        (("6.1", 128, 32, 0), {"shared_memory_carveout": 50}, "shared_memory_carveout"),
        (("sm_42", 128, 32, 0), {}, "compute_capability"),
        (("9.0", 128), {}, "registers_per_thread"),
    ],
)
def test_bad_input_names_the_field_and_range(args, kwargs, field):
    with pytest.raises(ValueError, match=field):
        occupancy.calculate(*args, **kwargs)


def test_block_size_range_is_named():
    with pytest.raises(ValueError, match=r"block_size = 0 is out of range: allowed 1\.\.1024"):
        occupancy.calculate("9.0", 0, 32, 0)
    with pytest.raises(ValueError, match=r"registers_per_thread = 300 .* 0\.\.255"):
        occupancy.calculate("9.0", 32, 300, 0)
    with pytest.raises(ValueError, match=r"shared_memory_per_block = -4 .* >= 0 bytes"):
        occupancy.calculate("9.0", 32, 30, -4)
    with pytest.raises(ValueError, match=r"shared_memory_carveout = 101 .* 0\.\.100 \(percent\)"):
        occupancy.calculate("9.0", 32, 30, 0, shared_memory_carveout=101)


@dataclass
class StandInInfo:
    name: str = "k"
    arch: str = "sm_86"
    registers: int = 40
    shared_static: int = 4096
    barriers: int = 1


@dataclass
class StandInKernel:
    info: StandInInfo


def test_kernel_objects_supply_arch_registers_and_static_shared_memory():
    info = StandInInfo()
    want = occupancy.calculate("8.6", 256, 40, 4096 + 2048)
    for obj in (info, StandInKernel(info)):
        got = occupancy.calculate(obj, 256, dynamic_shared_memory=2048)
        assert got == want
    assert occupancy.calculate(info, 256, registers_per_thread=80).registers_per_thread == 80
    override = occupancy.calculate(info, 256, shared_memory_per_block=0, dynamic_shared_memory=512)
    assert override.shared_memory_per_block == 512
    with pytest.raises(ValueError, match="dynamic_shared_memory = -1"):
        occupancy.calculate(info, 256, dynamic_shared_memory=-1)


def test_max_potential_block_size_prefers_the_largest_full_block():
    s = occupancy.max_potential_block_size("9.0", 32, 0, sm_count=132)
    assert (s.block_size, s.blocks_per_sm, s.min_grid_size, s.occupancy) == (1024, 2, 264, 1.0)
    # 1 KB per thread of dynamic shared memory: fewer, smaller blocks fit
    s = occupancy.max_potential_block_size("9.0", 32, lambda b: 1024 * b)
    assert s.min_grid_size is None
    assert s.block_size * 1024 + 1024 <= 228 * 1024
    assert s.blocks_per_sm * (s.block_size * 1024 + 1024) <= 228 * 1024


def test_summary_line_names_the_limiter():
    text = str(occupancy.calculate("9.0", 256, 64, 0))
    assert "limited by registers" in text and "32/64 warps" in text


@pytest.mark.slow
def test_real_compiled_kernel_is_accepted():
    src = r"""
    extern "C" __global__ void stage(float *out, const float *in, int n) {
        __shared__ float tile[256];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = i < n ? in[i] : 0.0f;
        __syncthreads();
        if (i < n) out[i] = tile[255 - threadIdx.x] * 2.0f;
    }
    """
    try:
        mod = cudakit.compile(src, arch="sm_90")
    except cudakit.CudakitError as err:  # no nvcc on this machine
        pytest.skip(f"cannot compile: {err}")
    info = mod.kernels["stage"]
    assert info.shared_static == 1024
    r = occupancy.calculate(info, 256)
    assert r.arch.name == "sm_90"
    assert r.shared_memory_per_block == 1024
    assert r == occupancy.calculate("9.0", 256, info.registers, 1024, barriers=info.barriers)
