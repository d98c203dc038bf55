"""The device kernels run on: the real GPU, or the emulator's model of one.

>>> info = device_info()  # doctest: +SKIP
>>> info.name, info.compute_capability  # doctest: +SKIP
('NVIDIA H100 80GB HBM3', (9, 0))
"""

from __future__ import annotations

from dataclasses import dataclass

from . import arch


@dataclass
class DeviceInfo:
    """What ``%cuda_device`` shows. Bandwidth is the theoretical peak from clock and bus width."""

    name: str
    compute_capability: tuple[int, int]
    multiprocessors: int
    memory_bytes: int | None
    memory_clock_khz: int | None
    memory_bus_width_bits: int | None
    sm_clock_khz: int | None
    l2_cache_bytes: int | None
    shared_memory_per_sm: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    registers_per_sm: int
    max_threads_per_sm: int
    emulated: bool

    @property
    def peak_bandwidth_gbs(self) -> float | None:
        """2 transfers per memory clock (DDR) x bus width in bytes, in GB/s."""
        if not self.memory_clock_khz or not self.memory_bus_width_bits:
            return None
        return 2 * self.memory_clock_khz * 1e3 * self.memory_bus_width_bits / 8 / 1e9

    def rows(self) -> list[tuple[str, str]]:
        def size(n):
            return (
                "n/a" if n is None else f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n // 1024} KB"
            )

        peak = self.peak_bandwidth_gbs
        return [
            ("name", self.name + (" (emulated on the CPU)" if self.emulated else "")),
            ("compute capability", "{}.{}".format(*self.compute_capability)),
            ("multiprocessors (SMs)", str(self.multiprocessors)),
            ("memory", size(self.memory_bytes)),
            (
                "peak memory bandwidth",
                "n/a"
                if peak is None
                else f"{peak:.0f} GB/s "
                f"({self.memory_clock_khz / 1e3:.0f} MHz x {self.memory_bus_width_bits} bit x 2)",
            ),
            ("SM clock", "n/a" if not self.sm_clock_khz else f"{self.sm_clock_khz / 1e3:.0f} MHz"),
            ("L2 cache", size(self.l2_cache_bytes)),
            ("shared memory per SM", size(self.shared_memory_per_sm)),
            (
                "shared memory per block",
                f"{size(self.shared_memory_per_block)} "
                f"(opt-in up to {size(self.shared_memory_per_block_optin)})",
            ),
            ("registers per SM", str(self.registers_per_sm)),
            ("max threads per SM", str(self.max_threads_per_sm)),
        ]

    def __str__(self) -> str:
        width = max(len(k) for k, _ in self.rows())
        return "\n".join(f"{k:<{width}}  {v}" for k, v in self.rows())


def device_info() -> DeviceInfo:
    """The device of the current engine (see :mod:`cudakit.backend`)."""
    from .backend import on_gpu

    return _gpu_info() if on_gpu() else emulated_info()


def emulated_info(compute_capability="sm_90") -> DeviceInfo:
    """The emulator's device: an architecture's limits with no clocks or memory size."""
    spec = arch.get(compute_capability)
    return DeviceInfo(
        name=f"cudakit emulator of an {spec.name} GPU",
        compute_capability=spec.compute_capability,
        multiprocessors=1,
        memory_bytes=None,
        memory_clock_khz=None,
        memory_bus_width_bits=None,
        sm_clock_khz=None,
        l2_cache_bytes=None,
        shared_memory_per_sm=spec.shared_memory_per_sm,
        shared_memory_per_block=spec.shared_memory_per_block,
        shared_memory_per_block_optin=spec.shared_memory_per_block_optin,
        registers_per_sm=spec.registers_per_sm,
        max_threads_per_sm=spec.max_threads_per_sm,
        emulated=True,
    )


def _gpu_info() -> DeviceInfo:
    import pycuda.driver as drv

    from .gpu import context, device

    context()
    dev = device()
    attrs = dev.get_attributes()
    a = drv.device_attribute

    def get(name):
        return attrs.get(getattr(a, name, None))

    return DeviceInfo(
        name=dev.name(),
        compute_capability=tuple(dev.compute_capability()),
        multiprocessors=get("MULTIPROCESSOR_COUNT"),
        memory_bytes=dev.total_memory(),
        memory_clock_khz=get("MEMORY_CLOCK_RATE"),
        memory_bus_width_bits=get("GLOBAL_MEMORY_BUS_WIDTH"),
        sm_clock_khz=get("CLOCK_RATE"),
        l2_cache_bytes=get("L2_CACHE_SIZE"),
        shared_memory_per_sm=get("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        shared_memory_per_block=get("MAX_SHARED_MEMORY_PER_BLOCK"),
        shared_memory_per_block_optin=get("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        registers_per_sm=get("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        max_threads_per_sm=get("MAX_THREADS_PER_MULTIPROCESSOR"),
        emulated=False,
    )
