"""`make lab LANG=ja` serves the Japanese labs in a JupyterLab whose language setting is the
Japanese language pack, with cudakit's messages in Japanese in its kernels."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.load(reply)


def _run(url: str, token: str, code: str) -> str:
    """Run ``code`` in a new kernel of the server; its stdout."""
    import websocket  # jupyter_server's dependency (websocket-client)

    request = urllib.request.Request(f"{url}/api/kernels?token={token}", data=b"{}",
                                     method="POST")
    with urllib.request.urlopen(request, timeout=30) as reply:
        kernel = json.load(reply)["id"]
    ws = websocket.create_connection(
        f"{url.replace('http', 'ws')}/api/kernels/{kernel}/channels?token={token}", timeout=60)
    try:
        msg_id = "cudakit-test"
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "t",
                       "session": "s", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False}}))
        out = ""
        deadline = time.time() + 60
        while time.time() < deadline:
            msg = json.loads(ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out += msg["content"]["text"]
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out
        raise AssertionError("the kernel did not answer within 60 s")
    finally:
        ws.close()


@pytest.mark.slow
def test_make_lab_lang_ja_serves_japanese_labs_and_language_pack(tmp_path):
    port, token = _free_port(), "cudakit-test-token"
    args = f"--no-browser --port={port} --IdentityProvider.token={token}"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path), "JUPYTER_CONFIG_DIR": str(tmp_path)}
    env.pop("CUDAKIT_LANG", None)
    server = subprocess.Popen(
        ["make", "-s", "lab", "LANG=ja", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline, status = time.time() + 90, None
        while time.time() < deadline and status is None:
            try:
                status = _get(f"{url}/api/status?token={token}")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert server.poll() is None, server.stdout.read()
                time.sleep(1)
        assert status is not None, "JupyterLab did not answer within 90 s"
        listing = {i["name"] for i in _get(f"{url}/api/contents?token={token}")["content"]}
        assert "00_hello_cuda.ipynb" in listing and "ja" not in listing  # root is labs/ja
        lab = _get(f"{url}/api/contents/00_hello_cuda.ipynb?token={token}")["content"]
        assert lab["cells"][0]["source"].startswith("# ラボ 00")
        setting = _get(f"{url}/lab/api/settings/@jupyterlab/translation-extension:plugin"
                       f"?token={token}")
        assert setting["settings"]["locale"] == "ja_JP"
        pack = _get(f"{url}/lab/api/translations/ja_JP?token={token}")
        assert pack["message"] == "" and pack["data"], pack.get("message")
        assert "ja_JP" in _get(f"{url}/lab/api/translations/?token={token}")["data"]
        said = _run(url, token, "from cudakit.grading.feedback import explain\n"
                                "print(explain('AssertionError', 'x'))")
        assert said.strip() == "結果が正しくありません: x"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.communicate()
