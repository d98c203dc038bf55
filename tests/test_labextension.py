"""cudakit's JupyterLab extension as installed: prebuilt assets current, listed and
enabled in this environment with its server extension, the engine endpoint, and
nbconvert's static HTML highlighting %%cuda cells as CUDA."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import nbformat
import pytest
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CudaLexer

from cudakit import lab

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LAB00 = ROOT / "labs" / "00_hello_cuda.ipynb"
H100_SMI = ROOT / "tests" / "fixtures" / "nvidia_smi" / "h100_4gib.csv"


def jupyter(*args: str) -> str:
    out = subprocess.run([str(BIN / "jupyter"), *args], capture_output=True, text=True,
                         check=True, timeout=120)
    return re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)  # no colour codes


def test_prebuilt_assets_match_their_typescript_sources():
    check = subprocess.run([str(ROOT / "tools" / "build-labextension"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_labextension_and_server_extension_are_enabled_in_this_environment():
    listed = jupyter("labextension", "list")
    enabled = r"cudakit-jupyterlab v0\.1\.0 enabled\s+OK \(python, cudakit\)"
    assert re.search(enabled, listed), listed
    servers = jupyter("server", "extension", "list")
    assert re.search(r"cudakit\.lab enabled", servers) and re.search(r"cudakit\.lab\s+OK", servers)


def test_static_html_highlights_cuda_cells_as_cuda_and_python_as_python(tmp_path):
    out = subprocess.run(
        [str(BIN / "jupyter"), "nbconvert", "--to", "html", "--output-dir", str(tmp_path),
         str(LAB00)], capture_output=True, text=True, check=True, timeout=120)
    assert "not able to be represented" not in out.stderr  # the diagnostics bundle is dropped
    html = (tmp_path / "00_hello_cuda.html").read_text()
    cells = nbformat.read(LAB00, as_version=4).cells
    cuda_cells = [c.source for c in cells if c.source.startswith("%%cuda")]
    assert len(cuda_cells) >= 5
    for source in cuda_cells:  # Pygments' CUDA lexer, token for token
        assert highlight(source, CudaLexer(), HtmlFormatter(nowrap=True)).strip() in html
    assert '<span class="kr">__global__</span>' in html
    python = '<span class="kn">import</span><span class="w"> </span><span class="nn">numpy</span>'
    assert python in html


def test_engine_is_the_emulator_when_chosen_or_without_a_gpu(monkeypatch):
    assert lab.engine_status({"CUDAKIT_BACKEND": "emu"}) == lab.EMULATOR
    monkeypatch.setattr(lab, "_has_pycuda", lambda: True)
    assert lab.engine_status({}, smi="/nonexistent/nvidia-smi") == lab.EMULATOR
    monkeypatch.setattr(lab, "_has_pycuda", lambda: False)
    assert lab.engine_status({}) == lab.EMULATOR


@pytest.fixture
def recorded_smi(tmp_path):
    """An nvidia-smi that answers with the H100's recorded query and logs its arguments."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\ncat {H100_SMI}\n')
    smi.chmod(0o755)
    return smi, tmp_path / "args"


def test_engine_on_the_h100_from_recorded_nvidia_smi(recorded_smi, monkeypatch):
    smi, args = recorded_smi
    monkeypatch.setattr(lab, "_has_pycuda", lambda: True)
    status = lab.engine_status({"CUDA_VISIBLE_DEVICES": "GPU-0279f1a6,1"}, smi=str(smi))
    assert status == {
        "engine": "gpu",
        "label": "GPU: NVIDIA H100 80GB HBM3",
        "name": "NVIDIA H100 80GB HBM3",
        "memory_used_bytes": 4623 * 2**20,  # 4 GiB allocated + the context
        "memory_total_bytes": 81559 * 2**20,
    }
    assert "--id=GPU-0279f1a6" in args.read_text()  # the first visible device only


def test_engine_endpoint_answers_through_the_server(lab_server):
    url, token = lab_server(LAB00)
    with urllib.request.urlopen(f"{url}/cudakit/engine?token={token}", timeout=30) as reply:
        assert json.load(reply) == lab.engine_status()
    with pytest.raises(urllib.error.HTTPError, match="403"):
        urllib.request.urlopen(f"{url}/cudakit/engine", timeout=30)  # no token
