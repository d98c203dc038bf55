"""Host-device transfers, launch overhead and the CPU-or-GPU crossover, on a real GPU.

Measures what labs 06-08 teach (textbook 5-5 and 6-2, the SPRAT paper), with the kernels read
from the labs' ``%%cuda`` cells:

* host-to-device and device-to-host bandwidth over sizes, pageable and pinned, with a fitted
  ``latency + size / bandwidth`` model per curve;
* the link's peak per direction: the best of a 1 GB pinned copy, a copy kernel that reads or writes
  mapped (zero-copy) pinned host memory, and both directions at once;
* empty-kernel launch cost (back to back, and launch + synchronise);
* SAXPY on NumPy against the GPU including copies from 1 KB to 1 GB, the model's predicted
  crossover and the measured one.

Run on the GPU machine (PyCUDA needed)::

    python -m benchmarks.transfers --out results/

>>> fit_latency_bandwidth([1e3, 1e6, 1e9], [0.01 + d / 25e6 for d in (1e3, 1e6, 1e9)])
(0.01, 25.0)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from cudakit.timing import crossover, fit_latency_bandwidth

from .common import cuda_cells, environment_line, markdown_table

# the kernels this script borrows, by lab
LAB_KERNELS = {"08_streams.ipynb": ("copy4",), "06_speedup.ipynb": ("empty",),
               "07_cpu_or_gpu.ipynb": ("saxpy",)}

KB, MB, GB = 1 << 10, 1 << 20, 1 << 30


class Gpu:
    """A PyCUDA context with mapped host memory enabled, and event timing."""

    def __init__(self):
        import pycuda.driver as drv

        drv.init()
        self.drv = drv
        self.ctx = drv.Device(0).make_context(drv.ctx_flags.MAP_HOST)

    def close(self) -> None:
        self.ctx.pop()

    def module(self, source: str):
        from pycuda.compiler import SourceModule

        return SourceModule(source, options=["-lineinfo"])

    def time_ms(self, fn: Callable[[], object], repeat: int = 10, warmup: int = 2,
                stream=None) -> float:
        """Median of ``repeat`` event-timed runs of fn (after ``warmup`` untimed runs)."""
        for _ in range(warmup):
            fn()
        start, stop = self.drv.Event(), self.drv.Event()
        samples = []
        for _ in range(repeat):
            start.record(stream)
            fn()
            stop.record(stream)
            stop.synchronize()
            samples.append(stop.time_since(start))
        return float(np.median(samples))


def repeats_for(nbytes: int) -> int:
    return 5 if nbytes >= 256 * MB else 20


def copy_sweep(gpu: Gpu, sizes: list[int]) -> dict[str, list[float]]:
    """Median ms per copy for {h2d,d2h} x {pageable,pinned} over sizes."""
    drv = gpu.drv
    top = sizes[-1] // 4
    pageable = np.random.default_rng(0).random(top, dtype=np.float32)
    pinned = drv.pagelocked_empty(top, np.float32)
    pinned[:] = pageable
    device = drv.mem_alloc(top * 4)
    out: dict[str, list[float]] = {}
    for kind, host in (("pageable", pageable), ("pinned", pinned)):
        out[f"h2d {kind}"] = [gpu.time_ms(lambda v=host[: d // 4]: drv.memcpy_htod(device, v),
                                          repeat=repeats_for(d)) for d in sizes]
        out[f"d2h {kind}"] = [gpu.time_ms(lambda v=host[: d // 4]: drv.memcpy_dtoh(v, device),
                                          repeat=repeats_for(d)) for d in sizes]
    check = np.empty_like(pageable)
    drv.memcpy_dtoh(check, device)
    if not np.array_equal(check, pageable):
        raise RuntimeError("device buffer does not hold what was copied")
    device.free()
    return out


def link_peak(gpu: Gpu, copy4, nbytes: int = GB) -> dict[str, float]:
    """GB/s per direction: pinned copies, zero-copy kernel over mapped memory, both at once."""
    drv = gpu.drv
    n4 = nbytes // 16
    mapped = drv.pagelocked_empty(n4 * 4, np.float32, mem_flags=drv.host_alloc_flags.DEVICEMAP)
    mapped[:] = np.random.default_rng(1).random(mapped.size, dtype=np.float32)
    host_ptr = np.intp(mapped.base.get_device_pointer())
    device = drv.mem_alloc(nbytes)
    other = drv.mem_alloc(nbytes)
    pinned_b = drv.pagelocked_empty(n4 * 4, np.float32)
    grid, block = (132 * 8, 1), (256, 1, 1)
    res = {
        "h2d pinned copy": nbytes / gpu.time_ms(lambda: drv.memcpy_htod(device, mapped), 5) / 1e6,
        "d2h pinned copy": nbytes / gpu.time_ms(lambda: drv.memcpy_dtoh(pinned_b, device), 5) / 1e6,
        "h2d zero-copy kernel": nbytes / gpu.time_ms(
            lambda: copy4(host_ptr, device, np.int32(n4), grid=grid, block=block), 5) / 1e6,
        "d2h zero-copy kernel": nbytes / gpu.time_ms(
            lambda: copy4(device, host_ptr, np.int32(n4), grid=grid, block=block), 5) / 1e6,
    }
    up, down = drv.Stream(), drv.Stream()

    def both():
        drv.memcpy_htod_async(other, mapped, up)
        drv.memcpy_dtoh_async(pinned_b, device, down)
        up.synchronize()
        down.synchronize()

    res["both directions at once, each"] = nbytes / gpu.time_ms(both, 5) / 1e6
    copy4(host_ptr, device, np.int32(n4), grid=grid, block=block)
    drv.memcpy_dtoh(pinned_b, device)
    if not np.array_equal(pinned_b, mapped):
        raise RuntimeError("zero-copy kernel did not copy the mapped buffer")
    for buf in (device, other):
        buf.free()
    return {k: round(v, 2) for k, v in res.items()}


def launch_overhead(gpu: Gpu, empty) -> dict[str, float]:
    """Microseconds per empty-kernel launch: back to back (events) and with a synchronise."""
    count = 5000
    grid, block = (1, 1), (1, 1, 1)

    def many():
        for _ in range(count):
            empty(grid=grid, block=block)

    back_to_back = gpu.time_ms(many, repeat=5) * 1e3 / count
    samples = []
    for _ in range(2000):
        t0 = time.perf_counter()
        empty(grid=grid, block=block)
        gpu.ctx.synchronize()
        samples.append(time.perf_counter() - t0)
    return {"back to back (µs)": round(back_to_back, 2),
            "launch + synchronize (µs)": round(float(np.median(samples[100:])) * 1e6, 2)}


def host_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(samples))


def copy_pinned(drv, array: np.ndarray) -> np.ndarray:
    """A page-locked copy of array."""
    out = drv.pagelocked_empty(array.shape, array.dtype)
    out[:] = array
    return out


def saxpy_parts(gpu: Gpu, saxpy, nbytes: int, rng: np.random.Generator,
                pinned: bool) -> dict[str, float]:
    """Lab 07 at one size: NumPy time, each GPU part alone, and the GPU path end to end."""
    drv, a, n = gpu.drv, np.float32(2.5), nbytes // 4
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    if pinned:
        x, y = copy_pinned(drv, x), copy_pinned(drv, y)
    d_x, d_y = drv.mem_alloc(nbytes), drv.mem_alloc(nbytes)
    grid, block = (min((n + 255) // 256, 8192), 1), (256, 1, 1)
    rep = repeats_for(nbytes)

    def launch():
        saxpy(a, d_x, d_y, np.int32(n), grid=grid, block=block)

    def gpu_path():
        drv.memcpy_htod(d_x, x)
        drv.memcpy_htod(d_y, y)
        launch()
        out = np.empty_like(y)
        drv.memcpy_dtoh(out, d_y)
        return out

    def numpy_saxpy():
        y[:] += a * x

    if not np.allclose(gpu_path(), a * x.astype(np.float64) + y, rtol=1e-6):
        raise RuntimeError(f"saxpy wrong at {nbytes} bytes")
    parts = {"cpu": host_ms(numpy_saxpy, rep),
             "upload": gpu.time_ms(lambda: drv.memcpy_htod(d_x, x), rep),
             "kernel": gpu.time_ms(launch, rep),
             "download": gpu.time_ms(lambda: drv.memcpy_dtoh(y, d_y), rep),
             "gpu total": host_ms(gpu_path, rep)}
    d_x.free()
    d_y.free()
    return parts


def cpu_or_gpu(gpu: Gpu, saxpy, sizes: list[int], pinned: bool) -> dict:
    """Lab 07: SAXPY on NumPy vs the GPU with copies; model, predicted and measured crossover."""
    rng = np.random.default_rng(7)
    per_size = [saxpy_parts(gpu, saxpy, nbytes, rng, pinned) for nbytes in sizes]
    parts = {k: [p[k] for p in per_size] for k in per_size[0]}
    models = {k: fit_latency_bandwidth(sizes, v) for k, v in parts.items() if k != "gpu total"}

    def predict(name, d):
        s, b = models[name]
        return s + d / (b * 1e6)

    grid = np.logspace(np.log2(sizes[0]), np.log2(sizes[-1]), 2000, base=2)
    gpu_model = [2 * predict("upload", d) + predict("kernel", d) + predict("download", d)
                 for d in grid]
    return {"sizes": sizes, "parts": parts, "models": models,
            "predicted crossover": crossover(grid.tolist(), [predict("cpu", d) for d in grid],
                                             gpu_model),
            "measured crossover": crossover(sizes, parts["cpu"], parts["gpu total"])}


def pcie_link() -> str:
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=pcie.link.gen.current,pcie.link.gen.max,"
             "pcie.link.width.current", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for transfers.json")
    parser.add_argument("--max-log2", type=int, default=30, help="largest size, log2 bytes")
    args = parser.parse_args(argv)
    gpu = Gpu()
    try:
        kernel = {name: gpu.module(cuda_cells(lab)).get_function(name)
                  for lab, names in LAB_KERNELS.items() for name in names}
        sizes = [1 << k for k in range(10, args.max_log2 + 1, 2)]
        result = {"environment": environment_line(), "pcie link": pcie_link()}
        copies = copy_sweep(gpu, sizes)
        result["copies"] = {"sizes": sizes, "ms": copies,
                            "fits": {k: fit_latency_bandwidth(sizes, v) for k, v in copies.items()}}
        result["link peak"] = link_peak(gpu, kernel["copy4"], 1 << args.max_log2)
        result["launch"] = launch_overhead(gpu, kernel["empty"])
        for memory in ("pageable", "pinned"):
            result[f"cpu or gpu, {memory}"] = cpu_or_gpu(
                gpu, kernel["saxpy"], sizes, memory == "pinned")
    finally:
        gpu.close()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "transfers.json").write_text(json.dumps(result, indent=1))
    print(report(result))


def report(result: dict) -> str:
    """Markdown tables of a transfers.json result."""
    copies = result["copies"]
    rows = [[f"{d // KB} KB" if d < MB else f"{d // MB} MB",
             *(f"{d / ms / 1e6:.2f}" for ms in (copies["ms"][k][i] for k in copies["ms"]))]
            for i, d in enumerate(copies["sizes"])]
    lines = [f"### Transfers · {result['environment']}",
             f"PCIe link (gen current, gen max, width): {result['pcie link']}",
             "", markdown_table(["size", *(f"{k} GB/s" for k in copies["ms"])], rows), "",
             markdown_table(["curve", "latency S (µs)", "bandwidth B (GB/s)"],
                            [[k, f"{s * 1e3:.1f}", f"{b:.2f}"]
                             for k, (s, b) in copies["fits"].items()]),
             "", markdown_table(["link peak, method", "GB/s"], list(result["link peak"].items()))]
    peak = result["link peak"]
    for direction in ("h2d", "d2h"):
        best = max(v for k, v in peak.items() if k.startswith(direction))
        pinned = peak[f"{direction} pinned copy"]
        lines.append(f"{direction}: pinned copy {pinned:.2f} GB/s = {pinned / best:.1%} of the "
                     f"best method ({best:.2f} GB/s); goal >= 90%")
    lines += ["", markdown_table(["empty kernel", "µs"], list(result["launch"].items()))]
    for memory in ("pageable", "pinned"):
        cg = result[f"cpu or gpu, {memory}"]
        lines += ["", f"SAXPY, host arrays {memory}:", "", markdown_table(
            ["size", *(f"{k} ms" for k in cg["parts"])],
            [[f"{d // KB} KB", *(f"{cg['parts'][k][i]:.4f}" for k in cg["parts"])]
             for i, d in enumerate(cg["sizes"])]), "",
            markdown_table(["part", "S (µs)", "B (GB/s)"],
                           [[k, f"{s * 1e3:.1f}", f"{b:.2f}"]
                            for k, (s, b) in cg["models"].items()]),
            f"predicted crossover: {cg['predicted crossover']} bytes; "
            f"measured crossover: {cg['measured crossover']} bytes"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
