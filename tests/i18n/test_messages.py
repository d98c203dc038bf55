"""cudakit's messages in Japanese: the catalogue covers every wrapped message with the same
placeholders, the setting picks the language, and English is the fallback."""

from __future__ import annotations

import ast
import doctest
import re
import string
from pathlib import Path

import numpy as np
import pytest

from cudakit import emu
from cudakit.errors import MemcheckError
from cudakit.grading.feedback import REASONS, explain
from cudakit.i18n import messages
from cudakit.i18n.messages import catalogue, language

ROOT = Path(__file__).resolve().parents[2]


def _wrapped() -> set[str]:
    """Every string literal passed to ``_()`` in cudakit's sources."""
    found = set()
    for path in (ROOT / "cudakit").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "_"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                found.add(node.args[0].value)
    return found


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_doctests():
    assert doctest.testmod(messages).failed == 0


def test_catalogue_covers_every_message_and_nothing_else():
    ja = catalogue("ja")
    wanted = _wrapped() | {s for pair in REASONS.values() for s in pair if s} | {"."}
    assert len(wanted) > 30
    assert sorted(wanted - set(ja)) == []
    assert sorted(set(ja) - wanted) == []  # a message changed in English leaves its entry here
    for english, japanese in ja.items():
        assert _fields(english) == _fields(japanese), english
        assert re.search("[\u3040-\u30ff\u4e00-\u9fff]", japanese) or english == ".", english


