"""Memory traffic of a launch from its sampled trace: L1/LSU work, shared-memory wavefronts,
and a cache model for the bytes that reach L2 and DRAM.

Hand-written: no library turns a GPU memory trace into L1/L2/DRAM traffic; the rules below
are the usual first-order cache model (compulsory plus capacity misses), kept short so a
participant can follow them.

Counting (the same rules as ``cudakit.analyze``, :mod:`cudakit.analysis.counting`): a global
request moves each 32-byte sector its active lanes touch once and looks up each 128-byte line
once; shared memory costs the wavefronts of its bank rule.

Cache rules (each count from the sample, scaled by total / sampled blocks):

1. **L1** (per SM, what shared memory leaves of it, split over the resident blocks): a block
   re-reading a sector hits in L1 when fewer distinct sectors than its share holds were read
   by the block since it read that one (its LRU stack distance, :func:`stack_distances`: a
   sliding window, such as a loop over ``x[j]`` that finishes a line in 32 trips, hits
   although the whole array does not fit); a block whose footprint fits its share keeps it
   all, one whose footprint is larger keeps none of its farther re-reads (the LRU cache
   streamed through: ``softmax_rows`` re-reading a 32 kB row, eight blocks per SM, read 3.6
   times its input from the L2 on an H200; counting the part of the footprint that fits
   made that 1.0, and counting reads rather than distinct sectors between a sector's reads
   put lab 21's ``heat3d_vec4``, whose re-reads are all within 120 sectors, among the far
   ones). Sectors every block reads, few enough for the L1 (a filter's weights), stay
   there from each SM's first round of blocks (:func:`kept_in_l1`). Stores and atomics go
   through to L2.
2. **DRAM reads, compulsory**: every distinct sector read is fetched once, per allocation
   at most the allocation's size (all blocks together cannot read more than the array),
   but not a sector the launch wrote before it first read it (:func:`written_first`: the
   L2 is write-back and allocates on a write, so the read finds the written line there;
   llm.c's fused residual kernel writes the residual and reads it back), unless the block's
   footprint exceeds its share of L2 (rule 3b: then such reads miss; llm.c's
   softmax writes a 201 kB row and reads it back, 1056 blocks at a time);
   and of those only the share the L2 did not keep from the launch before
   (:func:`relaunch_misses`): kernels are timed launch after launch, and the last launch
   left its data there (llm.c's layer-norm means over 25 MB ran in 17 us timed so, and in
   25 us under Nsight Compute, which empties the caches before each launch).
3. **DRAM reads, capacity**: when the kernel's whole footprint exceeds the L2, each wave
   of blocks fetches its own working set again (the blocks resident together share through
   L2; data reused by a later wave was evicted in between). The wave's working set follows
   how the sample's runs of neighbouring blocks grow: the sectors a run adds per block, times
   the blocks of a wave, plus what a run needs beyond that (a stencil's last halo), fitted on
   each run with the same blocks one grid row below (and, where a wave spans a plane of a
   3-D grid, one plane below), or, in a grid of one row, on the run and its first half
   (:func:`_run_growth`).
3b. **L2 share of a block**: the blocks resident together (a wave, or the whole grid when
   it is smaller) share the L2, so each holds about L2 / (blocks resident). When a block's
   own footprint (sectors it reads and writes) is larger, its re-reads that L1 missed and
   its re-writes of a sector come back from (go out to) DRAM, except those nearer than its
   share: the resident blocks stream through the L2 together, so a far re-use finds its
   sector evicted (:func:`block_set_misses`; llm.c's softmax: a block per 201 kB row, read
   twice and written twice by 1056 resident blocks: the H100 read 1.79 GB and wrote
   0.86 GB for 0.41 GB of rows; held out in session 10, ``fixtures/h100_peer_times.json``).
4. **DRAM writes**: once per distinct sector written (L2 is write-back and merges partial
   writes of one sector), less the share that a launch run again overwrites in L2 before
   the L2 writes it back (:func:`relaunch_misses`; llm.c's GELU, 12.6 MB in and 12.6 MB
   out, wrote 0.15 MB to DRAM on the H100, even from empty caches); a sector the kernel
   leaves partly written is read from DRAM first, to be written back whole
   (:func:`unfilled_sectors`).
5. A device without L2 (the C1060) sends every request's sectors to DRAM.

>>> import numpy as np
>>> pair_keys(np.array([0, 1]), np.array([5, 5])).tolist()
[5, 68719476741]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis import counting
from ..emu.counts import PTXAS_UNROLL
from ..emu.memory import HEAP_BASE
from ..emu.trace import AccessBatch, joined

SECTOR = counting.SECTOR
_SHIFT = 36  # sector numbers relative to the heap fit in 36 bits (2 TiB of heap)
_SECTOR_MASK = (1 << _SHIFT) - 1  # the sector of a pair key
ROWS = 1 << 16  # warps per kind of access counted one by one (more: a spread subset)
#: the part of the L2 a launch's lines fill before the oldest are evicted: the H100's (and
#: A100's) L2 is two partitions, each caching the lines that the SMs next to it use, so a
#: line used from both sides is held twice (NVIDIA A100 whitepaper, "L2 cache")
L2_KEPT = 0.5


def partial_writes(batch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The sectors each warp's store covers only in part: four arrays, one entry per such
    (warp, sector): the warp's row in the batch, the sector's number, whether it is the
    first of the warp's partial sectors in its 128-byte line, and the bytes it writes there.

    A warp storing 32 floats of one column of a row-major matrix leaves 32 sectors in 32
    lines partly written; a coalesced store 16 bytes off the sectors leaves 2, in 2 lines; an
    aligned one none. Lanes are naturally aligned (CUDA requires it), so none straddles a
    sector; lanes storing to the same address count once.

    >>> from types import SimpleNamespace as B
    >>> column = B(address=np.arange(32, dtype=np.uint64)[None] * 4096, size=4,
    ...            mask=np.ones((1, 32), bool), warps=1)
    >>> rows, _, first, _ = partial_writes(column)
    >>> int(rows.size), int(first.sum())
    (32, 32)
    >>> row = B(address=np.arange(32, dtype=np.uint64)[None] * 4 + 16, size=4,
    ...         mask=np.ones((1, 32), bool), warps=1)
    >>> [a.tolist() for a in partial_writes(row)]
    [[0, 0], [0, 4], [True, True], [16.0, 16.0]]
    """
    none = np.iinfo(np.uint64).max
    ordered = _sorted_rows(np.where(batch.mask, batch.address, none))
    live = ordered != none
    new = live.copy()
    new[:, 1:] &= ordered[:, 1:] != ordered[:, :-1]  # a distinct address
    sector = ordered // np.uint64(SECTOR)
    starts = live.copy()
    starts[:, 1:] &= sector[:, 1:] != sector[:, :-1]  # the first lane of a sector
    group = np.maximum(np.cumsum(starts.ravel()) - 1, 0)  # lanes after the last: weight 0
    filled = np.bincount(group, weights=(new * batch.size).ravel(),
                         minlength=int(starts.sum()))
    rows = np.broadcast_to(np.arange(batch.warps)[:, None], ordered.shape)[starts]
    partial = filled < SECTOR
    rows, sectors = rows[partial], sector[starts][partial]
    line = sectors * np.uint64(SECTOR) // np.uint64(counting.LINE)
    first_of_line = np.ones(rows.size, bool)
    first_of_line[1:] = (rows[1:] != rows[:-1]) | (line[1:] != line[:-1])
    return rows, sectors, first_of_line, filled[partial]


