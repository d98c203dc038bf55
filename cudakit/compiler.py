"""The nvcc front end: CUDA C++ source to cubin (and PTX), with resource usage and a cache.

Errors come back with the user's own line numbers and the offending line quoted;
results are cached on disk by a hash of source, options, architecture and nvcc
version, so re-running an unchanged cell costs milliseconds.

>>> mod = compile("__global__ void twice(float *x) { x[threadIdx.x] *= 2; }")  # doctest: +SKIP
>>> mod.kernels["twice"].registers  # doctest: +SKIP
8
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import CompileError
from .i18n.messages import _
from .signature import Param, demangle, params_from_mangled, parse_kernels, split_demangled

DEFAULT_ARCH = "sm_90"
_ALWAYS = ("-lineinfo", "--resource-usage")


@dataclass
class KernelInfo:
    """One ``__global__`` function of a compiled module, with ptxas's resource usage."""

    name: str
    mangled: str
    arch: str
    params: list[Param] = field(default_factory=list)
    registers: int = 0
    shared_static: int = 0
    constant: int = 0
    local: int = 0
    stack: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0

    def usage(self) -> str:
        """One line, as ``%%cuda`` prints it."""
        spill = (
            f", spills {self.spill_stores} B stored / {self.spill_loads} B loaded"
            if self.spill_stores or self.spill_loads
            else ""
        )
        return (
            f"{self.name}: {self.registers} registers, {self.shared_static} B shared, "
            f"{self.stack} B stack, {self.local} B local, {self.barriers} barriers{spill} "
            f"[{self.arch}]"
        )

    def signature(self) -> str:
        return f"{self.name}({', '.join(str(p) for p in self.params)})"


@dataclass
class CompiledModule:
    """The result of :func:`compile`."""

    source: str
    name: str
    arch: str
    options: tuple[str, ...]
    cubin: bytes
    ptx: str | None
    log: str
    kernels: dict[str, KernelInfo]
    cache_hit: bool = False
    #: the ``__global__`` functions as the source defines them (after the preprocessor where
    #: macros write them), name -> parameters
    source_params: dict[str, list[Param]] = field(default_factory=dict)

    @property
    def compute_capability(self) -> tuple[int, int]:
        digits = self.arch.split("_")[1].rstrip("af")
        return int(digits[:-1]), int(digits[-1])

    def __repr__(self) -> str:
        names = ", ".join(self.kernels) or "no kernels"
        return f"<CompiledModule {self.name!r} for {self.arch}: {names}>"


# -- nvcc discovery ---------------------------------------------------------------------------


def toolkit_program(name: str) -> str | None:
    """Path of a CUDA toolkit program (``"nvcc"``, ``"nvdisasm"``): ``$CUDA_HOME/bin/NAME``,
    then ``PATH``, then NVIDIA's pip wheels, then ``/usr/local/cuda``; None if none is there."""
    candidates = [
        os.path.join(os.environ[v], "bin", name)
        for v in ("CUDA_HOME", "CUDA_PATH")
        if os.environ.get(v)
    ]
    wheel = wheel_toolkit()
    candidates += [shutil.which(name) or "", os.path.join(wheel, "bin", name) if wheel else "",
                   f"/usr/local/cuda/bin/{name}"]
    return next((path for path in candidates if path and os.access(path, os.X_OK)), None)


def nvcc_path() -> str:
    """Path of nvcc (:func:`toolkit_program`: ``nvidia-cuda-nvcc`` is the wheel)."""
    path = toolkit_program("nvcc")
    if path is not None:
        return path
    raise CompileError(
        "nvcc (the CUDA compiler) was not found: install the CUDA toolkit or set CUDA_HOME, "
        "or `pip install cudakit[lab]` for NVIDIA's nvcc wheels (Linux x86-64). Both the "
        "GPU and the emulator need it."
    )


def _wheel_trees() -> list[str]:
    """The ``.../nvidia/cu13`` folders of NVIDIA's pip wheels on the path."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    return [os.path.join(root, "cu13") for root in (spec.submodule_search_locations or [])] \
        if spec else []


def wheel_toolkit() -> str | None:
    """The CUDA tree of NVIDIA's pip wheels (``.../nvidia/cu13``), if they are installed."""
    for top in _wheel_trees():
        if os.path.exists(os.path.join(top, "bin", "nvcc")):
            for tool in ("bin/nvcc", "bin/ptxas", "bin/cudafe++", "nvvm/bin/cicc",
                         "bin/nvdisasm"):
                path = os.path.join(top, tool)
                if os.path.exists(path) and not os.access(path, os.X_OK):
                    os.chmod(path, 0o755)  # wheels do not keep the executable bit
            return top
    return None