@pytest.mark.parametrize("env, expected", [
    ({"CUDAKIT_LANG": "ja"}, "ja"), ({"LANG": "ja_JP.UTF-8"}, "ja"), ({"LANG": "C.UTF-8"}, "en"),
    ({"CUDAKIT_LANG": "en", "LANG": "ja_JP.UTF-8"}, "en"), ({}, "en"),
])
def test_language_follows_cudakit_lang_then_the_locale(monkeypatch, env, expected):
    for name in ("CUDAKIT_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert language() == expected


def test_grader_feedback_in_japanese_and_english(monkeypatch):
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    text = explain("RaceError", "racecheck: hazard at line 7")
    assert text == ("シェアードメモリ上の競合（データレース）です（racecheck が検出）: "
                    "racecheck: hazard at line 7。シェアードメモリへの書き込みと読み出しの間に "
                    "__syncthreads() が抜けていませんか？")
    assert explain("OddError", "") == "テストで OddError が発生しました"
    monkeypatch.setenv("CUDAKIT_LANG", "fr")  # no catalogue: English
    assert explain("AssertionError", "x") == "wrong result: x"


def test_memcheck_report_in_japanese_names_kernel_line_and_array(monkeypatch):
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    module = emu.SourceModule("""
__global__ void past_the_tile(const int *in, int *out) {
    __shared__ int tile[32];
    tile[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = tile[0];
}""", no_extern_c=True)
    x = np.arange(64, dtype=np.int32)
    with pytest.raises(MemcheckError) as error:
        module.get_function("past_the_tile")(emu.In(x), emu.Out(np.zeros_like(x)),
                                             grid=(1, 1), block=(64, 1, 1))
    text = str(error.value)
    assert text.startswith("memcheck: カーネル 'past_the_tile' の 4 行目"), text
    assert "4 バイトの範囲外の書き込みをしました" in text and "配列 'tile' の要素 32" in text
    assert "要素数は 32 です" in text


def test_racecheck_and_global_memcheck_reports_in_japanese(monkeypatch):
    from cudakit.errors import RaceError

    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    module = emu.SourceModule("""
__global__ void reverse_racy(const int *in, int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
__global__ void unguarded(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = 2.0f * x[i];
}""", no_extern_c=True)
    x = np.arange(64, dtype=np.int32)
    with pytest.raises(RaceError) as race:
        module.get_function("reverse_racy")(emu.In(x), emu.Out(np.zeros_like(x)),
                                            grid=(1, 1), block=(64, 1, 1))
    text = str(race.value)
    assert text.startswith("racecheck: カーネル 'reverse_racy' のシェアードメモリのバイト "), text
    assert "（配列 's'）で read-after-write の競合があります（block (0,0,0)）" in text
    assert ("thread (63,0,0) が 4 行目 (s[threadIdx.x] = in[threadIdx.x];) で書き込みを行い、"
            "その後 thread (0,0,0) が 5 行目") in text
    assert "で読み出しを行いましたが、その間にバリアがありません。2 つの" in text
    y = np.zeros(100, np.float32)
    with pytest.raises(MemcheckError) as fault:
        module.get_function("unguarded")(emu.InOut(y), np.int32(100), grid=(2, 1),
                                         block=(64, 1, 1))
    text = str(fault.value)
    assert text.startswith("memcheck: カーネル 'unguarded' の 9 行目"), text
    assert "バイトの範囲外の読み出しをしました: アドレス 0x" in text
    assert "の終わりから 0 バイト後ろ。アクセスを範囲のチェック（例: if (i < n)）で守るか" in text


def test_launch_and_argument_errors_in_japanese(monkeypatch):
    from cudakit.errors import ArgumentError, LaunchError

    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    import cudakit
    from cudakit import cuda

    scale = cudakit.load("__global__ void scale(float *x, int n) { x[0] *= n; }")["scale"]
    x = np.zeros(4, np.float32)
    with pytest.raises(LaunchError) as launch:
        scale(cuda.InOut(x), np.int32(4), grid=(1, 1), block=(2048, 1, 1))
    assert "での 'scale' の起動: ブロック (2048, 1, 1) のスレッドは 2048 個ですが、" \
           "1 ブロックに置けるスレッドは 1024 個までです" in str(launch.value)
    with pytest.raises(ArgumentError) as args:
        scale(cuda.InOut(x), grid=(1, 1), block=(32, 1, 1))
    assert "'scale' の引数は 2 個" in str(args.value) and "n が足りません" in str(args.value)
    with pytest.raises(ArgumentError) as numpy_array:
        scale(x, np.int32(4), grid=(1, 1), block=(32, 1, 1))
    assert str(numpy_array.value).startswith(
        "仮引数 'x' (float *) にはデバイスメモリが必要ですが、NumPy 配列が渡されました")


def test_barrier_timeout_and_sandbox_limit_sentences_in_japanese(monkeypatch):
    from cudakit.errors import ArgumentError, BarrierError, KernelTimeout
    from cudakit.grading.sandbox import Limits

    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    module = emu.SourceModule("""
__global__ void half_barrier(int *a) {
    if (threadIdx.x < 16) __syncthreads();
    a[threadIdx.x] = 1;
}
__global__ void wait(int *flag) {
    while (flag[0] == 0) { }
}""", no_extern_c=True)
    with pytest.raises(BarrierError) as barrier:
        module.get_function("half_barrier")(emu.mem_alloc(128), grid=(1, 1), block=(32, 1, 1))
    text = str(barrier.value)
    assert text.startswith("カーネル 'half_barrier' の 3 行目の __syncthreads() に "), text
    assert "同じブロックの thread (16,0,0) は到達しませんでした" in text
    with pytest.raises(KernelTimeout) as timeout:
        module.get_function("wait")(emu.mem_alloc(4), grid=(1, 1), block=(1, 1, 1), timeout=0.3)
    assert str(timeout.value).startswith(
        "カーネル 'wait' が制限時間内に終わりませんでした。7 行目でまだループを続けていました。")
    with pytest.raises(ArgumentError) as args:
        module.get_function("wait")(np.int32(3), grid=(1, 1), block=(1, 1, 1))
    assert str(args.value).startswith("カーネル 'wait' の引数 #0 ('int *flag') は"
                                      "デバイスのポインタ"), str(args.value)
    limits = Limits(cpu_seconds=5, file_bytes=1 << 20)
    assert limits.describe("cpu") == "CPU 時間を 5 秒より多く使いました"
    assert limits.describe("file") == "1 MiB より大きなファイルを書き込みました"
    assert explain("LimitExceeded", limits.describe("cpu")) == (
        "採点用サンドボックスの制限に達しました: CPU 時間を 5 秒より多く使いました")
    monkeypatch.setenv("CUDAKIT_LANG", "en")
    assert limits.describe("cpu") == "it used more than 5 s of CPU time"


@pytest.mark.slow
def test_sandboxed_grader_feedback_in_japanese_end_to_end(tmp_path, monkeypatch):
    """The memcheck runs inside the sandbox: its report is Japanese as well as the sentence
    around it."""
    import nbformat

    from cudakit.grading import grade
    from cudakit.grading.exercise import grade_id
    from cudakit.grading.sandbox import bwrap

    if bwrap() is None:
        pytest.skip("needs bubblewrap (tools/install-system-deps)")
    monkeypatch.setenv("CUDAKIT_LANG", "ja")
    nb = nbformat.read(ROOT / "solutions" / "01_first_kernel.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if grade_id(c) == "add_arrays"]
    assert cell.source.count("if (i < n) {") == 1
    cell.source = cell.source.replace("if (i < n) {", "{")
    nbformat.write(nb, tmp_path / "01_first_kernel.ipynb")
    result = grade(tmp_path / "01_first_kernel.ipynb", solutions=ROOT / "solutions",
                   sandbox=True)
    failed = [t for t in result.tests if t.score < t.max_score]
    assert failed, result.tests
    feedback = failed[0].feedback
    assert feedback.startswith("範囲外のメモリアクセスです（memcheck が検出）: "
                               "memcheck: カーネル 'add_arrays' の "), feedback
    assert "バイトの範囲外の読み出しをしました" in feedback
    assert feedback.endswith("どのスレッドも、自分のインデックスが配列の範囲内かどうかを"
                             "確かめていますか？")
