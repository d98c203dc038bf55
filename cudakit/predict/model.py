"""The time model: a launch's counts and traffic, a device's figures -> milliseconds and the
bound that decides them.

Hand-written: no library predicts GPU time from an emulator's counts. The structure is the
literature's, with no constant fitted to the labs' measurements:

* **Throughput bounds (roofline)**: DRAM bytes / DRAM bandwidth (read, copy and write rates
  interpolated by the share of writes); L2 bytes / L2 bandwidth; per SM, the L1/LSU data
  pipe (128-byte lines of global and local requests plus shared-memory wavefronts: both go
  through the same L1TEX data path, so these two add up); issue (warp instructions / the
  SM's schedulers); and each pipe (FP32, FP64, integer, SFU with conversions, shuffles) at
  its rate from the CUDA Programming Guide's throughput table. When issue decides and one
  pipe takes at least 80 % of the issue slots, that pipe is named (an FFMA loop is
  "FP32-bound": on the H100 the FP32 pipe and issue have the same rate).
* **Latency bound** (Hong & Kim, ISCA 2009; Little's law): a warp waits once per memory
  period (the emulator's scoreboard counts them) for the slowest of its loads
  (:func:`period_wait`), once per shared-memory period, and at each ``__syncthreads()``; a
  block's barriers make it wait for its slowest warp, so its periods count; the
  warps resident together overlap their waits, so each round of resident blocks takes at
  least one warp's chain of waits plus its own issue, which is no faster than the stall
  counts ptxas wrote into the SASS allow (:func:`own_path`); blocks kept in step by barriers
  add their waits to the work between them, which takes at least the busiest pipe's time
  (:func:`busiest_pipe`). This is Hong & Kim's case with too few
  warps to hide the latency; with enough warps a throughput bound is larger.
* **Waves**: blocks go to the SMs in rounds of (SMs x resident blocks); per-SM terms count the
  busiest SM's blocks, the latency bound whole rounds, so a 1.1-wave launch pays for 2, the
  second with the blocks left over on the busiest SM (unless its rounds queue on DRAM
  bandwidth: then a partial round takes its part of a full one).
* **Block dispatch**: the GPU starts blocks at a limited rate (``block_launch_per_s``,
  measured with an empty kernel of 2^21 one-warp blocks): a grid of many tiny blocks takes
  at least blocks / rate, a throughput bound like the others (absent figure: no term).
* **Partial-sector stores**: a store that covers only part of a 32-byte sector (a warp
  writing a column of a row-major matrix leaves 32 sectors in 32 lines partly written)
  costs the L2 a merge of its own, a cost per line of the request plus one per such sector
  (:func:`partial_store_seconds`). The two costs come from two measured rates, stores of
  one 4-byte word per sector (4 partial sectors per line) and per line (one per line), into
  a buffer that stays in L2; the sum reproduces the rate of two per line measured alongside
  (``partial_store_pairs_per_s``: 84 against 82 G sectors/s). With only the first figure
  every partial sector costs its rate; with none, no term.
* **Partial-sector merges add to DRAM time**: the parts of a sector that several stores
  write out of step (:func:`~cudakit.predict.traffic.out_of_step_writes`) are each merged into
  the stored sector, at the same measured cost, and the slices doing it are the ones that
  feed DRAM, so that time adds to the DRAM time rather than overlapping it (lab 11's
  ``transpose_padded`` at 4097 x 3000: 12 us more than the copy of that shape in Nsight
  Compute, with the same DRAM bytes, for 0.66 M such parts, 10.4 us at the measured rate;
  ``benchmarks/shape_probe.py``). Parts at the ends of a row segment that starts off a
  sector, on lines written back to DRAM, take a slower rate measured so
  (:func:`merge_seconds`).
* **Tensor cores**: ``wmma``'s SASS tensor instructions (``HMMA``, ``DMMA``, ``IMMA``) at
  the rates ``benchmarks/tensor_probe.py`` measured per clock per SM, one shared unit, at the
  lower clock the GPU keeps under that load (:func:`tensor_cycles`); a device without the
  rates cannot run them.
* **Constant cache**: a warp's ``__constant__`` read is split into one request per distinct
  address (Programming Guide, "Constant Memory"); the requests beyond the first are served at
  ``constant_replays_per_clk_per_sm`` per clock per SM (measured; absent figure: no term).
* **Atomics**: the L2 serves the requests to an aligned pair of lines one after another,
  each priced by the lanes it queues on a word (:func:`atomic_seconds`, fitted to measured
  probes); all atomics share the L2's atomic rate; shared-memory atomics serialise on their
  most contended address within a warp.
* Overlapping parts combine as **max** (a GPU overlaps memory, issue and latency across
  warps); only the fixed cost of a launch (``kernel_min_us``) is **added**, as launch
  latency is paid before the first block starts (the latency + bandwidth model of textbook
  5-5 and of Hong & Kim's total time).

>>> time_of_dram(3e9, 0.0, read_gbs=3000, copy_gbs=2900, write_gbs=2900)
0.001
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..errors import ArgumentError

#: the pipe classes of :mod:`cudakit.emu.counts` and the device figure giving their rate
PIPES = {"FP32": (("fp32",), "fp32_fma"), "FP64": (("fp64",), "fp64_fma"),
         "integer": (("int",), "int32_add"), "integer multiply": (("imad",), "imad"),
         "SFU": (("sfu", "cvt"), "sfu"), "shuffle": (("shfl",), "shfl")}
#: the tensor instruction classes of :mod:`cudakit.emu.counts` (SASS ``HMMA``, ``DMMA``,
#: ``IMMA``) and the device figures of each one's rate, per clock per SM, and of the SM clock
#: while they keep the tensor cores busy (``benchmarks/tensor_probe.py``: the GPU lowers its
#: clock under this load); they share the SM's tensor cores, so their times add
TENSOR = {"mma.f16": ("mma_f16_per_clk_per_sm", "mma_f16_clock_ghz"),
          "mma.tf32": ("mma_tf32_per_clk_per_sm", "mma_tf32_clock_ghz"),
          "mma.f64": ("mma_f64_per_clk_per_sm", "mma_f64_clock_ghz"),
          "mma.i8": ("mma_i8_per_clk_per_sm", "mma_i8_clock_ghz")}
#: the public bound name of each term that is not one already
PUBLIC = {"integer": "issue", "integer multiply": "issue", "shuffle": "issue",
          "shared atomics": "atomics"}
#: the classes whose PTX count is the SASS count (ptxas rewrites integer and control work)
STALLED = ("fp32", "fp64", "sfu", "ld.global", "st.global", "ld.shared", "st.shared")
PER_SM = ("issue", "L1/LSU", "shared-memory wavefronts", "FP32", "FP64", "integer",
          "integer multiply", "SFU", "shuffle", "shared atomics", "constant cache",
          "tensor cores", "bulk copies")


def time_of_dram(read: float, write: float, *, read_gbs: float, copy_gbs: float,
                 write_gbs: float) -> float:
    """Seconds to move ``read`` + ``write`` bytes: the rate goes from the read rate (no
    writes) through the copy rate (as many writes as reads) to the write rate."""
    total = read + write
    if total <= 0:
        return 0.0
    f = write / total
    if f <= 0.5:
        gbs = read_gbs + (copy_gbs - read_gbs) * f / 0.5
    else:
        gbs = copy_gbs + (write_gbs - copy_gbs) * (f - 0.5) / 0.5
    return total / (gbs * 1e9)


def dram_seconds(t, d) -> float:
    """The DRAM time of traffic ``t`` on device ``d``: its bytes at the rate for its mix of
    reads and writes, plus the merges of sectors written in parts out of step."""
    return time_of_dram(t.dram_read_bytes, t.dram_write_bytes, read_gbs=d.dram_read_gbs,
                        copy_gbs=d.dram_copy_gbs, write_gbs=d.dram_write_gbs) + \
        merge_seconds(t, d.figures)


def merge_seconds(t, figures: dict) -> float:
    """The L2's time to merge the parts of sectors that several stores write out of step:
    at the rates measured in L2 (:func:`partial_store_seconds`), except for the parts at the
    ends of a store's run of lanes (a request that leaves at most two sectors in part: a row
    segment that starts off a sector) on lines the L2 writes back to DRAM
    (``t.dram_merge_share``), which take ``partial_store_dram_sectors_per_s`` where that is
    measured (``benchmarks/split_lines.py``: on an H200, a fill whose every warp writes 128
    bytes one word past a sector's start took 358 us more than one starting on a sector, for
    16.8 M parts: 47 G/s, where the L2 merges 73 G/s of a buffer it keeps). Parts written a
    word at a time (a warp writing a column: llm.c's ``permute_kernel``, lab 03's
    ``square_chunks``) keep the L2's rates: with the DRAM rate they came out +60 and +111 %
    on the H100, against +8 and +10 %.

    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(global_store_merges=4e9, global_store_merge_lines=4e9,
    ...                     dram_merge_share=0.5)
    >>> rates = {"partial_store_sectors_per_s": 1e11, "partial_store_lines_per_s": 1e11}
    >>> dram = {**rates, "partial_store_dram_sectors_per_s": 5e10}
    >>> merge_seconds(t, rates), merge_seconds(t, dram)
    (0.04, 0.06)
    """
    rate = figures.get("partial_store_dram_sectors_per_s")
    share = t.dram_merge_share if rate else 0.0
    kept = partial_store_seconds(t.global_store_merges * (1 - share),
                                 t.global_store_merge_lines * (1 - share), figures)
    return kept + (t.global_store_merges * share / rate if rate else 0.0)


def tensor_cycles(x, d) -> float:
    """Cycles of the device's clock that the launch's tensor instructions hold the tensor
    cores, summed over SMs: each class at its measured rate, slowed by the clock the GPU
    keeps under that load where it was measured (a device without the rate cannot run
    them: an error names it).

    >>> from types import SimpleNamespace as NS
    >>> d = NS(clock_ghz=2.0, figures={"mma_f16_per_clk_per_sm": 0.5, "mma_f16_clock_ghz": 1.6})
    >>> tensor_cycles(NS(classes={"mma.f16": 1000}), d)   # 2000 cycles at 1.6 GHz
    2500.0
    """
    cycles = 0.0
    for cls, (rate_figure, clock_figure) in TENSOR.items():
        if n := x.classes.get(cls, 0):
            rate = d.figures.get(rate_figure)
            if not rate:
                raise ArgumentError(f"the device has no measured rate for tensor instructions "
                                    f"'{cls}' ({rate_figure}): it cannot run this kernel's "
                                    f"wmma")
            cycles += n / rate * d.clock_ghz / d.figures.get(clock_figure, d.clock_ghz)
    return cycles


def atomic_seconds(t, d) -> float:
    """The time the L2 needs for a launch's global atomics.

    With the figures of ``benchmarks/atomic_fit.py``: the requests to the busiest aligned pair
    of 128-byte lines one after another, each priced by its lanes
    (:func:`~cudakit.predict.traffic.atomic_request_seconds`: a fixed part, a step per lane
    queued on a word of each sector, or its busiest word's lanes one after another,
    floating-point adds slower than integer ones), unless all requests together exceed the
    L2's rate (``atomic_line_requests_per_s``). Without them: the hottest address at
    ``global_atomic_same_address_per_s``. Either way, all atomics at the distinct rate.
    """
    f = d.figures
    distinct = t.global_atomics / d.global_atomic_distinct_per_s
    if "atomic_request_s" not in f:
        return max(t.hot_address_atomics / d.global_atomic_same_address_per_s, distinct)
    return max(t.atomic_pair_seconds, t.atomic_requests / f["atomic_line_requests_per_s"],
               distinct)


def partial_store_seconds(sectors: float, lines: float, figures: dict) -> float:
    """The L2's time for ``sectors`` partly written sectors in ``lines`` line requests: a
    cost per line and one per sector, solved from the rates measured with 4 partial sectors
    per line (``partial_store_sectors_per_s``) and one per line (``partial_store_lines_per_s``).

    >>> rates = {"partial_store_sectors_per_s": 1e11, "partial_store_lines_per_s": 5e10}
    >>> round(partial_store_seconds(4e9, 1e9, rates), 6), round(partial_store_seconds(
    ...     1e9, 1e9, rates), 6)
    (0.04, 0.02)
    """
    per_sector = figures.get("partial_store_sectors_per_s")
    if not per_sector:
        return 0.0
    one_per_line = figures.get("partial_store_lines_per_s")
    if not one_per_line:
        return sectors / per_sector
    line = max((1 / one_per_line - 1 / per_sector) * 4 / 3, 0.0)
    return lines * line + sectors * (1 / one_per_line - line)


@dataclass
class Launch:
    """What the model needs of one launch (totals over the whole grid)."""

    classes: dict  # warp instructions per class
    issued: float  # warp instructions issued (every class but "free")
    cycles: float  # cycles the warps take to issue them, dependency stalls included (summed)
    warps: float
    periods: float  # memory periods, summed over warps
    shared_periods: float
    chain_periods: float  # per block, the memory periods of its slowest warp
    chain_shared_periods: float
    blocks: int
    warps_per_block: int
    blocks_per_sm: int  # resident blocks per SM (occupancy)
    traffic: object  # traffic.Traffic
    schedule: object = None  # sass.SharedWaits of the kernel's SASS, if it could be read
    stalls: dict | None = None  # per class, cycles a warp waits after one (sass.read_stalls)
    banks: float = 0.0  # register-bank cycles per fp32 instruction (sass.read_conflicts)
    fetch: float = 0.0  # cycles per instruction a warp needs to fetch its loop (.fetch)
    fetch_spread: float = 0.0  # and waits on top of its dependencies (.fetch.spread_fetch)
    loads_ahead: object = None  # sass.GlobalWaits of the kernel's SASS, if it could be read
    bulk_copies: float = 0.0  # lanes' bulk copies (cp.async.bulk): one TMA copy each


@dataclass
class Estimate:
    seconds: float
    bound: str
    explanation: str
    breakdown: dict  # component -> seconds
    waves: float


def _latency(x: Launch, d, dram: float | None = None) -> tuple[float, float, float]:
    """A block's waits per warp in cycles (its slowest warp's loads, shared loads and
    barriers), their barrier part, and the wait of a memory period used (:func:`period_wait`;
    ``dram``: the DRAM latency under this launch's load, else the idle one)."""
    load = period_wait(x, d, dram)
    barriers = x.classes.get("barrier", 0) / max(x.warps, 1.0) * d.barrier_cycles
    waits = x.chain_periods * load + x.chain_shared_periods * shared_wait(x, d) + barriers
    return waits, barriers, load


def hidden_waits(x: Launch, load: float, turns: float = 1.0, per_tensor: float = 0.0) -> float:
    """Cycles per warp of a block in lockstep's global waits (``x.chain_periods`` of
    ``load`` cycles each) that the warp's own instructions hide. A load that ptxas issues
    ``n`` instructions before its first use (``x.loads_ahead``: as in lab 12's
    double-buffered matmuls, the next trip's tiles loaded before this trip's work) is on its
    way while the warp issues them, at least one cycle each, whatever the other warps do;
    a load used a few instructions later is not hidden. An asynchronous copy (``cp.async``)
    waited for ``n`` instructions later is on its way while all the warps in lockstep issue
    theirs (``turns`` cycles each) and the tensor cores run their tensor instructions among
    them (``per_tensor`` cycles each): a GEMM's next tiles arrive while it multiplies these.

    ``benchmarks/ahead_probe.py`` measured this on an H200's SMs: a trip of a load, D
    independent FMAs and the wait took max(L - d, 0) + n x D cycles with n warps per
    scheduler, within 4 %. (Counting n x d cycles, the other warps' turns in between, would
    make such trips up to half short, and put lab 21's ``heat3d_stream``, whose loads are
    used after a barrier in the same trip, at -27 %.)

    >>> from types import SimpleNamespace as NS
    >>> from cudakit.predict.sass import GlobalWaits
    >>> x = NS(chain_periods=10, loads_ahead=GlobalWaits((150,)))
    >>> hidden_waits(x, load=300.0)  # 10 waits of 300 cycles, each after 150 instructions
    1500.0
    """
    if x.loads_ahead is None:
        return 0.0
    return x.chain_periods * load * (1.0 - x.loads_ahead.exposed(load, 1.0, turns, per_tensor))


def period_wait(x: Launch, d, dram: float | None = None) -> float:
    """Cycles a warp waits per memory period: the loads of a period are in flight together and
    the warp waits for the slowest. A period with a request that misses L1 waits for the L2
    (or, at the launch's share of L2 reads that miss, for DRAM: ``dram``, the DRAM latency
    under load), however many of its other loads hit; the launch's L1-missing requests
    (``l2_read_requests``) are spread over its periods, so periods without one are those
    beyond the requests there are.

    (Weighting each sector by where it hits instead let a 5-point stencil's L1 hits of its
    neighbours dilute the wait for its centre row from DRAM: lab 21's ``heat2d_rows`` was
    -17 %, now -3 %; ``heat2d`` -20 %, now -13 %. Counting sectors rather than requests made
    a thread-per-row loop, whose request reads 32 new sectors one time in eight, wait for the
    L2 every time. Taking the slowest of a period's L2 lines, each missing independently,
    made the tiled matmuls wait for DRAM at every step, where their blocks share tiles
    through the L2: ``sgemm`` at 2048^3 +7 %.)

    >>> from types import SimpleNamespace as NS
    >>> d = NS(l1_latency_cycles=40, l2_latency_cycles=280, dram_latency_cycles=700,
    ...        figures={})  # no departure delay measured
    >>> t = NS(l2_read_requests=2, l2_read_bytes=64, dram_read_bytes=32)
    >>> x = NS(periods=4, traffic=t)  # 2 requests to the L2 in 4 periods, half from DRAM
    >>> period_wait(x, d)  # half the periods wait for the L2, half of those for DRAM
    265.0
    """
    t = x.traffic
    periods = x.periods
    if periods <= 0 or t.l2_read_bytes <= 0:  # no global reads beyond L1 (local memory)
        return float(d.l1_latency_cycles)
    from_l2 = min(1.0, t.l2_read_requests / periods)
    missed = min(1.0, t.dram_read_bytes / t.l2_read_bytes)
    from_dram = from_l2 * missed
    # a warp's requests leave one after another: each beyond the first that misses L1 comes
    # back ``load_departure_cycles`` after the one before (Hong & Kim's departure delay)
    behind = max(t.l2_read_requests / periods - 1.0, 0.0)
    return (from_dram * (dram or d.dram_latency_cycles)
            + (from_l2 - from_dram) * d.l2_latency_cycles
            + (1 - from_l2) * d.l1_latency_cycles
            + behind * d.figures.get("load_departure_cycles", 0.0))


def lockstep_hidden(x: Launch, d, warps: float, load: float) -> float:
    """Cycles per warp that ``warps`` warps in lockstep (the blocks resident on an SM, kept
    in step by barriers) take off their waits for global periods of ``load`` cycles: loads
    issued ahead and asynchronous copies
    (:func:`hidden_waits`; all the warps issue in turn between a copy and its wait, and the
    tensor cores run theirs), less the cycles a block alone on its SM adds to each of its
    global waits when each ends at a barrier: it goes on once the last byte all its warps
    loaded has come, at the SM's share of the L2's bandwidth (:func:`transfer_cycles`;
    blocks sharing an SM drift apart and share it over time, which the throughput terms
    price)."""
    w = max(x.warps, 1.0)
    turns = warps / d.issue_per_clk_per_sm
    mmas = sum(x.classes.get(c, 0) for c in TENSOR)
    per_tensor = warps * tensor_cycles(x, d) / mmas if mmas else 0.0
    transfer = 0.0
    if warps <= x.warps_per_block and x.chain_periods <= x.classes.get("barrier", 0) / w:
        transfer = transfer_cycles(x, d, warps)
    return hidden_waits(x, load + transfer, turns, per_tensor) - x.chain_periods * transfer


def transfer_cycles(x: Launch, d, warps: float) -> float:
    """Cycles the data of one global period of ``warps`` warps issuing together takes to
    reach their SM beyond the first request's latency: their reads through the L2 at the
    SM's share of the L2's bandwidth, the part from DRAM at its share of DRAM's, whichever
    takes longer.

    >>> from types import SimpleNamespace as NS
    >>> t = NS(l2_read_bytes=64 * 2**20, dram_read_bytes=0)
    >>> x = NS(traffic=t, warps=64 * 1024, chain_periods=1)  # 1 KiB a warp a period
    >>> d = NS(l2_read_gbs=64 * 100 * 1.0, dram_read_gbs=1000.0, sm_count=100, clock_hz=1e9)
    >>> transfer_cycles(x, d, warps=32)   # 32 KiB at 64 bytes a clock
    512.0
    """
    t = x.traffic
    if x.chain_periods <= 0:
        return 0.0
    share = warps / max(x.warps, 1.0) / x.chain_periods  # the traffic of one such period
    per_clock = d.clock_hz * d.sm_count / 1e9  # GB/s -> bytes per clock per SM
    return max(t.l2_read_bytes * share / (d.l2_read_gbs / per_clock),
               t.dram_read_bytes * share / (d.dram_read_gbs / per_clock))


def shared_wait(x: Launch, d) -> float:
    """Cycles a warp waits per shared-memory period of the emulator's count: the latency,
    or, with the SASS ptxas scheduled (``x.schedule``), its waits per load executed (the
    latency and the loads' wavefronts less the instructions issued since they started) times
    the loads per period."""
    loads = x.classes.get("ld.shared", 0)
    if x.schedule is None or not x.schedule.loads or not loads or not x.shared_periods:
        return d.shared_latency_cycles  # (no LDS in the SASS: shared data read generically)
    wavefronts = x.traffic.shared_load_wavefronts / loads
    per_load = x.schedule.exposed(d.shared_latency_cycles, wavefronts)
    return per_load * loads / x.shared_periods


def bulk_copy_cycles(d) -> float:
    """Cycles the SM's TMA unit takes per bulk copy of up to 256 bytes (0 where not measured).
    ptxas issues a warp's bulk copies one lane at a time, and the warps that issue them wait
    until the unit has taken them: ``benchmarks/bulk_copy_probe.py`` measured 4.7 cycles per
    SM per copy of 16 to 64 bytes with 4 blocks per SM on an H200, 6.8 for 256 bytes, and
    about 40 bytes a cycle beyond (the L2's share, priced by the L2 term). In a block kept in
    step by barriers the copies add to the interval they are issued in (siboehm's SGEMM
    kernel 12, 16 bytes a copy, takes 1.8 times kernel 10's time, the same tiling with plain
    loads)."""
    return d.figures.get("bulk_copy_cycles_per_sm", 0.0)


def own_wavefronts(x: Launch, d) -> float:
    """Cycles per warp of its shared waits that are its own loads' wavefronts passing the
    shared-memory pipe (:func:`shared_wait` counts them in each wait, one a clock). Where the
    pipe's time for all the warps in lockstep decides an interval between barriers, that
    time already holds them: counted again as waits, a block of one warp per SM whose loads
    conflict 32 ways (flash-attention's rows read across the banks) came out at twice its
    time."""
    w = max(x.warps, 1.0)
    serial = x.traffic.shared_load_wavefronts * 128 / d.shared_bytes_per_clk_per_sm / w
    return min(serial, x.chain_shared_periods * shared_wait(x, d))


def issue_slots(x: Launch) -> float:
    """The scheduler cycles the warps' instructions hold, summed over warps: one each, and the
    cycles an FP32 instruction waits for its register banks (``x.banks``: they hold the
    scheduler; two warps on one took twice one's time, ``benchmarks/sgemm_blocks.py``).

    >>> x = Launch({"fp32": 64, "int": 16}, 80, 80, 1, 0, 0, 0, 0, 1, 1, 1, None, banks=0.5)
    >>> issue_slots(x)  # 80 instructions, half a cycle more per FFMA
    112.0
    """
    return x.issued + x.classes.get("fp32", 0) * x.banks


def own_path(x: Launch) -> float:
    """The cycles the warps need to issue their instructions one after the other, summed
    over warps: at least one per instruction, the dependency chains the emulator's schedule
    found (``x.cycles``), and the stall counts ptxas gave the kernel's SASS (``x.stalls``:
    per class, the cycles a warp waits after such an instruction, for the latencies ptxas
    covers without a scoreboard) or, where more, the cycles an FP32 instruction of a warp
    issuing alone waits for its register banks (``x.banks``); and, for a loop larger than
    the instruction cache, the cycles each instruction takes to fetch (``x.fetch``), or
    where blocks run different code at once, those it waits beyond its dependencies
    (``x.fetch_spread``).

    >>> x = Launch({"fp32": 64, "ld.global": 16}, 80, 90, 1, 0, 0, 0, 0, 1, 1, 1, None,
    ...            stalls={"fp32": 4.5, "ld.global": 2.0})
    >>> own_path(x)  # 80 instructions, and 3.5 more cycles after each FADD, 1 after each load
    320.0
    """
    stalls = x.stalls or {}
    extra = sum(x.classes.get(kind, 0) * max(stalls.get(kind, 1.0) - 1.0,
                                             x.banks if kind == "fp32" else 0.0, 0.0)
                for kind in STALLED)
    return max(x.cycles + x.classes.get("fp32", 0) * x.banks + x.issued * x.fetch_spread,
               x.issued + extra, x.issued * x.fetch)


def pipe_cycles(x: Launch, d) -> dict[str, float]:
    """SM cycles each pipe needs for the whole launch, summed over SMs: the L1 (lines of
    global and local requests), shared memory (wavefronts), the tensor cores and each
    arithmetic pipe at its rate.

    >>> from types import SimpleNamespace as NS
    >>> t = NS(global_lines=0, local_lines=0, shared_wavefronts=64)
    >>> x = NS(traffic=t, classes={"fp32": 32})
    >>> d = NS(l1_read_bytes_per_clk_per_sm=128, shared_bytes_per_clk_per_sm=128, fp32_fma=4,
    ...        fp64_fma=1, int32_add=2, imad=1, sfu=0.5, shfl=1, figures={})
    >>> pipe_cycles(x, d)["shared-memory wavefronts"], pipe_cycles(x, d)["FP32"]
    (64.0, 8.0)
    """
    t = x.traffic
    cycles = {"L1/LSU": (t.global_lines + t.local_lines) * 128 / d.l1_read_bytes_per_clk_per_sm,
              "shared-memory wavefronts": t.shared_wavefronts * 128 /
              d.shared_bytes_per_clk_per_sm,
              "tensor cores": tensor_cycles(x, d)}
    for pipe, (classes, rate) in PIPES.items():
        cycles[pipe] = sum(x.classes.get(c, 0) for c in classes) / getattr(d, rate)
    return cycles


def busiest_pipe(x: Launch, d) -> tuple[str, float]:
    """The SM pipe that needs the most cycles for a warp's share of the launch, and those
    cycles (:func:`pipe_cycles` per warp; L1 lines and shared-memory wavefronts take one
    data path, so they add).

    >>> from types import SimpleNamespace as NS
    >>> t = NS(global_lines=0, local_lines=0, shared_wavefronts=64)
    >>> x = NS(traffic=t, warps=2, classes={"fp32": 32})
    >>> d = NS(l1_read_bytes_per_clk_per_sm=128, shared_bytes_per_clk_per_sm=128, fp32_fma=4,
    ...        fp64_fma=1, int32_add=2, imad=1, sfu=0.5, shfl=1, figures={})
    >>> busiest_pipe(x, d)   # 32 wavefronts a warp, one a clock, against 4 clocks of FFMA
    ('L1 and shared memory', 32.0)
    """
    cycles = pipe_cycles(x, d)
    cycles["L1 and shared memory"] = cycles.pop("L1/LSU") + \
        cycles.pop("shared-memory wavefronts")
    name = max(cycles, key=cycles.get)
    return name, cycles[name] / max(x.warps, 1.0)


def hong_kim(x: Launch, d, warps: float, dram: float | None = None) -> tuple[float, str]:
    """Cycles of one round of ``warps`` resident warps on an SM, and what limits it.

    Hong & Kim (ISCA 2009): each warp alternates computing (``comp`` cycles of the SM's issue)
    and waiting (``mem`` cycles over its memory periods). MWP, the warps whose memory waits
    overlap, is limited by the latency over the departure delay (L1 lines a warp sends per
    period, one per clock), by DRAM bandwidth (Little's law: bytes in flight = bandwidth x
    latency) and by the warps there are; CWP = (mem + comp) / comp warps compute during one
    wait. Three cases: too few warps (latency), memory-bound (CWP >= MWP), compute-bound.
    """
    t = x.traffic
    w = max(x.warps, 1.0)
    comp = issue_slots(x) / w / d.issue_per_clk_per_sm
    mem, barriers, load = _latency(x, d, dram)
    periods = x.chain_periods + x.chain_shared_periods + x.classes.get("barrier", 0) / w
    path = own_path(x) / w
    if mem <= 0 or periods <= 0:
        own = path  # a warp cannot issue faster than its dependencies allow
        return (own, "latency") if own > warps * comp else (warps * comp, "issue")
    departure = max(1.0, (t.global_lines + t.local_lines) / w / max(x.chain_periods, 1.0))
    mwp_latency = load / departure
    moved = t.dram_read_bytes + t.dram_write_bytes
    seconds = dram_seconds(t, d)
    per_period = moved / w / max(x.chain_periods, 1.0)
    bytes_per_clock = moved / seconds / d.sm_count / d.clock_hz if seconds else 0.0
    mwp_bandwidth = load * bytes_per_clock / per_period if per_period else math.inf
    # without global waits on the chain (cp.async copies waited for a trip later, shared
    # loads, barriers) nothing limits how many warps wait at once: those waits overlap
    # across all warps
    mwp = max(1.0, min(mwp_latency, mwp_bandwidth, warps)) if x.chain_periods > 0 else warps
    cwp = min((mem + comp) / comp, warps) if comp else warps
    slice_ = comp / periods  # compute between two waits
    # one warp's own path, a lower bound whatever the other warps do: its waits plus the
    # cycles it needs to issue its instructions in order with their dependencies
    # (:func:`own_path`, at least one per clock). A warp issues in order, so nothing after the
    # first reader of a pending load issues before the load is back: Hong & Kim's single
    # warp alternates mem and comp, and comp is its dependency chain, not its count
    own = mem + path
    in_phase = False
    if barriers > 0:
        # a block with barriers moves in lockstep: none of its warps passes a __syncthreads()
        # before all have arrived, so a block's waits before a barrier and the whole block's
        # work after it add (Baghsorkhi et al., PPoPP 2010, model barriers this way). The
        # blocks resident together start together and do the same work between barriers,
        # so they stay in phase: they wait at the same time and then share the schedulers.
        # Each interval between barriers costs the waits plus all resident warps' issue
        # (comp x warps), at least one warp's own path. (Taking only the block's own issue
        # here, as if the other blocks filled its waits, left lab 12's register-tiled matmuls
        # at -26...-34 % and lab 21's temporal-blocking stencil at -18...-37 %; Nsight
        # Compute shows them issuing in 65-83 % of the slots.) Global loads issued well
        # before their use come back while the warp issues, and asynchronous copies while all
        # the warps in lockstep work (:func:`hidden_waits`). The work
        # between barriers takes at least what the SM's busiest pipe needs for it
        # (:func:`busiest_pipe`: a tensor-core GEMM's shared-memory tiles and HMMAs).
        pipe = busiest_pipe(x, d)[1] * warps
        block = max(comp * warps, path, pipe) + bulk_copy_cycles(d) * x.bulk_copies / w * warps
        waits = mem - lockstep_hidden(x, d, warps, load) - \
            min(own_wavefronts(x, d), max(0.0, pipe - max(comp * warps, path)))
        in_phase = waits + block > own
        own = max(own, waits + block)
    if mwp >= warps and cwp >= warps:
        cycles, limit = mem + comp + slice_ * (mwp - 1), "barrier" if barriers > mem / 2 \
            else "latency"
    elif cwp >= mwp:
        # only the global waits queue for the memory system (MWP of them at a time); a
        # warp's shared-memory and barrier waits hold no DRAM bandwidth and overlap the
        # other warps' loads, so each round pays them once
        global_waits = x.chain_periods * load
        cycles = global_waits * warps / mwp + (mem - global_waits) + slice_ * (mwp - 1)
        limit = ("memory" if mwp == mwp_bandwidth else
                 "L1/LSU" if mwp == mwp_latency else "latency")
    else:
        cycles, limit = mem / periods + comp * warps, "issue"
    if own > cycles:
        return own, "barrier" if in_phase else "latency"
    return cycles, limit


def _terms(x: Launch, d, blocks_on_busiest: float, rounds: float,
           dram: float | None = None) -> dict:
    """Seconds of each bound for a given share of blocks on the busiest SM and rounds
    (``dram``: the DRAM latency under load, cycles)."""
    t = x.traffic
    clock = d.clock_hz
    share = blocks_on_busiest / x.blocks  # the busiest SM's part of the per-SM work
    terms = {
        "memory": dram_seconds(t, d),
        "L2": (t.l2_read_bytes + t.l2_write_bytes) / (d.l2_read_gbs * 1e9),
        "issue": issue_slots(x) * share / (d.issue_per_clk_per_sm * clock),
        **{pipe: cycles * share / clock for pipe, cycles in pipe_cycles(x, d).items()},
        "atomics": atomic_seconds(t, d),
        "shared atomics": t.shared_atomic_slots * 32 * share /
                          (d.shared_atomic_per_clk_per_sm * clock),
        "block dispatch": x.blocks / rate if (rate := d.figures.get("block_launch_per_s"))
        else 0.0,
        "partial stores": partial_store_seconds(t.global_store_partial_sectors,
                                                t.global_store_partial_lines, d.figures),
        "constant cache": t.constant_replays * share / (rate * clock)
        if (rate := d.figures.get("constant_replays_per_clk_per_sm")) else 0.0,
        "bulk copies": x.bulk_copies * share * bulk_copy_cycles(d) / clock,
    }
    resident = min(x.blocks_per_sm, blocks_on_busiest) * x.warps_per_block
    cycles, limit = hong_kim(x, d, resident, dram)
    if limit == "memory":
        # rounds queued on DRAM bandwidth: the blocks of a last, partial round draw what the
        # idle SMs leave, so that round takes its part of a full one (Little's law over the
        # GPU, not per SM); rounds limited by latency or issue take whole rounds
        rounds = min(rounds, max(x.blocks / (d.sm_count * x.blocks_per_sm), 1.0))
    terms["latency"] = rounds * cycles / clock
    left = blocks_on_busiest - (rounds - 1) * x.blocks_per_sm
    if limit != "memory" and rounds > 1 and float(blocks_on_busiest).is_integer() and \
            0 < left < x.blocks_per_sm:
        # the busiest SM's last round runs only the blocks left over: fewer warps share its
        # schedulers and pipes
        last, _ = hong_kim(x, d, left * x.warps_per_block, dram)
        terms["latency"] = ((rounds - 1) * cycles + last) / clock
    terms["limit"] = limit  # what decides the Hong & Kim term
    return terms


def _deciding(terms: dict) -> tuple[str, float]:
    """The largest bound, L1 and shared memory taken together (one data pipe)."""
    candidates = {k: v for k, v in terms.items() if k not in ("limit", "L1/LSU",
                                                               "shared-memory wavefronts")}
    pipe = terms["L1/LSU"] + terms["shared-memory wavefronts"]
    name = "shared-memory wavefronts" if terms["shared-memory wavefronts"] >= \
        terms["L1/LSU"] else "L1/LSU"
    candidates[name] = pipe
    key = max(candidates, key=candidates.get)
    return key, candidates[key]


def loaded(curve: tuple, gbs: float) -> float:
    """The DRAM latency (cycles) while ``gbs`` GB/s are drawn: linear between the measured
    points, the lightest point's below them, the last segment's slope above.

    >>> loaded(((100.0, 2000.0, 3000.0), (700.0, 900.0, 2900.0)), 2500.0)
    1900.0
    """
    rates, cycles = curve
    if gbs <= rates[0]:
        return cycles[0]
    k = next((i for i in range(1, len(rates)) if gbs <= rates[i]), len(rates) - 1)
    slope = (cycles[k] - cycles[k - 1]) / (rates[k] - rates[k - 1])
    return cycles[k - 1] + slope * (gbs - rates[k - 1])


def dram_latency(x: Launch, d, blocks_on_busiest: float, rounds: float) -> float | None:
    """The DRAM latency under this launch's own load, or None without a measured curve.

    Latency grows with the bandwidth drawn (queues in the memory system), and the bandwidth
    a launch draws falls as its latency grows (Little's law: bytes in flight / latency). The
    latency L solves L = curve(DRAM bytes / time(L)); time(L) grows with L, so the right side
    falls and one bisection finds the only crossing (``dram_loaded_latency``, measured by
    ``benchmarks/microbench.py``: warps chasing random lines while the bandwidth is timed).
    """
    curve = d.figures.get("dram_loaded_latency")
    t = x.traffic
    moved = t.dram_read_bytes + t.dram_write_bytes
    if not curve or moved <= 0:
        return None

    def drawn(latency: float) -> float:  # GB/s at that latency
        _, seconds = _deciding(_terms(x, d, blocks_on_busiest, rounds, latency))
        return moved / seconds / 1e9 if seconds > 0 else 0.0

    low, high = loaded(curve, 0.0), loaded(curve, drawn(loaded(curve, 0.0)))
    for _ in range(40):
        middle = (low + high) / 2
        if loaded(curve, drawn(middle)) > middle:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def estimate(x: Launch, d) -> Estimate:
    """The predicted time of launch ``x`` on device ``d`` (a :class:`~.device.Device`)."""
    sms = d.sm_count
    per_wave = sms * x.blocks_per_sm
    waves = x.blocks / per_wave
    busiest, rounds = math.ceil(x.blocks / sms), math.ceil(waves)
    dram = dram_latency(x, d, busiest, rounds)
    terms = _terms(x, d, busiest, rounds, dram)
    key, work = _deciding(terms)
    if key == "issue":  # a pipe that takes most issue slots names the bound (FP32, SFU...)
        pipe = max(PIPES, key=terms.get)
        if terms[pipe] >= 0.8 * terms["issue"]:
            key = pipe
    smooth = _terms(x, d, max(x.blocks / sms, 1), max(waves, 1), dram)  # no whole rounds
    _, work_smooth = _deciding(smooth)
    bound = terms["limit"] if key == "latency" else key
    if (key in PER_SM or key == "latency") and work > 1.2 * work_smooth:
        bound = "tail"
    launch = d.kernel_min_us * 1e-6
    total = work + launch
    if launch >= work:
        bound = "launch"
    breakdown = {k: v for k, v in terms.items() if k != "limit"}
    breakdown["launch"] = launch
    if bound == "tail":
        breakdown["tail"] = work - work_smooth
    if bound == "issue" and key == "latency":
        pipe = max(PIPES, key=terms.get)
        if terms[pipe] >= 0.8 * terms["issue"]:
            key = bound = pipe
    text = explain(bound, key, x, d, terms, total, waves, work, dram)
    return Estimate(total, PUBLIC.get(bound, bound), text, breakdown, waves)


def _shared_note(x: Launch, d, waits: float) -> str:
    """What the shared loads add to a warp's ``waits`` when ptxas's schedule decides it (at
    least a quarter of them): ``"; 1200 for shared loads ... "``, else nothing."""
    if x.schedule is None or not x.schedule.events or waits <= 0:
        return ""
    shared = x.chain_shared_periods * shared_wait(x, d)
    if shared < waits / 4:
        return ""
    distance = statistics.median_low(issued for _, issued in x.schedule.events)
    return (f"; {shared:.0f} for shared loads, which ptxas issues a median of {distance} "
            f"instructions before their use")


def _rate(bytes_: float, seconds: float) -> str:
    return f"{bytes_ / seconds / 1e12:.1f} TB/s" if seconds else "-"


def explain(bound: str, key: str, x: Launch, d, terms: dict, total: float, waves: float,
            work: float, dram: float | None = None) -> str:
    """One line with numbers for a participant."""
    t = x.traffic
    share = f"{work / total:.0%} of the time"
    resident = x.blocks_per_sm * x.warps_per_block
    per_scheduler = min(resident, math.ceil(x.blocks / d.sm_count) * x.warps_per_block) / 4
    if bound == "launch":
        return (f"launch-bound: the work ({work * 1e6:.1f} us) is shorter than the fixed cost "
                f"of a launch ({d.kernel_min_us:.1f} us)")
    if bound == "tail":
        return (f"tail: {waves:.2f} waves of {d.sm_count} x {x.blocks_per_sm} blocks; the last "
                f"wave keeps only part of the SMs busy ({share})")
    if bound == "memory":
        moved = t.dram_read_bytes + t.dram_write_bytes
        merging = merge_seconds(t, d.figures)
        rate = _rate(moved, terms["memory"] - merging)
        merges = (f"; {t.global_store_merges:.3g} parts of sectors that other blocks finish "
                  f"are merged one by one in L2 (+{merging * 1e6:.1f} us)"
                  if merging > 0.05 * terms["memory"] else "")
        if key == "latency" and work > 1.05 * terms["memory"]:  # Hong & Kim's memory case
            return (f"memory-bound: {moved / 1e6:.0f} MB from DRAM at {_rate(moved, work)} of "
                    f"{rate}{merges}: the work between a warp's loads is not hidden "
                    f"({per_scheduler:g} warps per scheduler), {share}")
        return f"memory-bound: {moved / 1e6:.0f} MB from DRAM at {rate}{merges}, {share}"
    if bound == "L2":
        moved = t.l2_read_bytes + t.l2_write_bytes
        return (f"L2-bound: {moved / 1e6:.0f} MB through L2 at {d.l2_read_gbs / 1e3:.1f} TB/s, "
                f"{share}")
    if bound == "L1/LSU":
        requests = t.global_load_requests + t.global_store_requests
        per = (t.global_load_sectors + t.global_store_sectors) / requests if requests else 0
        return (f"L1/LSU-bound: {t.global_lines + t.local_lines:.3g} 128-byte lines through L1 "
                f"({per:.1f} sectors per request), {share}")
    if bound == "shared-memory wavefronts":
        return (f"shared-memory-bound: {t.shared_wavefronts:.3g} wavefronts at "
                f"{d.shared_bytes_per_clk_per_sm / 128:g} per clock per SM, {share}")
    if bound in ("latency", "barrier"):
        mem, _, load = _latency(x, d, dram)
        w = max(x.warps, 1)
        if bound == "barrier":
            blocks = min(x.blocks_per_sm, math.ceil(x.blocks / d.sm_count))
            pipe, cycles = busiest_pipe(x, d)
            comp = issue_slots(x) / w / d.issue_per_clk_per_sm
            warps = blocks * x.warps_per_block
            hidden = lockstep_hidden(x, d, warps, load)
            mem -= hidden
            ahead = ""
            if x.loads_ahead is not None and hidden > mem / 4:
                issued = x.loads_ahead.distances + tuple(n for n, _ in x.loads_ahead.copies)
                ahead = (f"; {hidden:.0f} more for global loads issued a median of "
                         f"{statistics.median_low(issued)} instructions before their use "
                         f"hide behind the warps' work")
            shared = (f"then share the {pipe} ({cycles:.0f} cycles per warp)" if cycles > comp
                      else f"then share the schedulers ({per_scheduler:g} warps per scheduler)")
            return (f"barrier-bound: {x.classes.get('barrier', 0) / w:.0f} __syncthreads() per "
                    f"warp keep the {blocks} resident block{'s' if blocks > 1 else ''} in step: "
                    f"they wait for their loads together ({mem:.0f} cycles per warp"
                    f"{_shared_note(x, d, mem)}{ahead}), {shared}, {share}")
        if x.fetch and own_path(x) == x.issued * x.fetch:
            return (f"latency-bound on instruction fetch: the loop code its TPC's two SMs run "
                    f"overflows their shared instruction cache, so each warp waits "
                    f"{x.fetch:.1f} cycles per instruction for its code ({mem:.0f} cycles of "
                    f"loads per warp besides), {share}")
        return (f"latency-bound: {per_scheduler:g} warps per scheduler cannot hide "
                f"{load:.0f}-cycle loads ({x.chain_periods:.1f} waits per warp"
                f"{_shared_note(x, d, mem)}), {share}")
    if bound == "partial stores":
        return (f"partial-store-bound: stores cover only part of a 32-byte sector "
                f"{t.global_store_partial_sectors:.3g} times, in "
                f"{t.global_store_partial_lines:.3g} line requests (a warp writing a column); "
                f"the L2 merges each into its sector at "
                f"{t.global_store_partial_sectors / terms['partial stores'] / 1e9:.1f} per ns, "
                f"{share}")
    if bound == "bulk copies":
        return (f"bulk-copy-bound: {x.bulk_copies:.3g} bulk copies (cp.async.bulk, TMA), "
                f"which the SM's TMA unit takes one at a time, {bulk_copy_cycles(d):.1f} "
                f"cycles each; fewer, larger copies (one per tile, not per thread) move the "
                f"same bytes in a fraction of the time, {share}")
    if bound == "constant cache":
        rate = d.figures["constant_replays_per_clk_per_sm"]
        return (f"constant-cache-bound: warps read __constant__ memory at different addresses "
                f"at once ({t.constant_replays:.3g} addresses beyond each request's first); the "
                f"constant cache serves them one at a time, {rate:.2g} per clock per SM, {share}")
    if bound == "block dispatch":
        rate = d.figures["block_launch_per_s"]
        return (f"block-dispatch-bound: {x.blocks:,} blocks of {x.warps_per_block} warps; the "
                f"GPU starts {rate / 1e9:.2f} blocks per ns, so blocks this small finish "
                f"faster than new ones arrive, {share}")
    if bound == "atomics" and t.atomic_line_requests:
        return (f"atomics-bound: {t.global_atomics:.3g} atomics in {t.atomic_requests:.3g} "
                f"requests to L2 lines; the busiest line takes {t.atomic_line_requests:.3g} of "
                f"them one after another (with its neighbour in the same 256 bytes), and "
                f"lanes that add to the same word wait for each other, {share}")
    if bound in ("atomics", "shared atomics"):
        return (f"atomics-bound: {t.global_atomics:.3g} atomics, {t.hot_address_atomics:.3g} "
                f"on the busiest address, {share}")
    if bound == "tensor cores":
        n = sum(x.classes.get(c, 0) for c in TENSOR)
        return (f"tensor-core-bound: {n:.3g} warp matrix instructions (HMMA/DMMA/IMMA) at "
                f"{n / tensor_cycles(x, d):.2g} per clock per SM (the SM's clock drops under "
                f"this load), {share}")
    if key in PIPES:
        classes, rate = PIPES[key]
        n = sum(x.classes.get(c, 0) for c in classes)
        return (f"{PUBLIC.get(key, key)}-bound: {n:.3g} {key} warp instructions at "
                f"{getattr(d, rate):g} per clock per SM, {share}")
    return (f"issue-bound: {x.issued:.3g} warp instructions at {d.issue_per_clk_per_sm:g} per "
            f"clock per SM, {share}")
