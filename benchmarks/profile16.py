"""One launch of each kernel that issue 16's report profiles, for ``ncu`` to wrap::

    ncu --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        --section Occupancy python -m benchmarks.profile16

N-body (lab 20's nbody_unrolled, 64K bodies), the SGEMM candidate and cuBLAS at 4096^3.
"""

from __future__ import annotations

import os

import numpy as np

os.environ["CUPY_TF32"] = "0"


def main() -> None:
    import cupy as cp

    from benchmarks.common import build_kernels
    from benchmarks.sweep16 import HERE, build, variant

    nb = build_kernels("20_nbody.ipynb", ["nbody_unrolled"])["nbody_unrolled"]
    n = 1 << 16
    body = cp.asarray(np.random.default_rng(0).random((n, 4), dtype=np.float32))
    acc = cp.empty_like(body)
    nb((n // 256,), (256,), (body, acc, np.int32(n), np.float32(0.0025)))
    src = variant((HERE / "sgemm.cu").read_text(), BM=256, BN=128, BK=8, MIN_BLOCKS=1, TM=16,
                  A_PAD=4)
    k, _ = build(src, ["sgemm"])
    m = 4096
    a, b = (cp.asarray(np.random.default_rng(1).random((m, m), dtype=np.float32)) for _ in "ab")
    c = cp.empty_like(a)
    k["sgemm"]((m // 128, m // 256, 1), (256,), (a, b, c, np.int32(m), np.int32(m), np.int32(m)))
    cp.matmul(a, b, out=c)
    cp.cuda.Device().synchronize()


if __name__ == "__main__":
    main()
