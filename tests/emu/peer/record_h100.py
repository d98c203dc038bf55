"""Run the peer suite on the GPU with PyCUDA and store inputs and outputs as a fixture.

On the device machine: ``python3 -m tests.emu.peer.record_h100 tests/emu/fixtures/h100_peer.npz``.
Each kernel is compiled by ``cudakit.compile`` for the present GPU (template instances
named as in the case), loaded with PyCUDA, checked against its NumPy reference, and
compared with the emulator; the CPU test ``test_peer.py`` replays the recorded inputs on
the emulator and compares with the GPU's outputs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np

from cudakit import emu
from cudakit.compiler import compile as nvcc_compile

from .cases import CASES, run


def pycuda_engine():
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver as drv

    def peer_function(case):
        source = case.source
        if "<" in case.kernel:
            source += f"\nstatic void* __cudakit_instance_0 = (void*)&{case.kernel};\n"
        compiled = nvcc_compile(source, options=getattr(case, "options", ()), arch=None,
                                name=case.file.rsplit(".", 1)[0])
        want = re.sub(r"\s|(?<=\d)(?:u|ul|l)\b", "", case.kernel)
        info = next(k for k in compiled.kernels.values()
                    if re.sub(r"\s|(?<=\d)(?:u|ul|l)\b", "", k.name) == want)
        return drv.module_from_buffer(compiled.cubin).get_function(info.mangled)

    return SimpleNamespace(peer_function=peer_function, to_device=drv.to_device,
                           memcpy_dtoh=drv.memcpy_dtoh)


def main(path: str) -> int:
    gpu = pycuda_engine()
    arrays, failures = {}, 0
    for case in CASES:
        host = case.inputs(np.random.default_rng(11))
        outs, _ = run(case, gpu, [a.copy() if isinstance(a, np.ndarray) else a for a in host])
        try:
            case.check(outs, host)
            ref = "numpy OK"
        except AssertionError as exc:
            failures += 1
            ref = f"numpy DIFF {str(exc).strip().splitlines()[0][:60]}"
        mine, _ = run(case, emu, [a.copy() if isinstance(a, np.ndarray) else a for a in host])
        for i, a in enumerate(host):
            arrays[f"{case.name}/in{i}"] = np.asarray(a)
        same = []
        for i, (g, m) in enumerate(zip(outs, mine, strict=True)):
            arrays[f"{case.name}/out{i}"] = g
            if i in case.vary:
                same.append("varies")
            elif case.rtol:
                close = np.allclose(g, m, rtol=case.rtol, atol=case.rtol)
                same.append("close" if close else "DIFF")
            else:
                same.append("equal" if np.array_equal(g, m) else "DIFF")
        failures += "DIFF" in same
        print(f"{case.name:34s} {ref:20s} emulator: {', '.join(same)}", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    arrays["device"] = np.array(smi)
    np.savez_compressed(path, **arrays)
    print(f"{len(CASES)} launches on {smi}; {failures} differ", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
