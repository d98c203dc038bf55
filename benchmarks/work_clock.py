"""The work clock's rates: what the emulator's work costs in seconds on this machine.

    python -m benchmarks.work_clock                            # record every lab, and fit
    python -m benchmarks.work_clock --labs 04 12 --json calls.json.gz   # keep the calls
    python -m benchmarks.work_clock --calls benchmarks/fixtures/ci_work_clock_calls.json.gz

``cudakit.predict`` stops its sample at budgets counted in the emulator's work, not in
seconds (:mod:`cudakit.predict.work`), so that a prediction is the same on a busy machine
and an idle one. This script predicts the recorded lab launches of
``benchmarks/fixtures/h100_lab_launches.jsonl.gz`` (as :mod:`benchmarks.model` does), times
every emulator launch the predictions make, with the counts the work clock reads (basic
blocks run, vector operations and their lanes, lanes of the batches started, memory accesses
traced), and fits seconds = sum of rate x count by least squares with no negative rate. It
prints the rates (copy them into ``cudakit/predict/work.py``) and how well they fit: the
ratio of the clock's seconds to the measured ones, per launch and over each prediction.
Run it alone on the machine the budgets are meant for (the CI machine's kind: 2 cores). The
rates in use come from ``fixtures/ci_work_clock_calls.json.gz``, the launches of more than
10 ms of a run over every lab (2026-11-29, on this project's 2-core development machine).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

import numpy as np

from benchmarks.common import open_text
from benchmarks.model import FIXTURE, compare
from cudakit.emu import driver
from cudakit.predict import work

FEATURES = tuple(work.RATES)
#: launches shorter than this are left out of the fit (the loop probes' 2 ms looks, whose
#: time is mostly the launch's own start)
SHORTEST = 0.01


def record(labs: list[str] | None) -> list[dict]:
    """Every emulator launch that the predictions of ``labs`` make that counts
    instructions: its seconds and the counts it added."""
    calls: list[dict] = []
    plain = driver.Function.__call__

    def timed(self, *args, counter=None, trace=None, **kw):
        if counter is None:
            return plain(self, *args, counter=counter, trace=trace, **kw)
        before = work.counts(counter, trace)
        start = time.perf_counter()
        try:
            return plain(self, *args, counter=counter, trace=trace, **kw)
        finally:
            seconds = time.perf_counter() - start
            after = work.counts(counter, trace)
            calls.append({"kernel": self.name, "seconds": seconds,
                          **{k: after[k] - before[k] for k in FEATURES}})

    driver.Function.__call__ = timed
    try:
        compare(FIXTURE, labs=labs)
    finally:
        driver.Function.__call__ = plain
    return calls


def fit(calls: list[dict], shortest: float = SHORTEST) -> dict[str, float]:
    """Seconds per unit of each count, none negative: least squares over the launches
    longer than ``shortest`` seconds, each weighted by one over the square root of its
    seconds (between relative errors, which let the many short launches decide, and
    absolute ones, which only the longest would; a count whose rate comes out negative is
    dropped and the rest fitted again), scaled so that the median launch's counted time is
    its measured time."""
    used = [c for c in calls if c["seconds"] > shortest]
    seconds = np.array([c["seconds"] for c in used])
    x = np.array([[c[k] for k in FEATURES] for c in used], np.float64)
    weight = 1 / np.sqrt(seconds)
    keep = list(range(len(FEATURES)))
    while True:
        rates, *_ = np.linalg.lstsq(x[:, keep] * weight[:, None], seconds * weight,
                                    rcond=None)
        if (rates >= 0).all():
            break
        keep.pop(int(np.argmin(rates)))
    rates /= np.median(x[:, keep] @ rates / seconds)
    out = dict.fromkeys(FEATURES, 0.0)
    out.update({FEATURES[k]: float(r) for k, r in zip(keep, rates, strict=True)})
    return out


def report(calls: list[dict], rates: dict[str, float]) -> str:
    """The rates, and the clock's seconds over the measured ones for the launches that the
    fit used."""
    lines = [f"{k:>13}: {v:.3g} s" for k, v in rates.items()]
    ratios = sorted(sum(rates[k] * c[k] for k in FEATURES) / c["seconds"]
                    for c in calls if c["seconds"] > SHORTEST)
    if ratios:
        lines.append(f"clock/measured over {len(ratios)} launches > {SHORTEST * 1e3:.0f} ms: "
                     f"median {statistics.median(ratios):.2f}, 10th-90th percentile "
                     f"{ratios[len(ratios) // 10]:.2f}-{ratios[len(ratios) * 9 // 10]:.2f}, "
                     f"range {ratios[0]:.2f}-{ratios[-1]:.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labs", nargs="+", default=None, metavar="LAB")
    parser.add_argument("--json", default=None, metavar="FILE")
    parser.add_argument("--calls", default=None, metavar="FILE",
                        help="fit the calls a run with --json kept, without recording")
    options = parser.parse_args(argv)
    if options.calls:
        with open_text(Path(options.calls)) as f:
            calls = json.load(f)["calls"]
    else:
        calls = record(options.labs)
    rates = fit(calls)
    print(report(calls, rates))
    if options.json:  # the launches the fit used (the short ones are many, and left out)
        kept = [c for c in calls if c["seconds"] > SHORTEST]
        text = json.dumps({"rates": rates, "calls": kept}, indent=0)
        if options.json.endswith(".gz"):
            with gzip.open(options.json, "wt") as f:
                f.write(text)
        else:
            Path(options.json).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
