"""Device work the judge does for the participant's process: memory, streams, copies, launches.

The participant's ``cudakit.cuda`` stand-in (``participant``) sends each operation as a request;
``Device.handle`` performs it here with the judge's own engine and kernels, by handle, within a
memory budget. Launches go through the judge's namespace at call time, so ``checks.recording``
in a test cell counts them; only kernels the solution notebook defines may be launched.

It also keeps the values that kernel launches produced (elements of memory a launch changed,
copied out afterwards), so the judge can tell whether a host function's result came from a kernel.

>>> Device(set(), {}, budget=16).handle("alloc", [32])
Traceback (most recent call last):
...
MemoryError: cuda.mem_alloc(32): over the grading run's device memory budget (16 bytes)
"""

from __future__ import annotations

import numpy as np

from . import wire
from .wire import Ref


class Device:
    """Device memory and streams held here for the participant's process, by handle."""

    def __init__(self, kernels: set[str], namespace: dict, budget: int):
        """``kernels``: names that may be launched; ``namespace``: where they are looked up."""
        self.kernels, self.namespace, self.budget = kernels, namespace, budget
        self.memory: dict[int, tuple[object, int]] = {}
        self.written: dict[int, np.ndarray] = {}  # per allocation: bytes a launch changed
        self.streams: dict[int, object] = {}
        self.produced: list[np.ndarray] = []  # values copied out of kernel-written memory
        self.used = 0
        self.next_id = 1

    @staticmethod
    def cuda():
        import cudakit.cuda

        return cudakit.cuda

    def _ref(self, table: dict, kind: str, ref) -> object:
        if not isinstance(ref, Ref) or ref.kind != kind or ref.id not in table:
            raise ValueError(f"not a {kind} handle of this run")
        return table[ref.id]

    def _bytes(self, ref_id: int) -> np.ndarray:
        allocation, nbytes = self.memory[ref_id]
        host = np.empty(nbytes, np.uint8)
        self.cuda().memcpy_dtoh(host, allocation)
        return host

    def handle(self, op: str, args: list):
        cuda = self.cuda()
        if op == "alloc":
            nbytes = int(args[0])
            if nbytes <= 0 or self.used + nbytes > self.budget:
                raise MemoryError(f"cuda.mem_alloc({nbytes}): over the grading run's device "
                                  f"memory budget ({self.budget} bytes)")
            ref = Ref("mem", self.next_id)
            self.next_id += 1
            self.memory[ref.id] = (cuda.mem_alloc(nbytes), nbytes)
            self.written[ref.id] = np.zeros(nbytes, bool)
            self.used += nbytes
            return ref
        if op == "free":
            allocation, nbytes = self._ref(self.memory, "mem", args[0])
            allocation.free()
            del self.memory[args[0].id], self.written[args[0].id]
            self.used -= nbytes
            return None
        if op == "stream":
            ref = Ref("stream", self.next_id)
            self.next_id += 1
            self.streams[ref.id] = cuda.Stream()
            return ref
        if op == "sync":
            self._ref(self.streams, "stream", args[0]).synchronize()
            return None
        if op == "synchronize":
            cuda.Context.synchronize()
            return None
        if op == "htod":
            return self._htod(*args)
        if op == "dtoh":
            return self._dtoh(*args)
        if op == "launch":
            return self._launch(*args)
        raise ValueError(f"unknown device operation {op!r}")

    def _stream(self, ref):
        return None if ref is None else self._ref(self.streams, "stream", ref)

    def _htod(self, ref, array, stream_ref):
        allocation, nbytes = self._ref(self.memory, "mem", ref)
        array = np.ascontiguousarray(array)
        if array.nbytes > nbytes:
            raise ValueError(f"copy of {array.nbytes} bytes into an allocation of {nbytes}")
        stream = self._stream(stream_ref)
        cuda = self.cuda()
        if stream is None:
            cuda.memcpy_htod(allocation, array)
        else:
            host = cuda.pagelocked_empty(array.shape, array.dtype)
            host[...] = array
            cuda.memcpy_htod_async(allocation, host, stream)
            stream.synchronize()
        self.written[ref.id][:array.nbytes] = False
        return None

    def _dtoh(self, ref, dtype, shape, stream_ref):
        allocation, nbytes = self._ref(self.memory, "mem", ref)
        dtype = np.dtype(dtype)
        if dtype.kind not in wire.KINDS:
            raise ValueError(f"copies into arrays of {dtype} are not supported")
        shape = tuple(int(n) for n in shape)
        wanted = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if wanted > nbytes or min(shape, default=0) < 0:
            raise ValueError(f"copy of {wanted} bytes out of an allocation of {nbytes}")
        cuda = self.cuda()
        stream = self._stream(stream_ref)
        host = cuda.pagelocked_empty(shape, dtype) if stream else np.empty(shape, dtype)
        if stream is None:
            cuda.memcpy_dtoh(host, allocation)
        else:
            cuda.memcpy_dtoh_async(host, allocation, stream)
            stream.synchronize()
        result = np.array(host)
        if result.size:
            mask = self.written[ref.id][:host.nbytes].reshape(-1, dtype.itemsize).any(axis=1)
            self.produced.append(result.reshape(-1)[mask])
        return result

    def _launch(self, name, args, launch):
        from .checks import poisoned

        cuda = self.cuda()
        if name not in self.kernels or name not in self.namespace:
            raise NameError(f"{name!r} is not a kernel of this exercise")
        converted, outputs, refs = [], [], []
        for arg in args:
            if isinstance(arg, Ref):
                converted.append(self._ref(self.memory, "mem", arg)[0])
                refs.append(arg.id)
            elif isinstance(arg, dict) and arg.get("arg") in ("In", "Out", "InOut"):
                array = np.ascontiguousarray(arg["array"])
                if arg["arg"] == "In":
                    converted.append(cuda.In(array))
                    continue
                before = poisoned(array.shape, array.dtype) if arg["arg"] == "Out" else array
                array = before.copy()
                converted.append(cuda.InOut(array))
                outputs.append((before, array))
            else:
                converted.append(arg)
        snapshots = {i: self._bytes(i) for i in refs}
        kwargs = {"grid": tuple(launch["grid"]), "block": tuple(launch["block"])}
        if launch.get("shared"):
            kwargs["shared"] = int(launch["shared"])
        if launch.get("stream") is not None:
            kwargs["stream"] = self._stream(launch["stream"])
        self.namespace[name](*converted, **kwargs)
        if "stream" in kwargs:
            kwargs["stream"].synchronize()
        for i, before in snapshots.items():
            self.written[i] |= self._bytes(i) != before
        for before, after in outputs:
            same = (before == after) | (np.isnan(before) & np.isnan(after)
                                        if before.dtype.kind in "fc" else False)
            self.produced.append(after[~same].reshape(-1))
        return [after for _, after in outputs]