def _toolkit_flags(nvcc: str) -> list[str]:
    """Header paths the wheels' nvcc needs (its nvcc.profile expects a toolkit's layout).
    With a toolkit's nvcc, the wheels' headers (``nvidia-curand``'s ``curand_kernel.h``
    where the toolkit has no cuRAND) come after the toolkit's own, so that they only add
    what it lacks."""
    top = os.path.dirname(os.path.dirname(nvcc))
    if os.path.basename(top) == "cu13" and os.path.isdir(os.path.join(top, "include", "cccl")):
        return [f"-I{top}/include", "-isystem", f"{top}/include/cccl"]
    wheel = wheel_headers()
    return ["-Xcompiler", "-idirafter", "-Xcompiler", wheel] if wheel else []


@functools.cache
def wheel_headers() -> str | None:
    """The include directory of NVIDIA's pip wheels (``.../nvidia/cu13/include``), if any
    is installed (cuRAND's may be without nvcc's)."""
    return next((os.path.join(top, "include") for top in _wheel_trees()
                 if os.path.isdir(os.path.join(top, "include"))), None)


@functools.cache
def nvcc_version() -> str:
    out = subprocess.run([nvcc_path(), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else "unknown"


@functools.cache
def supported_archs() -> tuple[str, ...]:
    """Real architectures this nvcc can build for, e.g. ``('sm_75', ..., 'sm_90', ...)``."""
    out = subprocess.run(
        [nvcc_path(), "--list-gpu-code"], capture_output=True, text=True, check=False
    )
    return tuple(a for a in out.stdout.split() if a.startswith("sm_"))


def normalize_arch(arch) -> str:
    """``"sm_90"``, ``"90"``, ``"9.0"``, ``(9, 0)`` or ``"compute_90"`` -> ``"sm_90"``.

    >>> normalize_arch((8, 6)), normalize_arch("9.0"), normalize_arch("sm_90a")
    ('sm_86', 'sm_90', 'sm_90a')
    """
    if isinstance(arch, tuple | list) and len(arch) == 2:
        return f"sm_{int(arch[0])}{int(arch[1])}"
    text = str(arch).strip().lower()
    match = re.fullmatch(r"(?:sm_|compute_)?(\d+)(?:\.(\d))?([af]?)", text)
    if not match:
        raise CompileError(f"unknown architecture {arch!r}: write it like 'sm_90', '9.0' or (9, 0)")
    major, minor, suffix = match.groups()
    digits = major + minor if minor is not None else major
    return f"sm_{digits}{suffix}"


def check_arch(arch: str) -> str:
    known = supported_archs()
    if known and arch not in known:
        raise CompileError(
            f"unknown architecture '{arch}': this nvcc ({nvcc_version()}) builds for "
            f"{', '.join(known)}"
        )
    return arch


def default_arch() -> str:
    """The present GPU's ``sm_XY`` when one is in use, else ``sm_90`` (the H100)."""
    from .backend import gpu_compute_capability, on_gpu

    return normalize_arch(gpu_compute_capability()) if on_gpu() else DEFAULT_ARCH


# -- cache ------------------------------------------------------------------------------------


def cache_dir() -> Path:
    base = os.environ.get("CUDAKIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "cudakit"
    )
    path = Path(base) / "nvcc"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _cache_key(source: str, options: tuple[str, ...], arch: str) -> str:
    payload = json.dumps([source, options, arch, "ptx-kept", nvcc_version(), _ALWAYS])
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _load_cached(key: str) -> dict | None:
    meta = cache_dir() / f"{key}.json"
    cubin = cache_dir() / f"{key}.cubin"
    if not (meta.exists() and cubin.exists()):
        return None
    try:
        data = json.loads(meta.read_text())
    except ValueError:
        return None
    data["cubin"] = cubin.read_bytes()
    return data


def _store(key: str, data: dict) -> None:
    directory = cache_dir()
    tmp = directory / f".{key}.{os.getpid()}"
    (tmp.with_suffix(".cubin")).write_bytes(data["cubin"])
    os.replace(tmp.with_suffix(".cubin"), directory / f"{key}.cubin")
    meta = {k: v for k, v in data.items() if k != "cubin"}
    (tmp.with_suffix(".json")).write_text(json.dumps(meta))
    os.replace(tmp.with_suffix(".json"), directory / f"{key}.json")


# -- log parsing ------------------------------------------------------------------------------

_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s()][^()]*?)\((?P<line>\d+)\): (?P<kind>error|warning|catastrophic error)"
    r"(?: #\S+)?(?:-D)?: (?P<message>.*)$"
)


