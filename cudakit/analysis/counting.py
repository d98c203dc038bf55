"""The counting rules of the H100's L1/shared-memory unit, applied to warp-level accesses.

Every function takes one :class:`~cudakit.emu.trace.AccessBatch` (W warps executing one
memory instruction) and returns one number per warp, so the totals and the per-line,
per-block and per-warp views all come from the same arrays.

Global memory (the rules behind ``l1tex__t_requests`` / ``l1tex__t_sectors``):

* a warp whose instruction has at least one active lane makes **one request**, whatever the
  element size (1 to 16 bytes); a warp with no active lane makes none;
* the request moves every **32-byte sector** that an active lane touches, each once, so lanes
  reading the same word (broadcast) or the same sector share it;
* it looks up one L1 tag per **128-byte line** it touches (ncu's per-line "L1 Tag Requests").

Shared memory (``l1tex__data_pipe_lsu_wavefronts_mem_shared`` and ``..._bank_conflicts``):

* 32 banks, each 4 bytes wide; the 4-byte word at byte offset ``a`` lives in bank
  ``(a // 4) % 32``;
* accesses of 1 to 8 bytes are served for the whole warp at once, 16-byte accesses in two
  half-warp phases (lanes 0-15, then 16-31); a phase with no active lane costs nothing;
* a bank supplies one word per wavefront, so a phase needs at least as many wavefronts as the
  largest number of *distinct* words its active lanes need from one bank (lanes that need the
  same word share it: broadcast/multicast);
* a wavefront hands at most 128 bytes to the lanes, and only lanes of one quad (4 consecutive
  lanes) share a delivery: a phase also needs ``ceil(sum over quads of distinct bytes / 128)``
  wavefronts (this is why a conflict-free 8-byte access of 32 lanes takes 2 wavefronts and a
  16-byte one 4, while a broadcast of one 8-byte word takes 1);
* a phase takes the larger of the two; its ideal is the larger of ``ceil(distinct words / 32)``
  and the delivery bound, and **bank conflicts** are wavefronts minus the ideal.

These rules reproduce all cases of the H100 suite in ``tests/fixtures/ncu`` exactly; see
``README.md`` in this folder for the measurements and the known differences.

>>> import numpy as np
>>> from cudakit.emu.trace import AccessBatch
>>> lanes = np.arange(32, dtype=np.uint64)
>>> b = AccessBatch("k", 1, 1, 0, "global", "ld", 4, np.zeros((1, 3), int), np.zeros(1, int),
...                 np.ones((1, 32), bool), (lanes * 8)[None])  # stride of two floats
>>> int(sectors(b)[0]), int(requests(b)[0])
(8, 1)
"""

from __future__ import annotations

import numpy as np

SECTOR = 32  # bytes per sector of a global request
LINE = 128  # bytes per L1 cache line (one tag lookup)
BANKS = 32
BANK_WIDTH = 4  # bytes per bank word
WARP = 32
QUAD = 4  # lanes whose identical addresses share one delivery
WAVEFRONT_BYTES = 128  # data one wavefront hands to the lanes
_NONE = np.iinfo(np.uint64).max  # stands for "no address" in sorted distinct counts
_BANK_BITS = np.uint64(BANKS.bit_length() - 1)  # banks are a power of two
_BANK_MASK = np.uint64(BANKS - 1)
_BANK_SHIFT = np.uint64(58)  # a word's bank goes above its index in the bank (< 2^58 words)


def requests(batch) -> np.ndarray:
    """One request per warp that has at least one active lane: ``(W,)`` int."""
    return batch.mask.any(axis=1).astype(np.int64)


