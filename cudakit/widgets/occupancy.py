"""The occupancy calculator as a notebook widget, after NVIDIA's spreadsheet.

Sliders choose the architecture, threads per block, registers per thread and
shared memory per block; the widget shows active threads, warps and blocks per
SM, the occupancy, how many blocks each limit allows (the binding one
highlighted), and the spreadsheet's three graphs with the current choice
marked. The graphs are computed with :func:`cudakit.occupancy.sweep` (one
NumPy call each) and drawn off-screen with Agg, so a change costs a few tens of
milliseconds.

>>> calc = OccupancyCalculator(compute_capability="9.0", block_size=256,
...                            registers_per_thread=64, shared_memory_per_block=0)
>>> calc.result.limiter, calc.result.active_warps_per_sm
('registers', 32)
>>> calc.block_size.value = 128; calc.result.active_blocks_per_sm
8
"""

from __future__ import annotations

import html
import io
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .. import arch as _arch
from .. import occupancy

_LIMIT_LABELS = {
    "warps": "warps (threads) per SM",
    "registers": "registers per SM",
    "shared_memory": "shared memory per SM",
    "blocks": "blocks per SM",
    "barriers": "barriers per SM",
}
_DEVICE = "device"
_DEFAULT_CARVEOUT = -1  # the driver's choice, as cudaSharedmemCarveoutDefault


def _present_device() -> tuple[str, tuple[int, int]] | None:
    """(label, compute capability) of the engine's device, or None if unknown."""
    try:
        from ..device import device_info

        info = device_info()
    except Exception:  # no engine usable here: the list of architectures still works
        return None
    return f"this device: {info.name}", tuple(info.compute_capability)


def _arch_options(device: tuple[str, tuple[int, int]] | None) -> list[tuple[str, Any]]:
    options = [] if device is None else [(device[0], _DEVICE)]
    for cc in reversed(_arch.known()):
        spec = _arch.get(cc)
        options.append((f"{spec.version} {spec.family} ({spec.name})", spec.version))
    return options


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 or n % 1024 else f"{n // 1024} KB"