def merged_partial_writes(warp: np.ndarray, sector: np.ndarray, filled: np.ndarray,
                          looped: np.ndarray, first_of_line: np.ndarray,
                          weight: np.ndarray) -> tuple[float, float]:
    """The partial-sector writes that reach the L2, and their line requests, from one entry
    per (store instruction, warp, sector) (:func:`partial_writes`; ``warp``: one key per
    warp of the grid, ``weight``: what each entry stands for).

    The stores a warp runs once each (``looped`` false: not in a loop of more trips than
    ptxas unrolls) leave the SM one after another and reach the L2 together: their parts of
    one sector merge into one write, and none where together they fill it; each store still
    sends its own requests to the lines it leaves partly written. A particle
    update through an array of 24-byte structures (``p[i] = q``: four 4-byte stores, each
    leaving 24 sectors of the warp's 768 bytes partly written) wrote 54 sectors per warp in
    the L2 on an H200 (Nsight Compute), where the stores leave 96 parts, and its time was
    its DRAM traffic's; stores in a longer loop drift apart and count one by one.

    >>> warp, sector = np.zeros(4, np.int64), np.array([0, 0, 1, 1])
    >>> merged_partial_writes(warp, sector, np.array([12.0, 20.0, 4.0, 4.0]),
    ...                       np.zeros(4, bool), np.ones(4, bool), np.ones(4))
    (1.0, 2.0)
    """
    once = ~looped
    sectors = float((weight[looped]).sum())
    lines = float((weight[looped] * first_of_line[looped]).sum())
    if once.any():
        keys = pair_keys(np.unique(warp[once], return_inverse=True)[1], sector[once])
        ids, where = np.unique(keys, return_inverse=True)
        still = np.bincount(where, filled[once], ids.size) < SECTOR  # still partial
        share = np.bincount(where, weight[once], ids.size) / np.bincount(where, None, ids.size)
        sectors += float(share[still].sum())
        kept = still[where]  # each store still sends its own request to the line
        lines += float((weight[once] * first_of_line[once])[kept].sum())
    return sectors, lines


#: blocks this far apart in launch order start together and, without barriers, store in
#: step: the H100 ran a misaligned 2-D copy as fast when the tile to the right of a block's
#: came 2 blocks later as when it came next, and 20 % slower when it came 8 blocks later
#: (``benchmarks/shape_probe.py``, ``copy_panels``)
IN_STEP_BLOCKS = 2


def _member(values: np.ndarray, ordered: np.ndarray) -> np.ndarray:
    """Which ``values`` are in the sorted array ``ordered`` (a binary search: faster than
    ``np.isin``'s hash for the millions of sectors a launch writes)."""
    at = np.minimum(np.searchsorted(ordered, values), max(ordered.size - 1, 0))
    return (ordered[at] == values) if ordered.size else np.zeros(values.shape, bool)


def out_of_step_writes(sector: np.ndarray, block: np.ndarray, site: np.ndarray,
                       looped: np.ndarray, first_of_line: np.ndarray, written: np.ndarray,
                       barriers: bool, runs: list[tuple[int, int]]) -> tuple[float, float]:
    """Of the sample's partial-sector writes (one entry per warp and sector,
    :func:`partial_writes`), the share that the L2 merges one by one into a sector other
    stores write too, and the share that is the first such write of its request in its line.

    The parts of one sector written together merge before the L2 stores them. Together
    means by stores that each warp runs at most :data:`~cudakit.emu.counts.PTXAS_UNROLL` times
    (``looped``: in a longer loop the warps drift apart between trips), and from one block's
    warps, or from one store instruction in blocks at most :data:`IN_STEP_BLOCKS` apart that
    pass no barrier (neighbouring blocks start together and run the same code; a barrier
    holds each block until its slowest load is back). Other parts are each merged into the
    stored sector (a read-modify-write). On the H100 (``benchmarks/shape_probe.py``), with
    the same DRAM bytes: lab 11's ``transpose_padded`` at 4097 x 3000 (each output row 4
    bytes off a sector, the sector across a tile's edge finished by the block one grid row
    below) took 1.41x its aligned time; the 2-D copy with 3001 columns 1.01x, but 1.31x with
    its tiles taken in whole columns; ``copy_through_tile`` (the copy with a barrier) 1.31x;
    a copy of 256 MiB written 4 bytes off the sectors 1.01x with one store per thread, 1.26x
    by a grid-stride loop.

    A sector the sample writes once, next to one sector it writes (``written``: the sorted
    sectors the sample's stores write), is finished by a block not sampled: one farther
    than :data:`IN_STEP_BLOCKS` when the write's block has its in-step neighbours in its
    run (``runs``: (first block, count)), else unknown (counted as the others are). Written
    once between two written sectors, or between none, it stays partly written for good
    (:func:`unfilled_sectors`): no merge.

    >>> s = np.array([5, 5, 9, 9, 13]); w = np.arange(20)
    >>> once, lines = np.zeros(5, bool), np.ones(5, bool)
    >>> out_of_step_writes(s, np.array([0, 94, 3, 4, 7]), np.zeros(5), once, lines, w, False,
    ...                    [(0, 10), (94, 10)])
    (0.4, 0.4)
    >>> out_of_step_writes(s, np.array([0, 94, 3, 4, 7]), np.zeros(5), once, lines, w, True,
    ...                    [(0, 10), (94, 10)])
    (0.8, 0.8)
    >>> out_of_step_writes(s, np.array([0, 94, 3, 3, 7]), np.zeros(5), ~once, lines, w,
    ...                    False, [(0, 10), (94, 10)])
    (0.8, 0.8)
    >>> edge = np.array([20, 21, 22, 23])  # sector 20 is finished by a block not sampled
    >>> out_of_step_writes(np.array([20]), np.array([5]), np.zeros(1), once[:1], lines[:1],
    ...                    edge, False, [(0, 10)])
    (1.0, 1.0)
    """
    if not sector.size:
        return 0.0, 0.0
    order = np.lexsort((block, sector))
    sector, block, site = sector[order], block[order], site[order]
    looped, first_of_line = looped[order], first_of_line[order]
    starts = np.flatnonzero(np.r_[True, sector[1:] != sector[:-1]])
    count = np.diff(np.r_[starts, sector.size])
    span = np.maximum.reduceat(block, starts) - np.minimum.reduceat(block, starts)
    one_site = np.maximum.reduceat(site, starts) == np.minimum.reduceat(site, starts)
    once = ~np.maximum.reduceat(looped, starts)
    in_step = once & ((span == 0) | ((span <= IN_STEP_BLOCKS) & one_site & (not barriers)))
    head = sector[starts]
    beside = _member(head - 1, written).astype(int) + _member(head + 1, written)
    single = np.repeat((count == 1) & (beside == 1), count)  # finished by a block not sampled
    interior = np.zeros(sector.size, bool)
    for first, n in runs:
        interior |= (block >= first + IN_STEP_BLOCKS) & (block < first + n - IN_STEP_BLOCKS)
    merged = np.repeat((count > 1) & ~in_step, count) | (single & interior)
    known = np.repeat(count > 1, count) | (single & interior)
    unknown = single & ~interior
    if not known.any():
        return 0.0, 0.0
    scale = (known.sum() + unknown.sum()) / known.sum() / sector.size
    return (float(merged.sum() * scale), float((merged & first_of_line).sum() * scale))


