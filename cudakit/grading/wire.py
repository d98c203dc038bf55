"""Messages between the judge and the participant's process: data only, never code.

A message is a JSON header (at most ``HEADER_BYTES``) followed by the raw bytes of the NumPy
arrays it carries (at most ``DATA_BYTES`` in all). Values are ``None``, booleans, numbers,
strings, lists, tuples, dicts with string keys, NumPy arrays and scalars of numeric types, and
``Ref`` (a handle to an object that stays on the judge's side: device memory, a stream).
Decoding builds nothing else, so a hostile participant can at worst send wrong data. This is
written by hand because pickle runs code on load and JSON alone has no arrays or tuples.

>>> import numpy as np
>>> head, blobs = encode({"x": (1, np.arange(3, dtype=np.int32))})
>>> value = decode(head, blobs)
>>> value["x"][0], value["x"][1].tolist(), value["x"][1].dtype.name
(1, [0, 1, 2], 'int32')
"""

from __future__ import annotations

import json
import socket
import struct
from dataclasses import dataclass

import numpy as np

HEADER_BYTES = 16 << 20
DATA_BYTES = 1 << 30
DEPTH = 32
KINDS = "biufc"  # NumPy dtype kinds that may cross


class WireError(ValueError):
    """A message that breaks the format (too large, unknown types, truncated)."""


@dataclass(frozen=True)
class Ref:
    """A handle to an object that stays in the judge's process."""

    kind: str
    id: int


def encode(value, blobs: list | None = None) -> tuple[object, list[bytes]]:
    """``value`` as a JSON-able tree plus the array buffers it refers to."""
    blobs = [] if blobs is None else blobs

    def tree(v, depth):
        if depth > DEPTH:
            raise WireError("value nested too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, np.generic):
            return {"f": repr(v)} if isinstance(v, float) else v
        if isinstance(v, (np.ndarray, np.generic)):
            array = np.asarray(v)
            if array.dtype.kind not in KINDS:
                raise WireError(f"arrays of {array.dtype} cannot be graded")
            blobs.append(np.ascontiguousarray(array).tobytes())
            return {"nd": len(blobs) - 1, "dtype": array.dtype.str, "shape": list(array.shape),
                    "scalar": isinstance(v, np.generic)}
        if isinstance(v, Ref):
            return {"ref": v.kind, "id": v.id}
        if isinstance(v, (list, tuple)):
            items = [tree(x, depth + 1) for x in v]
            return items if isinstance(v, list) else {"tuple": items}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"dict": [[k, tree(x, depth + 1)] for k, x in v.items()]}
        raise WireError(f"a value of type {type(v).__name__} cannot be graded "
                        "(return numbers, strings, lists, tuples, dicts or NumPy arrays)")

    return tree(value, 0), blobs


def decode(head, blobs: list[bytes]):
    """The value ``encode`` made (arrays are fresh, writable copies)."""

    def value(t, depth):
        if depth > DEPTH:
            raise WireError("value nested too deeply")
        if t is None or isinstance(t, (bool, int, str)):
            return t
        if isinstance(t, list):
            return [value(x, depth + 1) for x in t]
        if not isinstance(t, dict) or len(t) == 0:
            raise WireError(f"unexpected {type(t).__name__}")
        if "f" in t:
            return float(t["f"])
        if "tuple" in t:
            return tuple(value(x, depth + 1) for x in t["tuple"])
        if "dict" in t:
            return {str(k): value(x, depth + 1) for k, x in t["dict"]}
        if "ref" in t:
            return Ref(str(t["ref"]), int(t["id"]))
        if "nd" in t:
            dtype = np.dtype(str(t["dtype"]))
            if dtype.kind not in KINDS or dtype.hasobject:
                raise WireError(f"arrays of {dtype} cannot be graded")
            shape = tuple(int(n) for n in t["shape"])
            data = blobs[int(t["nd"])]
            if len(data) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
                raise WireError("array data does not match its shape")
            array = np.frombuffer(data, dtype).reshape(shape).copy()
            return array[()] if t.get("scalar") else array
        raise WireError(f"unknown value {sorted(t)!r}")

    return value(head, 0)


def send(sock: socket.socket, message: dict) -> None:
    """Send ``message`` (a dict whose "value" entry may hold arrays)."""
    head, blobs = encode(message.get("value"))
    header = json.dumps({**message, "value": head, "sizes": [len(b) for b in blobs]}).encode()
    sock.sendall(struct.pack("<QQ", len(header), sum(len(b) for b in blobs)) + header)
    for blob in blobs:
        sock.sendall(blob)


def _exactly(sock: socket.socket, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other process closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket) -> dict:
    """The next message, its "value" decoded; WireError for anything malformed."""
    header_size, data_size = struct.unpack("<QQ", _exactly(sock, 16))
    if header_size > HEADER_BYTES or data_size > DATA_BYTES:
        raise WireError(f"message too large ({header_size + data_size} bytes)")
    try:
        message = json.loads(_exactly(sock, header_size))
        sizes = [int(n) for n in message.pop("sizes")]
    except (ValueError, KeyError, TypeError) as error:
        raise WireError(f"malformed message: {error}") from None
    if sum(sizes) != data_size or any(n < 0 for n in sizes):
        raise WireError("message sizes do not add up")
    blobs = [_exactly(sock, n) for n in sizes]
    if not isinstance(message, dict):
        raise WireError("a message must be an object")
    message["value"] = decode(message.get("value"), blobs)
    return message
