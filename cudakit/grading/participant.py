"""The participant's process: runs the submission's code, then answers the judge's calls.

``python -m cudakit.grading.participant`` reads a plan (JSON on stdin: the code cells to run and
the socket to listen on), runs the cells in IPython, then serves the judge: ``describe`` says
what the names of the answer cells are (a function, data, missing), ``call`` runs one function
on arguments sent as data and sends its result back as data.

This process has no GPU and no compiler. ``cudakit.cuda`` and ``%%cuda`` here are stand-ins
whose every device operation (allocation, copy, stream, launch) is a request to the judge, which
performs it with its own kernels, compiled from the submitted source, and counts it. Nothing in
this file is trusted: the participant's code can change all of it, and gains nothing by that.

>>> kernel_names("__global__ void add(float *c) {}\\n__global__ void sub(int n) {}")
['add', 'sub']
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import types

import numpy as np

from . import wire

# the judge's connection while a call is being served
_link: dict[str, socket.socket | None] = {"sock": None}


def kernel_names(source: str) -> list[str]:
    """The ``__global__`` functions a CUDA source defines."""
    return re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)", source)


class DeviceError(RuntimeError):
    """The judge refused or failed a device operation."""


def _request(op: str, *args):
    sock = _link["sock"]
    if sock is None:
        raise DeviceError(f"cuda.{op}: device operations run only while the grader calls your "
                          "function")
    wire.send(sock, {"msg": "device", "op": op, "value": list(args)})
    reply = wire.receive(sock)
    if reply.get("msg") == "error":
        raise DeviceError(f"{reply.get('ename')}: {reply.get('evalue')}")
    return reply["value"]


class DeviceAllocation:
    """Device memory that lives in the judge's process."""

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)
        self.ref = _request("alloc", self.nbytes)

    def free(self) -> None:
        _request("free", self.ref)

    def __int__(self):
        raise TypeError("device addresses are not available in graded host functions: pass "
                        "the allocation itself to kernels and copies")


class Stream:
    """A stream in the judge's process."""

    def __init__(self, flags: int = 0):
        self.ref = _request("stream")

    def synchronize(self) -> None:
        _request("sync", self.ref)


class _Wrapped:
    kind = ""

    def __init__(self, array):
        if not isinstance(array, np.ndarray):
            raise TypeError(f"cuda.{self.kind} needs a NumPy array")
        self.array = array


class In(_Wrapped):
    kind = "In"


class Out(_Wrapped):
    kind = "Out"


class InOut(_Wrapped):
    kind = "InOut"


def _stream_ref(stream):
    return None if stream is None else stream.ref


def memcpy_htod(dest: DeviceAllocation, src) -> None:
    _request("htod", dest.ref, np.ascontiguousarray(src), None)


def memcpy_htod_async(dest: DeviceAllocation, src, stream=None) -> None:
    _request("htod", dest.ref, np.ascontiguousarray(src), _stream_ref(stream))


def memcpy_dtoh(dest: np.ndarray, src: DeviceAllocation) -> None:
    dest[...] = _request("dtoh", src.ref, dest.dtype.str, list(dest.shape), None)


def memcpy_dtoh_async(dest: np.ndarray, src: DeviceAllocation, stream=None) -> None:
    dest[...] = _request("dtoh", src.ref, dest.dtype.str, list(dest.shape), _stream_ref(stream))


def mem_alloc(nbytes: int) -> DeviceAllocation:
    return DeviceAllocation(nbytes)


def to_device(array) -> DeviceAllocation:
    array = np.ascontiguousarray(array)
    device = DeviceAllocation(max(array.nbytes, 1))
    memcpy_htod(device, array)
    return device


def from_device(src: DeviceAllocation, shape, dtype) -> np.ndarray:
    out = np.empty(shape, dtype)
    memcpy_dtoh(out, src)
    return out


class Context:
    @staticmethod
    def synchronize() -> None:
        _request("synchronize")


def pagelocked_empty(shape, dtype=np.float32, order="C", mem_flags=0):
    return np.empty(shape, dtype, order=order)


def pagelocked_zeros(shape, dtype=np.float32, order="C", mem_flags=0):
    return np.zeros(shape, dtype, order=order)


def pagelocked_empty_like(array, mem_flags=0):
    return np.empty_like(array)


