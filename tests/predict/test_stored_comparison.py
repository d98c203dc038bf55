"""labs/h100_predicted.json is the H100's recording with the current model's predictions."""

import json
from pathlib import Path

import pytest

from benchmarks import model
from cudakit.predict import lab_comparison
from cudakit.predict.replay import Replay

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "labs" / "h100_predicted.json"


def test_the_stored_measurements_are_the_recordings():
    regions, _ = model.group(model.read_lines(model.FIXTURE))
    stored = json.loads(STORED.read_text())["regions"]
    assert len(stored) == len(regions) >= 300  # the same regions, in the same order
    for row, region in zip(stored, regions, strict=True):
        assert (row["lab"], row["kernels"], row["config"]) == (
            region.label, region.kernels(), region.config())
        assert row["measured_ms"] == pytest.approx(region.measured_ms, rel=1e-9)


@pytest.mark.parametrize("lab", ["10_reduction", "11_transpose"])
def test_the_stored_predictions_are_the_models_of_today(lab):
    """Regenerate with `python -m benchmarks.model --labs-json labs/h100_predicted.json`."""
    regions, _ = model.group(model.read_lines(model.FIXTURE))
    stored = json.loads(STORED.read_text())["regions"]
    replay = Replay()
    chosen = [i for i, r in enumerate(regions) if r.label == lab][:3]
    for i in chosen:
        fresh = replay.region(regions[i].ops, regions[i].sources,
                              head_start=regions[i].kind == "benchmark").ms
        assert stored[i]["predicted_ms"] == pytest.approx(fresh, rel=1e-6), \
            "labs/h100_predicted.json is out of date"


def test_a_lab_sequence_keeps_the_order_asked_for():
    steps = lab_comparison("10_reduction", ["reduce1", "reduce0"], path=STORED)
    assert [r["kernels"].split(" x")[0] for r in steps.rows] == ["reduce1", "reduce0"]
    with pytest.raises(KeyError, match="no stored region"):
        lab_comparison("10_reduction", ["no_such_kernel"], path=STORED)
    with pytest.raises(KeyError, match="stored labs"):
        lab_comparison("99_none", path=STORED)


def test_a_pipeline_over_stream_counts_takes_the_first_region_of_each(tmp_path):
    rows = [{"lab": "08", "kernels": k, "config": c, "measured_ms": m, "predicted_ms": m}
            for k, c, m in [("work", "<<<8, 256>>>", 1.0),
                            ("memcpy htod, work, memcpy dtoh", "<<<8, 256>>> 8 MiB copied", 3.0),
                            ("memcpy htod, work, memcpy dtoh", "<<<8, 256>>> 8 MiB copied "
                             "4 streams", 1.5),
                            ("memcpy htod, work, memcpy dtoh", "<<<8, 256>>> 8 MiB copied "
                             "2 streams", 2.0),
                            ("memcpy htod, work, memcpy dtoh", "<<<8, 256>>> 8 MiB copied "
                             "4 streams", 9.0)]]
    path = tmp_path / "stored.json"
    path.write_text(json.dumps({"device": "H100", "regions": rows}))
    pipeline = lab_comparison("08", streams="work", path=path)
    with pytest.raises(KeyError, match="launches 'other' and copies"):
        lab_comparison("08", streams="other", path=path)
    assert [(r["streams"], r["measured_ms"]) for r in pipeline.rows] == [
        ("1 stream", 3.0), ("2 streams", 2.0), ("4 streams", 1.5)]
    assert pipeline.labels == "streams"


def test_a_second_recording_keeps_the_measured_orders():
    # the repeat recording (another day, another host) moves the kernels' times by a quarter
    # of a per cent; no pair of the sequences changes order by more than 0.2 %
    from benchmarks import repeat

    result = repeat.compare()
    assert result["regions_in_both"] >= 300
    assert result["kernels"]["median_abs_change_pct"] < 1.0
    assert result["kernels"]["within_5pct"] >= 0.95 * result["kernels"]["regions"]
    for s in result["sequences"]:
        for _, _, first, second in s["swapped"]:
            assert abs(first) < 0.2 and abs(second) < 0.2, s["name"]


def test_the_same_operations_timed_far_apart_are_kept_apart():
    """Lab 09 times one launch on four patterns of flags (0.087 ms twice, 0.167 ms twice):
    two regions, each with its own median, both noted as running on other data; times within
    a quarter of each other are one region."""
    ops = [{"op": "launch", "kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1],
            "shared": 0, "stream": 0, "args": []}]
    lines = [{"engine": "gpu", "label": "09", "cell": 5, "kind": "benchmark", "ops": ops,
              "median_ms": ms, "min_ms": ms} for ms in (0.0875, 0.0873, 0.1671, 0.1670)]
    lines.append({**lines[0], "label": "10", "median_ms": 0.1, "min_ms": 0.1})
    lines.append({**lines[0], "label": "10", "median_ms": 0.11, "min_ms": 0.11})
    regions, _ = model.group(lines)
    assert [(r.label, round(r.measured_ms, 5)) for r in regions] == [
        ("09", 0.0874), ("09", 0.16705), ("10", 0.105)]
    assert all("other data" in r.note for r in regions[:2]) and not regions[2].note
