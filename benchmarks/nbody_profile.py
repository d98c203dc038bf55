"""One launch of each N-body kernel that issue 16's profile compares, for ``ncu`` to wrap::

    ncu --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
        --page raw --csv python -m benchmarks.nbody_profile

64K bodies: the lab's nbody_unrolled and nbody_pair, then the candidates named in PROFILED
(each kernel carries its candidate's name, so ncu's rows say which is which).
"""

from __future__ import annotations

import numpy as np

PROFILED = ["base", "sc", "pf", "ldg", "p2_m4", "split", "diag_nomufu", "cdiag", "cdiag_nomufu"]


def main() -> None:
    import cupy as cp

    from benchmarks.common import build_kernels
    from benchmarks.sweep16 import (
        NBODY_BASE,
        NBODY_CDIAG,
        NBODY_CONFIGS,
        build,
        nbody_source,
        nbody_split,
    )

    n = 1 << 16
    eps2 = np.float32(0.05 ** 2)
    body = cp.asarray(np.random.default_rng(0).random((n, 4), dtype=np.float32))
    acc = cp.zeros_like(body)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for name, k in build_kernels("20_nbody.ipynb", ["nbody_unrolled", "nbody_pair"]).items():
        per = 1 if name == "nbody_unrolled" else 2
        k((n // (256 * per),), (256,), (body, acc, np.int32(n), eps2))
    configs = {name: (defs, False) for name, defs, _ in NBODY_CONFIGS}
    configs |= {name: (defs, True) for name, defs, _ in NBODY_CDIAG}
    for name in PROFILED:
        defs, diag_file = configs[name]
        cfg = {} if diag_file else NBODY_BASE | defs
        tpb, per = cfg.get("NB_T", 256), cfg.get("NB_P", 1)
        ks, info = build(nbody_source(name, defs, diag_file), [f"nbody_{name}"], ["-ftz=true"])
        bx = n // (tpb * per)
        gy = nbody_split(bx, int(info["regs"][0]), tpb, sms) if cfg.get("NB_SPLIT") else 1
        ks[f"nbody_{name}"]((bx, gy), (tpb,), (body, acc, np.int32(n), eps2))
        print(f"nbody_{name}: grid {bx}x{gy}, {info['regs'][0]} registers", flush=True)
    cp.cuda.Device().synchronize()


if __name__ == "__main__":
    main()