class RemoteKernel:
    """A kernel of the submission: launching it asks the judge to launch its own copy."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args, grid=(1,), block=(1, 1, 1), shared=0, stream=None, **_):
        sent, wrapped = [], []
        for arg in args:
            if isinstance(arg, _Wrapped):
                sent.append({"arg": arg.kind, "array": np.ascontiguousarray(arg.array)})
                wrapped.append(arg)
            elif isinstance(arg, DeviceAllocation):
                sent.append(arg.ref)
            elif hasattr(arg, "gpudata"):
                raise TypeError(f"{self.name}: pass device memory from cuda.mem_alloc, "
                                "cuda.to_device or cuda.In/Out/InOut")
            else:
                sent.append(arg)
        launch = {"grid": tuple(grid), "block": tuple(block), "shared": int(shared),
                  "stream": _stream_ref(stream)}
        results = _request("launch", self.name, sent, launch)
        for arg, data in zip([a for a in wrapped if a.kind != "In"], results, strict=True):
            arg.array[...] = data.reshape(arg.array.shape)


def _module() -> types.ModuleType:
    """The stand-in for ``cudakit.cuda`` in this process."""
    module = types.ModuleType("cudakit.cuda", "cudakit.cuda in a graded run: device operations "
                                              "are done by the grader's process")
    for name in ("DeviceAllocation", "Stream", "In", "Out", "InOut", "memcpy_htod",
                 "memcpy_htod_async", "memcpy_dtoh", "memcpy_dtoh_async", "mem_alloc",
                 "to_device", "from_device", "Context", "pagelocked_empty", "pagelocked_zeros",
                 "pagelocked_empty_like"):
        setattr(module, name, globals()[name])
    module.backend = "graded"

    def missing(name):
        raise AttributeError(f"cuda.{name} is not available in graded host functions (the "
                             "grader runs kernels and copies in its own process)")

    module.__getattr__ = missing
    return module


def _describe(names: list[str], namespace: dict) -> dict:
    """What each name is: a function, data (sent along), or missing."""
    out = {}
    for name in names:
        if name not in namespace:
            out[name] = {"kind": "missing"}
        elif callable(namespace[name]):
            out[name] = {"kind": "callable"}
        else:
            try:
                wire.encode(namespace[name])
                out[name] = {"kind": "data", "value": namespace[name]}
            except wire.WireError:
                out[name] = {"kind": "opaque"}
    return out


def _serve(conn: socket.socket, namespace: dict, outcomes: dict) -> None:
    while True:
        try:
            message = wire.receive(conn)
        except (EOFError, OSError, wire.WireError):  # the judge went away or spoke nonsense
            return
        value = message.get("value")
        if message.get("msg") == "describe":
            wire.send(conn, {"msg": "result", "value": {
                "names": _describe(value, namespace), "outcomes": outcomes}})
            continue
        name, args, kwargs = value
        _link["sock"] = conn
        try:
            result = namespace[name](*args, **kwargs)
            wire.encode(result)
            reply = {"msg": "result", "value": result}
        except BaseException as error:  # the participant's exception, reported as data
            reply = {"msg": "error", "ename": type(error).__name__, "evalue": str(error)[:2000]}
        finally:
            _link["sock"] = None
        try:
            wire.send(conn, reply)
        except OSError:  # the judge stopped waiting (its time limit): serve the next one
            return


def main() -> None:
    """Run the plan's cells, then serve the judge on the plan's socket until killed."""
    from IPython.core.interactiveshell import InteractiveShell

    plan = json.load(sys.stdin)
    sys.modules["cudakit.cuda"] = _module()
    import cudakit

    cudakit.cuda = sys.modules["cudakit.cuda"]
    shell = InteractiveShell.instance()
    shell.extension_manager.loaded.add("cudakit")

    def cuda_magic(line, cell):
        for name in kernel_names(cell):
            shell.user_ns[name] = RemoteKernel(name)

    shell.register_magic_function(cuda_magic, "cell", "cuda")
    outcomes = {}
    for cell in plan["cells"]:
        result = shell.run_cell(cell["source"], store_history=True)
        error = result.error_before_exec or result.error_in_exec
        if error is not None and cell.get("grade_id"):
            outcomes[cell["grade_id"]] = [type(error).__name__, str(error)[:2000]]
    path = plan["socket"]
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    while True:
        conn, _ = server.accept()
        with conn:
            _serve(conn, shell.user_ns, outcomes)


if __name__ == "__main__":
    main()
