"""Two H100 recordings of the labs side by side: how far a measured time moves from one
recording to the next, and whether the issue's sequences keep their measured order.

    python -m benchmarks.repeat                  # the stored recording against the repeat
    python -m benchmarks.repeat FIRST SECOND     # any two recordings (tools/gpu-check --record)

The repeat (``fixtures/h100_lab_launches_repeat.jsonl.gz``) was recorded on 2026-11-25 with
the same command as the stored one (2026-11-24), on an H100 of the same kind whose host
copies pageable memory more slowly. A measured order the model has to reproduce should be
the same in both: this says which pairs of :data:`benchmarks.model.NAMED` swap places.

>>> ratio_summary([1.0, 1.005, 0.995, 2.0])
{'regions': 4, 'median_abs_change_pct': 0.5, 'within_1pct': 3, 'within_5pct': 3}
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from benchmarks.model import FIXTURE, NAMED, Region, group, largest_buffer, read_lines

REPEAT = FIXTURE.with_name("h100_lab_launches_repeat.jsonl.gz")


def _key(r: Region) -> tuple:
    return r.label, json.dumps(r.ops, sort_keys=True)


def ratio_summary(ratios: list[float]) -> dict:
    """How many second measurements lie within 1 % and 5 % of the first, and the median
    change in percent."""
    changes = [abs(x - 1) * 100 for x in ratios]
    return {"regions": len(ratios),
            "median_abs_change_pct": round(statistics.median(changes), 2) if changes else 0.0,
            "within_1pct": sum(c <= 1 for c in changes),
            "within_5pct": sum(c <= 5 for c in changes)}


def compare(first: Path = FIXTURE, second: Path = REPEAT) -> dict:
    """Per-region changes (kernels only, and regions with host copies) and, per named
    sequence, the pairs whose measured order differs between the two recordings."""
    one = {_key(r): r for r in group(read_lines(first))[0]}
    two = {_key(r): r for r in group(read_lines(second))[0]}
    both = [k for k in one if k in two]
    kernels, copies = [], []
    for k in both:
        ratio = two[k].measured_ms / one[k].measured_ms
        host = any(op["op"] == "memcpy" and op.get("direction") != "dtod" for op in one[k].ops)
        (copies if host else kernels).append(ratio)
    sequences = []
    for name, lab, cells, prefix in NAMED:
        groups: dict[int, list[tuple]] = {}
        for k in both:
            r = one[k]
            if r.label == lab and r.cell in cells and r.kernels().startswith(prefix):
                groups.setdefault(largest_buffer(r), []).append(k)
        for size, keys in groups.items():
            swapped = []
            for i, a in enumerate(keys):
                for b in keys[i + 1:]:
                    d1 = one[a].measured_ms - one[b].measured_ms
                    d2 = two[a].measured_ms - two[b].measured_ms
                    if d1 * d2 < 0:
                        swapped.append((one[a].kernels(), one[b].kernels(),
                                        round(100 * d1 / one[b].measured_ms, 2),
                                        round(100 * d2 / two[b].measured_ms, 2)))
            pairs = len(keys) * (len(keys) - 1) // 2
            if pairs:
                sequences.append({"name": name, "bytes": size, "pairs": pairs,
                                  "swapped": swapped})
    return {"regions_in_both": len(both), "only_first": len(one) - len(both),
            "only_second": len(two) - len(both), "kernels": ratio_summary(kernels),
            "host_copies": ratio_summary(copies), "sequences": sequences}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", nargs="?", default=str(FIXTURE))
    parser.add_argument("second", nargs="?", default=str(REPEAT))
    args = parser.parse_args(argv)
    result = compare(Path(args.first), Path(args.second))
    print(f"regions in both recordings: {result['regions_in_both']} (only in the first "
          f"{result['only_first']}, only in the second {result['only_second']})")
    for part in ("kernels", "host_copies"):
        s = result[part]
        print(f"{part.replace('_', ' ')}: {s['regions']} regions, median change "
              f"{s['median_abs_change_pct']}%, within 1%: {s['within_1pct']}, within 5%: "
              f"{s['within_5pct']}")
    for s in result["sequences"]:
        mb = s["bytes"] / 2**20
        print(f"{s['name']} ({mb:.0f} MiB): {len(s['swapped'])} of {s['pairs']} pairs swap"
              + "".join(f"\n    {a} / {b}: {d1:+.2f}% then {d2:+.2f}%"
                        for a, b, d1, d2 in s["swapped"]))


if __name__ == "__main__":
    main()
