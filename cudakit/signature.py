"""Kernel parameter lists, their C types, and checking of launch arguments.

A kernel's parameters come from its source (names) and, for C++ kernels, from the
mangled symbol nvcc emits (exact types after macros and templates). Arguments are
checked against them before a launch, so a wrong count or type is a clear error
instead of a silent reinterpretation of bytes.

>>> kernels = parse_kernels("__global__ void scale(float *x, float a, int n) {}")
>>> [str(p) for p in kernels["scale"]]
['float *x', 'float a', 'int n']
>>> convert_scalar(kernels["scale"][2], 7)
np.int32(7)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import re
import shutil
import subprocess
from dataclasses import dataclass

import numpy as np

from .errors import ArgumentError

# C scalar type -> NumPy dtype (LP64, as nvcc on 64-bit Linux)
SCALAR_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(dt)
    for names, dt in [
        (("bool",), np.bool_),
        (("char", "signed char", "int8_t"), np.int8),
        (("unsigned char", "uint8_t"), np.uint8),
        (("short", "short int", "signed short", "int16_t"), np.int16),
        (("unsigned short", "unsigned short int", "uint16_t"), np.uint16),
        (("int", "signed", "signed int", "int32_t"), np.int32),
        (("unsigned", "unsigned int", "uint32_t"), np.uint32),
        (("long", "long int", "long long", "long long int", "int64_t", "ptrdiff_t"), np.int64),
        (
            (
                "unsigned long",
                "unsigned long int",
                "unsigned long long",
                "unsigned long long int",
                "uint64_t",
                "size_t",
            ),
            np.uint64,
        ),
        (("float",), np.float32),
        (("double",), np.float64),
        (("__half", "half"), np.float16),
    ]
    for name in names
}


def _vector_dtype(base: str, count: int) -> np.dtype:
    """CUDA's ``float4`` and friends as a NumPy record with fields x, y, z, w."""
    return np.dtype([(field, SCALAR_DTYPES[base]) for field in "xyzw"[:count]])


_VECTOR_BASES = {
    "char": "char",
    "uchar": "unsigned char",
    "short": "short",
    "ushort": "unsigned short",
    "int": "int",
    "uint": "unsigned int",
    "long": "long",
    "ulong": "unsigned long",
    "longlong": "long long",
    "ulonglong": "unsigned long long",
    "float": "float",
    "double": "double",
}
VECTOR_DTYPES: dict[str, np.dtype] = {
    f"{short}{n}": _vector_dtype(base, n)
    for short, base in _VECTOR_BASES.items()
    for n in (1, 2, 3, 4)
}


@dataclass(frozen=True)
class CType:
    """A parameter's C type: base name, pointer depth and const-ness of the pointee."""

    base: str
    pointer: int = 0
    const: bool = False

    @functools.cached_property  # read on every launch: worked out once
    def is_pointer(self) -> bool:
        return self.pointer > 0

    @functools.cached_property
    def dtype(self) -> np.dtype | None:
        """NumPy dtype of the value (scalars) or of the pointee (pointers); None if unknown."""
        return SCALAR_DTYPES.get(self.base) or VECTOR_DTYPES.get(self.base)

    def __str__(self) -> str:
        const = "const " if self.const else ""
        stars = " " + "*" * self.pointer if self.pointer else ""
        return f"{const}{self.base}{stars}"


@dataclass(frozen=True)
class Param:
    """One kernel parameter."""

    name: str
    ctype: CType

    def __str__(self) -> str:
        text = str(self.ctype)
        return f"{text}{'' if text.endswith('*') else ' '}{self.name}"


_QUALIFIERS = {
    "const",
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "struct",
    "__grid_constant__",
}


