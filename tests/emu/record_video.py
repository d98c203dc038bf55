"""Run the SIMD video instructions of ``device_code.VIDEO`` on the GPU and store inputs and
outputs as a fixture.

On the device machine (PyCUDA installed): ``python3 -m tests.emu.record_video OUT.npz``.
Prints, per form, how many outputs the emulator gets wrong. The fixture
``tests/emu/fixtures/h200_video.npz`` was written this way; ``test_device_code.py``
replays it on the emulator.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from cudakit import emu

from .device_code import VIDEO, run_video, video_inputs
from .suite import pycuda_engine


def main(path: str) -> int:
    import pycuda.driver as drv

    gpu = pycuda_engine()
    gpu.In, gpu.Out = drv.In, drv.Out
    a, b, c = video_inputs()
    got = run_video(gpu, a, b, c)
    mine = run_video(emu, a, b, c)
    for form, g, m in zip(VIDEO, got, mine, strict=True):
        print(f"{form:48s} {int((g != m).sum()):5d} of {g.size} differ", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    np.savez_compressed(path, a=a, b=b, c=c, out=got, forms=np.array(VIDEO), device=np.array(smi))
    return int((got != mine).any())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
