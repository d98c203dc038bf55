"""A compiled module for the emulator: nvcc's PTX, its variables placed in emulated memory,
its functions decoded on first use, and the kernels' names as the user writes them.

>>> p = Program('__global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }')
>>> p.entry("twice").name
'_Z5twicePf'
"""

from __future__ import annotations

import functools
import os
import re
import sys

import numpy as np

from .. import compiler
from ..errors import CompileError, KernelFaultError, LaunchError, UnsupportedError
from ..i18n.messages import _
from ..signature import demangle, params_from_mangled, split_demangled
from .batch import SharedSymbol, Site
from .contract import contract
from .decode import Decoded, decode_function
from .device_heap import DEVICE_HEAP
from .frontend import parse_ptx
from .memory import HEAP, HEAP_BASE, LOCAL_BASE
from .scheduler import MAX_DEPTH, Frame, run
from .vectorize import shared_alignment

ARCH = "sm_90"  # the emulated device is an H100
FUNCTIONS = 3 << 40  # addresses of device functions (function pointers, virtual tables)
DYNAMIC_PARALLELISM = ("cudaLaunchDevice", "cudaGetParameterBuffer", "cudaLaunchDeviceV2",
                       "cudaGetParameterBufferV2", "cudaDeviceSynchronize", "cudaStreamCreate",
                       "cudaCGGetIntrinsicHandle", "cudaCGSynchronize")


