"""Shared pytest setup: GPU-marked tests skip cleanly where there is no device; the IPython
shell and the JupyterLab server + Chromium of the browser tests."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cudakit.backend import gpu_available


@pytest.fixture(scope="module")
def shell():
    """An IPython shell with ``%load_ext cudakit`` done, as a notebook has it."""
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    ip = start_ipython() or get_ipython()  # one shell per process: a later module reuses it
    ip.run_line_magic("load_ext", "cudakit")
    return ip


@pytest.fixture
def emulate():
    """``emulate(module, kernel, args, grid, block)``: ``kernel`` of an emulator module run
    on host arrays (PyCUDA's ``InOut``), each array argument as the kernel left it (copies:
    the caller's stay as they were), None for the scalars."""
    import numpy as np

    from cudakit import emu

    def run(module, kernel, args, grid, block):
        out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        module.get_function(kernel)(*[emu.InOut(a) if isinstance(a, np.ndarray) else a
                                      for a in out], grid=grid, block=block)
        return [a if isinstance(a, np.ndarray) else None for a in out]
    return run


def pytest_collection_modifyitems(config, items):
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and PyCUDA (run tools/gpu-check there)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def chromium() -> dict:
    """Playwright's launch arguments for Debian's Chromium (installed when missing, else
    the test skips): ``p.chromium.launch(**chromium)``."""
    if not Path(CHROMIUM).exists():
        subprocess.run([str(ROOT / "tools" / "install-system-deps")], check=False)
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is missing and could not be installed (apt-get install chromium)")
    return {"executable_path": CHROMIUM, "args": FLAGS, "headless": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab_server(tmp_path):
    """``start(notebook) -> (url, token)``: JupyterLab on 127.0.0.1 over a copy of the
    notebook, with this environment's extensions; stopped after the test."""
    started = []

    def start(notebook: Path) -> tuple[str, str]:
        root = tmp_path / "labs"
        root.mkdir(exist_ok=True)
        shutil.copy(notebook, root / notebook.name)
        port, token = _free_port(), secrets.token_hex(16)
        env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
                   JUPYTER_DATA_DIR=str(tmp_path / "data"),
                   JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), PYTHONUNBUFFERED="1")
        log = open(tmp_path / "jupyterlab.log", "w")  # noqa: SIM115 - closed below
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
             f"--port={port}", f"--IdentityProvider.token={token}",
             f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
             "--ServerApp.allow_root=True", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"],
            env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append((server, log))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
                return url, token
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" +
                                (tmp_path / "jupyterlab.log").read_text()[-3000:])
                time.sleep(0.5)

    yield start
    for server, log in started:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
