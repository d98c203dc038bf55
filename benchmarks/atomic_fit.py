"""The two costs of an atomic request in the L2, fitted to the atomic probes' times: a fixed
part (``atomic_request_s``) and a step per lane queued on one word of each 32-byte sector
(``atomic_sector_step_s``), as :func:`cudakit.predict.traffic.atomic_request_seconds` prices
a request, with the busiest aligned pair of lines' requests one after another.

The probes are ``benchmarks/atomic_spread.py`` (36 patterns on the H100,
``fixtures/h100_atomic_spread.json``) and ``benchmarks/atomic_slices.py`` (54 on the H200,
``fixtures/h200_atomic_slices.json``; the two GPUs' L2s took the same times on
``atomic_spread``). Each pattern's keys are drawn again by the probe's own ``keys``, for
2^13 of its 2^19 warps, and split into line requests by the model's own
:func:`~cudakit.predict.traffic.line_requests`; the fit is least squares on the logarithm of
predicted over measured time, on a grid of 0.1 ns by 0.05 ns.

    python -m benchmarks.atomic_fit   # the fitted pair, then each pattern's error

Written by hand: a least-squares fit over our own probes' stored times.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from cudakit.predict.traffic import atomic_request_seconds, line_requests

from . import atomic_slices, atomic_spread

FIXTURES = Path(__file__).resolve().parent / "fixtures"
THREADS = 1 << 24
WARPS = 1 << 13  # of THREADS // 32, scaled up
#: the figures the fit does not change: the H100's same-word rates and request rate
#: (``devices/h100.measured.json``, from ``atomic_spread``)
FIXED = {"atomic_same_word_float_s": 1.7559156731294935e-09,
         "atomic_same_word_int_s": 7.333669827858103e-10,
         "atomic_line_requests_per_s": 82200139279.67845}


def _patterns() -> list[tuple[str, bool, float, np.ndarray]]:
    """(name, floating, measured ms, each simulated thread's word) of every probe pattern."""
    rng = np.random.default_rng(34)
    out = []
    spread = json.loads((FIXTURES / "h100_atomic_spread.json").read_text())["ms"]
    for name, spacing, distinct, per_warp in atomic_spread.PATTERNS:
        key = atomic_spread.keys(spacing, distinct, per_warp, WARPS * 32)
        for kind in ("float", "unsigned"):
            out.append((f"{kind} {name}", kind == "float", spread[f"{kind} {name}"], key))
    slices = json.loads((FIXTURES / "h200_atomic_slices.json").read_text())
    for lines in atomic_slices.LINES:
        for stride in atomic_slices.STRIDES:
            for words in (1, 32):
                key = atomic_slices.keys(lines, stride, words, rng, WARPS * 32)
                name = f"{lines} lines x{stride} {words} words"
                out.append((name, True, slices[name], key))
    return out


def _requests(key: np.ndarray):
    """The pattern's line requests: (line, lanes on the busiest word, sector steps)."""
    batch = SimpleNamespace(address=(key.astype(np.uint64) * np.uint64(4)).reshape(-1, 32),
                            mask=np.ones((key.size // 32, 32), bool))
    line, lanes, steps, _ = line_requests(batch)
    return line, lanes, steps


def predicted_ms(requests, floating: bool, figures: dict) -> float:
    """The model's time for one pattern: its busiest aligned pair of lines, or all requests
    at the L2's rate, or all atomics at the distinct rate (as ``model.atomic_seconds``)."""
    line, lanes, steps = requests
    seconds = atomic_request_seconds(lanes, steps, floating, figures)
    pairs, at = np.unique(line >> 1, return_inverse=True)
    scale = THREADS / 32 / WARPS
    busiest = np.bincount(at, seconds, pairs.size).max() * scale
    return max(busiest, line.size * scale / figures["atomic_line_requests_per_s"],
               THREADS / 5.44347e11) * 1e3


def fit() -> tuple[dict, list[tuple[str, float, float]]]:
    """The least-squares pair, and each pattern's (name, measured, predicted) with it."""
    patterns = [(name, floating, ms, _requests(key)) for name, floating, ms, key in _patterns()]
    best = None
    for fixed_part in np.arange(0.5, 3.05, 0.1) * 1e-9:
        for step in np.arange(0.1, 1.05, 0.05) * 1e-9:
            figures = {**FIXED, "atomic_request_s": fixed_part, "atomic_sector_step_s": step}
            logs = [np.log(predicted_ms(r, floating, figures) / ms)
                    for _, floating, ms, r in patterns]
            score = float(np.mean(np.square(logs)))
            if best is None or score < best[0]:
                best = (score, figures)
    figures = best[1]
    return figures, [(name, ms, predicted_ms(r, floating, figures))
                     for name, floating, ms, r in patterns]


def main() -> None:
    figures, rows = fit()
    print(f"atomic_request_s {figures['atomic_request_s']:.3g}, "
          f"atomic_sector_step_s {figures['atomic_sector_step_s']:.3g}")
    errors = []
    print("| pattern | measured ms | fitted model ms | error |\n|---|---|---|---|")
    for name, ms, predicted in rows:
        errors.append(predicted / ms - 1)
        print(f"| {name} | {ms:.3f} | {predicted:.3f} | {errors[-1]:+.0%} |")
    errors = np.abs(errors)
    print(f"\n{len(rows)} patterns: median |error| {np.median(errors):.1%}, "
          f"within 30 %: {np.sum(errors <= 0.3)}")


if __name__ == "__main__":
    main()
