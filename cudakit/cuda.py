"""One PyCUDA-shaped namespace over whichever engine runs kernels here.

``from cudakit import cuda`` gives PyCUDA (``pycuda.driver`` names, ``SourceModule``,
``gpuarray``) on a machine with a GPU and the CPU emulator :mod:`cudakit.emu`
otherwise; ``CUDAKIT_BACKEND=gpu|emu`` overrides the choice.

>>> from cudakit import cuda
>>> cuda.backend in ("gpu", "emu")
True
"""

from __future__ import annotations

import importlib

from .backend import backend_name


def engine():
    """The module implementing the chosen engine (:mod:`cudakit.gpu` or :mod:`cudakit.emu`)."""
    return importlib.import_module(f"cudakit.{backend_name()}")


def __getattr__(name: str):
    if name == "backend":
        return backend_name()
    if name.startswith("__"):
        raise AttributeError(name)
    value = getattr(engine(), name)
    if name.startswith("memcpy_") and callable(value):
        from . import record

        value = record.recording_copy(name, value)  # copies in timed regions, for the record
        # (CUDAKIT_RECORD_LAUNCHES) and for cudakit.benchmark's prediction
    if name in ("Event", "Stream"):
        from . import record

        # events and stream waits inside timed regions (streams that wait on each other), for
        # the record and for cudakit.benchmark's prediction; with CUDAKIT_RECORD_LAUNCHES also
        # the regions timed with raw events
        value = (record.recording_event if name == "Event" else record.recording_stream)(value)
    globals()[name] = value  # the engine is fixed for the process: later lookups are direct
    return value
