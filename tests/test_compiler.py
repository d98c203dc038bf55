"""cudakit.compile against nvcc/ptxas itself: resource usage, cache, errors, signatures."""

from __future__ import annotations

import pytest

import cudakit
from cudakit.compiler import normalize_arch, parse_resource_usage

SOURCE = r"""
#define TILE 32
template <int BLOCK>
__global__ void block_sum(const int *in, int *out, unsigned n) {
    __shared__ int partial[BLOCK];
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    partial[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
template __global__ void block_sum<128>(const int *, int *, unsigned);

extern "C" __global__ void tile_copy(float *dst, const float *__restrict__ src, int width) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = src[y * width + x];
    __syncthreads();
    dst[y * width + x] = tile[threadIdx.y][threadIdx.x];
}

__global__ void scale(double *x, double a, long long n, bool flag, unsigned char c) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n && flag) x[i] = a * x[i] + c;
}
"""


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDAKIT_CACHE_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def module():
    return cudakit.compile(SOURCE, name="suite", arch="sm_90")


def test_every_global_kernel_is_listed(module):
    assert set(module.kernels) == {"block_sum<128>", "tile_copy", "scale"}
    assert module.arch == "sm_90" and module.compute_capability == (9, 0)
    assert module.cubin[:4] == b"\x7fELF"


def test_resource_usage_matches_ptxas_static_facts(module):
    block = module.kernels["block_sum<128>"]
    tile = module.kernels["tile_copy"]
    assert block.shared_static == 128 * 4
    assert tile.shared_static == 32 * 33 * 4
    assert block.barriers == 1 and tile.barriers == 1
    assert module.kernels["scale"].barriers == 0
    for kernel in module.kernels.values():
        assert 1 <= kernel.registers <= 255
    assert "registers" in block.usage() and "sm_90" in block.usage()


def test_parameters_have_names_and_exact_types(module):
    scale = module.kernels["scale"]
    assert [str(p) for p in scale.params] == [
        "double *x", "double a", "long long n", "bool flag", "unsigned char c",
    ]
    block = module.kernels["block_sum<128>"]
    assert [p.name for p in block.params] == ["in", "out", "n"]
    assert block.params[0].ctype.const and block.params[0].ctype.is_pointer
    assert block.params[2].ctype.dtype.name == "uint32"
    assert module.kernels["tile_copy"].mangled == "tile_copy"


MACRO_SOURCE = r"""
#define CHAIN(name, op)                                              \
    __global__ void name(float *out, int steps) {                    \
        float x = threadIdx.x;                                       \
        for (int i = 0; i < steps; i++) x = x op 2.0f;               \
        out[threadIdx.x] = x;                                        \
    }
CHAIN(add_chain, +)
CHAIN(mul_chain, *)
#define KERNEL(name) extern "C" __global__ void name(int *flag, short tag)
KERNEL(mark) { *flag = tag; }
__global__ void plain(double *x) { x[threadIdx.x] = 1.0; }
"""


def test_kernels_written_by_macros_are_listed_with_names_and_types(monkeypatch):
    module = cudakit.compile(MACRO_SOURCE, name="macros")
    assert set(module.kernels) == {"add_chain", "mul_chain", "mark", "plain"}
    assert [str(p) for p in module.kernels["mul_chain"].params] == ["float *out", "int steps"]
    # an extern "C" symbol carries no types: they come from the preprocessed source
    assert [str(p) for p in module.kernels["mark"].params] == ["int *flag", "short tag"]

    def no_nvcc(*args, **kwargs):
        raise AssertionError(f"nvcc ran again for an unchanged source: {args[0]}")

    with monkeypatch.context() as patch:  # the preprocessed text is cached with the cubin
        patch.setattr(cudakit.compiler.subprocess, "run", no_nvcc)
        again = cudakit.compile(MACRO_SOURCE, name="macros")
    assert again.cache_hit and again.kernels == module.kernels


def test_kernels_written_by_macros_run_on_the_emulator(monkeypatch):
    import numpy as np

    from cudakit import cuda

    monkeypatch.setenv("CUDAKIT_BACKEND", "emu")
    kernels = cudakit.load(MACRO_SOURCE, name="macros")
    out = np.zeros(32, np.float32)
    kernels["mul_chain"](cuda.InOut(out), np.int32(3), grid=(1,), block=(32,))
    np.testing.assert_array_equal(out, np.arange(32, dtype=np.float32) * 8)


def test_spills_are_reported():
    source = r"""
    __global__ void spill(float *x, int k) {
        float v[96];
        for (int i = 0; i < 96; ++i) v[i] = x[i * blockDim.x + threadIdx.x];
        float s = 0;
        for (int i = 0; i < 96; ++i) s += v[(i * k) % 96] * v[i];
        x[threadIdx.x] = s;
    }"""
    info = cudakit.compile(source, options=["-maxrregcount=32"]).kernels["spill"]
    assert info.registers <= 32
    assert info.stack > 0 or info.spill_stores > 0


def test_unchanged_source_comes_from_the_cache(monkeypatch):
    first = cudakit.compile(SOURCE, name="again")

    def no_nvcc(*args, **kwargs):
        raise AssertionError(f"nvcc ran again for an unchanged source: {args[0]}")

    with monkeypatch.context() as patch:  # only nvcc is patched; the private cache stays
        patch.setattr(cudakit.compiler.subprocess, "run", no_nvcc)
        second = cudakit.compile(SOURCE, name="again")
    assert not first.cache_hit and second.cache_hit
    assert second.cubin == first.cubin and second.kernels == first.kernels
    assert cudakit.compile(SOURCE, options=["-DUNUSED=1"], name="again").cache_hit is False


def test_compile_error_names_the_users_line_and_quotes_it():
    source = "__global__ void k(int *a) {\n    int x = 1;\n    a[0] = undefined_name + x;\n}\n"
    with pytest.raises(cudakit.CompileError) as caught:
        cudakit.compile(source, name="cell")
    message = str(caught.value)
    assert "line 3" in message and "undefined_name" in message
    assert "a[0] = undefined_name + x;" in message
    assert "/tmp" not in message and "cudakit-" not in message
    assert caught.value.diagnostics[0]["line"] == 3


def test_unknown_architecture_is_refused_with_the_choices():
    with pytest.raises(cudakit.CompileError, match="sm_90"):
        cudakit.compile("__global__ void k() {}", arch="sm_99")
    with pytest.raises(cudakit.CompileError, match="unknown architecture"):
        cudakit.compile("__global__ void k() {}", arch="hopper")


@pytest.mark.parametrize(
    ("given", "expected"),
    [((9, 0), "sm_90"), ("9.0", "sm_90"), ("sm_86", "sm_86"), ("compute_80", "sm_80"),
     ("90", "sm_90"), ("sm_90a", "sm_90a"), ("12.1", "sm_121")],
)
def test_architecture_spellings(given, expected):
    assert normalize_arch(given) == expected


def test_resource_usage_parser_reads_every_field():
    log = """ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
ptxas info    : Function properties for _Z1kPf
    48 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]"""
    usage = parse_resource_usage(log, "sm_80")["_Z1kPf"]
    assert usage == {"arch": "sm_80", "stack": 48, "spill_stores": 8, "spill_loads": 12,
                     "registers": 40, "barriers": 1, "shared_static": 2048, "constant": 380}
