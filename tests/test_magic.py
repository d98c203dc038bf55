"""%%cuda and %cuda_device through a real IPython shell."""

from __future__ import annotations

import numpy as np
import pytest

import cudakit
from cudakit import cuda
from cudakit.magic import parse_line


def test_magic_line_options_become_nvcc_flags():
    args, options = parse_line("--name reduce --arch sm_80 -O2 -D BLOCK=256 -DWARP=32 --keep-ptx")
    assert (args.name, args.arch, args.keep_ptx) == ("reduce", "sm_80", True)
    assert options == ("-O2", "-DBLOCK=256", "-DWARP=32")
    with pytest.raises(cudakit.CudakitError, match="-O7"):
        parse_line("-O7")


def shown(shell, error: Exception) -> str:
    """What the notebook shows for an error raised by a cell."""
    return "\n".join(shell.CustomTB(type(error), error, error.__traceback__))


def test_syntax_error_shows_the_cells_line_without_a_traceback(shell):
    cell = "__global__ void k(float *x) {\n    x[threadIdx.x] = two;\n}\n"
    result = shell.run_cell(f"%%cuda --name broken\n{cell}")
    err = shown(shell, result.error_in_exec)
    assert isinstance(result.error_in_exec, cudakit.CompileError)
    assert "CompileError: nvcc failed to compile 'broken'" in err
    # line 1 of the cell is the %%cuda line
    assert "line 3" in err and "x[threadIdx.x] = two;" in err and '"two" is undefined' in err
    assert "Traceback" not in err


def test_unknown_arch_in_a_cell_is_a_clear_error(shell):
    result = shell.run_cell("%%cuda --arch sm_99\n__global__ void k() {}\n")
    assert isinstance(result.error_in_exec, cudakit.CompileError)
    assert "unknown architecture 'sm_99'" in shown(shell, result.error_in_exec)


def test_cuda_device_describes_the_engine_device(shell, capsys):
    shell.run_line_magic("cuda_device", "")
    out = capsys.readouterr().out
    assert "compute capability" in out and "shared memory per block" in out


def test_cuda_cell_binds_typed_kernels_that_compute_correctly(shell):
    cell = """
#define SCALE 3
__global__ void scaled_sum(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = SCALE * a[i] + b[i];
}
"""
    result = shell.run_cell(f"%%cuda --name bound\n{cell}")
    assert result.error_in_exec is None
    kernel = shell.user_ns["scaled_sum"]
    assert isinstance(kernel, cudakit.Kernel) and kernel.name == "scaled_sum"
    rng = np.random.default_rng(7)
    n = 1000  # not a multiple of the block
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n, np.nan, np.float32)
    kernel(cuda.In(a), cuda.In(b), cuda.Out(c), n, grid=((n + 127) // 128,), block=(128,))
    # nvcc contracts 3 * a + b into one fused multiply-add, so compare within float32 rounding
    np.testing.assert_allclose(c, 3.0 * a.astype(np.float64) + b, rtol=2e-7)


def test_template_kernels_bind_under_a_python_name(shell):
    cell = """
template <int SCALE>
__global__ void scaled(const int *a, int *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = SCALE * a[i];
}
template __global__ void scaled<4>(const int *, int *, int);
"""
    result = shell.run_cell(f"%%cuda --name tmpl\n{cell}")
    assert result.error_in_exec is None
    kernel = shell.user_ns["scaled_4"]
    assert kernel.name == "scaled<4>"
    a = np.arange(-50, 50, dtype=np.int32)
    b = np.zeros_like(a)
    kernel(cuda.In(a), cuda.Out(b), a.size, grid=(1,), block=(128,))
    np.testing.assert_array_equal(b, 4 * a)
