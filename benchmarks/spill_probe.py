"""Where register spills go: lab 01's ``chain`` (48 values a thread), built as it is and
capped at 32 registers (ptxas spills 152 bytes a thread in its loop), timed and profiled.

    ncu -k chain -c 26 --csv --metrics gpu__time_duration.sum,\\
    l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,\\
    l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,\\
    lts__t_sectors_srcunit_tex_op_write.sum,smsp__inst_executed.sum \\
        python3 -m benchmarks.spill_probe > spill_probe.ncu.csv            # on the GPU

Each build runs 3 warm-up launches and 10 timed between CUDA events (the mean printed), on
2^22 threads in blocks of 64, as lab 01 launches it. CuPy compiles it with nvcc (the device
machine has no PyCUDA). Stored: ``fixtures/h200_spill_probe.ncu.csv.gz`` (an H200: the H100's
SM and L1; what it says about the L2 is the H200's), made in session 24 by this script's first
form (the same kernel, builds and launches; it printed ``regs``/``local``/``ms``). Unprofiled,
that H200 ran the two builds in 0.2172 and 2.2797 ms.
Written by hand: a probe for the spill model of ``cudakit/predict/spills.py``.
"""

from __future__ import annotations

import numpy as np

SOURCE = r"""
extern "C" __global__ void chain(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc[48];
    #pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = x[i] + j;
    for (int it = 0; it < 16; ++it) {
        #pragma unroll
        for (int j = 0; j < 48; ++j) acc[j] = 0.5f * acc[j] + 0.25f * acc[(j + 7) % 48];
    }
    float s = 0.0f;
    #pragma unroll
    for (int j = 0; j < 48; ++j) s += acc[j];
    y[i] = s;
}"""


def main() -> None:
    import cupy as cp

    m = 1 << 22
    x = cp.asarray(np.random.default_rng(2).random(m, dtype=np.float32))
    y = cp.empty_like(x)
    for options in ((), ("--maxrregcount=32",)):
        kernel = cp.RawModule(code=SOURCE, options=options, backend="nvcc").get_function("chain")
        for _ in range(3):
            kernel((m // 64,), (64,), (x, y, np.int32(m)))
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(10):
            kernel((m // 64,), (64,), (x, y, np.int32(m)))
        end.record()
        end.synchronize()
        print(f"{options}: {kernel.num_regs} registers, {kernel.local_size_bytes} B local, "
              f"{cp.cuda.get_elapsed_time(start, end) / 10:.4f} ms", flush=True)


if __name__ == "__main__":
    main()
