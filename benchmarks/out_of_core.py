"""Out-of-core stencil benchmark (labs/22_out_of_core.ipynb) on the GPU, 2D and 3D.

A heat-equation domain larger than a chosen device-memory budget lives in pinned host memory
and streams through the GPU in chunks of rows (2D) or planes (3D): three streams with one job
each (upload, compute, download) and events between them, ``depth`` time steps per trip.
Two schemes (seed 002 and this course's variant):

* ``halo``: the paper's scheme. A chunk goes up with ``depth`` halo rows on each side, and the
  rows it recomputes shrink by one per step (redundant work about ``depth / b`` of the total).
* ``skew``: no redundant work. At step ``t`` a chunk computes its own rows shifted up by ``t``;
  the rows above it at every step were computed by the previous chunk and still sit in that
  chunk's device buffers (a triangle of ``depth + 1`` rows), so one device-to-device copy
  hands them over. Chunk sizes ramp up at the start and down at the end, so filling and
  draining the pipeline costs a small chunk's transfer, not a full one's.

The script checks every run against the in-core run bit for bit (small domains against NumPy),
sweeps depth, chunk size and budget, and compares with the pipeline model (a three-stage flow
shop fed with measured copy rates and a fitted per-launch kernel cost). Run on the device
machine:

    python -m benchmarks.out_of_core --out results/

>>> plan(100, 30, ramp=False)
[(0, 30), (30, 60), (60, 90), (90, 100)]
>>> plan(100, 27, ramp=True)
[(0, 3), (3, 12), (12, 39), (39, 66), (66, 88), (88, 97), (97, 100)]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.common import build_kernels, environment_line, markdown_table, time_ms

NOTEBOOK = "22_out_of_core.ipynb"
KERNELS = ("heat2d_rows", "heat3d_planes")
SETS = 3           # buffer sets in flight: one uploading, one computing, one downloading
RAMP = 3           # each ramp chunk is this many times smaller than the next


def plan(n: int, b: int, ramp: bool = True) -> list[tuple[int, int]]:
    """Row ranges [r0, r1) of at most ``b`` rows covering ``n`` rows; ramped ends if asked."""
    if b < 2:
        raise ValueError(f"a chunk needs at least 2 rows, got b = {b}")
    sizes = []
    if ramp:
        s = b // RAMP
        while s >= 2:
            sizes.insert(0, s)
            s //= RAMP
    head = list(sizes)
    tail = sizes[::-1] if ramp else []
    body_rows = n - sum(head) - sum(tail)
    if body_rows <= 0:
        head, tail, body_rows = [], [], n
    bounds, r = [], 0
    for s in head:
        bounds.append((r, r + s))
        r += s
    end = r + body_rows
    while r < end:
        bounds.append((r, min(r + b, end)))
        r = min(r + b, end)
    for s in tail:
        bounds.append((r, r + s))
        r += s
    return bounds


def buffer_rows(b: int, depth: int, scheme: str) -> int:
    """Rows one device buffer holds for chunks of ``b`` own rows."""
    return b + (2 * depth if scheme == "halo" else depth + 1)


def largest_b(budget_bytes: int, row_bytes: int, depth: int, scheme: str) -> int:
    """The most own rows per chunk whose SETS x 2 buffers fit the budget."""
    b = budget_bytes // (SETS * 2 * row_bytes) - buffer_rows(0, depth, scheme)
    if b < 2:
        raise ValueError(f"a budget of {budget_bytes} B holds no chunk of {row_bytes}-byte rows "
                         f"at depth {depth} ({scheme})")
    return b


def spans(r0: int, r1: int, n: int, depth: int, t: int, scheme: str) -> tuple[int, int, int]:
    """(buffer's first domain row, first and end row computed at step t) for chunk [r0, r1)."""
    if scheme == "halo":
        lo, hi = max(r0 - depth, 0), min(r1 + depth, n)
        return lo, (lo + t if lo > 0 else 0), (hi - t if hi < n else n)
    base, lo = max(r0 - depth - 1, 0), max(r0 - t, 0)
    return base, lo, (max(r1 - t, lo) if r1 < n else n)


class Pipeline:
    """The streamed solver over rows of ``row_len`` floats, in CuPy with raw copies and events.

    ``step(u, v, rows, row0, stream)`` advances rows [row0, row0 + rows) of a buffer; u and v
    are CuPy views that start at the first of those rows.
    """

    def __init__(self, step, row_len: int, n: int, b: int, depth: int, scheme: str,
                 ramp: bool = True):
        import cupy as cp

        self.step, self.row_len, self.n = step, row_len, n
        self.depth, self.scheme = depth, scheme
        self.chunks = plan(n, b, ramp and scheme == "skew")
        rows = buffer_rows(b, depth, scheme)
        self.buffers = [(cp.empty(rows * row_len, np.float32), cp.empty(rows * row_len, np.float32))
                        for _ in range(SETS)]
        self.up, self.comp, self.down = (cp.cuda.Stream(non_blocking=True) for _ in range(3))

    def _copy(self, dst: int, src: int, nbytes: int, kind: int, stream) -> None:
        import cupy as cp

        cp.cuda.runtime.memcpyAsync(dst, src, nbytes, kind, stream.ptr)

    def run(self, src: np.ndarray, dst: np.ndarray, steps: int) -> np.ndarray:
        """Advance the pinned host array ``src`` by ``steps``; returns the array holding it."""
        done = 0
        while done < steps:
            k = min(self.depth, steps - done)
            self._trip(src, dst, k)
            src, dst = dst, src
            done += k
        return src

    def _trip(self, src, dst, k: int) -> None:
        import cupy as cp

        H2D, D2H, D2D = 1, 2, 3
        rb = self.row_len * 4
        host_src, host_dst = src.ctypes.data, dst.ctypes.data
        ev = lambda: cp.cuda.Event(disable_timing=True)  # noqa: E731
        tri, down = {}, {}
        for c, (r0, r1) in enumerate(self.chunks):
            u, v = self.buffers[c % SETS]
            base, _, _ = spans(r0, r1, self.n, k, 0, self.scheme)
            # upload: the set is free once chunk c-3 is downloaded and chunk c-2 took its triangle
            for dep in (down.get(c - SETS), tri.get(c - SETS + 1)):
                if dep is not None:
                    self.up.wait_event(dep)
            first = r0 if self.scheme == "skew" else base
            last = r1 if self.scheme == "skew" else min(r1 + k, self.n)
            self._copy(u.data.ptr + (first - base) * rb, host_src + first * rb,
                       (last - first) * rb, H2D, self.up)
            uploaded = ev()
            uploaded.record(self.up)
            self.comp.wait_event(uploaded)
            if self.scheme == "skew" and c > 0:
                pu, pv = self.buffers[(c - 1) % SETS]
                pbase = spans(*self.chunks[c - 1], self.n, k, 0, self.scheme)[0]
                for mine, theirs in ((u, pu), (v, pv)):
                    self._copy(mine.data.ptr, theirs.data.ptr + (base - pbase) * rb,
                               (r0 - base) * rb, D2D, self.comp)
            tri[c] = ev()
            tri[c].record(self.comp)
            a, b = u, v
            for t in range(1, k + 1):
                _, lo, hi = spans(r0, r1, self.n, k, t, self.scheme)
                if hi > lo:
                    off = (lo - base) * self.row_len
                    self.step(a[off:], b[off:], hi - lo, lo, self.comp)
                a, b = b, a
            computed = ev()
            computed.record(self.comp)
            self.down.wait_event(computed)
            _, lo, hi = spans(r0, r1, self.n, k, k, self.scheme)
            if self.scheme == "halo":
                lo, hi = r0, r1
            if hi > lo:
                self._copy(host_dst + lo * rb, a.data.ptr + (lo - base) * rb, (hi - lo) * rb,
                           D2H, self.down)
            down[c] = ev()
            down[c].record(self.down)
        cp.cuda.Device().synchronize()


def stage_ms(r0, r1, n, depth, scheme, row_bytes, h2d, d2h, kernel_ms, dtod_gbs):
    """(upload, compute, download) ms of one chunk, from measured rates."""
    base, _, _ = spans(r0, r1, n, depth, 0, scheme)
    if scheme == "skew":
        up_rows = r1 - r0
        compute = 2 * (r0 - base) * row_bytes * 2 / dtod_gbs / 1e6 if r0 > 0 else 0.0
    else:
        up_rows, compute = min(r1 + depth, n) - base, 0.0
    for t in range(1, depth + 1):
        _, lo, hi = spans(r0, r1, n, depth, t, scheme)
        compute += float(kernel_ms(hi - lo)) if hi > lo else 0.0
    _, lo, hi = spans(r0, r1, n, depth, depth, scheme)
    down_rows = (r1 - r0) if scheme == "halo" else hi - lo
    return up_rows * row_bytes / h2d / 1e6, compute, down_rows * row_bytes / d2h / 1e6


def model_ms(chunks, n, steps, depth, scheme, row_bytes, h2d, d2h, kernel_ms,
             dtod_gbs) -> dict:
    """The pipeline as a three-stage flow shop with SETS buffer sets; ms and what limits it.

    Upload c waits for download c - SETS, compute c for upload c and compute c - 1, download c
    for compute c and download c - 1. Returns the total and its parts summed over trips:
    ``transfer`` (busiest copy direction), ``compute`` (the in-core kernels' time),
    ``redundant`` (kernel time beyond that: halo rows recomputed, more and smaller launches,
    the halo hand-over copies), ``fill_drain`` (the rest: waiting at the ends).
    """
    total = 0.0
    parts = {"transfer": 0.0, "compute": 0.0, "redundant": 0.0, "fill_drain": 0.0}
    done = 0
    while done < steps:
        k = min(depth, steps - done)
        st = [stage_ms(r0, r1, n, k, scheme, row_bytes, h2d, d2h, kernel_ms, dtod_gbs)
              for r0, r1 in chunks]
        up_end, comp_end, down_end = [], [], []
        for c, (u, cmp, d) in enumerate(st):
            free = down_end[c - SETS] if c >= SETS else 0.0
            up_end.append(max(up_end[-1] if up_end else 0.0, free) + u)
            comp_end.append(max(comp_end[-1] if comp_end else 0.0, up_end[-1]) + cmp)
            down_end.append(max(down_end[-1] if down_end else 0.0, comp_end[-1]) + d)
        trip = down_end[-1]
        useful = k * float(kernel_ms(n))
        kernels = sum(s[1] for s in st)
        busiest = max(sum(s[0] for s in st), sum(s[2] for s in st))
        total += trip
        parts["transfer"] += busiest
        parts["compute"] += useful
        parts["redundant"] += max(kernels - useful, 0.0)
        parts["fill_drain"] += trip - max(kernels, busiest)
        done += k
    if parts["transfer"] > parts["compute"] + parts["redundant"]:
        limit = "transfer"
    else:
        limit = max(("redundant", "fill_drain"), key=parts.get)
    return {"ms": total, **parts, "limit": limit}


def pinned_rates(nbytes: int) -> dict:
    """Pinned H2D and D2H GB/s, alone and both at once, and device-to-device GB/s (read+write)."""
    import cupy as cp
    import cupyx

    host = cupyx.empty_pinned(nbytes // 4, np.float32)
    host2 = cupyx.empty_pinned(nbytes // 4, np.float32)
    host[:] = 1.0
    dev, dev2 = cp.empty(nbytes // 4, np.float32), cp.empty(nbytes // 4, np.float32)
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)

    def both():
        cp.cuda.runtime.memcpyAsync(dev.data.ptr, host.ctypes.data, nbytes, 1, s1.ptr)
        cp.cuda.runtime.memcpyAsync(host2.ctypes.data, dev2.data.ptr, nbytes, 2, s2.ptr)
        s1.synchronize()
        s2.synchronize()

    up = time_ms(lambda: dev.set(host), repeat=7)
    down = time_ms(lambda: dev.get(out=host), repeat=7)
    duplex = time_ms(both, repeat=7)
    dtod = time_ms(lambda: dev2.__setitem__(slice(None), dev), repeat=7)
    return {"h2d": nbytes / up / 1e6, "d2h": nbytes / down / 1e6,
            "duplex_each": nbytes / duplex / 1e6, "dtod": 2 * nbytes / dtod / 1e6}


class Case:
    """One stencil (2D rows or 3D planes), its kernel launch and in-core run."""

    def __init__(self, kernel, shape: tuple[int, ...], c1: float):
        self.kernel, self.shape = kernel, shape
        self.c1 = np.float32(c1)
        self.c0 = np.float32(1 - 2 * len(shape) * self.c1)
        self.n = shape[0]
        self.row_len = int(np.prod(shape[1:]))
        self.flop_per_point = 6 if len(shape) == 2 else 8

    def step(self, u, v, rows: int, row0: int, stream=None) -> None:
        if len(self.shape) == 2:
            nx = self.shape[1]
            grid, block = (-(-nx // 32), -(-rows // 8)), (32, 8)
            args = (u, v, np.int32(nx), np.int32(rows), np.int32(row0), np.int32(self.n),
                    self.c0, self.c1)
        else:
            ny, nx = self.shape[1:]
            grid, block = (-(-nx // 32), -(-ny // 8), rows), (32, 8, 1)
            args = (u, v, np.int32(nx), np.int32(ny), np.int32(rows), np.int32(row0),
                    np.int32(self.n), self.c0, self.c1)
        if stream is None:
            self.kernel(grid, block, args)
        else:
            with stream:
                self.kernel(grid, block, args)

    def reference(self, u0: np.ndarray, steps: int) -> np.ndarray:
        """NumPy in float64."""
        u = u0.astype(np.float64)
        inner = tuple(slice(1, -1) for _ in u.shape)
        for _ in range(steps):
            v = u.copy()
            acc = np.zeros_like(u[inner])
            for axis in range(u.ndim):
                for shift in (0, 2):
                    acc += u[tuple(slice(shift, shift + s - 2) if a == axis else slice(1, -1)
                                   for a, s in enumerate(u.shape))]
            v[inner] = self.c0 * u[inner] + self.c1 * acc
            u = v
        return u

    def in_core(self, start: np.ndarray, steps: int) -> tuple[float, np.ndarray]:
        """(ms for ``steps`` steps on the whole domain held on the device, result)."""
        import cupy as cp

        bufs = [cp.empty(start.size, np.float32), cp.empty(start.size, np.float32)]
        self.step(bufs[1], bufs[0], self.n, 0)                 # warm-up on scratch
        bufs[0].set(start.ravel())
        cp.cuda.Device().synchronize()
        t0, t1 = cp.cuda.Event(), cp.cuda.Event()
        t0.record()
        for s in range(steps):
            self.step(bufs[s % 2], bufs[1 - s % 2], self.n, 0)
        t1.record()
        t1.synchronize()
        return cp.cuda.get_elapsed_time(t0, t1), bufs[steps % 2].get().reshape(start.shape)

    def kernel_fit(self, rows_list):
        """Per-launch ms against rows, as the pipeline issues them: back to back from the host,
        ping-pong on a buffer pair of that size (so small chunks show their L2 hits and their
        host-bound launches), fitted piecewise (:class:`cudakit.chooser.Segments`)."""
        import cupy as cp

        from cudakit.chooser import Segments

        points = []
        for rows in rows_list:
            u = cp.full((rows + 2) * self.row_len, 0.5, np.float32)
            v = cp.full_like(u, 0.5)
            reps = 64

            def run(rows=rows, u=u, v=v, reps=reps):
                for r in range(reps):
                    a, b = (u, v) if r % 2 == 0 else (v, u)
                    self.step(a[self.row_len:], b[self.row_len:], rows, 1)

            points.append((rows, time_ms(run, repeat=5) / reps))
        return Segments.fit([p[0] for p in points], [p[1] for p in points]), points


def check_small(case: Case, shape, budget_rows: int) -> float:
    """Every scheme and depth on a small domain against NumPy; returns the worst error."""
    import cupyx

    rng = np.random.default_rng(22)
    small = Case(case.kernel, shape, float(case.c1))
    u0 = rng.random(shape, dtype=np.float32)
    steps = 9
    ref = small.reference(u0, steps)
    worst = 0.0
    for scheme in ("halo", "skew"):
        for depth, b in ((1, 3), (4, 7), (9, budget_rows), (3, 2)):
            if scheme == "halo" and b < 2:
                continue
            src = cupyx.empty_pinned(shape, np.float32)
            dst = cupyx.empty_pinned(shape, np.float32)
            src[:] = u0
            got = Pipeline(small.step, small.row_len, small.n, b, depth, scheme).run(src, dst,
                                                                                    steps)
            err = float(np.abs(got - ref).max() / np.abs(ref).max())
            worst = max(worst, err)
            if not err < 1e-5:
                raise SystemExit(f"{scheme} depth {depth} b {b} on {shape}: error {err:.1e}")
    return worst


def sweep(case: Case, steps: int, budgets_mb, configs, rates, log) -> dict:
    """Time every (scheme, depth, b) that fits each budget; compare with in core and the model."""
    import cupy as cp
    import cupyx

    rng = np.random.default_rng(22)
    domain = cupyx.empty_pinned(case.shape, np.float32)
    spare = cupyx.empty_pinned(case.shape, np.float32)
    start = rng.random(case.shape, dtype=np.float32)
    incore_ms, incore = case.in_core(start, steps)
    incore_ms = min(incore_ms, case.in_core(start, steps)[0])
    cp.get_default_memory_pool().free_all_blocks()
    row_bytes = case.row_len * 4
    kernel, kpoints = case.kernel_fit([2, 8, 32, 128, 512, 1024, 2048, 4096] if len(case.shape) == 2
                                      else [2, 8, 32, 64, 128, 256, 512, 1024])
    log(f"{case.shape}: in core {incore_ms:.2f} ms for {steps} steps "
        f"({incore_ms / steps * 1e3:.0f} us per step); kernel per launch against rows: "
        + ", ".join(f"{r}: {ms * 1e3:.1f} us" for r, ms in kpoints))
    flop = case.flop_per_point * np.prod([s - 2 for s in case.shape]) * steps
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()
    results = []
    for budget_mb in budgets_mb:
        for scheme, depth, b_frac in configs:
            try:
                bmax = largest_b(budget_mb << 20, row_bytes, depth, scheme)
            except ValueError:
                continue
            b = max(2, int(bmax * b_frac))
            solver = Pipeline(case.step, case.row_len, case.n, b, depth, scheme)
            domain[:] = start
            solver.run(domain, spare, min(depth, steps))       # warm-up trip (not checked)
            domain[:] = start
            t0.record()
            got = solver.run(domain, spare, steps)
            t1.record()
            t1.synchronize()
            ms = cp.cuda.get_elapsed_time(t0, t1)
            same = bool(np.array_equal(got, incore))
            model = model_ms(solver.chunks, case.n, steps, depth, scheme, row_bytes,
                             rates["duplex_each"], rates["duplex_each"], kernel, rates["dtod"])
            row = {"budget_mb": budget_mb, "scheme": scheme, "depth": depth, "b": b,
                   "chunks": len(solver.chunks), "ms": ms, "of_in_core": incore_ms / ms,
                   "gflops": flop / ms / 1e6, "model": model,
                   "model_error": model["ms"] / ms - 1, "matches_in_core": same}
            results.append(row)
            log(f"  {budget_mb} MiB {scheme} k={depth} b={b} chunks={len(solver.chunks)}: "
                f"{ms:.1f} ms = {100 * incore_ms / ms:.1f}% of in core, model {model['ms']:.1f} "
                f"({100 * row['model_error']:+.1f}%, {model['limit']}), equal {same}")
            del solver
            cp.get_default_memory_pool().free_all_blocks()
    return {"shape": case.shape, "steps": steps, "incore_ms": incore_ms,
            "kernel_points": kpoints, "kernel_segments": [kernel.edges, kernel.lines],
            "gflops_in_core": flop / incore_ms / 1e6, "results": results}


def main() -> None:
    import cupy as cp  # noqa: F401

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="fewer configurations")
    opts = parser.parse_args()
    kernels = build_kernels(NOTEBOOK, list(KERNELS))
    opts.out.mkdir(parents=True, exist_ok=True)
    (opts.out / "out_of_core.log").write_text("")

    def log(text):
        print(text, flush=True)
        with open(opts.out / "out_of_core.log", "a") as logfile:
            logfile.write(text + "\n")

    log(environment_line())
    two = Case(kernels["heat2d_rows"], (32768, 16384), 0.1)
    three = Case(kernels["heat3d_planes"], (8192, 256, 256), 0.1)
    log(f"small domains against NumPy: 2D {check_small(two, (301, 257), 40):.1e}, "
        f"3D {check_small(three, (37, 19, 33), 12):.1e}")
    rates = pinned_rates(64 << 20)
    log("pinned copies (64 MiB): " + ", ".join(f"{k} {v:.1f} GB/s" for k, v in rates.items()))
    skew = [("skew", d, f) for d in (32, 64) for f in (1.0, 0.5)]
    halo = [("halo", d, 1.0) for d in (16, 32, 64)]
    if opts.quick:
        skew, halo = [("skew", 64, 1.0)], [("halo", 32, 1.0)]
    report = {"env": environment_line(), "rates": rates}
    report["2d"] = sweep(two, opts.steps, (512, 1024), halo + skew, rates, log)
    report["3d"] = sweep(three, opts.steps, (512, 1024), halo + skew, rates, log)
    (opts.out / "out_of_core.json").write_text(json.dumps(report, indent=1))
    for key in ("2d", "3d"):
        rows = [[r["budget_mb"], r["scheme"], r["depth"], r["b"], r["chunks"], f"{r['ms']:.1f}",
                 f"{r['model']['ms']:.1f}", f"{100 * r['of_in_core']:.1f}%",
                 r["model"]["limit"], r["matches_in_core"]] for r in report[key]["results"]]
        log(f"\n{key} {report[key]['shape']}, in core {report[key]['incore_ms']:.1f} ms")
        log(markdown_table(["MiB", "scheme", "k", "b", "chunks", "ms", "model ms", "of in core",
                            "limit", "equal"], rows))
    bad = [r for key in ("2d", "3d") for r in report[key]["results"] if not r["matches_in_core"]]
    if bad:
        raise SystemExit(f"{len(bad)} out-of-core runs differ from the in-core run")


if __name__ == "__main__":
    main()
