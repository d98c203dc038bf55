#!/usr/bin/env bash
# Nsight Compute's instructions per pipe for five of llm.c's kernels (the third held-out
# batch), one launch each: the fixture benchmarks/fixtures/h100_llmc_pipes.ncu.csv.gz.
# Run on the GPU machine from the repository root (session 10, H100 80GB HBM3, CUDA 13.0):
#     bash benchmarks/llmc/ncu_pipes.sh > h100_llmc_pipes.ncu.csv
set -euo pipefail
M=smsp__inst_executed.sum,smsp__inst_executed_pipe_alu.sum,smsp__inst_executed_pipe_fma.sum
M=$M,smsp__inst_executed_pipe_fmaheavy.sum,smsp__inst_executed_pipe_fmalite.sum
M=$M,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed_pipe_lsu.sum
M=$M,smsp__inst_executed_pipe_uniform.sum,smsp__inst_executed_pipe_fp16.sum,gpu__time_duration.sum
M=$M,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
M=$M,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
M=$M,smsp__issue_active.avg.pct_of_peak_sustained_active
timeout 200 ncu --csv --metrics "$M" python3 -c '
from benchmarks import peer_times as pt
keep = ("gelu_forward_kernel1", "gelu_forward_kernel2", "residual_forward_kernel2",
        "fused_residual_forward_kernel4", "encoder_forward_kernel3")
pt.record("/tmp/llmc_once.json", repeat=1, batch=1,
          launches=[l for l in pt.THIRD if any(k in l.name for k in keep)])
' | grep -v '^==PROF==\|^{\|ms$'
