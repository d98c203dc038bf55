"""Recording of timed regions (cudakit.record), the microbenchmarks and benchmarks/model.py, on
the emulator: the records a GPU run would write, checked field by field."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import microbench, model
from cudakit import record
from cudakit.predict import load
from cudakit.predict.device import read_curves, read_table

ROOT = Path(__file__).resolve().parent.parent

SOURCE = r"""
__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
template <int B> __global__ void scale(float *x, float s) { x[threadIdx.x + B * blockIdx.x] *= s; }
template __global__ void scale<64>(float *, float);
"""

SCRIPT = r"""
import sys, numpy as np, cudakit
from cudakit import cuda
k = cudakit.load(sys.argv[1], options=["-O3"])
h = cuda.pagelocked_empty(256, np.float32)
h[:] = 1
d = cuda.mem_alloc(3 * 1024)

def step(n):
    cuda.memcpy_htod(d, h)
    k["add"](d, d, int(d) + 1024, n, grid=(4,), block=(64,))  # a and b alias, c at 1 KiB
    k["scale<64>"](int(d) + 2048, 2.0, grid=(4,), block=(64,))

for n in (256, 256, 128):  # two identical regions, then a different one
    cudakit.benchmark(lambda: step(n), warmup=1, repeat=3)
k["add"](d, d, d, 256, grid=(4,), block=(64,))  # outside any region: not recorded
out = np.zeros(256, np.float32)
with cudakit.timer():
    k["add"](cuda.In(h), cuda.In(h), cuda.Out(out), 256, grid=(4,), block=(64,))
    with cudakit.timer():  # nested: part of the outer region, no line of its own
        step(256)
assert (out == 2).all()
start, stop, s1, s2 = cuda.Event(), cuda.Event(), cuda.Stream(), cuda.Stream()


def two_streams():  # stream 2's kernel waits for stream 1's upload
    cuda.memcpy_htod_async(d, h, s1)
    up = cuda.Event()
    up.record(s1)
    s2.wait_for_event(up)
    k["add"](d, d, d, 256, grid=(4,), block=(64,), stream=s2)
    up.record(s1)  # recorded again: a new point of stream 1
    cuda.Event().record()  # on the default stream: not a point of its own


