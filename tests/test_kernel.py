"""Typed kernels refuse bad launches and bad arguments before anything runs."""

from __future__ import annotations

import numpy as np
import pytest

from cudakit import ArgumentError, LaunchError
from cudakit.compiler import KernelInfo
from cudakit.kernel import Kernel, convert_arguments, find_kernel, launch_shape
from cudakit.signature import parse_kernels

SOURCE = """
__global__ void saxpy(float a, const float *x, float *y, int n) {}
__global__ void count(unsigned long long *hits, unsigned char key, bool strict, short s) {}
"""
PARAMS = parse_kernels(SOURCE)


def info(name="saxpy", **usage) -> KernelInfo:
    return KernelInfo(name, name, "sm_90", PARAMS[name], **usage)


class Recorder:
    """Stands in for an engine function: records what reached it."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))


class Buffer:
    """A device buffer as engines hand them out: an address and (for gpuarrays) a dtype."""

    def __init__(self, dtype=None):
        self.dtype = dtype

    def __int__(self):
        return 0x7F0000000000


def test_shapes_are_padded_to_three_dimensions():
    assert launch_shape(info(), grid=8, block=(32, 4), shared=0) == ((8, 1, 1), (32, 4, 1))


@pytest.mark.parametrize(
    ("grid", "block", "shared", "words"),
    [
        ((1,), (2048,), 0, ["2048 threads", "1024"]),
        ((1,), (32, 32, 2), 0, ["2048 threads"]),
        ((1,), (1, 1, 65), 0, ["dimension z", "64"]),
        ((1, 70000), (32,), 0, ["grid dimension y", "65535"]),
        ((0,), (32,), 0, ["positive"]),
        ((1,), (32,), 300 * 1024, ["shared memory", "232448"]),
        ((1,), (32,), -4, ["negative"]),
        ((1,), "many", 0, ["block"]),
    ],
)
def test_bad_launch_shapes_name_the_problem(grid, block, shared, words):
    with pytest.raises(LaunchError) as caught:
        launch_shape(info(), grid=grid, block=block, shared=shared)
    for word in words:
        assert word in str(caught.value)


def test_register_pressure_is_checked_against_the_block():
    with pytest.raises(LaunchError, match="too many resources"):
        launch_shape(info(registers=128), grid=1, block=1024, shared=0)
    launch_shape(info(registers=64), grid=1, block=1024, shared=0)


def test_python_numbers_become_the_parameters_c_types():
    values = convert_arguments(info(), (2, Buffer(np.float32), Buffer(), 10))
    assert values[0].dtype == np.float32 and values[0] == 2.0
    assert values[3].dtype == np.int32 and values[3] == 10
    values = convert_arguments(info("count"), (Buffer(), 255, True, -3))
    assert [v.dtype for v in values[1:]] == [np.uint8, np.bool_, np.int16]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((2.0, Buffer(), Buffer()), ["takes 4 arguments", "missing n"]),
        ((2.0, Buffer(), Buffer(), 1, 2), ["1 too many"]),
        ((2.0, np.zeros(4, np.float32), Buffer(), 4), ["'x'", "NumPy array", "cuda.In"]),
        ((2.0, Buffer(np.float64), Buffer(), 4), ["'x'", "float64", "astype"]),
        ((2.0, Buffer(np.int32), Buffer(), 4), ["'x'", "int32"]),
        ((2.0, Buffer(), Buffer(), 4.5), ["'n'", "integer", "4.5"]),
        ((2.0, Buffer(), Buffer(), 2**31), ["'n'", "does not fit"]),
        ((2.0, 3.5, Buffer(), 4), ["'x'", "pointer"]),
        (("fast", Buffer(), Buffer(), 4), ["'a'", "str"]),
        ((2.0, Buffer(), Buffer(), np.arange(3)), ["'n'", "array"]),
    ],
)
def test_wrong_arguments_name_the_parameter(args, words):
    with pytest.raises(ArgumentError) as caught:
        convert_arguments(info(), args)
    for word in words:
        assert word in str(caught.value)


def test_unsigned_parameters_refuse_negative_values():
    with pytest.raises(ArgumentError, match="'key'"):
        convert_arguments(info("count"), (Buffer(), -1, True, 0))


def test_nothing_reaches_the_engine_when_a_check_fails():
    engine = Recorder()
    kernel = Kernel(info(), engine, "emu")
    with pytest.raises(LaunchError):
        kernel(2.0, Buffer(), Buffer(), 4, grid=(1,), block=(2048,))
    with pytest.raises(ArgumentError):
        kernel(2.0, Buffer(), Buffer(), grid=(1,), block=(128,))
    assert engine.calls == []
    kernel(2.0, Buffer(), Buffer(), 4, grid=(1,), block=(128,), racecheck=False)
    (args, kwargs), = engine.calls
    assert kwargs == {"grid": (1, 1, 1), "block": (128, 1, 1), "shared": 0, "stream": None,
                      "racecheck": False}
    assert args[3].dtype == np.int32


def test_find_kernel_by_short_plain_or_mangled_name():
    kernels = {
        "red<128>": KernelInfo("red<128>", "_Z3redILi128EEvPi", "sm_90"),
        "red<256>": KernelInfo("red<256>", "_Z3redILi256EEvPi", "sm_90"),
        "copy": KernelInfo("copy", "_Z4copyPf", "sm_90"),
    }
    assert find_kernel(kernels, "copy").mangled == "_Z4copyPf"
    assert find_kernel(kernels, "_Z3redILi256EEvPi").name == "red<256>"
    with pytest.raises(LaunchError, match="ambiguous"):
        find_kernel(kernels, "red")
    with pytest.raises(LaunchError, match="no __global__ kernel named 'copy2'"):
        find_kernel(kernels, "copy2")
