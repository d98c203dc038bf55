"""File-scope forms that nvcc-built cells use: explicit template instantiation and
SDK-style ``extern __shared__`` arrays."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import emu
from cudakit.errors import MemcheckError, RaceError

from .conftest import build

SOURCE = """
template <int SCALE>
__global__ void scaled_sum(const int *a, const int *b, int *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = SCALE * a[i] + b[i];
}
template __global__ void scaled_sum<3>(const int *, const int *, int *, int);
template __global__ void scaled_sum<-2>(const int *, const int *, int *, int);

extern __shared__ int staged[];

__global__ void reverse_block(const int *in, int *out) {
    int base = blockIdx.x * blockDim.x;
    staged[threadIdx.x] = in[base + threadIdx.x];
    __syncthreads();
    out[base + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

__global__ void reverse_block_racy(const int *in, int *out) {
    staged[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}
"""


@pytest.mark.parametrize(("instance", "scale"), [("scaled_sum<3>", 3), ("scaled_sum<-2>", -2)])
def test_explicitly_instantiated_templates_run(rng, instance, scale):
    n = 300
    a, b = (
        rng.integers(-1000, 1000, n, dtype=np.int32),
        rng.integers(-1000, 1000, n, dtype=np.int32),
    )
    c = np.zeros(n, np.int32)
    build(SOURCE).get_function(instance)(
        emu.In(a), emu.In(b), emu.Out(c), np.int32(n), grid=(3, 1), block=(128, 1, 1)
    )
    np.testing.assert_array_equal(c, scale * a + b)


def test_file_scope_extern_shared_is_the_launchs_dynamic_shared_memory(rng):
    blocks, threads = 3, 96
    x = rng.integers(0, 1 << 30, blocks * threads, dtype=np.int32)
    out = np.zeros_like(x)
    build(SOURCE).get_function("reverse_block")(
        emu.In(x), emu.Out(out), grid=(blocks, 1), block=(threads, 1, 1), shared=4 * threads
    )
    np.testing.assert_array_equal(out, x.reshape(blocks, threads)[:, ::-1].ravel())


def test_file_scope_extern_shared_keeps_its_checks(rng):
    x = rng.integers(0, 100, 64, dtype=np.int32)
    module = build(SOURCE)
    with pytest.raises(RaceError, match="reverse_block_racy"):
        module.get_function("reverse_block_racy")(
            emu.In(x), emu.Out(np.zeros_like(x)), grid=(1, 1), block=(64, 1, 1), shared=256
        )
    with pytest.raises(MemcheckError, match="out of bounds"):
        module.get_function("reverse_block")(
            emu.In(x), emu.Out(np.zeros_like(x)), grid=(1, 1), block=(64, 1, 1), shared=128
        )


def test_static_shared_at_file_scope_is_shared_by_the_block():
    src = """__shared__ int tile[32];
    __global__ void k(int *x) {
        tile[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        x[threadIdx.x] = tile[31 - threadIdx.x];
    }"""
    x = np.arange(32, dtype=np.int32)
    build(src).get_function("k")(emu.InOut(x), block=(32, 1, 1))
    np.testing.assert_array_equal(x, np.arange(32)[::-1])