cudakit.benchmark(two_streams, warmup=1, repeat=2)
start.record()  # a region timed with raw events, as in lab 08; written at exit
cuda.memcpy_htod_async(d, h, s1)
k["add"](d, d, d, 256, grid=(4,), block=(64,), stream=s1)
stop.record()
stop.synchronize()
assert stop.time_since(start) > 0
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> list[dict]:
    folder = tmp_path_factory.mktemp("record")
    env = {**os.environ, "CUDAKIT_BACKEND": "emu", "CUDAKIT_RECORD_LAUNCHES": str(folder),
           "CUDAKIT_RECORD_LABEL": "lab99", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", SCRIPT, SOURCE], env=env, check=True, timeout=120)
    assert [p.name for p in folder.iterdir()] == ["lab99.jsonl"]
    return [json.loads(line) for line in (folder / "lab99.jsonl").read_text().splitlines()]


def test_header_then_one_line_per_region(recording):
    head = recording[0]["header"]
    assert head["engine"] == "emu" and head["label"] == "lab99"
    assert head["compute_capability"] == [9, 0]
    lines = recording[1:]
    assert [(x["kind"], x["seq"], x["engine"]) for x in lines] == [
        ("benchmark", 1, "emu"), ("benchmark", 2, "emu"), ("benchmark", 3, "emu"),
        ("timer", 4, "emu"), ("benchmark", 5, "emu"), ("events", 6, "emu")]
    assert all(x["samples"] == 3 and x["min_ms"] <= x["median_ms"] for x in lines[:3])
    assert lines[4]["samples"] == 2
    assert lines[3]["ms"] > 0 and lines[3]["cell"] is None  # not run in a notebook


def test_benchmark_records_one_call_with_aliases_and_offsets(recording):
    line = recording[1]
    assert line["sources"] == {next(iter(line["sources"])): SOURCE}
    key = next(iter(line["sources"]))
    copy, add, scale = line["ops"]
    assert copy == {"op": "memcpy", "direction": "htod", "bytes": 1024, "pinned": True,
                    "async": False, "stream": 0}
    assert add == {
        "op": "launch", "kernel": "add", "source": key, "options": ["-O3"], "arch": "sm_90",
        "grid": [4, 1, 1], "block": [64, 1, 1], "shared": 0, "stream": 0,
        "args": [{"type": "const float *", "alloc": 0, "size": 3072, "offset": 0},
                 {"type": "const float *", "alloc": 0, "size": 3072, "offset": 0},
                 {"type": "float *", "alloc": 0, "size": 3072, "offset": 1024},
                 {"type": "int", "value": 256}]}
    assert scale["kernel"] == "scale<64>"
    assert scale["args"] == [{"type": "float *", "alloc": 0, "size": 3072, "offset": 2048},
                             {"type": "float", "value": 2.0}]
    assert recording[3]["ops"][1]["args"][3]["value"] == 128


def test_timer_records_host_copies_of_in_out_and_nested_regions(recording):
    ops = recording[4]["ops"]
    assert [(o["op"], o.get("direction"), o.get("pinned")) for o in ops] == [
        ("memcpy", "htod", True), ("memcpy", "htod", True), ("launch", None, None),
        ("memcpy", "dtoh", False),
        ("memcpy", "htod", True), ("launch", None, None), ("launch", None, None)]
    temporaries = ops[2]["args"][:3]
    assert [(a["alloc"], a["size"]) for a in temporaries] == [(0, 1024), (1, 1024), (2, 1024)]
    assert ops[5]["args"][0]["alloc"] == 3  # the allocation of step(), new in this region


def test_events_and_stream_waits_are_recorded_in_order(recording):
    ops = recording[5]["ops"]
    assert [(o["op"], o["stream"], o.get("event")) for o in ops] == [
        ("memcpy", 1, None), ("event", 1, 0), ("wait", 2, 0), ("launch", 2, None),
        ("event", 1, 1)]


def test_a_waiting_stream_starts_after_the_event_in_the_replay():
    from cudakit.predict.replay import predict_region

    copy = {"op": "memcpy", "direction": "htod", "bytes": 1 << 28, "pinned": True,
            "async": True, "stream": 1}
    kernel = {"op": "launch", "kernel": "add", "source": "s", "options": [], "arch": "sm_90",
              "grid": [1 << 16, 1, 1], "block": [256, 1, 1], "shared": 0, "stream": 2,
              "args": [{"type": "const float *", "alloc": 0, "size": 1 << 26, "offset": 0},
                       {"type": "const float *", "alloc": 1, "size": 1 << 26, "offset": 0},
                       {"type": "float *", "alloc": 2, "size": 1 << 26, "offset": 0},
                       {"type": "int", "value": 1 << 24}]}
    sources = {"s": SOURCE}
    apart = predict_region([copy, kernel], sources)
    waiting = predict_region([copy, {"op": "event", "event": 0, "stream": 1},
                              {"op": "wait", "event": 0, "stream": 2}, kernel], sources)
    copy_ms, kernel_ms = (p.ms for _, p in apart.parts)
    assert apart.ms == pytest.approx(max(copy_ms, kernel_ms), rel=0.05)  # they overlap
    # one after the other, from the moment the host has issued the copy
    assert copy_ms + kernel_ms <= waiting.ms <= copy_ms + kernel_ms + 0.05
    assert [name for name, _ in waiting.parts] == [name for name, _ in apart.parts]


def test_regions_timed_with_raw_events(recording):
    line = recording[6]
    assert line["clock"] == "events" and line["ms"] > 0
    copy, launch = line["ops"]
    assert copy == {"op": "memcpy", "direction": "htod", "bytes": 1024, "pinned": True,
                    "async": True, "stream": 1}
    assert launch["stream"] == 1 and [a["alloc"] for a in launch["args"][:3]] == [0, 0, 0]


def test_nothing_is_recorded_without_the_variable(monkeypatch):
    monkeypatch.delenv("CUDAKIT_RECORD_LAUNCHES", raising=False)
    assert record.folder() is None and record.start("timer") is None
    assert record.current is None


def test_a_launch_that_cannot_be_described_is_counted_not_raised(monkeypatch, capsys):
    region = record.Region("timer")
    monkeypatch.setattr(record, "current", region)
    monkeypatch.setattr(record, "_hook_failed", False)
    record.launch(object(), (), (1, 1, 1), (1, 1, 1), 0, None)  # no kernel: not describable
    assert region.dropped == 1 and region.ops == []
    assert "recording a launch failed" in capsys.readouterr().err


def test_chain_is_one_cycle_through_every_slot():
    chain = microbench._chain(1024, 32, np.random.default_rng(1))
    seen, j = set(), 0
    for _ in range(32):
        seen.add(j)
        j = int(chain[j])
    assert j == 0 and seen == set(range(0, 1024, 32))


def test_microbench_runs_on_the_emulator(tmp_path):
    out = tmp_path / "device.json"
    env = {**os.environ, "CUDAKIT_BACKEND": "emu", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "benchmarks.microbench", "--small", "--out", str(out)],
                   env=env, check=True, timeout=300, cwd=ROOT, capture_output=True)
    result = json.loads(out.read_text())
    assert result["header"]["engine"] == "emu" and result["errors"] == {}
    wanted = ["sm_count", "clock_ghz", "dram_read_gbs", "dram_write_gbs", "dram_copy_gbs",
              "l2_read_gbs", "l1_read_bytes_per_clk_per_sm", "shared_bytes_per_clk_per_sm",
              "dram_latency_cycles", "l2_latency_cycles", "l1_latency_cycles",
              "shared_latency_cycles", "fp32_fma", "fp64_fma", "int32_add", "int32_imad", "sfu",
              "shfl", "global_atomic_same_address_per_s", "global_atomic_distinct_per_s",
              "shared_atomic_per_clk_per_sm", "launch_overhead_us", "kernel_min_us",
              "barrier_cycles", "h2d_pinned_gbs", "d2h_pinned_gbs", "h2d_pageable_gbs",
              "d2h_pageable_gbs", "copy_latency_us", "pcie_duplex_gbs", "copy_issue_us",
              "fp32_latency_cycles", "fp64_latency_cycles", "sfu_latency_cycles",
              "sfu_ftz_latency_cycles", "div_f32_latency_cycles", "rcp_f32_latency_cycles",
              "sqrt_f32_latency_cycles", "div_s32_latency_cycles", "div_u32_latency_cycles"]
    assert all(result[k] > 0 and k in result["methods"] for k in wanted), \
        [k for k in wanted if not (result.get(k) or 0) > 0]
    assert result["launch_issue_per_arg_us"] >= 0
    curves = read_curves(result["copy_curves"], "device.json")  # the format the model reads
    assert set(curves) == {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable", "d2d"}
    assert curves["h2d_pinned"][0][0] == 256 and curves["d2d"][0][-1] == 1 << 16
    assert result["sm_count"] == 1  # the emulated device
    gbs, cycles = read_table(result["dram_loaded_latency"], "device.json", "dram_loaded_latency")
    assert len(gbs) == len(result["dram_loaded_latency"]["warps_chases"]) == 9


def test_microbench_measures_some_again_into_an_earlier_file(tmp_path):
    device = "cudakit emulator of an sm_90 GPU"  # what cudakit.record's header names
    env = {**os.environ, "CUDAKIT_BACKEND": "emu", "PYTHONPATH": str(ROOT)}

    def again(path, *only):
        return subprocess.run([sys.executable, "-m", "benchmarks.microbench", "--small",
                               "--only", *only, "--into", str(path)], env=env, timeout=300,
                              cwd=ROOT, capture_output=True, text=True)

    earlier = tmp_path / "device.json"
    earlier.write_text(json.dumps({"header": {"device": device}, "sm_count": 1,
                                   "fp32_fma": 9.0, "methods": {"fp32_fma": "by hand"}}))
    assert again(earlier, "dependent_latencies").returncode == 0
    merged = json.loads(earlier.read_text())
    assert merged["fp32_fma"] == 9.0 and merged["methods"]["fp32_fma"] == "by hand"
    assert merged["fp32_latency_cycles"] > 0 and "clock64" in merged["methods"][
        "fp32_latency_cycles"]
    assert "fp32_latency_cycles" in merged["header"]["updated"][0]["keys"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"header": {"device": "NVIDIA A100"}, "methods": {}}))
    refused = again(other, "dependent_latencies")
    assert refused.returncode and "is of NVIDIA A100" in refused.stderr
    assert "fp32_latency_cycles" not in json.loads(other.read_text())
    bad = again(earlier, "no_such_benchmark")
    assert bad.returncode and "no benchmark no_such_benchmark" in bad.stderr


