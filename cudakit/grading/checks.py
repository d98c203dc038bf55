"""Helpers for the test cells of exercises: awkward sizes, fresh random inputs, and
comparisons that say in plain words which element is wrong.

Test cells raise ``AssertionError`` with these messages; the grader shows them as
the test's feedback.

>>> import numpy as np
>>> sizes(block=256, largest=2000)
[1, 31, 255, 256, 257, 700, 2000]
>>> c = poisoned(4); c[:3] = [1, 2, 3]
>>> expect_equal("c", c, np.array([1, 2, 3, 4], np.float32), where="n = 4")
Traceback (most recent call last):
...
AssertionError: n = 4: c is wrong at 1 of 4 elements. First wrong: c[3] should be 4 but is nan \
(never written). Wrong indices run from 3 to 3.
"""

from __future__ import annotations

import contextlib

import numpy as np

SENTINEL_INT = -123456789


def sizes(block: int, largest: int, *, empty: bool = False) -> list[int]:
    """Problem sizes that catch indexing mistakes: 1, around one warp and one block,
    a few blocks plus a remainder, and ``largest``; 0 first when ``empty``."""
    candidates = [1, 31, block - 1, block, block + 1, 2 * block + block // 2 + 60, largest]
    chosen = sorted({n for n in candidates if 1 <= n <= largest})
    return [0, *chosen] if empty else chosen


def random_array(shape, dtype=np.float32, rng: np.random.Generator | None = None) -> np.ndarray:
    """Fresh random values (floats in [-1, 1), integers in [0, 100)), never all equal.

    >>> random_array((2, 3)).shape, random_array(5, np.int32).dtype
    ((2, 3), dtype('int32'))
    """
    rng = rng or np.random.default_rng()
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    return rng.integers(0, 100, shape).astype(dtype)


def poisoned(shape, dtype=np.float32) -> np.ndarray:
    """An output array filled with a value no correct kernel writes (NaN, or a sentinel
    integer), so elements the kernel forgot show up as "never written"."""
    dtype = np.dtype(dtype)
    fill = np.nan if dtype.kind in "fc" else SENTINEL_INT
    return np.full(shape, fill, dtype=dtype)


def _poison_mask(values: np.ndarray) -> np.ndarray:
    return np.isnan(values) if values.dtype.kind in "fc" else values == SENTINEL_INT


def _is_poison(value) -> bool:
    return bool(_poison_mask(np.asarray(value)))


def _number(value) -> str:
    """Integers exactly, floating-point values to 6 significant digits."""
    return str(int(value)) if np.asarray(value).dtype.kind in "iub" else f"{float(value):.6g}"


def _index(index: tuple) -> str:
    return ", ".join(str(int(i)) for i in index)


def expect_equal(name: str, got, expected, *, rtol: float = 0.0, atol: float = 0.0,
                 where: str = "") -> None:
    """Raise AssertionError naming the first wrong element of ``got`` (exact by default;
    give ``rtol``/``atol`` for floating-point results)."""
    prefix = f"{where}: " if where else ""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        raise AssertionError(f"{prefix}{name} has shape {got.shape}, expected {expected.shape}")
    if got.dtype.kind in "fc" or expected.dtype.kind in "fc":
        wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        wrong = got != expected
    count = int(wrong.sum())
    if count == 0:
        return
    bad = np.argwhere(wrong)
    first = tuple(bad[0])
    value = got[first]
    note = " (never written)" if _is_poison(value) else ""
    text = (f"{prefix}{name} is wrong at {count} of {got.size} elements. First wrong: "
            f"{name}[{_index(first)}] should be {_number(expected[first])} but is {_number(value)}"
            f"{note}.")
    if got.ndim == 1:
        text += f" Wrong indices run from {bad[0][0]} to {bad[-1][0]}."
    else:
        rows = np.unique(bad[:, 0])
        text += f" Wrong rows: {len(rows)} of {got.shape[0]} (first {rows[0]}, last {rows[-1]})."
    raise AssertionError(text)


class Guarded:
    """A device copy of ``array``; on a GPU it sits between two zones of poison values.

    Pass it to the kernel as a pointer (it has ``gpudata`` and ``dtype`` like a gpuarray, so
    the launch checks the element type). A GPU does not report accesses just past an array:
    with the guards, reads there return poison (so the result goes wrong) and ``get()``
    refuses writes there. The emulator's memcheck sees such accesses itself and names the
    line and thread, so there the allocation is exact (``guard`` 0).

    Each array's guards hold their own value, so copying one guard into another shows.

    >>> c = Guarded(poisoned(3), "c")
    >>> c.get().shape
    (3,)
    """

    count = 0  # arrays made so far: gives each one its guard value

    def __init__(self, array, name: str, guard: int | None = None):
        from .. import cuda

        array = np.ascontiguousarray(array)
        self.name, self.shape, self.size, self.dtype = name, array.shape, array.size, array.dtype
        self.guard = guard if guard is not None else (0 if cuda.backend == "emu" else 1024)
        Guarded.count += 1
        mark = (-1e30 * (1 + Guarded.count % 1000 / 1000) if array.dtype.kind == "f"
                else SENTINEL_INT - 1 - Guarded.count % 1000)
        self._mark = np.asarray(mark, array.dtype)
        self._padded = np.full(array.size + 2 * self.guard, self._mark, array.dtype)
        self._padded[self.guard:self.guard + array.size] = array.ravel()
        self._device = cuda.mem_alloc(max(self._padded.nbytes, 1))
        if self._padded.size:
            cuda.memcpy_htod(self._device, self._padded)
        self.gpudata = int(self._device) + self.guard * array.itemsize  # the array's first element

    def get(self, where: str = "") -> np.ndarray:
        """The array copied back; AssertionError if the kernel wrote into a guard zone."""
        from .. import cuda

        if self._padded.size:
            cuda.memcpy_dtoh(self._padded, self._device)
        end = self.guard + self.size
        for zone, first in ((self._padded[:self.guard], -self.guard), (self._padded[end:], 0)):
            changed = np.flatnonzero(zone != self._mark)
            if changed.size:
                index = first + int(changed[0]) + (self.size if first == 0 else 0)
                side = "before its first element" if index < 0 else (
                    f"past its last element (index {self.size - 1})")
                prefix = f"{where}: " if where else ""
                raise AssertionError(
                    f"{prefix}the kernel wrote outside {self.name}, at index {index}, {side}. "
                    "Does every thread check its index against the size?")
        return self._padded[self.guard:end].reshape(self.shape).copy()


def launch_options() -> dict:
    """Launch keywords for graded runs: the racecheck on the emulator, nothing on a GPU.

    >>> launch_options() in ({}, {"racecheck": True})
    True
    """
    from ..backend import backend_name

    return {"racecheck": True} if backend_name() == "emu" else {}


def blocks_for(n: int, block: int) -> int:
    """Blocks needed to give each of ``n`` elements a thread (at least one block).

    >>> blocks_for(257, 256), blocks_for(0, 256)
    (2, 1)
    """
    return max(1, -(-n // block))


@contextlib.contextmanager
def recording(owner, name: str):
    """Record the calls made to ``owner``'s ``name`` (``owner`` is a dict such as
    ``globals()``, or an object such as ``cuda``); yields the list of calls, each a
    ``(args, kwargs)`` pair. The original is put back afterwards.

    >>> space = {"f": lambda x, scale=1: x * scale}
    >>> with recording(space, "f") as calls:
    ...     space["f"](2, scale=3)
    6
    >>> calls
    [((2,), {'scale': 3})]
    """
    is_dict = isinstance(owner, dict)
    if (name not in owner) if is_dict else not hasattr(owner, name):
        raise NameError(f"name {name!r} is not defined")
    original = owner[name] if is_dict else getattr(owner, name)
    calls: list[tuple[tuple, dict]] = []

    def wrapper(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    if is_dict:
        owner[name] = wrapper
    else:
        setattr(owner, name, wrapper)
    try:
        yield calls
    finally:
        if is_dict:
            owner[name] = original
        else:
            setattr(owner, name, original)
