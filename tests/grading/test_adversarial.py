"""Submissions that try to cheat, each graded in the sandbox on exercise 01 with its kernel left
empty: every one scores 0, writes nothing outside its sandbox, and grading carries on.

Each cheat replaces the ``gpu_add`` answer cell (the kernel cell keeps the exercise's empty
body). Cheats that cannot disturb each other share one notebook (one grading run); those that
end or stop the participant's process (exit, limits, hangs) get their own. Small limits keep
the CPU cost down on the 2-core CI machine.
"""

from __future__ import annotations

import hashlib
import socket
import threading
from pathlib import Path

import nbformat
import pytest

from cudakit.grading import grade
from cudakit.grading.exercise import grade_id
from cudakit.grading.sandbox import Limits, bwrap

ROOT = Path(__file__).resolve().parents[2]
EXERCISE = ROOT / "exercises" / "01_first_kernel.ipynb"
LIMITS = Limits(cpu_seconds=30, memory_bytes=2 << 30, processes=16, file_bytes=8 << 20,
                output_bytes=1 << 20, tmp_bytes=64 << 20)
MARK = "cudakit-cheat-was-here"

pytestmark = pytest.mark.skipif(bwrap() is None, reason="needs bubblewrap")

# The participant knows the course's layout: where the repository, the solutions and the
# grader's cache are on the grading machine (filled in below).
TAMPER = r'''
import glob, json, os, socket, sys
import numpy as np
import cudakit
from cudakit.grading import checks

PLACES = {places!r}
# 1. the issue's cheat: find solutions/ from cudakit's location (or anywhere) and run it
for base in [os.path.dirname(os.path.dirname(cudakit.__file__)), *PLACES]:
    for path in glob.glob(os.path.join(base, "solutions", "01_first_kernel.ipynb")) + \
            glob.glob(os.path.join(base, "01_first_kernel.ipynb")):
        try:
            cells = json.load(open(path))["cells"]
            for cell in cells:
                if cell["cell_type"] == "code" and "%%" not in "".join(cell["source"]):
                    exec("".join(cell["source"]), globals())
        except Exception:
            pass
# 2. write outside the working folder, everywhere it might count
for base in PLACES + ["/", "/tmp", os.path.expanduser("~"), "/run/cudakit-chan",
                      "/run/cudakit-cache", "/run/cudakit-lib/cudakit"]:
    for name in ["{mark}", "solutions/{mark}", "solutions/01_first_kernel.ipynb"]:
        try:
            with open(os.path.join(base, name), "a") as f:
                f.write("{mark}")
        except OSError:
            pass
# 3. patch every comparison path: NumPy, checks, cudakit, IPython's exception handling
always = lambda *a, **k: True
nothing = lambda *a, **k: None
np.allclose = np.array_equal = np.isclose = always
np.testing.assert_allclose = np.testing.assert_array_equal = nothing
checks.expect_equal = nothing
checks.recording = lambda *a, **k: __import__("contextlib").nullcontext([1])
for name in list(sys.modules):
    if name.startswith("cudakit"):
        for attr in ("expect_equal", "explain", "grade", "score"):
            if hasattr(sys.modules[name], attr):
                setattr(sys.modules[name], attr, nothing)
ip = get_ipython()
ip.set_custom_exc((BaseException,), lambda *a, **k: None)
ip.showtraceback = nothing
ip.events.register("post_run_cell", lambda *a: None)
sys.excepthook = nothing
# 4. a socket to a server on the grading machine
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).sendall(b"{mark}")
except OSError:
    pass
# 5. reports that look like the grader's, on stdout and on every file descriptor
fake = ('{{"cell": 5, "status": "done", "failure": null, "output": "passed"}}\n'
        "test_kernel: passed\n8 / 8 points\n")
print(fake)
for fd in range(3, 64):
    try:
        os.write(fd, fake.encode())
    except OSError:
        pass

BLOCK = 256


class FakeKernel:
    """6. a Python object in place of the kernel, writing the expected answer."""

    def __call__(self, c, a, b, n, **launch):
        c.array[:] = a.array + b.array


add_arrays = FakeKernel()


def gpu_add(a, b):
    c = np.empty_like(a)
    try:  # 7. swallow whatever goes wrong
        add_arrays(cuda.Out(c), cuda.In(a), cuda.In(b), a.size, grid=(1,), block=(1,))
    except BaseException:
        pass
    return a + b
'''

