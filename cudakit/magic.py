"""IPython magics: ``%%cuda`` compiles a cell and binds its kernels; ``%cuda_device``
describes the GPU.

In a notebook::

    %load_ext cudakit

    %%cuda --name saxpy -O3
    __global__ void saxpy(float a, const float *x, float *y, int n) { ... }

prints one line per kernel with its resource usage and makes ``saxpy`` a callable
:class:`cudakit.Kernel` in the notebook.
"""

from __future__ import annotations

import argparse
import re
import shlex

from . import diagnostics
from .errors import CompileError, CudakitError

_NOTED_ENGINE = {"done": False}
_RUNNING_CELL: dict[str, str | None] = {"id": None}  # the frontend's id of the running cell
_KERNEL_CELLS: dict[str, str | None] = {}  # kernel name -> id of the %%cuda cell defining it


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="%%cuda", add_help=False, exit_on_error=False)
    parser.add_argument("--name", default=None, help="name of the cell's module")
    parser.add_argument("--arch", default=None, help="target, e.g. sm_90 (default: this GPU)")
    parser.add_argument("-O", dest="opt", default=None, help="optimisation level 0-3")
    parser.add_argument("-D", dest="defines", action="append", default=[], help="NAME=VALUE")
    parser.add_argument("--keep-ptx", action="store_true", help="keep the PTX as <name>_ptx")
    parser.add_argument("--options", default="", help="further nvcc flags, quoted")
    parser.add_argument("extra", nargs="*", help="further nvcc flags")
    return parser


def parse_line(line: str) -> tuple[argparse.Namespace, tuple[str, ...]]:
    """Parse the ``%%cuda`` line into its arguments and the nvcc options they mean.

    >>> args, options = parse_line("--name k -O3 -D N=256 -DBS=32 --options '-maxrregcount=32'")
    >>> args.name, options
    ('k', ('-O3', '-DN=256', '-DBS=32', '-maxrregcount=32'))
    """
    words = shlex.split(line)
    expanded: list[str] = []
    for w in words:
        if expanded and expanded[-1] == "--options":
            expanded[-1] = f"--options={w}"  # its value may itself start with '-'
        elif w.startswith("-D") and len(w) > 2:
            expanded += ["-D", w[2:]]
        elif re.fullmatch(r"-O\d", w):
            expanded += ["-O", w[2:]]
        else:
            expanded.append(w)
    try:
        args, unknown = _parser().parse_known_args(expanded)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise CudakitError(f"%%cuda {line}: {exc}") from None
    options: list[str] = []
    if args.opt is not None:
        if args.opt not in "0123":
            raise CudakitError(f"%%cuda: -O{args.opt} is not an optimisation level (0 to 3)")
        options.append(f"-O{args.opt}")
    options += [f"-D{d}" for d in args.defines]
    options += shlex.split(args.options) + list(args.extra) + unknown
    return args, tuple(options)


def _identifier(kernel_name: str) -> str:
    """A Python name for a kernel: ``"reduce6<256>"`` -> ``"reduce6_256"``."""
    return re.sub(r"\W+", "_", kernel_name).strip("_")


def cuda_cell(line: str, cell: str, namespace: dict) -> dict:
    """What ``%%cuda`` does, without IPython: returns the kernels it bound."""
    from .backend import backend_name
    from .binding import load

    args, options = parse_line(line)
    name = args.name or "cell"
    source = "\n" + cell  # line numbers in reports then count the %%cuda line, as Jupyter does
    kernels = load(source, options, arch=args.arch, name=name)
    engine = backend_name()
    if engine == "emu" and not _NOTED_ENGINE["done"]:
        print("(no GPU here: these kernels run on the cudakit CPU emulator)")
        _NOTED_ENGINE["done"] = True
    for kernel_name, kernel in kernels.items():
        bound = _identifier(kernel_name)
        namespace[bound] = kernel
        alias = f"  (bound as {bound})" if bound != kernel_name else ""
        print(kernel.info.usage() + alias)
    if args.keep_ptx:
        from .compiler import compile as nvcc_compile

        ptx = nvcc_compile(source, options, arch=args.arch, name=name, ptx=True).ptx
        namespace[f"{_identifier(name)}_ptx"] = ptx
        print(f"PTX kept in the variable {_identifier(name)}_ptx ({len(ptx.splitlines())} lines)")
    if not kernels:
        print("(no __global__ kernels in this cell)")
    return kernels


def _show_error(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """Show cudakit errors as their message alone: the traceback is cudakit's, not the user's.

    IPython hands the error to this handler and displays nothing itself, so it shows
    the one-line traceback (an ``error`` output in a notebook) and returns it.
    """
    from .gpu import translate

    if not isinstance(value, CudakitError):
        clear = translate(value)
        if clear is None:
            stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
            shell._showtraceback(etype, value, stb)
            return stb
        value = clear
    kernel = diagnostics.kernel_of(value)
    if kernel in _KERNEL_CELLS:  # lines of a %%cuda cell: JupyterLab marks them there
        diagnostics.publish(
            value, diagnostics.runtime_problems(value), kernel, _KERNEL_CELLS[kernel]
        )
    stb = [f"{type(value).__name__}: {value}"]
    shell._showtraceback(type(value), value, stb)
    return stb


def register(ipython) -> None:
    """Register the magics and the error display on an IPython shell."""
    from IPython.core.magic import register_cell_magic, register_line_magic

    @register_cell_magic("cuda")
    def cuda(line, cell):
        try:
            kernels = cuda_cell(line, cell, ipython.user_ns)
        except CompileError as exc:
            diagnostics.publish(exc, diagnostics.compile_problems(exc))
            raise
        for name in kernels:
            _KERNEL_CELLS[name] = _RUNNING_CELL["id"]

    def note_cell(info):
        _RUNNING_CELL["id"] = getattr(info, "cell_id", None)

    @register_line_magic("cuda_device")
    def cuda_device(line):
        from .device import device_info

        print(device_info())

    handled: tuple[type, ...] = (CudakitError,)
    try:
        import pycuda.driver

        handled += (pycuda.driver.Error,)
    except ImportError:
        pass
    ipython.set_custom_exc(handled, _show_error)
    ipython.events.register("pre_run_cell", note_cell)
    del cuda, cuda_device