def parse_type(text: str, aliases: dict[str, str] | None = None) -> CType:
    """Parse a C type spelling such as ``const float *__restrict__``.

    >>> parse_type("const float *__restrict__")
    CType(base='float', pointer=1, const=True)
    """
    pointer = text.count("*")
    words = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text.replace("*", " "))
    pointee = text.split("*", 1)[0]
    const = "const" in re.findall(r"\w+", pointee)
    base_words = [w for w in words if w not in _QUALIFIERS]
    base = " ".join(base_words)
    if aliases and base in aliases:
        others = {k: v for k, v in aliases.items() if k != base}
        resolved = parse_type(aliases[base], aliases=others)
        return CType(resolved.base, resolved.pointer + pointer, const or resolved.const)
    return CType(base, pointer, const)


def _aliases(source: str) -> dict[str, str]:
    """Object-like ``#define NAME type`` and ``typedef type NAME;`` found in the source."""
    found = {}
    for name, value in re.findall(
        r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+([A-Za-z_][\w \*]*?)\s*$", source, flags=re.M
    ):
        found[name] = value
    for value, name in re.findall(r"\btypedef\s+([^;{}]+?)\s+([A-Za-z_]\w*)\s*;", source):
        found[name] = value
    return found


@functools.cache
def _parser():
    import tree_sitter
    import tree_sitter_cuda

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def _text(node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode()


def _declarator_name(node, source: bytes) -> tuple[str, int]:
    """Name and pointer depth of a (possibly nested) declarator."""
    depth = 0
    while node is not None and node.type not in ("identifier", "field_identifier"):
        if node.type in ("pointer_declarator", "abstract_pointer_declarator"):
            depth += 1
        if node.type == "reference_declarator":
            depth += 0
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type != "type_qualifier"), None)
        node = inner
    return (_text(node, source) if node is not None else ""), depth


def parse_kernels(source: str) -> dict[str, list[Param]]:
    """Every ``__global__`` function defined in ``source``, name -> parameters, in order.

    Template kernels are listed under their plain name with their source spelling of
    the types; :func:`params_from_mangled` gives the types of an instantiation.
    """
    raw = source.encode()
    tree = _parser().parse(raw)
    aliases = _aliases(source)
    kernels: dict[str, list[Param]] = {}

    def visit(node):
        if node.type == "function_definition" and any(
            c.type == "__global__" or _text(c, raw) == "__global__" for c in node.children
        ):
            declarator = node.child_by_field_name("declarator")
            while declarator is not None and declarator.type != "function_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is not None:
                name = _text(declarator.child_by_field_name("declarator"), raw)
                params = []
                plist = declarator.child_by_field_name("parameters")
                for p in plist.named_children if plist is not None else []:
                    if p.type != "parameter_declaration":
                        continue
                    type_node = p.child_by_field_name("type")
                    decl = p.child_by_field_name("declarator")
                    pname, depth = _declarator_name(decl, raw) if decl is not None else ("", 0)
                    qualifiers = " ".join(
                        _text(c, raw) for c in p.children if c.type == "type_qualifier"
                    )
                    spelled = f"{qualifiers} {_text(type_node, raw)} {'*' * depth}"
                    if _text(type_node, raw) == "void" and depth == 0:
                        continue
                    params.append(Param(pname or f"arg{len(params)}", parse_type(spelled, aliases)))
                kernels[name] = params
            return
        for child in node.children:
            visit(child)

    visit(tree.root_node)
    return kernels


@functools.cache
def _cxa_demangle():
    path = ctypes.util.find_library("stdc++")
    if not path:
        return None
    try:
        lib = ctypes.CDLL(path)
        fn = lib.__cxa_demangle
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_size_t),
        ctypes.POINTER(ctypes.c_int),
    ]
    return fn


def demangle(symbol: str) -> str:
    """Demangle an Itanium C++ symbol (as nvcc emits); plain C names come back unchanged.

    >>> demangle("_Z7vec_addPKfS0_Pfi")
    'vec_add(float const*, float const*, float*, int)'
    """
    if not symbol.startswith("_Z"):
        return symbol
    fn = _cxa_demangle()
    if fn is not None:
        status = ctypes.c_int()
        ptr = fn(symbol.encode(), None, None, ctypes.byref(status))
        if status.value == 0 and ptr:
            text = ctypes.string_at(ptr).decode()
            ctypes.CDLL(None).free(ctypes.c_void_p(ptr))
            return text
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if tool:
        out = subprocess.run([tool, symbol], capture_output=True, text=True, check=False)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return symbol