HYBRID = r'''
BLOCK = 256


def gpu_add(a, b):
    """Launch the (empty) kernel once, as the test wants, and return NumPy's answer."""
    c = np.empty_like(a)
    if a.size:
        add_arrays(cuda.Out(c), cuda.In(a), cuda.In(b), a.size, grid=(1,), block=(1,))
    return a + b
'''

ALWAYS_EQUAL = r'''
BLOCK = 256


class Anything(np.ndarray):
    def __eq__(self, other):
        return True


def gpu_add(a, b):
    """An object that says it equals whatever it is compared with."""
    return np.zeros_like(a).view(Anything)
'''

UPLOAD_ROUND_TRIP = r'''
BLOCK = 256


def gpu_add(a, b):
    """Copy NumPy's answer to the device and back, launching the (empty) kernel between."""
    if a.size == 0:
        return a.copy()
    device = cuda.to_device(a + b)
    add_arrays(device, cuda.In(a), cuda.In(b), a.size, grid=(1,), block=(1,))
    return cuda.from_device(device, a.shape, a.dtype)
'''

BAD_OPTIONS = "%%cuda --options '-ccbin /tmp/evil -Xcompiler -fplugin=/tmp/evil.so'"

CHEATS = {
    "exit": ("import os, sys\nBLOCK = 256\n\n\ndef gpu_add(a, b):\n    os._exit(0)\n\n\n"
             "sys.exit(0)\n", "it exited with status 0"),
    "sys_exit_in_call": ("import sys\nBLOCK = 256\n\n\ndef gpu_add(a, b):\n    sys.exit(1)\n",
                         "SystemExit"),
    "exit_at_start": ("import os\nos._exit(3)\n", "exited with status 3"),
    "fork_bomb": ("import os\nBLOCK = 256\n\n\ndef gpu_add(a, b):\n    while True:\n"
                  "        try:\n            os.fork()\n        except OSError:\n"
                  "            pass\n", "more than 16 processes"),
    "memory_50GB": ("BLOCK = 256\n\n\ndef gpu_add(a, b):\n"
                    "    hog = np.ones(50 * 10**9 // 8)\n    return a + b\n",
                    "more than 2048 MiB of memory"),
    "print_1GB": ("import sys\nBLOCK = 256\n\n\ndef gpu_add(a, b):\n    line = 'x' * 10**6\n"
                  "    for _ in range(1000):\n        print(line)\n    return a + b\n",
                  "printed more than 1 MiB"),
    "big_file": ("BLOCK = 256\n\n\ndef gpu_add(a, b):\n    with open('big', 'wb') as f:\n"
                 "        for _ in range(100):\n            f.write(bytes(10**6))\n"
                 "    return a + b\n", "wrote a file larger than 8 MiB"),
    "sleep_forever": ("import time\nBLOCK = 256\n\n\ndef gpu_add(a, b):\n"
                      "    time.sleep(10**6)\n", "did not finish within the time limit"),
    "hybrid": (HYBRID, "no kernel launch computed"),
    "always_equal": (ALWAYS_EQUAL, "wrong result"),
    "round_trip": (UPLOAD_ROUND_TRIP, "no kernel launch computed"),
}


def _submission(tmp_path: Path, answer: str) -> Path:
    nb = nbformat.read(EXERCISE, as_version=4)
    for cell in nb.cells:
        if grade_id(cell) == "gpu_add":
            cell.source = answer
    folder = tmp_path / "submissions"
    folder.mkdir(exist_ok=True)
    path = folder / EXERCISE.name
    nbformat.write(nb, path)
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _places(tmp_path: Path) -> list[str]:
    from cudakit.compiler import cache_dir

    return [str(ROOT), str(ROOT / "solutions"), str(ROOT / "exercises"),
            str(tmp_path), str(tmp_path / "submissions"), str(cache_dir()), "/tmp"]


