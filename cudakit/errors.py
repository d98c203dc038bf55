"""The one error hierarchy of cudakit.

Every error a user can meet derives from :class:`CudakitError`, so a notebook
can catch them all at once. Messages name the kernel, the source line and what
to do next.

>>> from cudakit.errors import CudakitError, CompileError
>>> issubclass(CompileError, CudakitError)
True
"""

from __future__ import annotations


class CudakitError(Exception):
    """Base class of every cudakit error."""


class CompileError(CudakitError):
    """nvcc rejected the source; the message quotes the user's own lines."""

    def __init__(self, message: str, log: str = "", diagnostics: list | None = None):
        super().__init__(message)
        self.log = log
        self.diagnostics = diagnostics or []


class NoDeviceError(CudakitError):
    """An operation needs a CUDA device and there is none (or no PyCUDA)."""


class LaunchError(CudakitError):
    """A launch was refused before it ran (bad grid/block/shared size, bad arguments)."""


class ArgumentError(LaunchError, TypeError):
    """A kernel argument has the wrong count, type or kind."""


class KernelFaultError(CudakitError):
    """The kernel faulted on the device (illegal address, trap); the context is lost."""


class UnsupportedError(CudakitError):
    """The emulator met a construct outside its supported CUDA C++ subset."""


class MemcheckError(CudakitError):
    """Out-of-bounds or misaligned memory access found by the emulator's memcheck."""


class RaceError(CudakitError):
    """Shared-memory hazard between two barriers found by the emulator's racecheck."""


class BarrierError(CudakitError):
    """``__syncthreads()`` reached by only part of a block (divergent barrier)."""


class KernelTimeout(CudakitError):
    """An emulated kernel ran past its time limit (for example, spinning on a flag)."""


class ExerciseFormatError(CudakitError, ValueError):
    """A solution or submission notebook breaks the exercise conventions (markers, metadata)."""


class SlurmError(CudakitError):
    """Slurm refused or lost a grading job (sbatch failed, the array could not be followed)."""