def split_demangled(text: str) -> tuple[str, list[str]]:
    """``"red<128>(int const*, int*, int)"`` -> ``("red<128>", ["int const*", "int*", "int"])``."""
    depth, start = 0, None
    for i, ch in enumerate(text):
        if ch in "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            start = i
            break
    if start is None:
        return text, []
    name, inner = text[:start], text[start + 1 : text.rfind(")")]
    if name.startswith("void "):
        name = name[5:]
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip() and current.strip() != "void":
        parts.append(current.strip())
    return name, parts


def params_from_mangled(symbol: str, source_params: list[Param] | None) -> list[Param]:
    """Parameters of a compiled kernel: exact types from the symbol, names from the source."""
    _, types = split_demangled(demangle(symbol))
    if not symbol.startswith("_Z"):
        return list(source_params or [])
    same_length = source_params and len(source_params) == len(types)
    names = [p.name for p in source_params] if same_length else []
    return [Param(names[i] if names else f"arg{i}", parse_type(t)) for i, t in enumerate(types)]


@functools.cache
def _int_range(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _fits(value: int, dtype: np.dtype) -> bool:
    low, high = _int_range(dtype)
    return low <= value <= high


def convert_scalar(param: Param, value) -> np.generic:
    """Convert a Python or NumPy scalar to the parameter's C type, refusing lossy changes."""
    dtype = param.ctype.dtype
    if dtype is not None and type(value) is not bool:  # fast paths for the common cases
        if isinstance(value, np.generic) and value.dtype == dtype:
            return value
        if type(value) is float and dtype.kind == "f":
            return dtype.type(value)
        if type(value) is int and dtype.kind in "iu" and _fits(value, dtype):
            return dtype.type(value)
    where = f"parameter '{param.name}' ({param.ctype})"
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise ArgumentError(f"{where} takes a single value, got an array of shape {value.shape}")
    if dtype is None:
        if isinstance(value, np.generic | np.ndarray):
            return value
        raise ArgumentError(
            f"{where}: cudakit does not know this type; pass a NumPy scalar of the right dtype"
        )
    if dtype.names:  # vector type passed by value
        if isinstance(value, np.void | np.ndarray) and value.dtype.itemsize == dtype.itemsize:
            return np.asarray(value).view(dtype)[()]
        try:
            return np.array(tuple(value), dtype=dtype)[()]
        except (TypeError, ValueError) as exc:
            raise ArgumentError(
                f"{where} takes {len(dtype.names)} components, got {value!r}"
            ) from exc
    if isinstance(value, bool | np.bool_) and dtype.kind != "b":
        if dtype.kind not in "iu":
            raise ArgumentError(f"{where} is a floating-point value, got bool {value}")
        return dtype.type(int(value))
    if dtype.kind in "iub":
        if isinstance(value, float | np.floating):
            raise ArgumentError(
                f"{where} is an integer, got the floating-point value {value!r}; "
                "convert it explicitly (e.g. int(x)) if that is what you mean"
            )
        if not isinstance(value, int | np.integer | np.bool_):
            raise ArgumentError(f"{where} is an integer, got {type(value).__name__} {value!r}")
        if dtype.kind == "b":
            return np.bool_(value)
        if not _fits(int(value), dtype):
            low, high = _int_range(dtype)
            raise ArgumentError(
                f"{where}: {int(value)} does not fit in {param.ctype.base} (range {low}..{high})"
            )
        return dtype.type(int(value))
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return dtype.type(value)
    raise ArgumentError(f"{where} is a {param.ctype.base}, got {type(value).__name__} {value!r}")