def parse_resource_usage(log: str, arch: str) -> dict[str, dict]:
    """ptxas ``--resource-usage`` lines -> mangled kernel name -> usage numbers."""
    usage: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        entry = re.search(r"Compiling entry function '([^']+)'", line)
        if entry:
            current = usage.setdefault(entry.group(1), {"arch": arch})
            continue
        if current is None:
            continue
        for pattern, key in (
            (r"(\d+) bytes stack frame", "stack"),
            (r"(\d+) bytes spill stores", "spill_stores"),
            (r"(\d+) bytes spill loads", "spill_loads"),
            (r"Used (\d+) registers", "registers"),
            (r"used (\d+) barriers", "barriers"),
            (r"(\d+) bytes smem", "shared_static"),
            (r"(\d+) bytes lmem", "local"),
            (r"(\d+) bytes cmem\[0\]", "constant"),
        ):
            found = re.search(pattern, line)
            if found:
                current[key] = int(found.group(1))
    return usage


def format_errors(log: str, filename: str, source: str, name: str) -> tuple[str, list[dict]]:
    """nvcc's diagnostics for ``filename`` rewritten with the user's line numbers, quoted."""
    lines = source.splitlines()
    diagnostics, out = [], []
    log_lines = log.splitlines()
    for i, raw in enumerate(log_lines):
        match = _DIAGNOSTIC.match(raw)
        if not match:
            continue
        number = int(match.group("line"))
        kind = match.group("kind")
        message = match.group("message")
        own = os.path.basename(match.group("file")) == filename
        where = f"line {number}" if own else f"{match.group('file')}:{number}"
        diagnostics.append({"line": number if own else None, "kind": kind, "message": message})
        out.append(f"{where}: {kind}: {message}")
        if own and 1 <= number <= len(lines):
            text = lines[number - 1]
            out.append(f"  {number:4d} | {text}")
            caret = log_lines[i + 2] if i + 2 < len(log_lines) else ""
            quoted = log_lines[i + 1] if i + 1 < len(log_lines) else ""
            if caret.strip() == "^" and quoted.strip() == text.strip():
                column = (
                    caret.index("^")
                    - (len(quoted) - len(quoted.lstrip()))
                    + (len(text) - len(text.lstrip()))
                )
                out.append(f"       | {' ' * column}^")
                diagnostics[-1]["column"] = column + 1
    errors = sum(1 for d in diagnostics if "error" in d["kind"])
    if not diagnostics:
        tail = "\n".join(line for line in log_lines if line.strip())[-2000:]
        return _("nvcc failed to compile '{name}':").format(name=name) + f"\n{tail}", diagnostics
    head = (_("nvcc failed to compile '{name}' ({errors} error):") if errors == 1 else
            _("nvcc failed to compile '{name}' ({errors} errors):"))
    head = head.format(name=name, errors=errors)
    return "\n".join([head, *out]), diagnostics


def source_filename(name: str) -> str:
    """The file nvcc compiles a source named ``name`` as (what its messages and PTX name).

    >>> source_filename("my kernel")
    'my_kernel.cu'
    """
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".cu"


_ENTRY = re.compile(r"^[ \t]*(?:\.\w+[ \t]+)*\.entry[ \t]+([\w$]+)", re.M)
_ATTRIBUTE = re.compile(r"__attribute__\(\((global|device|host|shared|constant|managed)\)\)")


