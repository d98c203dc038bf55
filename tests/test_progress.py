"""cudakit.progress: a bar while someone watches, nothing in unattended runs (nbval)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

import cudakit
from cudakit.progressbar import progress

WIDGET = "application/vnd.jupyter.widget-view+json"
LOOP = "import cudakit\nfor n in cudakit.progress([1, 2, 3], 'sizes'):\n    print(n * n)\n"


def test_items_pass_through_unchanged_without_a_bar(monkeypatch):
    monkeypatch.setenv("CUDAKIT_PROGRESS", "0")
    assert list(progress(iter("abc"), "letters", total=3)) == ["a", "b", "c"]
    assert cudakit.progress is progress


def run_cell(allow_stdin: bool) -> list[dict]:
    """The iopub messages of LOOP run in a fresh kernel, as a frontend that does
    (JupyterLab) or does not (nbval, nbclient) take input sends it."""
    km, kc = start_new_kernel(kernel_name="python3", env={**os.environ, "CUDAKIT_PROGRESS": ""})
    try:
        msg_id = kc.execute(LOOP, allow_stdin=allow_stdin)
        messages = []
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return messages
            messages.append(msg)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def printed(messages) -> str:
    return "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")


@pytest.mark.timeout(120)
def test_a_watched_notebook_shows_a_bar_and_leaves_nothing_behind():
    messages = run_cell(allow_stdin=True)
    assert printed(messages) == "1\n4\n9\n"
    shown = [m for m in messages if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and WIDGET in shown[0]["content"]["data"]
    display_id = shown[0]["content"]["transient"]["display_id"]
    updates = [m for m in messages if m["msg_type"] == "update_display_data"]
    assert updates and updates[-1]["content"]["transient"]["display_id"] == display_id
    assert updates[-1]["content"]["data"] == {}  # the bar's output is emptied at the end


@pytest.mark.timeout(120)
def test_an_unattended_run_shows_no_bar():
    messages = run_cell(allow_stdin=False)
    assert printed(messages) == "1\n4\n9\n"
    assert [m["msg_type"] for m in messages if "display" in m["msg_type"]] == []


@pytest.mark.timeout(180)
def test_nbval_passes_a_notebook_stored_without_bars(tmp_path):
    cell = nbformat.v4.new_code_cell(LOOP, execution_count=1, outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="1\n4\n9\n")])
    path = tmp_path / "sweep.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
         str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=170,
        env={**os.environ, "CUDAKIT_PROGRESS": "",
             "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert run.returncode == 0, run.stdout[-2000:]
    assert "1 passed" in run.stdout