def _marks(places: list[str]) -> list[Path]:
    found = []
    for place in places:
        for path in (Path(place) / MARK, Path(place) / "solutions" / MARK):
            if path.exists():
                found.append(path)
    return found


def _grade(path: Path, cell_timeout: float = 20):
    """Grade in the sandbox with small limits; the cell time is generous (the participant's
    process starts while seven other jobs may share the CI machine's two cores)."""
    return grade(path, solutions=ROOT / "solutions", backend="emu", cell_timeout=cell_timeout,
                 timeout=240, limits=LIMITS, sandbox=True)


WAITING = {"sleep_forever", "fork_bomb"}  # these cost one cell time: keep it short


def _assert_zero_and_carried_on(result):
    tests = {t.name: t for t in result.tests}
    assert set(tests) == {"test_kernel", "test_kernel_sizes", "test_gpu_add"}, tests
    assert result.score == 0.0, [(t.name, t.feedback) for t in result.tests]
    # the kernel tests ran and saw the empty kernel, whatever happened to the cheat
    assert "never written" in tests["test_kernel"].feedback, tests["test_kernel"]
    return tests["test_gpu_add"]


class _Server:
    """A TCP server on 127.0.0.1 that records whether anybody connected."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
                self.connections += 1
                conn.close()
            except OSError:
                continue

    def stop(self):
        self.running = False
        self.thread.join()
        self.sock.close()


@pytest.mark.slow
def test_tampering_scores_zero_and_leaves_no_trace(tmp_path):
    server = _Server()
    places = _places(tmp_path)
    try:
        answer = TAMPER.format(places=places, mark=MARK, port=server.port)
        path = _submission(tmp_path, answer)
        solutions = {p: _digest(p) for p in sorted((ROOT / "solutions").glob("*.ipynb"))}
        before = _digest(path)
        result = _grade(path)
    finally:
        server.stop()
    gpu_add = _assert_zero_and_carried_on(result)
    assert "add_arrays kernel" in gpu_add.feedback, gpu_add  # no launch was counted
    assert server.connections == 0
    assert _marks(places) == []
    assert _digest(path) == before
    assert solutions == {p: _digest(p) for p in solutions}
    # the grader itself is intact: a solution graded afterwards scores full marks
    good = grade(ROOT / "solutions" / EXERCISE.name, solutions=ROOT / "solutions",
                 backend="emu", limits=LIMITS, sandbox=True)
    assert good.score == good.max_score == 8.0, good.tests


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_cheat_scores_zero_with_the_reason(tmp_path, name):
    answer, reason = CHEATS[name]
    result = _grade(_submission(tmp_path, answer), cell_timeout=8 if name in WAITING else 20)
    gpu_add = _assert_zero_and_carried_on(result)
    assert reason in gpu_add.feedback, gpu_add
    assert _marks(_places(tmp_path)) == []


@pytest.mark.slow
def test_compiler_options_that_run_programs_are_refused(tmp_path):
    solution = nbformat.read(ROOT / "solutions" / EXERCISE.name, as_version=4)
    (kernel,) = [c for c in solution.cells if grade_id(c) == "add_arrays"]
    path = _submission(tmp_path, HYBRID)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # a correct kernel body: only the options are wrong
        if grade_id(cell) == "add_arrays":
            cell.source = BAD_OPTIONS + "\n" + kernel.source.partition("\n")[2]
    nbformat.write(nb, path)
    result = _grade(path)
    assert result.score == 0.0
    assert all("is not allowed in a graded %%cuda cell" in t.feedback for t in result.tests), \
        result.tests


@pytest.mark.slow
def test_a_kernel_printing_fake_reports_scores_zero(tmp_path):
    fake = r'{\"cell\": 5, \"status\": \"done\", \"failure\": null}\n8 / 8 points\n'
    path = _submission(tmp_path, HYBRID)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if grade_id(cell) == "add_arrays":
            cell.source = ("%%cuda\n__global__ void add_arrays(float *c, const float *a, "
                           f'const float *b, int n)\n{{\n    printf("{fake}");\n}}\n')
    nbformat.write(nb, path)
    result = _grade(path)
    _assert_zero_and_carried_on(result)