def preprocessed(source: str, options=(), arch: str = DEFAULT_ARCH,
                 filename: str = "kernel.cu") -> str | None:
    """``source`` after nvcc's preprocessor, its own lines only (no header's), with CUDA's
    keywords spelled as in source: what the kernel finder reads when macros write the
    kernels. None when the preprocessor fails (then nvcc's own error follows at compile).

    >>> print(preprocessed("#define K(n) __global__ void n(int *o)\\nK(one) { *o = 1; }").strip())
    __global__ void one(int *o) { *o = 1; }
    """
    nvcc = nvcc_path()
    with tempfile.TemporaryDirectory(prefix="cudakit-") as tmp:
        (Path(tmp) / filename).write_text(source)
        result = subprocess.run([nvcc, "-E", *_toolkit_flags(nvcc), f"-arch={arch}", *options,
                                 filename], cwd=tmp, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        return None
    own, keep = [], False
    for line in result.stdout.splitlines():
        marker = re.match(r'#\s*\d+\s+"([^"]*)"', line)
        if marker:
            keep = os.path.basename(marker.group(1)) == filename
        elif keep:
            own.append(line)
    return _ATTRIBUTE.sub(r"__\1__", "\n".join(own))


def _source_params(source: str, data: dict, key: str, options, arch: str, filename: str):
    """The kernels ``source`` defines, name -> parameters: parsed from the text, or from the
    preprocessed text when the PTX has entries the text does not show (kept in ``data``)."""
    found = parse_kernels(source)
    entries = _ENTRY.findall(data.get("ptx") or "")
    if all(_plain(m) in found or m in found for m in entries):
        return found
    if "expanded" not in data:
        data["expanded"] = preprocessed(source, options, arch, filename)
        _store(key, data)
    return parse_kernels(data["expanded"]) if data["expanded"] else found


def _plain(mangled: str) -> str:
    return split_demangled(demangle(mangled))[0].split("<", 1)[0]


def _kernels(ptx: str | None, from_source: dict, usage: dict[str, dict],
             arch: str) -> dict[str, KernelInfo]:
    entries = set(_ENTRY.findall(ptx or ""))
    kernels = {}
    for mangled, numbers in usage.items():
        short, _ = split_demangled(demangle(mangled))
        plain = short.split("<", 1)[0]
        known = plain in from_source or mangled in from_source
        # an entry the source parser missed still has its types in a C++ symbol; a function
        # ptxas lists that is not an entry is a __device__ one (e.g. with -rdc)
        if not known and not (mangled in entries and mangled.startswith("_Z")):
            continue
        params = params_from_mangled(mangled, from_source.get(plain) or from_source.get(mangled))
        kernels[short] = KernelInfo(name=short, mangled=mangled, params=params, **numbers)
    return kernels


# -- the entry point --------------------------------------------------------------------------


def compile(  # noqa: A001 - the natural name, as in PyCUDA's compiler module
    source: str,
    options=(),
    arch=None,
    name: str | None = None,
    ptx: bool = False,
) -> CompiledModule:
    """Compile CUDA C++ ``source`` with nvcc to a cubin for ``arch``; the PTX that ptxas
    assembled comes along as ``.ptx`` (``ptx`` is kept for compatibility: it is always there).

    ``options`` are extra nvcc flags (``("-O3", "-DN=256", "-maxrregcount=32")``).
    Raises :class:`CompileError` with the user's line numbers when nvcc rejects it.
    """
    if isinstance(options, str):
        options = tuple(options.split())
    options = tuple(str(o) for o in options)
    arch = check_arch(normalize_arch(arch) if arch is not None else default_arch())
    name = name or "kernel"
    key = _cache_key(source, options, arch)
    cached = _load_cached(key)
    if cached is not None:
        return _module(source, name, arch, options, cached, cache_hit=True)

    filename = source_filename(name)
    with tempfile.TemporaryDirectory(prefix="cudakit-") as tmp:
        path = Path(tmp) / filename
        path.write_text(source)
        cubin_path = path.with_suffix(".cubin")
        nvcc = nvcc_path()
        cmd = [
            nvcc,
            "-cubin",
            *_toolkit_flags(nvcc),
            f"-arch={arch}",
            *_ALWAYS,
            *options,
            "-keep",  # the PTX handed to ptxas, also what the emulator runs
            "-o",
            str(cubin_path),
            filename,
        ]
        result = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, check=False)
        log = (result.stdout + result.stderr).strip()
        if result.returncode != 0 or not cubin_path.exists():
            message, diagnostics = format_errors(log, filename, source, name)
            raise CompileError(message, log=log, diagnostics=diagnostics)
        ptx_path = path.with_suffix(".ptx")
        ptx_text = ptx_path.read_text() if ptx_path.exists() else None
        data = {
            "cubin": cubin_path.read_bytes(),
            "ptx": ptx_text,
            "log": log,
            "usage": parse_resource_usage(log, arch),
        }
    _store(key, data)
    return _module(source, name, arch, options, data, cache_hit=False)


def _module(source, name, arch, options, data, cache_hit) -> CompiledModule:
    params = _source_params(source, data, _cache_key(source, options, arch), options, arch,
                            source_filename(name))
    return CompiledModule(
        source=source,
        name=name,
        arch=arch,
        options=options,
        cubin=data["cubin"],
        ptx=data.get("ptx"),
        log=data.get("log", ""),
        kernels=_kernels(data.get("ptx"), params, data["usage"], arch),
        cache_hit=cache_hit,
        source_params=params,
    )


def kernel_info_dict(info: KernelInfo) -> dict:
    """Plain-data view of a :class:`KernelInfo` (for JSON reports)."""
    data = asdict(info)
    data["params"] = [str(p) for p in info.params]
    return data


__all__ = ["CompiledModule", "KernelInfo", "compile", "normalize_arch"]
