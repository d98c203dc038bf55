"""Jupyter server extension: ``GET /cudakit/engine`` tells JupyterLab's status bar which
engine runs kernels and, on a GPU, how much of its memory is in use.

The server answers rather than a kernel because a kernel cannot answer while it runs a
long cell (when memory use matters most), and because the answer is wanted before any
kernel starts. The server never opens a CUDA context (that would take device memory
from the participant): it asks ``nvidia-smi``, which ships with every NVIDIA driver.

>>> engine_status(environ={"CUDAKIT_BACKEND": "emu"})["label"]
'emulator (no GPU)'
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess

from .backend import BACKENDS

_QUERY = "--query-gpu=name,memory.used,memory.total"
EMULATOR = {"engine": "emu", "label": "emulator (no GPU)"}


def parse_smi(text: str) -> list[dict]:
    """``nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader,nounits``
    output (MiB) -> one dict per GPU with bytes.

    >>> parse_smi("NVIDIA H100 80GB HBM3, 1, 81559\\n")[0]["memory_total_bytes"]
    85520809984
    """
    gpus = []
    for row in text.strip().splitlines():
        name, used, total = (field.strip() for field in row.rsplit(",", 2))
        gpus.append(
            {
                "name": name,
                "memory_used_bytes": int(used) * 2**20,
                "memory_total_bytes": int(total) * 2**20,
            }
        )
    return gpus


def _visible_device(environ) -> str | None:
    """The first device of ``CUDA_VISIBLE_DEVICES`` (an index or a GPU UUID), if set."""
    visible = environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return visible or None


def query_gpu(environ=None, smi: str | None = None) -> dict | None:
    """Name and memory of the GPU kernels will use, from nvidia-smi; None without one."""
    environ = os.environ if environ is None else environ
    smi = smi or shutil.which("nvidia-smi")
    if not smi:
        return None
    command = [smi, _QUERY, "--format=csv,noheader,nounits"]
    device = _visible_device(environ)
    if device and not device.startswith("MIG-"):
        command.append(f"--id={device}")
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10, check=True)
        gpus = parse_smi(out.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return gpus[0] if gpus else None


def _has_pycuda() -> bool:
    """Whether kernels can reach a GPU from this environment (PyCUDA, not imported here)."""
    return importlib.util.find_spec("pycuda") is not None


def engine_status(environ=None, smi: str | None = None) -> dict:
    """What the status bar shows, decided as :func:`cudakit.backend.backend_name` decides
    (``CUDAKIT_BACKEND`` first, then PyCUDA and a device), without creating a context."""
    environ = os.environ if environ is None else environ
    chosen = environ.get("CUDAKIT_BACKEND", "").strip().lower()
    if chosen == "emu" or (chosen and chosen not in BACKENDS):
        return dict(EMULATOR)
    if not _has_pycuda():
        return dict(EMULATOR)
    gpu = query_gpu(environ, smi)
    if gpu is None:
        return dict(EMULATOR)
    return {"engine": "gpu", "label": f"GPU: {gpu['name']}", **gpu}


def _handler_class():
    from jupyter_server.base.handlers import APIHandler
    from tornado import web

    class EngineHandler(APIHandler):
        @web.authenticated
        async def get(self):
            # nvidia-smi takes a moment: keep the server's event loop free meanwhile
            status = await asyncio.get_running_loop().run_in_executor(None, engine_status)
            self.finish(json.dumps(status))

    return EngineHandler


def _jupyter_server_extension_points() -> list[dict]:
    return [{"module": "cudakit.lab"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Add ``/cudakit/engine`` to the server (enabled by jupyter_server_config.d/cudakit.json)."""
    from jupyter_server.utils import url_path_join

    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], "cudakit", "engine")
    web_app.add_handlers(".*$", [(route, _handler_class())])