class StandIn:
    """A stand-in predictor for this test only: 1 us per thread block, 1 ms per MB copied."""

    class Pointer:
        def __init__(self, array, offset):
            self.array, self.offset = array, offset

    def __init__(self):
        self.calls = []

    def predict(self, source, kernel_name=None, *, grid, block, args=(), shared=0,
                device="H100"):
        self.calls.append((kernel_name, args))
        return type("P", (), {"ms": 1e-3 * int(np.prod(grid))})()

    def predict_copy(self, nbytes, direction="htod", pinned=True, device="H100"):
        return type("P", (), {"ms": nbytes / 1e6})()


def test_model_groups_dedupes_and_replays(recording, tmp_path):
    lines = [dict(x, cell=7) if "seq" in x else x for x in recording]
    path = tmp_path / "rec.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n".join(json.dumps(x) for x in lines) + "\n")
    stand_in = StandIn()
    result = model.compare(path, engine="emu", predictor=(
        stand_in.predict, stand_in.predict_copy, StandIn.Pointer))
    regions = result["regions"]
    assert [r["measurements"] for r in regions] == [2, 1, 1, 1, 1]  # benchmarks 1, 2 are one
    first = regions[0]
    assert first["measured_ms"] == pytest.approx(np.median([lines[1]["median_ms"],
                                                            lines[2]["median_ms"]]))
    # a synchronous copy (the host waits), then two 4-us launches issued by the host, each
    # costing it launch_issue_us and launch_issue_per_arg_us per argument (4 and 2; absent
    # until measured): the second starts when issued and ends 4 us later
    d = load("H100")
    per_arg = d.figures.get("launch_issue_per_arg_us", 0.0)
    issued = 2 * d.launch_issue_us + 6 * per_arg
    assert first["predicted_ms"] == pytest.approx(1024 / 1e6 + (issued + 4) / 1e3)
    assert first["kernels"] == "memcpy htod, add, scale<64>"
    name, args = stand_in.calls[0]
    assert name == "add" and args[0] is args[1]  # the aliased buffer is one array
    assert isinstance(args[2], StandIn.Pointer) and args[2].array is args[0]
    assert args[2].offset == 1024 and args[0].nbytes == 3072 and args[3] == np.int32(256)
    assert args[3].dtype == np.int32
    assert result["summary"]["predicted"] == 5 and result["summary"]["sequences"] == 1
    assert "| lab99 | 7 | memcpy htod, add, scale<64> |" in result["table"]
    with pytest.raises(SystemExit, match="no recording"):
        model.main([str(tmp_path / "missing.jsonl")])
    # --labs: only the labs named (by prefix); the labs' stored file needs all of them
    some = model.compare(path, engine="emu", labs=["lab9"], predictor=(
        stand_in.predict, stand_in.predict_copy, StandIn.Pointer))
    assert len(some["regions"]) == 5
    none = model.compare(path, engine="emu", labs=["10_"], predictor=(
        stand_in.predict, stand_in.predict_copy, StandIn.Pointer))
    assert none["regions"] == [] and none["summary"]["predicted"] == 0
    with pytest.raises(SystemExit, match="--labs-json needs every lab"):
        model.main([str(path), "--labs", "lab9", "--labs-json", str(tmp_path / "x.json")])