def unfilled_sectors(addresses: np.ndarray, sizes: np.ndarray,
                     written: np.ndarray | None = None) -> int:
    """Sectors the stores leave partly written for good: fewer than 32 of their bytes
    written by the whole trace, with both neighbouring sectors written too (so the gap is
    the kernel's own, not the edge of the sampled blocks). The L2 must read such a sector
    from DRAM to write it back whole: the H100 read 262 MB for 268 MB of sectors that
    got one 4-byte store each (``benchmarks/ncu_probe.py``, ``probe:sector_head_256``).
    ``written``: the sorted sectors (``address // 32``) the trace writes, when ``addresses``
    are only the stores into the sectors that may be left partly written.

    >>> every_other = np.arange(0, 256, 8, dtype=np.uint64)  # 4 bytes of each 8
    >>> unfilled_sectors(every_other, np.full(every_other.size, 4))
    6
    >>> unfilled_sectors(np.arange(0, 256, 4, dtype=np.uint64), np.full(64, 4))
    0
    """
    if not addresses.size:
        return 0
    order = np.lexsort((sizes, addresses))
    addresses, sizes = addresses[order], sizes[order]
    new = np.r_[True, (addresses[1:] != addresses[:-1]) | (sizes[1:] != sizes[:-1])]
    sector = (addresses // np.uint64(SECTOR)).astype(np.int64)
    distinct_sectors, index = np.unique(sector, return_inverse=True)
    filled = np.bincount(index, weights=np.where(new, sizes, 0))
    around = distinct_sectors if written is None else written
    inside = _member(distinct_sectors - 1, around) & _member(distinct_sectors + 1, around)
    return int(np.count_nonzero((filled < SECTOR) & inside))


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values (a sort: faster than ``np.unique``'s hash for millions)."""
    ordered = np.sort(values)
    if ordered.size:
        ordered = ordered[np.r_[True, ordered[1:] != ordered[:-1]]]
    return ordered


def near_share(blocks: np.ndarray, sectors: np.ndarray, capacity: float,
               most: int = 1 << 16) -> float:
    """The share of the re-reads of a sector by the same block with fewer than ``capacity``
    other sectors read by that block in between (its LRU stack distance: an LRU cache of
    ``capacity`` sectors still holds it), the reads in trace order (the emulator runs a
    block's warps in step). Where the blocks read more than ``most`` sectors (a naive
    SGEMM's sample reads millions), on every k-th block, and on the first reads of each
    (the re-reads of a loop's first trips tell those of its later ones).

    >>> blocks, sectors = np.array([0, 0, 0, 1, 0, 0]), np.array([7, 8, 7, 7, 8, 8])
    >>> near_share(blocks, sectors, 1), near_share(blocks, sectors, 2)
    (0.3333333333333333, 1.0)
    >>> near_share(blocks, sectors, 2, most=3)  # block 0's first three reads: 7, 8, 7
    1.0
    """
    if blocks.size > most:
        ids = np.unique(blocks)
        ids = ids[::-(-blocks.size // most)]
        order = np.argsort(blocks, kind="stable")
        ranked = blocks[order]
        starts = np.searchsorted(ranked, ranked)  # each read's block's first position
        rank = np.empty(blocks.size, np.int64)
        rank[order] = np.arange(blocks.size) - starts
        keep = np.isin(blocks, ids) & (rank < max(most // ids.size, 1))
        blocks, sectors = blocks[keep], sectors[keep]
    distances = stack_distances(blocks, sectors)
    return float(np.mean(distances < capacity)) if distances.size else 0.0


def stack_distances(blocks: np.ndarray, sectors: np.ndarray) -> np.ndarray:
    """For each re-read of a sector by a block, the distinct other sectors the block read
    since it last read that one, in trace order.

    The count of reads ``m`` between a re-read at ``i`` and the read before it at ``p`` whose
    own previous read of their sector lies at or before ``p`` (each distinct sector once),
    counted for all re-reads at once on prefix sums kept sorted in aligned blocks of 2^k
    reads (a merge-sort tree: O(n log^2 n) in NumPy).

    >>> stack_distances(np.zeros(6, int), np.array([1, 2, 2, 3, 1, 2])).tolist()
    [0, 2, 2]
    """
    order = np.argsort(blocks, kind="stable")
    keys = pair_keys(blocks[order], sectors[order])
    n = keys.size
    by_key = np.argsort(keys, kind="stable")
    same = keys[by_key][1:] == keys[by_key][:-1]
    prev = np.full(n, -1, np.int64)
    prev[by_key[1:][same]] = by_key[:-1][same]
    at = np.flatnonzero(prev >= 0)
    if at.size == 0:
        return np.empty(0, np.int64)
    since = prev[at]
    # reads in [since + 1, at) whose previous read is at or before `since`
    return _count_at_most(prev, at, since) - _count_at_most(prev, since + 1, since)


def _count_at_most(values: np.ndarray, ends: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """For each query, how many of ``values[:end]`` are at most ``limit``."""
    n = values.size
    total = np.zeros(ends.size, np.int64)
    span = n + 2  # values are in [-1, n): shifted by 1, each block's part of the key space
    k = 0
    while (1 << k) <= n:
        size = 1 << k
        count = -(-n // size)
        padded = np.full(count * size, n, np.int64)
        padded[:n] = values
        ordered = (np.sort(padded.reshape(count, size), axis=1) + 1
                   + (np.arange(count, dtype=np.int64) * span)[:, None]).ravel()
        use = (ends >> k) & 1 == 1  # the prefix [0, end) takes the block before bit k
        block = (ends[use] >> (k + 1)) << 1
        total[use] += np.searchsorted(ordered, block * span + limits[use] + 1, side="right") \
            - block * size
        k += 1
    return total


def pair_keys(owner: np.ndarray, sector: np.ndarray) -> np.ndarray:
    """One int64 per (block or run, sector) pair, for counting distinct pairs."""
    return (owner.astype(np.int64) << _SHIFT) | sector.astype(np.int64)


@dataclass
class Traffic:
    """Scaled totals of one launch (bytes, sectors, requests, wavefronts)."""

    global_load_requests: float = 0.0
    global_store_requests: float = 0.0
    global_load_sectors: float = 0.0
    global_store_sectors: float = 0.0
    global_store_partial_sectors: float = 0.0  # sectors a store covers only in part
    global_store_partial_lines: float = 0.0  # the lines holding them, per request
    global_store_merges: float = 0.0  # of those, merged one by one (out_of_step_writes)
    global_store_merge_lines: float = 0.0  # their lines, per request
    dram_merge_share: float = 0.0  # of the merges, those at the ends of a request's run of
    # lanes (at most 2 parts in it) on lines the L2 writes back to DRAM (relaunch_misses)
    global_lines: float = 0.0
    local_lines: float = 0.0
    shared_wavefronts: float = 0.0
    shared_load_wavefronts: float = 0.0  # the loads' part of them
    shared_atomic_slots: float = 0.0
    global_atomics: float = 0.0
    hot_address_atomics: float = 0.0
    atomic_requests: float = 0.0  # atomic requests to the L2, one per warp and line
    atomic_line_requests: float = 0.0  # of those, to the line that receives the most
    atomic_pair_seconds: float = 0.0  # the L2's time for the busiest aligned pair of lines
    constant_replays: float = 0.0  # a __constant__ read's distinct addresses beyond its first
    l1_hit_bytes: float = 0.0
    l2_read_requests: float = 0.0  # load requests with a sector from the L2 (L1 misses)
    l2_read_bytes: float = 0.0
    l2_write_bytes: float = 0.0
    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    footprint_bytes: float = 0.0


def _sorted_rows(values: np.ndarray) -> np.ndarray:
    """``values`` with each row sorted, in place: only the rows not already in order (a
    warp's lanes mostly rise lane by lane) are sorted.

    >>> _sorted_rows(np.array([[1, 2, 3], [3, 1, 2]])).tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    unsorted = np.flatnonzero((values[:, 1:] < values[:, :-1]).any(axis=1))
    if unsorted.size:
        values[unsorted] = np.sort(values[unsorted], axis=1)
    return values


def _lane_sectors(batch):
    """The distinct sectors each warp touches: (warp row, sector) pairs, sectors counted
    from the heap's start (a straddling lane adds its last sector).

    Rows whose active lanes' sectors already rise lane by lane (unit-stride and most other
    coalesced accesses) are taken as they are; only the others are sorted, and the straddling
    lanes' last sectors join only when there are any.
    """
    shift = np.uint64(SECTOR.bit_length() - 1)  # a sector is a power of two bytes
    first = batch.address >> shift
    none = np.iinfo(np.uint64).max
    both = np.where(batch.mask, first, none)
    straddles = batch.mask & ((batch.address & np.uint64(SECTOR - 1)) + np.uint64(batch.size)
                              > np.uint64(SECTOR))
    if straddles.any():
        last = (batch.address + np.uint64(batch.size - 1)) >> shift
        both = np.concatenate([both, np.where(straddles, last, none)], axis=1)
    both = _sorted_rows(both)
    new = np.ones(both.shape, bool)
    new[:, 1:] = both[:, 1:] != both[:, :-1]
    new &= both != none
    rows, cols = np.nonzero(new)
    return rows, (both[rows, cols] - np.uint64(HEAP_BASE // SECTOR)).astype(np.int64)


def distinct_addresses(batch) -> np.ndarray:
    """Per warp, the distinct addresses its active lanes read (the constant cache serves a
    warp's request one distinct address at a time: CUDA C++ Programming Guide, "Constant
    Memory").

    >>> from types import SimpleNamespace as B
    >>> w = B(address=np.array([[8, 8, 12, 4]], np.uint64), mask=np.array([[1, 1, 1, 0]], bool))
    >>> distinct_addresses(w).tolist()
    [2]
    """
    none = np.iinfo(np.uint64).max
    ordered = np.sort(np.where(batch.mask, batch.address, none), axis=1)
    new = np.ones(ordered.shape, bool)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return (new & (ordered != none)).sum(axis=1)


def _max_multiplicity(batch) -> np.ndarray:
    """Per warp, the most lanes that hit one address (a shared atomic serialises on it)."""
    marked = np.where(batch.mask, batch.address, np.iinfo(np.uint64).max)
    ordered = np.sort(marked, axis=1)
    best = np.zeros(batch.warps, np.int64)
    run = np.ones(batch.warps, np.int64)
    for k in range(1, 32):
        same = (ordered[:, k] == ordered[:, k - 1]) & batch.mask.any(axis=1)
        run = np.where(same, run + 1, 1)
        best = np.maximum(best, np.where(ordered[:, k] != np.iinfo(np.uint64).max, run, 0))
    return np.maximum(best, batch.mask.any(axis=1).astype(np.int64))


def line_requests(batch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A warp's atomic goes to the L2 as one request per 128-byte line it touches: per such
    request, ``(line, the most lanes on one word of it, the sum over its 32-byte sectors of
    the most lanes on one word of each, the warp's row in the batch)``.

    >>> from types import SimpleNamespace
    >>> address = np.array([[0, 0, 4, 128] + [4] * 27 + [32]], np.uint64)  # words 0, 1, 8, 32
    >>> line, lanes, steps, row = line_requests(SimpleNamespace(
    ...     address=address, mask=np.ones((1, 32), bool)))
    >>> line.tolist(), lanes.tolist(), steps.tolist(), row.tolist()
    ([0, 1], [28, 1], [29, 1], [0, 0])
    """
    rows = np.broadcast_to(np.arange(batch.mask.shape[0])[:, None], batch.mask.shape)[batch.mask]
    words = (batch.address[batch.mask] >> np.uint64(2)).astype(np.int64)
    order = np.lexsort((words, rows))
    rows, words = rows[order], words[order]
    start = np.r_[True, (rows[1:] != rows[:-1]) | (words[1:] != words[:-1])]
    lanes = np.diff(np.r_[np.flatnonzero(start), rows.size])  # lanes per (warp, word)
    rows, words = rows[start], words[start]
    sectors = words >> 3
    first = np.r_[True, (rows[1:] != rows[:-1]) | (sectors[1:] != sectors[:-1])]
    at = np.flatnonzero(first)
    rows, sector_lanes = rows[at], np.maximum.reduceat(lanes, at)  # per (warp, sector)
    lines = sectors[at] >> 2
    first = np.r_[True, (rows[1:] != rows[:-1]) | (lines[1:] != lines[:-1])]
    at = np.flatnonzero(first)
    return lines[at], np.maximum.reduceat(sector_lanes, at), \
        np.add.reduceat(sector_lanes, at), rows[at]


def atomic_request_seconds(lanes: np.ndarray, steps: np.ndarray, floating: bool,
                           figures: dict) -> np.ndarray:
    """The L2's time for atomic requests to one line (:func:`line_requests`' ``lanes`` and
    ``steps``): a fixed part, and a step per lane queued on one word in each 32-byte sector
    (``atomic_request_s``, ``atomic_sector_step_s``), or the request's most loaded word's
    lanes one after another (``atomic_same_word_float_s`` or ``_int_s``), whichever is more.

    >>> f = {"atomic_request_s": 1.6e-9, "atomic_sector_step_s": 5e-10,
    ...      "atomic_same_word_float_s": 1.76e-9, "atomic_same_word_int_s": 7.3e-10}
    >>> atomic_request_seconds(np.array([1, 32]), np.array([4, 32]), True, f).round(11)
    array([3.600e-09, 5.632e-08])
    """
    word = figures["atomic_same_word_float_s" if floating else "atomic_same_word_int_s"]
    return np.maximum(figures["atomic_request_s"] + figures["atomic_sector_step_s"] * steps,
                      word * lanes)


def grouped(accesses, limit: int = ROWS) -> list[tuple[AccessBatch, float]]:
    """The trace's batches joined per (space, op, size), each with the factor it stands for.

    The counting rules work per warp, so one call over all warps of a kind gives the same
    totals, much faster; global stores stay apart per instruction (``site``: whether
    neighbouring blocks store a sector's parts together depends on it). Shared-memory kinds
    with more than ``limit`` warps keep a random subset of their batches (a long tiled loop
    repeats the same accesses), scaled up; global accesses are all kept, as the cache model
    needs every sector.
    """
    kinds: dict[tuple, list] = {}
    for a in accesses:
        site = a.site if (a.space, a.op) == ("global", "st") else -1
        kinds.setdefault((a.space, a.op, a.size, site, a.floating), []).append(a)
    out = []
    rng = np.random.default_rng(0)
    for (space, _, _, site, _), batches in kinds.items():
        total = sum(b.warps for b in batches)
        factor = 1.0
        if space != "global" and total > limit:
            keep = rng.random(len(batches)) < limit / total
            keep[0] = True
            batches = [b for b, k in zip(batches, keep, strict=True) if k]
            factor = total / sum(b.warps for b in batches)
        out.append((joined(batches, site), factor))
    return out


def thinned(batch, limit: int = ROWS) -> tuple[AccessBatch, float]:
    """Every k-th warp of a batch of more than ``limit`` warps, and k: per-warp counts of
    regular kernels repeat, so a spread subset gives the totals (shared-memory wavefronts of
    a long tiled loop would otherwise cost seconds to sort)."""
    if batch.warps <= limit:
        return batch, 1.0
    step = -(-batch.warps // limit)
    rows = slice(None, None, step)
    sub = AccessBatch(batch.kernel, batch.line, batch.column, batch.site, batch.space,
                      batch.op, batch.size, batch.block[rows], batch.warp[rows],
                      batch.mask[rows], batch.address[rows], batch.floating)
    return sub, batch.warps / sub.warps


class _Pairs:
    """(block, sector) pairs of one kind of access, gathered over the trace."""

    def __init__(self):
        self.blocks: list[np.ndarray] = []
        self.sectors: list[np.ndarray] = []

    def add(self, blocks, sectors):
        self.blocks.append(blocks)
        self.sectors.append(sectors)

    def arrays(self):
        if not self.blocks:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(self.blocks), np.concatenate(self.sectors)


def first_touch_share(accesses, gx: int, gy: int, kept: np.ndarray | None = None,
                      rounds: float = 1.0) -> float:
    """The share of global load requests (one per warp and load) that read a sector their
    warp has not read before, in the trace's program order: the requests that must go to
    the L2 even with an L1 of any size. Per warp, not per block: warps that walk the same
    words at the same pace (lab 20's force kernels, each reading ``x[j]``) each ask for a
    sector while the first one's miss is out, and each waits for the L2 (per block, their
    predictions were -29 % and, counted per warp, -4 %). A thread-per-row loop reading
    4-byte words from rows that start on 32-byte boundaries reads a new sector one time in
    eight (from rows that start anywhere, some lane crosses into a new sector most times); a
    stencil's row below, every time.

    ``kept``: sorted sectors the SM's L1 keeps from its earlier blocks (:func:`kept_in_l1`);
    a request whose only new sectors are kept goes to the L2 in the SM's first of ``rounds``
    rounds of blocks alone.

    >>> from cudakit.emu.trace import AccessBatch
    >>> def load(word):  # a warp of block 0 reading 32 consecutive words from ``word``
    ...     address = (HEAP_BASE + 4 * (word + np.arange(32, dtype=np.uint64)))[None, :]
    ...     return AccessBatch("k", 0, 0, 0, "global", "ld", 4, np.zeros((1, 3), np.int64),
    ...                        np.zeros(1, np.int64), np.ones((1, 32), bool), address)
    >>> first_touch_share([load(0), load(0), load(32), load(4)], 1, 1)  # 2 of 4 new
    0.5
    """
    by_size: dict[int, list[AccessBatch]] = {}  # each size's batches joined: one pass each
    starts: dict[int, list[int]] = {}  # the request number of each batch's first warp
    offset = 0
    for a in accesses:
        if a.space != "global" or a.op != "ld" or not a.warps:
            continue
        by_size.setdefault(a.size, []).append(a)
        starts.setdefault(a.size, []).append(offset)
        offset += a.warps
    if not by_size:
        return 0.0
    keys, requests = [], []
    for size, batches in by_size.items():
        batch = joined(batches)
        warps = np.array([b.warps for b in batches])
        # the request of each warp of the joined batch: its batch's first, plus its row there
        request = np.repeat(np.array(starts[size]) - np.cumsum(warps) + warps, warps) + \
            np.arange(batch.warps)
        rows, sectors = _lane_sectors(batch)
        keys.append(pair_keys(_block_ids(batch, gx, gy)[rows] * 32 + batch.warp[rows], sectors))
        requests.append(request[rows])
    request = np.concatenate(requests)
    order = np.argsort(request, kind="stable")  # program order: a key's first request
    _, first = np.unique(np.concatenate(keys)[order], return_index=True)
    asked = distinct(request).size
    if kept is None or kept.size == 0 or rounds <= 1.0:
        return distinct(request[order][first]).size / asked if asked else 0.0
    sector = (np.concatenate(keys)[order][first] & _SECTOR_MASK)
    staying = np.isin(sector, kept)
    anew = distinct(request[order][first][~staying])
    only_kept = np.setdiff1d(distinct(request[order][first][staying]), anew).size
    return (anew.size + only_kept / rounds) / asked if asked else 0.0


def kept_in_l1(blocks: np.ndarray, sectors: np.ndarray, sampled: int,
               capacity: float) -> np.ndarray:
    """The sectors every sampled block reads (a filter's weights, a lookup table), sorted,
    when together they fit in ``capacity`` bytes of L1: each SM's L1 keeps them from its
    first round of blocks for the rounds after (a 17-tap stencil reading its weights with
    ``LDG`` waited for the L2 at every block, +34 % on an H200). None where fewer than two
    blocks were sampled.

    >>> kept_in_l1(np.array([0, 0, 1, 1, 1]), np.array([5, 6, 5, 6, 9]), 2, 1024).tolist()
    [5, 6]
    """
    if sampled < 2 or blocks.size == 0:
        return np.empty(0, np.int64)
    pairs = distinct(pair_keys(blocks, sectors))
    readers = np.unique(pairs & _SECTOR_MASK, return_counts=True)
    common = readers[0][readers[1] >= sampled]
    return common if common.size * SECTOR <= capacity else np.empty(0, np.int64)


def written_first(accesses) -> np.ndarray:
    """The sectors (counted as :func:`_lane_sectors` does) whose first global access, in the
    trace's program order, is a store or an atomic, sorted.

    >>> from cudakit.emu.trace import AccessBatch
    >>> def batch(op, word):
    ...     address = np.full((1, 32), HEAP_BASE + 4 * word, np.uint64)
    ...     return AccessBatch("k", 0, 0, 0, "global", op, 4, np.zeros((1, 3), np.int64),
    ...                        np.zeros(1, np.int64), np.ones((1, 32), bool), address)
    >>> written_first([batch("ld", 0), batch("st", 0), batch("st", 8), batch("ld", 8)]).tolist()
    [1]
    """
    kinds: dict[tuple, list] = {}  # (a load?, access size) -> [(order, batch)]
    for order, a in enumerate(accesses):
        if a.space == "global":
            kinds.setdefault((a.op == "ld", a.size), []).append((order, a))
    if not any(load for load, _ in kinds) or all(load for load, _ in kinds):
        return np.zeros(0, np.int64)
    parts: dict[bool, tuple[list, list]] = {True: ([], []), False: ([], [])}
    for (load, _), items in kinds.items():
        rows, sectors = _lane_sectors(joined([a for _, a in items]))
        orders = np.concatenate([np.full(a.warps, order, np.int64) for order, a in items])
        parts[load][0].append(sectors)
        parts[load][1].append(orders[rows])

    def earliest(sectors, orders):  # each sector once, with the first access to it
        sectors, orders = np.concatenate(sectors), np.concatenate(orders)
        by = np.lexsort((orders, sectors))
        sectors, orders = sectors[by], orders[by]
        first = np.r_[True, sectors[1:] != sectors[:-1]]
        return sectors[first], orders[first]

    loads, load_at = earliest(*parts[True])
    stores, store_at = earliest(*parts[False])
    both, li, si = np.intersect1d(loads, stores, assume_unique=True, return_indices=True)
    return both[store_at[si] < load_at[li]]


def _in_buffers(sectors: np.ndarray, buffers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sector, the allocation it lies in (an index into ``buffers`` sorted by address)
    and whether it lies in one at all; and the allocations' sizes in that order."""
    bases = np.array([(int(b) - HEAP_BASE) // SECTOR for b in buffers], np.int64)
    sizes = np.array([b.nbytes for b in buffers], np.float64)
    order = np.argsort(bases)
    bases, sizes = bases[order], sizes[order]
    if not bases.size:
        return np.zeros(sectors.size, np.int64), np.zeros(sectors.size, bool), sizes
    which = np.searchsorted(bases, sectors, side="right") - 1
    inside = (which >= 0) & (sectors < bases[np.maximum(which, 0)] +
                             -(-sizes[np.maximum(which, 0)] // SECTOR))
    return which, inside, sizes


def _pair_weights(sectors: np.ndarray, pairs: bool) -> np.ndarray:
    """What each of the distinct, sorted ``sectors`` costs in sectors: one, or with
    ``pairs`` two for the first of an aligned pair and none for its neighbour."""
    if not pairs:
        return np.ones(sectors.size)
    pair = sectors >> 1
    return np.r_[True, pair[1:] != pair[:-1]] * 2.0


def _bytes_per_buffer(sectors: np.ndarray, buffers, scale: float, pairs: bool = False) -> float:
    """Distinct sectors scaled to the launch, per allocation at most its size. ``pairs``: in
    aligned pairs of sectors, as DRAM serves reads (a 32-byte sector read alone costs 64 bytes
    of DRAM traffic, its neighbour's too: ``benchmarks/dram_random.py``, Nsight Compute's
    ``dram__bytes_read`` on the H100).

    >>> sectors = np.array([0, 1, 6])
    >>> _bytes_per_buffer(sectors, [], 1.0), _bytes_per_buffer(sectors, [], 1.0, pairs=True)
    (96.0, 128.0)
    """
    sectors = distinct(sectors)
    if not sectors.size:
        return 0.0
    weight = _pair_weights(sectors, pairs)
    which, inside, sizes = _in_buffers(sectors, buffers)
    total = float(weight[~inside].sum()) * SECTOR * scale  # __device__ arrays and such
    counts = np.bincount(which[inside], weight[inside], minlength=sizes.size)
    return total + float(np.minimum(counts * SECTOR * scale, sizes).sum())


def pair_factor(sectors: np.ndarray, buffers, l2_bytes: float) -> float:
    """DRAM bytes per byte of sectors missed in L2: the sectors, those of allocations larger
    than the L2 (whose re-reads miss) counted in aligned pairs, over the sectors counted
    alone. A gather of single words from 64 MB: about 2; a stream, or data the L2 keeps: 1.

    >>> class Buffer(int):
    ...     nbytes = 1 << 30
    >>> from cudakit.emu.memory import HEAP_BASE
    >>> pair_factor(np.array([0, 2, 4, 6]), [Buffer(HEAP_BASE)], 50e6)
    2.0
    """
    sectors = distinct(sectors)
    which, inside, sizes = _in_buffers(sectors, buffers)
    large = inside & (sizes[which] > l2_bytes) if sizes.size else inside
    if not large.any():
        return 1.0
    paired = float(_pair_weights(sectors[large], True).sum())
    return (paired + float(np.count_nonzero(~large))) / sectors.size


def relaunch_misses(touched: float, written: float, l2_bytes: float,
                    curves=None) -> tuple[float, float]:
    """The shares of a launch's reads that miss in L2 and of its writes that reach DRAM when
    it is launched again and again on the same data, as kernels are timed: what one launch
    leaves in L2 the next finds there. ``touched``: the distinct bytes the launch reads or
    writes; ``written``: those it writes.

    ``curves``: the device's ``l2_relaunch`` (:func:`~cudakit.predict.device.read_relaunch`,
    ``benchmarks/l2_reuse.py``): for launches that write none, half or all of what they
    touch, the read misses and the write-backs measured against touched / L2 size;
    interpolated in both. On an H200 a launch that only reads keeps all of it up to 0.47 of
    the L2, 73 % at 0.67 and none from 0.93; one that updates its data in place writes a
    third of it back already at 0.47 (its dirty lines are cleaned early). Without curves:
    all or nothing at :data:`L2_KEPT` of the L2 (the H100's two partitions each cache the
    lines their SMs use, so a line used from both sides is held twice). The H100 keeps that
    rule: the H200's curves, scaled to its L2, made llm.c's ``residual_forward_kernel2``
    (0.72 of its L2) −23 % and ``encoder_forward_kernel3`` (0.51) −39 %, from +17 and +12 %
    (held out in session 10), so it keeps less than the H200 at the same share.

    >>> relaunch_misses(25e6, 0.0, 50e6), relaunch_misses(100e6, 50e6, 50e6)
    ((0.0, 0.0), (1.0, 1.0))
    >>> curves = ((0.0, 1.0), (0.0, 0.5, 1.0), ((0.0, 1.0), (0.0, 1.0), (0.5, 1.0)),
    ...           ((0.0, 1.0), (0.0, 1.0), (1.0, 1.0)))
    >>> relaunch_misses(25e6, 25e6, 50e6, curves)   # touched / L2 = 0.5, all of it written
    (0.75, 1.0)
    """
    if l2_bytes <= 0:
        return 1.0, 1.0
    if not curves:
        return (0.0, 0.0) if touched <= l2_bytes * L2_KEPT else (1.0, 1.0)
    x, shares, reads, writes = curves
    share = min(max(written / touched, 0.0), 1.0) if touched > 0 else 0.0
    at = float(np.clip(touched / l2_bytes, x[0], x[-1]))
    read = np.interp(share, shares, [np.interp(at, x, row) for row in reads])
    write = np.interp(share, shares, [np.interp(at, x, row) for row in writes])
    return float(np.clip(read, 0.0, 1.0)), float(np.clip(write, 0.0, 1.0))


def block_set_misses(block_set: float, share: float) -> float:
    """The share of a block's far re-uses that miss: all of them when its footprint
    ``block_set`` exceeds the L2 ``share`` it has, none when it fits.

    The blocks resident together stream through the L2 at the same pace, so a block's
    sector comes back after the others have brought (block_set / share) times the L2's
    size: an LRU-like cache has evicted every one of them, not the part beyond the share.
    On the H100 a block-per-row kernel reading its 201 kB row a second time, 1056 blocks at
    once (212 MB), took as long for the second pass as for the first (0.145 and 0.151 ms,
    ``benchmarks/shape_probe.py``, ``row_passes``); llm.c's softmax read each row from DRAM
    as often as it read it (held out in session 10).

    >>> block_set_misses(400.0, 100.0), block_set_misses(50.0, 100.0)
    (1.0, 0.0)
    """
    return 1.0 if block_set > share else 0.0


def _beyond_share(blocks: np.ndarray, sectors: np.ndarray, pairs: float, share: float,
                  reuses: float, near_below: float) -> float:
    """Of ``reuses`` (a block's re-reads that L1 did not serve, or its re-writes), those
    farther apart than ``share`` bytes of that block's own accesses (:func:`near_share`);
    ``pairs``: the distinct (block, sector) pairs of ``blocks``, ``sectors``; ``near_below``:
    the share of all re-uses already served nearer (by L1)."""
    if reuses <= 0 or blocks.size < 2:
        return 0.0
    traced = blocks.size - pairs
    if traced <= 0:
        return 0.0
    near = near_share(blocks, sectors, share / SECTOR)
    served = max(near - near_below, 0.0) / max(1.0 - near_below, 1e-9)
    return reuses * (1.0 - min(served, 1.0))


def _run_growth(groups, blocks: np.ndarray, sectors: np.ndarray,
                reach: int) -> tuple[float, float]:
    """How the distinct sectors of neighbouring blocks grow with their number:
    ``(ends, per_block)`` such that ``ends + per_block * n`` sectors serve ``n`` blocks.

    Fitted on the sample's groups (:class:`~cudakit.predict.sample.Sample`): a run of
    consecutive blocks with the same blocks one grid row further and, in a 3-D grid whose
    waves of ``reach`` blocks span a plane, one plane further. Blocks of a stencil share
    their halos with their neighbours, so a wave of many rows needs little more than its own
    rows plus one halo (``ends``), not a lone block's sectors times its blocks: a block adds
    its sectors less those its neighbour in y shares (``per_block``), and, where a wave
    spans planes, less those its neighbour in z shares too (a 3-D stencil's wave of whole
    planes adds one plane per plane of blocks: the planes above and below, and the rows
    beside, are its neighbours' too). (A lone run: against its first half.)

    >>> _run_growth([[(0, 2), (4, 2)]], np.array([0, 1, 4, 5]), np.array([0, 1, 1, 2]), 8)
    (1.0, 0.5)
    """
    whole = own = shared = 0.0
    total = blocks_own = 0
    # (a lone block, the sample's first, has no neighbour to grow against)
    groups = [g for g in groups if len(g) > 1 or g[0][1] > 1] or groups
    for group in groups:
        if len(group) > 1:
            start = group[0][0]
            runs = [group[0], *([run for run in group[1:] if abs(run[0] - start) <= reach]
                                or group[1:2])]
        else:
            runs = [(group[0][0], group[0][1] // 2),
                    (group[0][0] + group[0][1] // 2, group[0][1] - group[0][1] // 2)]
        inside = [(blocks >= f) & (blocks < f + c) for f, c in runs]
        first = distinct(sectors[inside[0]]).size
        whole += distinct(sectors[np.logical_or.reduce(inside)]).size
        own += first
        blocks_own += runs[0][1]
        for near, (_, count) in zip(inside[1:], runs[1:], strict=True):
            # the neighbours' sectors the run also reads, per neighbouring block
            both = distinct(sectors[inside[0] | near]).size
            shared += (first + distinct(sectors[near]).size - both) / count
        total += sum(c for _, c in runs)
    per_block = whole / max(total, 1)
    if blocks_own:
        per_block = min(max(own / blocks_own - shared / len(groups), 0.0), per_block)
    return max(whole - per_block * total, 0.0) / max(len(groups), 1), per_block


def _block_ids(batch, gx: int, gy: int) -> np.ndarray:
    """Each warp's block, numbered in launch order (x fastest)."""
    return batch.block[:, 0] + gx * (batch.block[:, 1] + gy * batch.block[:, 2])


def _hottest_line(t: Traffic, parts: list[tuple], scale: float, sampled: int) -> None:
    """The atomic requests of the line the launch's atomics load most (the L2 serves a
    line's requests one after another), from the sample's: a line that two or more sampled
    blocks update is shared by the grid and its load scales with it; one that a single
    block updates is that block's own (``out[blockIdx.x]``) and does not. With each
    request's seconds (:func:`atomic_request_seconds`), the busiest pair of neighbouring
    lines' (``atomic_pair_seconds``): two lines in one aligned 256 bytes queue together (on
    an H200, 2 hot lines 128 bytes apart took 2.0x their time 256 or more apart,
    ``benchmarks/atomic_slices.py``)."""
    line = np.concatenate([p[0] for p in parts])
    ids, where = np.unique(line, return_inverse=True)
    requests = np.bincount(where, np.concatenate([p[1] for p in parts]), ids.size)
    blocks = np.unique(np.stack([where, np.concatenate([p[2] for p in parts])]), axis=1)[0]
    shared = np.bincount(blocks, minlength=ids.size) > 1 if sampled > 1 else \
        np.ones(ids.size, bool)
    factor = np.where(shared, scale, 1.0)
    t.atomic_requests = float(requests.sum()) * scale
    t.atomic_line_requests = float((requests * factor).max())
    seconds = np.bincount(where, np.concatenate([p[3] for p in parts]), ids.size) * factor
    pairs, at = np.unique(ids >> 1, return_inverse=True)
    t.atomic_pair_seconds = float(np.bincount(at, seconds, pairs.size).max())


def traffic(sample, grid, buffers, *, l1_bytes_per_block: float, l2_bytes: int,
            blocks_per_wave: int, aggregated: bool = False, relaunch=None,
            atomic_figures: dict | None = None, stores_together: bool = True) -> Traffic:
    """The launch's :class:`Traffic` from its :class:`~cudakit.predict.sample.Sample`
    (``aggregated``: ptxas folds a warp's atomic adds to one address into one: such a
    request costs one add on its word, 0.1 ms where 0.98 ms would be predicted for the
    microbenchmark's ``atomic_same``, measured 0.10 ms; ``relaunch``: the device's
    ``l2_relaunch`` curves, :func:`relaunch_misses`; ``atomic_figures``: the device's, to
    price atomic requests, :func:`atomic_request_seconds`; ``stores_together``: whether
    ptxas issues the kernel's stores without a branch between them, so that a warp's
    parts of a sector can merge, :func:`merged_partial_writes`)."""
    t = Traffic()
    scale = sample.scale
    gx, gy = grid[0], grid[1]
    loads, stores = _Pairs(), _Pairs()
    atomic_addresses, stored, stored_sizes, stored_sectors = [], [], [], []
    atomic_lines: list[tuple] = []  # per atomic: line, weight, block, seconds per request
    partial = ([], [], [], [], [])  # per partial write: sector, block, site, looped, first
    parted = []  # and its warp, the bytes it writes into the sector, its weight
    edge_parts = [0.0, 0.0]  # partial writes at the ends of their request's run, and all
    for a, factor in grouped(sample.trace.accesses):
        sub, k = thinned(a)
        k *= factor
        if a.space == "shared":
            if a.op == "atom":
                t.shared_atomic_slots += k * float(_max_multiplicity(sub).sum())
            else:
                wavefronts = k * float(counting.wavefronts(sub).sum())
                t.shared_wavefronts += wavefronts
                if a.op == "ld":
                    t.shared_load_wavefronts += wavefronts
            continue
        if a.space == "local":
            t.local_lines += k * float(counting.cache_lines(sub).sum())
            continue
        if a.space == "constant":
            t.constant_replays += k * float(np.maximum(distinct_addresses(sub) - 1, 0).sum())
            continue
        if a.space != "global":
            continue
        requests = k * float(counting.requests(sub).sum())
        sectors = k * float(counting.sectors(sub).sum())
        t.global_lines += k * float(counting.cache_lines(sub).sum())
        bid = _block_ids(a, gx, gy)
        rows, secs = _lane_sectors(a)
        if a.op == "ld":
            t.global_load_requests += requests
            t.global_load_sectors += sectors
            loads.add(bid[rows], secs)
        elif a.op == "st":
            t.global_store_requests += requests
            t.global_store_sectors += sectors
            # every warp, not a thinned subset: a sector's parts are in neighbouring warps
            prows, psectors, pfirst, pfilled = partial_writes(a)
            if prows.size:  # a request with 2 parts or fewer: a run of lanes off a sector
                per_request = np.bincount(prows)
                edge_parts[0] += factor * float((per_request[prows] <= 2).sum())
                edge_parts[1] += factor * float(prows.size)
            # a store in a loop of more trips than ptxas unrolls (a 4-trip loop is 4 stores in
            # SASS, issued one after the other)
            warps = pair_keys(bid, a.warp)
            looped = warps.size > PTXAS_UNROLL * distinct(warps).size
            # (sectors counted from the heap's start, as _lane_sectors counts them)
            psectors = (psectors - np.uint64(HEAP_BASE // SECTOR)).astype(np.int64)
            for part, values in zip(partial, (psectors, bid[prows],
                                              np.full(prows.size, a.site),
                                              np.full(prows.size, looped), pfirst),
                                    strict=True):
                part.append(values)
            parted.append((warps[prows], pfilled, np.full(prows.size, float(factor))))
            stores.add(bid[rows], secs)
            stored.append(a.address[a.mask])
            stored_sizes.append(np.full(stored[-1].size, a.size))
            stored_sectors.append(secs)
        else:  # an atomic reads and writes its sector in L2
            t.global_atomics += float(a.mask.sum())
            t.global_store_requests += requests
            t.global_store_sectors += sectors
            stores.add(bid[rows], secs)
            atomic_addresses.append(a.address[a.mask])
            line, lanes, steps, row = line_requests(sub)
            weight = np.full(line.size, k)
            seconds = np.zeros(line.size)
            if atomic_figures and "atomic_request_s" in atomic_figures:
                seconds = atomic_request_seconds(lanes, steps, a.floating, atomic_figures) * k
            if aggregated:  # one word for the whole warp: a single add on it, its only cost
                single = np.bincount(row, minlength=sub.warps)[row] == 1
                weight = np.where(single, 0.0, weight)
                if atomic_figures and "atomic_request_s" in atomic_figures:
                    word = atomic_figures["atomic_same_word_float_s" if a.floating
                                          else "atomic_same_word_int_s"]
                    seconds = np.where(single, word * k, seconds)
            atomic_lines.append((line, weight, _block_ids(sub, gx, gy)[row], seconds))
    if atomic_addresses:
        _, counts = np.unique(np.concatenate(atomic_addresses), return_counts=True)
        t.hot_address_atomics = float(counts.max())
        _hottest_line(t, atomic_lines, scale, sample.sampled_blocks)
    ld_blocks, ld_sectors = loads.arrays()
    st_blocks, st_sectors = stores.arrays()
    if partial[0]:
        warp, filled, weight = (np.concatenate(p) for p in zip(*parted, strict=True))
        t.global_store_partial_sectors, t.global_store_partial_lines = merged_partial_writes(
            warp, np.concatenate(partial[0]), filled,
            np.concatenate(partial[3]) | (not stores_together), np.concatenate(partial[4]), weight)
        merges, lines = out_of_step_writes(*map(np.concatenate, partial), distinct(st_sectors),
                                           sample.counter.classes.get("barrier", 0) > 0,
                                           sample.runs)
        t.global_store_merges = merges * float(weight.sum())
        t.global_store_merge_lines = lines * float(weight.sum())
    per_block = float(distinct(pair_keys(ld_blocks, ld_sectors)).size)
    sampled = sample.sampled_blocks
    # the reads DRAM can serve: not of sectors the launch wrote first (rule 2)
    fetched = ~np.isin(ld_sectors, written_first(sample.trace.accesses))
    ends, per_extra = _run_growth(sample.groups or [[run] for run in sample.runs],
                                   ld_blocks[fetched], ld_sectors[fetched], blocks_per_wave)
    # rule 1: L1 hits of a block's re-reads: all if its footprint fits its share, else the
    # near ones
    footprint_block = per_block / sampled * SECTOR
    rereads = max(t.global_load_sectors - per_block, 0.0)
    traced = ld_blocks.size - per_block  # the re-reads among the traced pairs
    fits = footprint_block <= l1_bytes_per_block
    near = near_share(ld_blocks, ld_sectors, l1_bytes_per_block / SECTOR) \
        if traced > 0 and not fits else 0.0
    hits = rereads if fits else rereads * near
    l2_read_sectors = t.global_load_sectors - hits
    # requests with a new sector, and of the others the share whose re-reads L1 lost
    new = first_touch_share(sample.trace.accesses, gx, gy,
                            kept_in_l1(ld_blocks, ld_sectors, sampled, l1_bytes_per_block),
                            sample.total_blocks / max(blocks_per_wave, 1))
    t.l2_read_requests = t.global_load_requests * (
        new + (1.0 - new) * (1.0 - hits / rereads if rereads > 0 else 0.0))
    t.l1_hit_bytes = hits * SECTOR * scale
    t.l2_read_bytes = l2_read_sectors * SECTOR * scale
    t.l2_write_bytes = t.global_store_sectors * SECTOR * scale
    # rules 2-5: DRAM
    share = l2_bytes / max(min(blocks_per_wave, sample.total_blocks), 1)  # rule 3b
    st_pairs = float(distinct(pair_keys(st_blocks, st_sectors)).size)
    block_set = (per_block + st_pairs) / sampled * SECTOR
    # what the launch reads back after writing it stays in L2 for as long as the block's
    # footprint fits its share (rule 3b)
    compulsory_read = _bytes_per_buffer(ld_sectors[fetched], buffers, scale, pairs=True) + \
        _bytes_per_buffer(ld_sectors[~fetched], buffers, scale) * \
        block_set_misses(block_set, share)
    t.dram_write_bytes = _bytes_per_buffer(st_sectors, buffers, scale)
    t.footprint_bytes = compulsory_read + t.dram_write_bytes
    # rules 2 and 4: what the launch before left in L2, launched again and again
    touched = _bytes_per_buffer(np.concatenate([ld_sectors, st_sectors]), buffers, scale)
    miss_read, miss_write = relaunch_misses(touched, t.dram_write_bytes, l2_bytes, relaunch)
    if l2_bytes <= 0:
        t.dram_read_bytes = t.l2_read_bytes
        t.dram_write_bytes = t.l2_write_bytes
    elif t.footprint_bytes <= l2_bytes or miss_read == 0.0:
        t.dram_read_bytes = compulsory_read * miss_read
    else:
        wave_set = min(compulsory_read, (ends + per_extra * blocks_per_wave) * SECTOR)
        waves = sample.total_blocks / blocks_per_wave
        # what misses in L2 comes from DRAM in pairs of sectors: data read in scattered
        # sectors (a gather from an array larger than the L2) costs twice its bytes
        pairs = pair_factor(ld_sectors[fetched], buffers, l2_bytes)
        t.dram_read_bytes = max(compulsory_read * miss_read,
                                pairs * min(t.l2_read_bytes, waves * wave_set))
    if l2_bytes > 0:  # rule 4: writes the L2 keeps, launch after launch
        t.dram_write_bytes *= miss_write
        t.dram_merge_share = miss_write * (edge_parts[0] / edge_parts[1] if edge_parts[1] else 0)
    # rule 3b: a block's own re-reads and re-writes beyond its L2 share (in the part of
    # the launch's data that the L2 does not keep from launch to launch)
    if l2_bytes > 0 and miss_read > 0 and block_set > share:
        far = _beyond_share(ld_blocks, ld_sectors, per_block, share, rereads - hits, near)
        t.dram_read_bytes = min(t.dram_read_bytes + far * block_set_misses(block_set, share)
                                * miss_read * SECTOR * scale, t.l2_read_bytes)
        rewrites = max(t.global_store_sectors - st_pairs, 0.0)
        far = _beyond_share(st_blocks, st_sectors, st_pairs, share, rewrites, 0.0)
        t.dram_write_bytes += far * block_set_misses(block_set, share) * miss_read * \
            SECTOR * scale
    if l2_bytes > 0 and partial[0] and t.dram_write_bytes:  # rule 4: sectors written in
        # part are read to be written back whole; only a sector some warp writes in part can
        # be, and not one the kernel reads too (``p[i] = q`` of a structure read whole): it
        # is in the L2 already
        base = np.int64(HEAP_BASE // SECTOR)
        lanes, sizes = np.concatenate(stored), np.concatenate(stored_sizes)
        open_sectors = np.concatenate(partial[0])
        keep = _member((lanes // np.uint64(SECTOR)).astype(np.int64) - base,
                       distinct(open_sectors[~_member(open_sectors, distinct(ld_sectors))]))
        unfilled = unfilled_sectors(lanes[keep], sizes[keep],
                                    written=distinct(np.concatenate(stored_sectors)) + base)
        t.dram_read_bytes += unfilled * SECTOR * scale
    for name in ("global_load_requests", "l2_read_requests", "global_store_requests",
                 "global_load_sectors",
                 "global_store_sectors", "global_store_partial_sectors",
                 "global_store_partial_lines", "global_store_merges",
                 "global_store_merge_lines", "global_lines",
                 "local_lines", "shared_wavefronts", "shared_load_wavefronts",
                 "shared_atomic_slots", "global_atomics",
                 "constant_replays",
                 "hot_address_atomics"):
        setattr(t, name, getattr(t, name) * scale)
    return t
