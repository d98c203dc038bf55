"""The nbval plugin of `make test`: a kernel that dies while starting gets one more start."""

import nbval.kernel
import nbval_retry
import pytest


def flaky(failures: int):
    calls = []

    def start(**kwargs):
        calls.append(kwargs)
        if len(calls) <= failures:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "manager", "client"

    return start, calls


def test_a_kernel_that_dies_on_start_is_started_again():
    start, calls = flaky(1)
    assert nbval_retry.start_with_retry(start=start, kernel_name="python3") == ("manager",
                                                                                 "client")
    assert len(calls) == 2 and all(c["kernel_name"] == "python3" for c in calls)


def test_a_kernel_that_dies_twice_fails_its_notebook():
    start, calls = flaky(2)
    with pytest.raises(RuntimeError, match="Kernel died"):
        nbval_retry.start_with_retry(start=start, kernel_name="python3")
    assert len(calls) == 2


def test_the_plugin_replaces_nbvals_kernel_start():
    assert nbval.kernel.start_new_kernel is nbval_retry.start_with_retry


def test_the_kernels_do_not_see_the_tests_folder():
    env = nbval_retry.kernel_env({"PYTHONPATH": nbval_retry.HERE, "HOME": "/h"})
    assert env == {"HOME": "/h"}
    start, calls = flaky(0)
    nbval_retry.start_with_retry(start=start, kernel_name="python3")
    assert nbval_retry.HERE not in calls[0]["env"].get("PYTHONPATH", "")