def test_model_keeps_gpu_lines_only(recording, tmp_path):
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in recording) + "\n")
    regions, skipped = model.group(model.read_lines(path), engine="gpu")
    assert regions == [] and skipped == {"engine emu": 6}


def test_sequence_order_leaves_out_ties_within_the_measured_spread():
    def region(median, fastest, predicted):
        return model.Region("lab", 3, "benchmark", [], {}, [median], [fastest], predicted)

    # a and b differ by 0.05 ms, less than a's own spread (1.0 - 0.9): a tie, not ordered;
    # c is clearly slower than both and must be predicted slower than both
    a, b, c = region(1.0, 0.9, 1.2), region(1.05, 1.04, 1.1), region(2.0, 2.0, 3.0)
    (s,) = model.sequences([a, b, c])
    assert (s["pairs"], s["ties"], s["same_order"], s["pairs_in_order"]) == (2, 1, True, 1.0)
    assert s["out_of_order"] == []
    c.predicted = 1.15  # between a's and b's predictions: wrong against a, whatever the tie
    (s,) = model.sequences([a, b, c])
    assert (s["same_order"], s["pairs_in_order"]) == (False, 0.5)
    (pair,) = s["out_of_order"]  # the pair is named, with its times
    assert pair[0].endswith("measured 1, predicted 1.2 ms") and \
        pair[1].endswith("measured 2, predicted 1.15 ms")


