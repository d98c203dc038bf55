"""`make lab` serves JupyterLab on localhost with token authentication."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_make_lab_serves_jupyterlab(tmp_path):
    port, token = _free_port(), "cudakit-test-token"
    args = f"--no-browser --port={port} --IdentityProvider.token={token}"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path)}
    server = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        deadline, status = time.time() + 90, None
        while time.time() < deadline and status is None:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/api/status?token={token}", timeout=5
                ) as reply:
                    status = json.load(reply)
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert server.poll() is None, server.stdout.read()
                time.sleep(1)
        assert status is not None, "JupyterLab did not answer within 90 s"
        assert "started" in status
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=5)
        assert refused.value.code == 403, "the API must refuse requests without the token"
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/api/contents?token={token}", timeout=5
        ) as reply:
            listing = {item["name"] for item in json.load(reply)["content"]}
        assert "sanitize.cfg" in listing, "JupyterLab must serve the labs/ folder"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}") as reply:
            page = reply.read().decode()
        config = re.search(r'id="jupyter-config-data"[^>]*>\s*(\{.*?\})\s*</script>', page, re.S)
        loaded = {e["name"] for e in json.loads(config.group(1))["federated_extensions"]}
        assert "cudakit-jupyterlab" in loaded, "make lab must serve cudakit's extension"
        listed = subprocess.run([str(ROOT / ".venv" / "bin" / "jupyter"), "labextension", "list"],
                                capture_output=True, text=True, check=True)
        assert re.search(r"cudakit-jupyterlab v\S+ \S*enabled", listed.stdout + listed.stderr)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        try:
            out, _ = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            out, _ = server.communicate()
    assert "kernels will run on" in out or "kernels run on" in out, out[-2000:]