class OccupancyCalculator(widgets.VBox):
    """Interactive occupancy calculator; pass a compiled kernel to start from its
    ptxas resource usage (``OccupancyCalculator(kernel)``).

    ``result`` holds the current :class:`cudakit.occupancy.Occupancy`; the
    controls are the attributes ``architecture``, ``block_size``,
    ``registers_per_thread``, ``shared_memory_per_block`` and ``carveout``.
    """

    def __init__(
        self,
        kernel: Any = None,
        *,
        compute_capability: Any = None,
        block_size: int = 256,
        registers_per_thread: int | None = None,
        shared_memory_per_block: int | None = None,
        dynamic_shared_memory: int = 0,
    ):
        info = occupancy.kernel_info(kernel) if kernel is not None else None
        if kernel is not None and info is None:
            raise ValueError(
                "kernel must be a compiled kernel (cudakit.compile(...).kernels[name] or a "
                f"%%cuda Kernel), got {type(kernel).__name__}"
            )
        self._device = _present_device()
        if compute_capability is None and info is not None:
            compute_capability = info.arch
        if registers_per_thread is None:
            registers_per_thread = info.registers if info is not None else 32
        if shared_memory_per_block is None:
            static = info.shared_static if info is not None else 0
            shared_memory_per_block = static + dynamic_shared_memory
        self._barriers = max(getattr(info, "barriers", 1), 1) if info is not None else 1
        self._kernel_name = getattr(info, "name", None)

        if compute_capability is None:
            start = _DEVICE if self._device else "9.0"
        else:
            start = _arch.get(compute_capability).version
        style = {"description_width": "190px"}
        layout = widgets.Layout(width="560px")
        self.architecture = widgets.Dropdown(options=_arch_options(self._device), value=start,
                                             description="compute capability", style=style,
                                             layout=layout)
        self.block_size = widgets.IntSlider(value=block_size, min=32, max=1024, step=32,
                                            description="threads per block", style=style,
                                            layout=layout)
        self.registers_per_thread = widgets.IntSlider(value=registers_per_thread, min=0, max=255,
                                                      description="registers per thread",
                                                      style=style, layout=layout)
        self.shared_memory_per_block = widgets.IntSlider(
            value=shared_memory_per_block, min=0, max=232448, step=1,
            description="shared memory per block (B)", style=style, layout=layout)
        self.carveout = widgets.Dropdown(description="shared memory carveout", style=style,
                                         layout=layout)
        self.summary = widgets.HTML()
        self.plot = widgets.Image(format="png")
        self.block_size.add_class("cudakit-occ-block")
        self.summary.add_class("cudakit-occ-summary")
        self.plot.add_class("cudakit-occ-plot")

        self._figure = Figure(figsize=(12, 3.2), dpi=80, layout="constrained")
        FigureCanvasAgg(self._figure)
        self._axes = self._figure.subplots(1, 3, sharey=True)
        self._curves = [ax.plot([], [], ".-" if i == 0 else "-", color="tab:blue",
                                drawstyle="default" if i == 0 else "steps-post")[0]
                        for i, ax in enumerate(self._axes)]
        self._marks = [ax.plot([], [], "o", color="tab:red", markersize=8)[0]
                       for ax in self._axes]
        for ax, label in zip(self._axes, ("threads per block", "registers per thread",
                                          "shared memory per block (bytes)"), strict=True):
            ax.set_xlabel(label)
            ax.grid(alpha=0.3)
        self._axes[0].set_ylabel("active warps per SM")

        self._updating = False
        self.result: occupancy.Occupancy | None = None
        self._apply_architecture()
        for control in (self.block_size, self.registers_per_thread, self.shared_memory_per_block,
                        self.carveout):
            control.observe(lambda _change: self.update(), names="value")
        self.architecture.observe(lambda _change: self._apply_architecture(), names="value")
        title = f"Occupancy calculator: {self._kernel_name}" if self._kernel_name else (
            "Occupancy calculator")
        super().__init__([
            widgets.HTML(f"<b>{html.escape(title)}</b>"),
            widgets.HBox([
                widgets.VBox([self.architecture, self.block_size, self.registers_per_thread,
                              self.shared_memory_per_block, self.carveout]),
                self.summary,
            ]),
            self.plot,
        ])

    # ----------------------------------------------------------------- state

    @property
    def spec(self) -> _arch.ArchSpec:
        value = self.architecture.value
        return _arch.get(self._device[1] if value == _DEVICE else value)

    def _apply_architecture(self) -> None:
        """Fit the sliders' ranges and the carveout list to the chosen architecture."""
        spec = self.spec
        self._updating = True
        try:
            self.block_size.max = spec.max_threads_per_block
            self.registers_per_thread.max = spec.max_registers_per_thread
            self.shared_memory_per_block.max = spec.shared_memory_per_block_optin + 1024
            options = [("default (the most shared memory)", _DEFAULT_CARVEOUT)]
            if spec.compute_capability[0] >= 7:
                options += [(_size(c), 100 * c // spec.shared_memory_per_sm)
                            for c in spec.shared_memory_carveouts]
            self.carveout.options = options
            self.carveout.value = _DEFAULT_CARVEOUT
            self.carveout.disabled = len(options) == 1
        finally:
            self._updating = False
        self.update()

    # ----------------------------------------------------------------- drawing

    def update(self) -> None:
        """Recompute the result, the table and the three graphs."""
        if self._updating:
            return
        spec = self.spec
        block = self.block_size.value
        regs = self.registers_per_thread.value
        smem = self.shared_memory_per_block.value
        carve = None if self.carveout.value == _DEFAULT_CARVEOUT else self.carveout.value
        self.result = occupancy.calculate(spec, block, regs, smem, shared_memory_carveout=carve,
                                          barriers=self._barriers)
        self.summary.value = self._table(self.result)
        self._draw(spec, block, regs, smem, carve)

    def _table(self, r: occupancy.Occupancy) -> str:
        rows = [
            ("active threads per SM", f"{r.active_threads_per_sm}"),
            ("active warps per SM", f"{r.active_warps_per_sm} of {r.max_warps_per_sm}"),
            ("active blocks per SM", f"{r.active_blocks_per_sm}"),
        ]
        head = "".join(f"<tr><td>{k}</td><td style='text-align:right'>{v}</td></tr>"
                       for k, v in rows)
        limits = ""
        for name, blocks in r.block_limits.items():
            if name == "barriers" and blocks is None:
                continue
            hot = name in r.limiters
            style = " style='background:#ffe08a;font-weight:bold'" if hot else ""
            shown = "no limit" if blocks is None else str(blocks)
            limits += (f"<tr{style}><td>{_LIMIT_LABELS[name]}</td>"
                       f"<td style='text-align:right'>{shown}</td></tr>")
        verdict = (f"<span style='color:#b00020'>cannot launch: {r.limiter.replace('_', ' ')}"
                   "</span>" if r.active_blocks_per_sm == 0
                   else f"limited by <b class='cudakit-occ-limiter'>"
                        f"{r.limiter.replace('_', ' ')}</b>")
        return (
            "<div style='margin-left:24px;font-size:13px'>"
            f"<div style='font-size:22px'>occupancy <b class='cudakit-occupancy'>"
            f"{r.occupancy:.0%}</b></div><div>{verdict}</div>"
            f"<table>{head}</table>"
            "<div style='margin-top:6px'><i>blocks per SM each limit allows</i></div>"
            f"<table>{limits}</table>"
            "<div style='margin-top:6px'><i>allocated per block</i>: "
            f"{r.warps_per_block} warps, {r.allocated_registers_per_block} registers, "
            f"{r.allocated_shared_memory_per_block} B shared memory "
            f"(of {_size(r.shared_memory_per_sm)} per SM)</div></div>"
        )

    def _draw(self, spec: _arch.ArchSpec, block: int, regs: int, smem: int,
              carve: int | None) -> None:
        step = spec.shared_memory_allocation_unit
        curves = [
            (np.arange(spec.warp_size, spec.max_threads_per_block + 1, spec.warp_size), regs,
             smem, block),
            (block, np.arange(0, spec.max_registers_per_thread + 1), smem, regs),
            (block, regs, np.arange(0, self.shared_memory_per_block.max + step, step), smem),
        ]
        for i, (b, r, s, here) in enumerate(curves):
            sw = occupancy.sweep(spec, b, r, s, shared_memory_carveout=carve,
                                 barriers=self._barriers)
            x = (b, r, s)[i]
            self._curves[i].set_data(x, sw.active_warps_per_sm)
            self._marks[i].set_data([here], [self.result.active_warps_per_sm])
            self._axes[i].set_xlim(0, x[-1])
        self._axes[0].set_ylim(0, spec.max_warps_per_sm * 1.08)
        self._figure.suptitle(f"{spec.name}: {self.result.active_warps_per_sm} of "
                              f"{spec.max_warps_per_sm} warps ({self.result.occupancy:.0%})",
                              fontsize=11)
        buffer = io.BytesIO()
        self._figure.savefig(buffer, format="png")
        self.plot.value = buffer.getvalue()
