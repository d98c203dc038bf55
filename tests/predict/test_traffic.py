"""The cache model's passes over every warp access: the fast paths give what the plain
definitions give, on random warps (a sort of every row; every stored lane)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from cudakit.predict import traffic as tr

BASE = tr.HEAP_BASE


def warps(rng, kind: str, n: int, size: int) -> SimpleNamespace:
    """``n`` warps of ``size``-byte lanes: rising, scattered, falling or one column."""
    lanes = np.arange(32)[None, :]
    start = rng.integers(0, 1 << 12, (n, 1)) * size
    address = {"rising": start + size * lanes,
               "scattered": rng.integers(0, 1 << 14, (n, 32)) * size,
               "falling": start + size * (31 - lanes),
               "column": start + 4096 * lanes}[kind]
    mask = rng.random((n, 32)) < 0.9
    return SimpleNamespace(address=(BASE + address).astype(np.uint64), mask=mask, size=size,
                           warps=n)


def sectors_by_sorting(batch):
    """Each warp's distinct sectors, by sorting every row (the definition)."""
    first = batch.address // np.uint64(tr.SECTOR)
    last = (batch.address + np.uint64(batch.size - 1)) // np.uint64(tr.SECTOR)
    rows, sectors = [], []
    for w in range(batch.warps):
        m = batch.mask[w]
        distinct = np.unique(np.concatenate([first[w][m], last[w][m]]))
        rows += [w] * distinct.size
        sectors += (distinct - np.uint64(BASE // tr.SECTOR)).astype(np.int64).tolist()
    return np.array(rows), np.array(sectors)


@pytest.mark.parametrize("kind", ["rising", "scattered", "falling", "column"])
@pytest.mark.parametrize("size", [1, 4, 8, 16])
def test_lane_sectors_are_each_warps_distinct_sectors(kind, size):
    batch = warps(np.random.default_rng(size), kind, 50, size)
    rows, sectors = tr._lane_sectors(batch)
    want_rows, want_sectors = sectors_by_sorting(batch)
    assert rows.tolist() == want_rows.tolist() and sectors.tolist() == want_sectors.tolist()


def test_a_lane_straddling_two_sectors_counts_both():
    batch = SimpleNamespace(address=np.array([[BASE + 30]], np.uint64),
                            mask=np.ones((1, 1), bool), size=4, warps=1)
    assert tr._lane_sectors(batch)[1].tolist() == [0, 1]


@pytest.mark.parametrize("seed", range(6))
def test_unfilled_sectors_from_the_partly_written_ones_only(seed):
    # traffic() passes only the stores into sectors some warp writes in part, with every
    # written sector for the neighbour test: the count is the one over all stores
    rng = np.random.default_rng(seed)
    batches = [warps(rng, kind, 40, 4) for kind in ("rising", "column", "scattered")]
    lanes = np.concatenate([b.address[b.mask] for b in batches])
    sizes = np.full(lanes.size, 4)
    partial = np.concatenate([tr.partial_writes(b)[1] for b in batches]).astype(np.int64)
    keep = np.isin((lanes // np.uint64(tr.SECTOR)).astype(np.int64), partial)
    written = np.unique((lanes // np.uint64(tr.SECTOR)).astype(np.int64))
    everything = tr.unfilled_sectors(lanes, sizes)
    assert everything > 0
    assert tr.unfilled_sectors(lanes[keep], sizes[keep], written=written) == everything


@pytest.mark.parametrize("seed", range(4))
def test_first_reads_of_many_small_batches_of_mixed_sizes_by_their_definition(seed):
    """:func:`first_touch_share` joins each access size's batches (a grid-stride loop traces
    one small batch per trip); the share is still the one of the definition: per load
    request in program order, whether it reads a sector its warp had not read."""
    from cudakit.emu.trace import AccessBatch

    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(60):
        size = int(rng.choice([4, 8, 16]))
        n = int(rng.integers(1, 5))
        w = warps(rng, str(rng.choice(["rising", "scattered", "column"])), n, size)
        blocks = np.zeros((n, 3), np.int64)
        blocks[:, 0] = rng.integers(0, 3, n)
        op = "st" if rng.random() < 0.2 else "ld"
        batches.append(AccessBatch("k", 0, 0, 0, "global", op, size, blocks,
                                   rng.integers(0, 2, n), w.mask, w.address))
    assert tr.first_touch_share(batches, 3, 1) == pytest.approx(_first_touches(batches))
    # the same, with a set of sectors the SM's L1 keeps from its first of 4 rounds: a request
    # whose only new sectors are kept counts a quarter
    kept = np.unique(np.concatenate([sectors_by_sorting(b)[1] for b in batches]))[::3]
    assert tr.first_touch_share(batches, 3, 1, kept, 4.0) == \
        pytest.approx(_first_touches(batches, set(kept.tolist()), 4.0))


def _first_touches(batches, kept=frozenset(), rounds=1.0) -> float:
    """The definition, request by request: the share of load requests that read a sector
    their warp had not read (one whose new sectors are all ``kept``: 1 / ``rounds``)."""
    seen, asked, weight = set(), 0, 0.0
    for b in batches:
        if b.op != "ld":
            continue
        rows, sectors = sectors_by_sorting(b)
        for row in range(b.warps):
            mine = {(int(b.block[row, 0]), int(b.warp[row]), int(s))
                    for s in sectors[rows == row]}
            if mine:
                asked += 1
                fresh = mine - seen
                if fresh:
                    weight += 1.0 if any(s not in kept for *_, s in fresh) else 1.0 / rounds
                seen |= mine
    return weight / asked