def _distinct(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Count distinct values per row among active entries: ``(R, K)`` → ``(R,)``."""
    marked = np.where(active, values, _NONE)
    ordered = np.sort(marked, axis=-1)
    new = np.ones(ordered.shape, bool)
    new[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    return (new & (ordered != _NONE)).sum(axis=-1)


def sectors(batch) -> np.ndarray:
    """Distinct 32-byte sectors touched by the active lanes of each warp: ``(W,)`` int."""
    first = batch.address // SECTOR
    last = (batch.address + np.uint64(batch.size - 1)) // SECTOR
    both = np.concatenate([first, last], axis=1)
    return _distinct(both, np.concatenate([batch.mask, batch.mask], axis=1))


def cache_lines(batch) -> np.ndarray:
    """Distinct 128-byte lines (L1 tags) touched by the active lanes of each warp: ``(W,)`` int."""
    first = batch.address // LINE
    last = (batch.address + np.uint64(batch.size - 1)) // LINE
    both = np.concatenate([first, last], axis=1)
    return _distinct(both, np.concatenate([batch.mask, batch.mask], axis=1))


def bytes_used(batch) -> np.ndarray:
    """Distinct bytes the active lanes of each warp read or write: ``(W,)`` int."""
    if not (batch.address % np.uint64(batch.size)).any():  # aligned: lanes share or are disjoint
        return _distinct(batch.address, batch.mask) * batch.size
    offsets = np.arange(batch.size, dtype=np.uint64)
    each = (batch.address[:, :, None] + offsets).reshape(batch.warps, -1)
    active = np.repeat(batch.mask, batch.size, axis=1)
    return _distinct(each, active)


def bytes_requested(batch) -> np.ndarray:
    """Bytes asked for by the active lanes (counting repeats): ``(W,)`` int."""
    return batch.mask.sum(axis=1) * batch.size


def phase_lanes(size: int) -> int:
    """Lanes served together by shared memory for an access of ``size`` bytes."""
    return WARP if size <= 2 * BANK_WIDTH else WARP // 2


def _shared_words(batch) -> tuple[np.ndarray, np.ndarray]:
    """Per phase, the words each active lane needs: ``(W * phases, lanes * words)`` twice."""
    per_lane = max(1, batch.size // BANK_WIDTH)
    lanes = phase_lanes(batch.size)
    words = batch.address // BANK_WIDTH
    words = words[:, :, None] + np.arange(per_lane, dtype=np.uint64)
    active = np.repeat(batch.mask[:, :, None], per_lane, axis=2)
    rows = batch.warps * (WARP // lanes)
    return words.reshape(rows, lanes * per_lane), active.reshape(rows, lanes * per_lane)


def _delivery(batch) -> np.ndarray:
    """Per phase, the wavefronts needed to hand each quad of lanes its distinct data."""
    quads = batch.warps * WARP // QUAD
    distinct = _distinct(batch.address.reshape(quads, QUAD), batch.mask.reshape(quads, QUAD))
    per_phase = (distinct * batch.size).reshape(-1, phase_lanes(batch.size) // QUAD).sum(axis=1)
    return -(-per_phase // WAVEFRONT_BYTES)


def _per_warp(per_phase: np.ndarray, batch) -> np.ndarray:
    return per_phase.reshape(batch.warps, -1).sum(axis=1)


def _bank_degree(words: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Per row, the largest number of distinct words that one bank must supply.

    Each row's words are sorted by (bank, word); the distinct words of a bank then lie in
    one run, counted by a running sum (a per-row count over 32 banks with ``bincount`` took
    six times as long for a 4096^3 tiled matmul's 65536 sampled phases).

    >>> _bank_degree(np.array([[0, 32, 64, 1], [0, 0, 1, 2]], np.uint64), np.ones((2, 4), bool))
    array([3, 1])
    """
    keys = np.where(active, (words & _BANK_MASK) << _BANK_SHIFT | words >> _BANK_BITS, _NONE)
    keys.sort(axis=1)
    new = np.empty(keys.shape, bool)
    new[:, 0] = True
    np.not_equal(keys[:, 1:], keys[:, :-1], out=new[:, 1:])
    new &= keys != _NONE
    count = np.cumsum(new, axis=1, dtype=np.int32)
    bank = (keys >> _BANK_SHIFT).astype(np.int8)
    starts = np.empty(keys.shape, bool)
    starts[:, 0] = True
    np.not_equal(bank[:, 1:], bank[:, :-1], out=starts[:, 1:])
    before = np.where(starts, count - new, 0)  # the count before each bank's run, carried on
    np.maximum.accumulate(before, axis=1, out=before)
    return (count - before).max(axis=1).astype(np.int64)


def wavefronts(batch) -> np.ndarray:
    """Shared-memory wavefronts of each warp: ``(W,)`` int (0 for a warp with no active lane)."""
    words, active = _shared_words(batch)
    return _per_warp(np.maximum(_bank_degree(words, active), _delivery(batch)), batch)


def ideal_wavefronts(batch) -> np.ndarray:
    """Wavefronts each warp would need without bank conflicts: ``(W,)`` int."""
    words, active = _shared_words(batch)
    by_banks = -(-_distinct(words, active) // BANKS)
    return _per_warp(np.maximum(by_banks, _delivery(batch)), batch)


def bank_of(address: np.ndarray) -> np.ndarray:
    """Bank of each shared-memory byte offset."""
    return (np.asarray(address, dtype=np.uint64) // BANK_WIDTH % BANKS).astype(np.int64)


def sector_of(address: np.ndarray) -> np.ndarray:
    """32-byte sector number of each global byte address."""
    return (np.asarray(address, dtype=np.uint64) // SECTOR).astype(np.int64)
