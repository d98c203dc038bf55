"""``cudakit.predict``: how long a launch would take on a GPU (the H100 by default), and why,
predicted on a machine without one from the CPU emulator's counts.

>>> import cudakit
>>> p = cudakit.predict_copy(1 << 30, "htod")
>>> round(p.ms, 1), p.bound
(19.8, 'PCIe')

``cudakit.predict(source, name, grid=, block=, args=)`` is this module called as a function;
``cudakit.predict.Pointer(array, offset_bytes)`` passes a pointer into an array. Parts:
``sample`` (which blocks to emulate), ``traffic`` (L1/L2/DRAM cache model), ``sass`` (what
ptxas made of the PTX), ``spills`` (the local-memory traffic of its register spills),
``model`` (the time), ``sequence`` (a region of many operations issued from Python:
``sequence_ms``), ``replay`` (recorded operations through the model), ``device`` (figures per GPU,
``devices/*.json``), ``result`` (``Prediction``), ``api``, ``stored`` (the labs' H100
measurements beside their predictions).
No library predicts GPU time from an emulator's trace, so all of it is written here; the
rules are in ``README.md`` beside this file.
"""

from __future__ import annotations

import sys
import types

from .api import Pointer, predict, predict_copy
from .device import Device, known, load
from .result import Prediction
from .sequence import sequence_ms
from .stored import Comparison, lab_comparison

__all__ = ["Comparison", "Device", "Pointer", "Prediction", "known", "lab_comparison", "load",
           "predict", "predict_copy", "sequence_ms"]


class _CallableModule(types.ModuleType):
    """``cudakit.predict(...)`` calls :func:`predict`; the module keeps its attributes."""

    def __call__(self, *args, **kwargs) -> Prediction:
        return predict(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