class Program:
    """``source`` compiled by nvcc for sm_90 and parsed; kernels decoded when first used."""

    def __init__(self, source: str, options=(), name: str = "kernel"):
        self.source = source
        self.options = tuple(options)
        self.name = name
        self.lines = source.splitlines()
        self.instances: list[str] = []
        self._compile()
        self.sites: list[Site] = []
        self._site_of: dict[tuple, Site] = {}
        self._decoded: dict[str, Decoded] = {}
        self.symbols: dict[str, tuple[int, int]] = {}
        self._addresses: dict[str, int] = {}
        self._shared: dict[str, int] = {}
        self._fn_offsets: dict[str, dict[str, int]] = {}
        self._place_variables()
        self._source_params = self.compiled.source_params

    def _compile(self) -> None:
        """nvcc -> PTX -> parsed module, with the template instances asked for so far."""
        text = self.source + "".join(
            f"\nstatic void* __cudakit_instance_{k} = (void*)&{inst};"
            for k, inst in enumerate(self.instances))
        compiled = compiler.compile(text, self.options, arch=ARCH, name=self.name, ptx=True)
        self.compiled = compiled
        self.module = parse_ptx(compiled.ptx or "", compiler.source_filename(self.name))
        for fn in self.module.functions.values():
            contract(fn)  # as ptxas fuses a product into the one add that uses it
        self.kernels = {n: f for n, f in self.module.functions.items() if f.entry}
        self._decoded = {}

    def instantiate(self, name: str) -> None:
        """Have nvcc instantiate the kernel template ``name`` (``"scale<float, 4>"``)."""
        self.instances.append(name)
        try:
            self._compile()
        except CompileError as exc:
            self.instances.pop()
            self._compile()
            raise LaunchError(f"cannot instantiate the kernel template '{name}': "
                              f"{exc}") from None
        self._place_variables()

    # -- variables ---------------------------------------------------------------------
    def _place_variables(self) -> None:
        offset = getattr(self, "module_shared", 0)
        for name, var in self.module.variables.items():
            if name in self._addresses:
                continue
            if var.space in ("global", "const"):
                size = max(var.size, 1)
                addr = HEAP.alloc(size, label=f"{'constant' if var.space == 'const' else 'global'}"
                                  f" symbol '{_short(name)}'", space="constant"
                                  if var.space == "const" else "global")
                if var.init:
                    values = [v if isinstance(v, int) else self._address_of(v) for v in var.init]
                    data = np.array(values, dtype=np.uint64).astype(
                        np.dtype(f"u{var.elem_size}")).tobytes()[:size]
                    HEAP.write(addr, data)
                self._addresses[name] = addr
                self.symbols[name] = (addr, var.size)
                self.symbols.setdefault(_short(name), (addr, var.size))
            elif var.space == "shared" and not var.extern and var.count and \
                    name not in self._shared:
                align = shared_alignment(var)
                offset = -(-offset // align) * align
                self._shared[name] = offset
                offset += var.size
        self.module_shared = offset

    def _address_of(self, name: str) -> int:
        """Address of a symbol in an initialiser: a function's (for virtual tables) or a
        variable's placed before it; 0 when unknown."""
        if name in self.module.functions:
            return self.function_address(name)
        return self._addresses.get(name, 0)

    def function_address(self, name: str) -> int:
        """A device function's address, for function pointers (outside all memory windows)."""
        names = list(self.module.functions)
        return FUNCTIONS + 16 * names.index(name)

    def function_at(self, address: int) -> str | None:
        names = list(self.module.functions)
        k, rest = divmod(int(address) - FUNCTIONS, 16)
        return names[k] if not rest and 0 <= k < len(names) else None

    def module_symbol(self, name: str):
        if name in self._addresses:
            a = np.uint64(self._addresses[name])
            return (lambda fr: a), "global" if self.module.variables[name].space == "global" \
                else "const"
        var = self.module.variables.get(name)
        if var is not None and var.space == "shared":
            return self.shared_symbol(name)
        if name == "WARP_SZ":
            return (lambda fr: np.uint64(32)), "const"
        if name in self.module.functions:
            if self.module.functions[name].entry:
                raise UnsupportedError(_("dynamic parallelism (launching kernels from the "
                                         "device) is not supported by the emulator"))
            a = np.uint64(self.function_address(name))
            return (lambda fr: a), "function"
        raise UnsupportedError(f"the PTX symbol '{name}'")

    def shared_symbol(self, name: str, fn=None):
        """``(frame) -> shared-window offset`` of a shared variable."""
        offsets = self._shared if fn is None else {**self._shared, **self._fn_shared(fn)}
        if name in offsets:
            off = np.uint64(offsets[name])
            return (lambda fr: off), "shared"
        return (lambda fr: np.uint64(fr.b.dyn_offset)), "shared"

    def _fn_shared(self, fn) -> dict[str, int]:
        """Offsets of the shared variables declared in ``fn``'s body (after the module's)."""
        cached = self._fn_offsets.get(fn.name)
        if cached is None:
            cached, offset = {}, self.module_shared
            for name, var in fn.vars.items():
                if var.space == "shared" and not var.extern and var.count:
                    align = shared_alignment(var)
                    offset = -(-offset // align) * align
                    cached[name] = offset
                    offset += var.size
            self._fn_offsets[fn.name] = cached
        return cached

    def layout(self, dec: Decoded) -> tuple[int, list[SharedSymbol]]:
        """Static shared bytes of a kernel and its shared arrays (extern ones sized -1)."""
        own = self._fn_shared(dec.fn)
        syms = [SharedSymbol(_short(n), o, self.module.variables[n].size)
                for n, o in self._shared.items()]
        syms += [SharedSymbol(_short(n), o, dec.fn.vars[n].size) for n, o in own.items()]
        extern = [n for n, v in list(dec.fn.vars.items()) + list(self.module.variables.items())
                  if v.space == "shared" and (v.extern or v.count == 0)]
        syms += [SharedSymbol(_short(n), 0, -1) for n in extern]
        static = max([self.module_shared] + [s.offset + s.size for s in syms if s.size >= 0])
        return static, syms

    # -- local memory --------------------------------------------------------------------
    def depot_size(self, fn) -> int:
        return sum(-(-v.size // 16) * 16 for v in fn.vars.values() if v.space == "local")

    def local_offset(self, fn, name: str) -> int:
        off = 0
        for n, v in fn.vars.items():
            if v.space != "local":
                continue
            if n == name:
                return off
            off += -(-v.size // 16) * 16
        raise UnsupportedError(f"the local variable '{name}'")

    # -- sites -----------------------------------------------------------------------------
    def site(self, ins, op: str) -> Site:
        """The source site of a memory instruction. Its column is that of the array or
        pointer the address derives from (``in`` in ``out[i] = in[i * s]``), else the
        statement's; the instructions of one access (an unrolled loop's copies) share it."""
        line = ins.line
        lines = self.lines if ins.file is None else _header_lines(ins.file)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        column = max(ins.column, 1)
        if ins.base:
            found = [m.start() + 1 for m in re.finditer(
                rf"(?<![\w.]){re.escape(ins.base)}\s*(\[|->|\.|\))", text)]
            if found:
                column = found[0] if op == "st" or len(found) == 1 else found[-1] \
                    if found[0] < _assignment(text) else found[0]
        key = (ins.file, line, column, op)
        s = self._site_of.get(key)
        if s is None:
            shown = text.strip() if ins.file is None else \
                f"{os.path.basename(ins.file)}:{line}: {text.strip()}"
            s = Site(len(self.sites), line, column, shown)
            self.sites.append(s)
            self._site_of[key] = s
        return s

    # -- functions -------------------------------------------------------------------------
    def decoded(self, name: str) -> Decoded:
        d = self._decoded.get(name)
        if d is None:
            fn = self.module.functions.get(name)
            if fn is None or fn.extern:
                raise UnsupportedError(f"a call of the external function '{name}'")
            _provenance(fn, self._c_names(fn))
            d = self._decoded[name] = decode_function(fn, self)
        return d

    def _c_names(self, fn) -> dict[str, str]:
        """PTX names -> the C names the user wrote: kernel parameters and variables."""
        names = {}
        if fn.entry:
            cparams = self.params(fn.name)
            if len(cparams) == len(fn.params):
                names.update({v.name: p.name for v, p in zip(fn.params, cparams, strict=True)})
        for n in list(self.module.variables) + list(fn.vars):
            names[n] = _short(n)
        return names

    def entry(self, name: str):
        """The ``.entry`` for a kernel named as in C++ (``add``, ``red<128>``) or mangled."""
        if name in self.kernels:
            return self.kernels[name]
        if name.startswith("_Z"):
            name = split_demangled(demangle(name))[0]
        wanted = _norm(name)
        exact = [m for m in self.kernels if _norm(_short(m)) == wanted]
        if exact:
            return self.kernels[exact[0]]
        plain = [m for m in self.kernels if _plain(_short(m)) == _plain(wanted)]
        if "<" not in wanted and len(plain) == 1 and "<" not in _short(plain[0]):
            return self.kernels[plain[0]]
        known = ", ".join(sorted({_plain(_short(m)) for m in self.kernels}
                                 | set(self._source_params))) or "none"
        if "<" in wanted and name not in self.instances and \
                _plain(wanted) in self._source_params:
            self.instantiate(name)
            return self.entry(name)
        if "<" not in wanted and (plain or wanted in self._source_params):
            raise LaunchError(f"kernel '{name}' is a template: give its template arguments, "
                              f"e.g. get_function('{name}<...>') (kernels: {known})")
        raise LaunchError(f"no kernel named '{name}' in this module (kernels: {known})")

    def params(self, mangled: str):
        """C parameter list of an entry (types from the mangled name, names from the source)."""
        short, _ = split_demangled(demangle(mangled))
        plain = short.split("<", 1)[0]
        return params_from_mangled(mangled, self._source_params.get(plain)
                                   or self._source_params.get(mangled))

    # -- calls -----------------------------------------------------------------------------
    def call_op(self, scope, ins, rets, name, args):
        if name.startswith("%"):  # through a function pointer or a virtual table
            target = scope.read(name, "u64")

            def indirect(fr, L):
                lanes = fr.b.index(L)
                where = np.broadcast_to(np.asarray(target(fr, L)), lanes.shape)
                for address in np.unique(where):
                    callee = self.function_at(address)
                    if callee is None or self.module.functions[callee].entry:
                        lane = int(lanes[np.argmax(where == address)])
                        raise KernelFaultError(
                            f"call through an invalid function pointer ({int(address):#x}) at "
                            f"line {ins.line} in {fr.b.who(lane)}")
                    self._invoke(fr, lanes[where == address], callee, rets, args, ins)
            return indirect
        if name == "vprintf":
            return self._printf(ins, args, rets)
        if name == "__assertfail":
            return self._assertfail(ins, args)
        if name.startswith(DYNAMIC_PARALLELISM):
            raise UnsupportedError(_("dynamic parallelism (launching kernels from the device) "
                                     "is not supported by the emulator"))
        if name in ("malloc", "free"):
            return self._heap_call(name, ins, args, rets)
        return lambda fr, L: self._invoke(fr, L, name, rets, args, ins)

    def _heap_call(self, name: str, ins, args, rets):
        """``malloc(size)`` / ``free(pointer)`` of the device heap, per lane."""
        def heap_call(fr, L):
            lanes = fr.b.index(L)
            arg = np.ascontiguousarray(fr.param_buffer(args[0])[lanes, :8]).view(np.uint64)[:, 0]
            if name == "free":
                DEVICE_HEAP.free(arg, _("at line {line} of kernel '{kernel}'").format(
                    line=ins.line, kernel=fr.kernel_name))
                return
            label = _("a block malloc() gave at line {line} of kernel '{kernel}'").format(
                line=ins.line, kernel=fr.kernel_name)
            got = DEVICE_HEAP.malloc(arg, label)
            fr.param_buffer(rets[0])[lanes, :8] = got.view(np.uint8).reshape(-1, 8)
        return heap_call

    def _invoke(self, fr, L, name, rets, args, ins) -> None:
        """Run device function ``name`` for lanes ``L`` of frame ``fr``."""
        if fr.depth >= MAX_DEPTH:
            raise UnsupportedError(_(
                "recursion deeper than {depth} calls in '{name}' at line {line}; the emulator "
                "(like a GPU's small stack) cannot go that deep.").format(
                    depth=MAX_DEPTH, name=_short(name), line=ins.line))
        callee = self.decoded(name)
        sp = fr.b.local_sp
        cf = Frame(fr.b, callee, self, fr.kernel_name, fr.depth + 1)
        for p, a in zip(callee.fn.params, args, strict=False):
            cf.params[p.name] = fr.param_buffer(a).copy()
        try:
            run(cf, L, entry=False)
        finally:
            fr.b.local_sp = sp
        for r, p in zip(rets, callee.fn.returns, strict=False):
            # the caller's return slot is as wide as its widest declaration of that name
            # (each call block declares its own ``retval0``): copy the callee's bytes
            dst, src = fr.param_buffer(r), cf.param_buffer(p.name)
            width = min(dst.shape[1], src.shape[1])
            dst[L, :width] = src[L, :width]

    def _string(self, address: int) -> str:
        start = address - HEAP_BASE
        raw = HEAP.arena[start: start + 4096]
        end = int(np.argmax(raw == 0)) if (raw == 0).any() else raw.size
        return bytes(raw[:end]).decode("utf-8", "replace")

    def _printf(self, ins, args, rets):
        def printf(fr, L):
            b = fr.b
            for r in rets:
                fr.param_buffer(r)
            lanes = b.index(L)
            fmt_buf = fr.param_buffer(args[0])
            arg_buf = fr.param_buffer(args[1]) if len(args) > 1 else None
            out = sys.stdout
            cache: dict[int, tuple] = {}
            for lane in lanes:
                faddr = int(fmt_buf[lane, :8].view(np.uint64)[0])
                spec = cache.get(faddr)
                if spec is None:
                    spec = cache[faddr] = _printf_layout(self._string(faddr))
                template, convs = spec
                base = int(arg_buf[lane, :8].view(np.uint64)[0]) - LOCAL_BASE if convs else 0
                vals = []
                for off, dt, kind in convs:
                    raw = b.local[lane, base + off: base + off + np.dtype(dt).itemsize]
                    v = raw.view(dt)[0]
                    if kind == "s":
                        vals.append(self._string(int(v)))
                    elif kind == "c":
                        vals.append(chr(int(v) & 0xFF))
                    else:
                        vals.append(v.item())
                out.write(template % tuple(vals))
        return printf

    def _assertfail(self, ins, args):
        def fail(fr, L):
            b = fr.b
            lane = int(b.index(L)[0])
            msg = self._string(int(fr.param_buffer(args[0])[lane, :8].view(np.uint64)[0]))
            raise KernelFaultError(f"assert failed at line {ins.line} in {b.who(lane)}: "
                                   f"assert({msg}) in kernel '{fr.kernel_name}'")
        return fail


_SPEC = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|z|j|t)?([diouxXeEfFgGcsp%])")


def _printf_layout(fmt: str):
    """A Python %-template and ``(offset, dtype, kind)`` of each argument in vprintf's buffer."""
    pieces, convs, pos, off = [], [], 0, 0
    for m in _SPEC.finditer(fmt):
        flags, length, conv = m.group(1), m.group(2), m.group(3)
        pieces.append(fmt[pos:m.start()].replace("%", "%%"))
        pos = m.end()
        if conv == "%":
            pieces.append("%%")
            continue
        if conv in "eEfFgG":
            dt, py = np.float64, conv
        elif conv in "sp":
            dt, py = np.uint64, "s" if conv == "s" else "#x"
        elif length in ("l", "ll", "z", "j", "t"):
            dt, py = (np.int64 if conv in "di" else np.uint64), conv.replace("u", "d").replace(
                "i", "d")
        else:
            dt, py = (np.int32 if conv in "dic" else np.uint32), conv.replace("u", "d").replace(
                "i", "d")
        size = np.dtype(dt).itemsize
        off = -(-off // size) * size
        convs.append((off, dt, conv))
        off += size
        pieces.append("%" + flags + (py if py != "#x" else "x") if py != "#x" else
                      "0x%" + flags + "x")
    pieces.append(fmt[pos:].replace("%", "%%"))
    return "".join(pieces), convs


_DERIVE = ("mov", "cvta", "add", "sub", "mad", "cvt")


def _provenance(fn, names: dict[str, str]) -> None:
    """Mark each memory instruction with the C name its address derives from: a kernel
    parameter (through ``ld.param``) or a variable, followed through moves and arithmetic."""
    base: dict[str, str] = {}
    for ins in fn.body:
        op = ins.opcode.split(".")[0]
        ops = ins.operands
        if op in ("ld", "st", "atom", "red") and ".param" not in ins.opcode:
            addr = ops[1] if op in ("ld", "atom") else ops[0]
            if isinstance(addr, str) and addr.startswith("["):
                inner = re.split(r"[+\]]", addr[1:])[0].strip()
                ins.base = base.get(inner) or names.get(inner)
            continue
        if not ops or not isinstance(ops[0], str):
            continue
        if op == "ld" and ".param" in ins.opcode:
            inner = re.split(r"[+\]]", ops[1][1:])[0].strip()
            if inner in names:
                base[ops[0]] = names[inner]
            continue
        if op in _DERIVE:
            found = next((base.get(a) or names.get(a) for a in ops[1:]
                          if isinstance(a, str) and (a in base or a in names)), None)
            if found:
                base[ops[0]] = found
            else:
                base.pop(ops[0], None)


def _assignment(text: str) -> int:
    """1-based column of the assignment operator of a C statement (len + 1 if none)."""
    m = re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)|[-+*/%&|^]=|<<=|>>=", text)
    return m.start() + 1 if m else len(text) + 1


def _norm(name: str) -> str:
    """A kernel name for comparison: no spaces, no integer suffixes (``128u`` -> ``128``)."""
    return re.sub(r"\b(\d+)(?:u|l|ul|lu|ll|ull)\b", r"\1", name.replace(" ", ""), flags=re.I)


def _plain(name: str) -> str:
    """``ns::red<128>`` -> ``red``."""
    return name.split("<", 1)[0].rsplit("::", 1)[-1]


@functools.lru_cache(maxsize=32)
def _header_lines(path: str) -> list[str]:
    """The lines of a header the PTX names (none if it cannot be read here)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def _short(mangled: str) -> str:
    """``_Z3addPKfS0_Pfi`` -> ``add``; ``_ZZ3redILi128EEvPKfPfiE1s`` -> ``s``."""
    text = demangle(mangled)
    if text == mangled:
        return mangled
    if ")::" in text:  # a function's static (shared) variable
        return text.rsplit("::", 1)[-1]
    return split_demangled(text)[0]

