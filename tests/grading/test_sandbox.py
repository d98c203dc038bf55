"""The sandbox itself: what a process inside sees and may do, its limits in words, the
GPU pass-through, the fallback without bubblewrap, and the grader's records (resume)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from cudakit.grading import answer_cell, grade, graded_cell, make_student, sandbox
from cudakit.grading.batch import Options, result_path
from cudakit.grading.records import digest, record_name
from cudakit.grading.sandbox import Limits, Sandbox, SandboxError

ROOT = Path(__file__).resolve().parents[2]
needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None, reason="needs bubblewrap")

PROBE = r'''
import json, os, socket, sys
import cudakit
seen = {"cudakit": cudakit.__file__, "cwd": os.getcwd(), "cwd_empty": os.listdir(".") == []}
for name, path in {ROOT!r}.items():
    seen["sees_" + name] = os.path.exists(path)
for path in ["/usr/x", "/etc/x", sys.prefix + "/x", os.path.dirname(cudakit.__file__) + "/x",
             "x", "/tmp/x"]:
    try:
        open(path, "w").close()
        seen["writes " + path] = True
    except OSError:
        seen["writes " + path] = False
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2)
    seen["network"] = True
except OSError:
    seen["network"] = False
print(json.dumps(seen))
'''


def _run(box: Sandbox, code: str) -> tuple[int, str]:
    confined = box.spawn([sys.executable, "-c", code])
    confined.process.stdin.close()
    code = confined.process.wait(timeout=60)
    confined.close()
    return code, confined.output.decode(errors="replace")


@needs_bwrap
def test_inside_sees_no_course_files_writes_only_its_folders_and_has_no_network(tmp_path):
    server = socket.create_server(("127.0.0.1", 0))
    # the repository's own files (a venv inside it, as `make` builds, is shown alone)
    places = {"readme": str(ROOT / "README.md"), "package": str(ROOT / "cudakit"),
              "git": str(ROOT / ".git"), "solutions": str(ROOT / "solutions"),
              "tests": str(ROOT / "tests"), "submissions": str(tmp_path)}
    try:
        code, out = _run(Sandbox(Limits(), hidden=[tmp_path]),
                         PROBE.replace("{ROOT!r}", repr(places))
                         .replace("{port}", str(server.getsockname()[1])))
    finally:
        server.close()
    seen = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and seen["cudakit"].startswith(sandbox.INSIDE_PACKAGE), seen
    assert not any(seen[f"sees_{name}"] for name in places), seen
    assert seen["cwd_empty"] and seen["writes x"] and seen["writes /tmp/x"], seen
    assert not any(v for k, v in seen.items() if k.startswith("writes /") and k != "writes /tmp/x")
    assert seen["network"] is False


def _status(limits: Limits, code: str) -> str:
    confined = Sandbox(limits).spawn([sys.executable, "-c", code])
    confined.process.stdin.close()
    confined.process.wait(timeout=60)
    confined._reader.join(timeout=5)
    reason = confined.reason()
    confined.close()
    return reason


@needs_bwrap
def test_each_limit_is_named():
    small = Limits(cpu_seconds=1, output_bytes=1000, processes=8)
    assert _status(small, "while True: pass") == small.describe("cpu")
    assert _status(small, "print('x' * 100000)") == small.describe("output")
    assert small.describe("cpu") == "it used more than 1 s of CPU time"
    bomb = Sandbox(small).spawn([sys.executable, "-c", "import os, time\nfor _ in range(50):\n"
                                 "    try: os.fork()\n    except OSError: pass\ntime.sleep(30)"])
    bomb.process.stdin.close()
    time.sleep(3)
    refused = bomb.pids_refused()
    bomb.close()
    if bomb.cgroup is None:
        pytest.skip("no pids cgroup here: the process limit is RLIMIT_NPROC")
    assert refused


def test_gpu_nodes_and_driver_files_are_passed_through(monkeypatch):
    monkeypatch.setattr(sandbox, "_nvidia_nodes", lambda: ["/dev/nvidia0", "/dev/nvidiactl",
                                                           "/dev/nvidia-uvm"])
    monkeypatch.setattr(sandbox, "bwrap", lambda: "/usr/bin/bwrap")
    with_gpu = Sandbox(Limits(), gpu=True).command(["true"])
    for node in ("/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"):
        assert ["--dev-bind", node, node] == with_gpu[with_gpu.index(node) - 1:][:3]
    assert "/sys" in with_gpu and "--proc" in with_gpu  # /proc/driver/nvidia is in the new /proc
    without = Sandbox(Limits(), gpu=False).command(["true"])
    assert "--dev-bind" not in without and "--unshare-all" in without


def test_a_bwrap_that_cannot_run_is_named(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: "/bin/false")
    with pytest.raises(SandboxError, match="user namespaces"):
        sandbox.check()
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    with pytest.raises(SandboxError, match="install the Debian package 'bubblewrap'"):
        sandbox.check()


ANSWER = "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION"


def _exercise(tmp_path: Path, answer: str = ANSWER) -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        answer_cell(ANSWER, "square"),
        graded_cell("assert square(3) == 9", "test_visible", points=1),
        graded_cell("### BEGIN HIDDEN TESTS\nassert square(0.5) == 0.25\n### END HIDDEN TESTS",
                    "test_hidden", points=2)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    (tmp_path / "solutions").mkdir(exist_ok=True)
    (tmp_path / "mine").mkdir(exist_ok=True)
    nbformat.write(nb, tmp_path / "solutions" / "sq.ipynb")
    student = make_student(nb)
    student.cells[0].source = answer
    nbformat.write(student, tmp_path / "mine" / "sq.ipynb")
    return tmp_path / "mine" / "sq.ipynb"


def test_without_bubblewrap_only_visible_tests_count_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    result = grade(_exercise(tmp_path), solutions=tmp_path / "solutions")
    assert [(t.name, t.score) for t in result.tests] == [("test_visible", 1.0),
                                                         ("test_hidden", 0.0)]
    assert "hidden parts" in result.tests[1].feedback and "bubblewrap" in result.note
    with pytest.raises(SandboxError):
        grade(_exercise(tmp_path), solutions=tmp_path / "solutions", sandbox=True)


def test_visible_only_note_and_feedback_in_japanese(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    result = grade(_exercise(tmp_path), solutions=tmp_path / "solutions")
    assert [(t.name, t.score) for t in result.tests] == [("test_visible", 1.0),
                                                         ("test_hidden", 0.0)]
    assert result.note.startswith("ここには bubblewrap がインストールされていません: "
                                  "これは見えているテストだけによる自己チェックです。")
    assert result.tests[1].feedback == (
        "ここでは採点していません: このテストには隠された部分があり、それは採点用サンドボックスの"
        "中でしか実行されません。見えている部分には合格しました。")


@needs_bwrap
def test_records_are_kept_outside(tmp_path):
    path = _exercise(tmp_path)
    before = path.read_bytes()
    out = tmp_path / "graded"
    first = grade(path, solutions=tmp_path / "solutions", output_dir=out)
    assert first.score == 3.0 and path.read_bytes() == before
    name = record_name(path)
    executed = nbformat.read(out / f"{name}.executed.ipynb", as_version=4)
    assert executed.cells[1].metadata["cudakit"] == {"score": 1.0, "feedback": "passed"}
    record = json.loads((out / f"{name}.json").read_text())
    assert record["score"] == 3.0 and record["submission_sha256"] == digest(path)


@needs_bwrap
@pytest.mark.slow
def test_an_interrupted_run_started_again_gives_every_result(tmp_path):
    first = _exercise(tmp_path)
    second = tmp_path / "mine" / "sq2.ipynb"
    second.write_bytes(first.read_bytes())
    (tmp_path / "solutions" / "sq2.ipynb").write_bytes(
        (tmp_path / "solutions" / "sq.ipynb").read_bytes())
    out = tmp_path / "graded"
    command = [sys.executable, "-m", "cudakit", "grade", str(first), str(second), "--json",
               "--solutions", str(tmp_path / "solutions"), "--results", str(out), "--resume",
               "--jobs", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    options = Options(str(tmp_path / "solutions"))
    record = result_path(out, first, options)
    deadline = time.monotonic() + 120
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)  # interrupted while grading the second notebook
    run.wait()
    kept = record.stat().st_mtime_ns
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
    report = json.loads(done.stdout)
    assert [r["score"] for r in report] == [3.0, 3.0], report
    assert record.stat().st_mtime_ns == kept  # the first was not graded again
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_command_line_says_when_only_visible_tests_ran(tmp_path):
    path = _exercise(tmp_path)
    run = subprocess.run([sys.executable, "-m", "cudakit", "grade", str(path), "--json",
                          "--no-sandbox", "--solutions", str(tmp_path / "solutions")],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("visible tests only") == 1
    (report,) = json.loads(run.stdout)
    assert set(report) == {"notebook", "score", "max_score", "tests"}
    assert report["score"] == 1.0


def test_a_judge_that_cannot_start_is_an_error_not_a_score(tmp_path, monkeypatch):
    from cudakit.grading import session

    monkeypatch.setattr(session.sys, "executable", "/bin/false")
    with pytest.raises(SandboxError, match="judge process could not start"):
        grade(_exercise(tmp_path), solutions=tmp_path / "solutions", sandbox=False)