def test_the_issues_sequences_group_a_labs_regions_by_problem_size():
    def region(lab, cell, kernel, size, measured, predicted):
        op = {"op": "launch", "kernel": kernel, "args": [{"alloc": 1, "size": size}],
              "grid": [64, 1, 1], "block": [256, 1, 1], "shared": 0, "stream": 0}
        return model.Region(lab, cell, "benchmark", [op], {}, [measured], [measured],
                            predicted)

    # reduce0 and reduce1 in cells of their own, on the same array: one sequence across
    # cells; the same kernels on a smaller array, another; a cell the issue does not name
    # and a lab it does not name count in no sequence
    rs = [region("10_reduction", 6, "reduce0", 1 << 28, 6.5, 4.8),
          region("10_reduction", 9, "reduce1", 1 << 28, 4.0, 2.5),
          region("10_reduction", 6, "reduce0", 1 << 20, 0.2, 0.1),
          region("10_reduction", 9, "reduce1", 1 << 20, 0.1, 0.2),
          region("10_reduction", 36, "read_ceiling", 1 << 28, 0.9, 0.9),
          region("01_occupancy", 20, "scale1", 1 << 28, 0.5, 0.4)]
    big, small = model.named_sequences(rs)
    assert (big["name"], big["bytes"], big["cell"], big["regions"]) == (
        "reduce0 ... reduce7", 1 << 28, [6, 9], 2)
    assert big["same_order"] and not small["same_order"] and small["bytes"] == 1 << 20


def test_addresses_inside_a_known_allocation_need_no_driver_call(monkeypatch):
    calls = []

    def driver(address):
        calls.append(address)
        return (address // 4096) * 4096, 4096

    monkeypatch.setattr(record, "_address_range", driver)
    region = record.Region("timer")
    first = region.pointer(8192 + 100)
    inside = region.pointer(8192 + 4000)
    other = region.pointer(3 * 4096 + 8)
    assert calls == [8192 + 100, 3 * 4096 + 8]  # the second address was inside the first's
    assert (first["alloc"], inside["alloc"], other["alloc"]) == (0, 0, 1)
    assert (inside["size"], inside["offset"]) == (4096, 4000)
