"""Errors of the exercise tools, in cudakit's one hierarchy.

>>> from cudakit import CudakitError
>>> issubclass(ExerciseFormatError, CudakitError)
True
"""

from __future__ import annotations

from ..errors import CudakitError


class ExerciseFormatError(CudakitError, ValueError):
    """A solution or submission notebook breaks the exercise conventions (markers, metadata)."""
