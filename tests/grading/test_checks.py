"""The test-cell helpers: sizes, comparisons in words, guards around device arrays."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit.binding import load
from cudakit.grading import checks


def test_sizes_cover_the_awkward_cases():
    got = checks.sizes(block=128, largest=5000, empty=True)
    assert got[0] == 0 and 1 in got and 127 in got and 129 in got and got[-1] == 5000
    assert all(n % 128 for n in got if n not in (0, 128))  # all but one are not multiples
    assert checks.sizes(block=256, largest=100) == [1, 31, 100]


def test_expect_equal_names_index_expected_and_got_in_2d():
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = want.copy()
    got[2, 1] = np.nan
    with pytest.raises(AssertionError, match=r"out\[2, 1\] should be 9 but is nan \(never "
                                             r"written\)\. Wrong rows: 1 of 3"):
        checks.expect_equal("out", got, want, where="3 x 4")
    checks.expect_equal("out", want + 1e-7, want, rtol=1e-6, atol=1e-6)  # within tolerance
    with pytest.raises(AssertionError, match=r"shape \(4, 3\), expected \(3, 4\)"):
        checks.expect_equal("out", want.T, want)


LEAKY = """
__global__ void leaky_copy(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = in[i];  // one element too far
}
"""


@pytest.fixture(scope="module")
def leaky_copy():
    return load(LEAKY)["leaky_copy"]


def test_guards_catch_a_write_past_the_end(leaky_copy):
    x = checks.random_array(100)
    out = checks.Guarded(checks.poisoned(100), "out", guard=32)
    leaky_copy(out, checks.Guarded(x, "in", guard=32), 100, grid=(1,),
               block=(128,))
    with pytest.raises(AssertionError, match=r"wrote outside out, at index 100, past its last "
                                             r"element \(index 99\)"):
        out.get()


def test_without_guards_the_emulator_memcheck_reports_it(leaky_copy):
    from cudakit import MemcheckError, cuda

    if cuda.backend != "emu":
        pytest.skip("the memcheck is the emulator's")
    x = checks.random_array(100)
    out = checks.Guarded(checks.poisoned(100), "out")  # exact allocation on the emulator
    with pytest.raises(MemcheckError, match="leaky_copy"):
        leaky_copy(out, checks.Guarded(x, "in"), 100, grid=(1,), block=(128,))
