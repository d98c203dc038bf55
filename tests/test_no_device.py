"""Without a GPU, asking for one gives a one-line NoDeviceError, never a crash."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cudakit.backend import gpu_available

pytestmark = pytest.mark.skipif(gpu_available(), reason="this machine has a GPU")


def test_forcing_the_gpu_engine_without_one_is_a_clear_error():
    program = (
        "import cudakit\n"
        "try:\n"
        "    from cudakit import cuda\n"
        "    cuda.mem_alloc(4)\n"
        "except cudakit.NoDeviceError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env={**os.environ, "CUDAKIT_BACKEND": "gpu"}, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("NoDeviceError")
    assert "CUDAKIT_BACKEND" in lines[0]


def test_without_a_gpu_the_default_engine_is_the_emulator():
    done = subprocess.run(
        [sys.executable, "-c", "from cudakit import cuda; print(cuda.backend)"],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "CUDAKIT_BACKEND"},
    )
    assert done.stdout.strip() == "emu", done.stderr
