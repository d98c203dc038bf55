"""Run the kernel suite on the GPU with PyCUDA and store inputs and outputs as a fixture.

On the device machine (PyCUDA and the emulator's wheels installed):
``python3 -m tests.emu.record_h100 OUT.npz``. Prints, per case, whether the
emulator reproduces the GPU's outputs (bit for bit for integer kernels). The
fixture ``tests/emu/fixtures/h100_suite.npz`` was written this way; the CPU test
``test_h100_fixture.py`` replays its inputs on the emulator.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from cudakit import emu

from .suite import CASES, pycuda_engine, run_case


def main(path: str) -> int:
    gpu = pycuda_engine()
    arrays = {}
    failures = 0
    for case in CASES:
        host = case.inputs(np.random.default_rng(7))
        outs, _ = run_case(case, gpu, host)
        mine, _ = run_case(case, emu, host)
        for i, a in enumerate(host):
            arrays[f"{case.name}/in{i}"] = np.asarray(a)
        for i, (g, m) in enumerate(zip(outs, mine, strict=True)):
            arrays[f"{case.name}/out{i}"] = g
            if case.exact:
                same = np.array_equal(g, m)
                detail = "bit-exact" if same else f"{int((g != m).sum())} elements differ"
            else:
                err = float(np.max(np.abs(g.astype(np.float64) - m) / (1 + np.abs(g))))
                same = err <= case.rtol
                detail = f"max rel. difference {err:.2e}"
            failures += not same
            print(f"{case.name:34s} out{i}: {'OK  ' if same else 'DIFF'} {detail}", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    arrays["device"] = np.array(smi)
    np.savez_compressed(path, **arrays)
    print(f"{len(CASES)} cases on {smi}; {failures} outputs differ", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
