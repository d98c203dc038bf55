"""A translation unit compiled for the emulator: its functions, globals and kernels.

>>> m = Module('extern "C" __global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }')
>>> m.kernel("twice").params[0][1].name
'float*'
"""

from __future__ import annotations

import functools
import re

import numpy as np

from ..errors import CudakitError, LaunchError, UnsupportedError
from . import c_types as ct
from .compiler import Compiler, Function, Kernel
from .frontend import parse
from .memory import HEAP, SHARED_BASE
from .names import Binding, Scope
from .statements import addressed_names
from .values import convert


class FunctionDef:
    """A function definition in the source, possibly a template."""

    def __init__(self, name, node, tparams, is_kernel):
        self.name, self.node, self.tparams, self.is_kernel = name, node, tparams, is_kernel


class Module:
    """Parse ``source`` once; compile kernels (and template instantiations) on demand."""

    def __init__(self, source: str, options=()):
        self.unit = parse(source, options)
        self.sites: list = []
        self.functions: dict[str, FunctionDef] = {}  # the first definition of each name
        self.overloads: dict[str, list[FunctionDef]] = {}
        self.globals = Scope()
        self.symbols: dict[str, tuple[int, int]] = {}
        self._kernels: dict = {}
        self._devfns: dict = {}
        self._top = Compiler(self, Kernel("<module>", self), {}, "<module>")
        self._top.scope = self.globals
        for node in self.unit.root.named_children:
            try:
                self._toplevel(node)
            except CudakitError:
                raise
            except Exception as exc:  # a gap in the emulator, reported with the user's line
                line = self.unit.user_line(node.start_point[0])
                raise UnsupportedError(
                    f"the emulator cannot read the declaration at line {line} "
                    f"({type(exc).__name__}: {exc}). Please report it; it runs on a GPU."
                ) from exc

    # -- top level -------------------------------------------------------------------
    def _toplevel(self, node, tparams=None):
        t = node.type
        if t == "linkage_specification":
            body = node.child_by_field_name("body")
            kids = body.named_children if body.type == "declaration_list" else [body]
            for k in kids:
                self._toplevel(k)
        elif t == "template_declaration":
            params = self._template_params(node.child_by_field_name("parameters"))
            for k in node.named_children[1:]:
                self._toplevel(k, params)
        elif t == "function_definition":
            decl = node.child_by_field_name("declarator")
            while decl.type in ("pointer_declarator", "reference_declarator"):
                decl = decl.named_children[-1]
            name_node = decl.child_by_field_name("declarator")
            name = name_node.text.decode()
            is_kernel = any(c.type == "__global__" for c in node.children) or \
                "__global__" in self._top.qualifiers(node)
            fdef = FunctionDef(name, node, tparams or [], is_kernel)
            self.overloads.setdefault(name, []).append(fdef)
            self.functions.setdefault(name, fdef)
        elif t == "declaration":
            if node.child_by_field_name("declarator") is not None and \
                    node.child_by_field_name("declarator").type == "function_declarator":
                return  # a prototype
            if tparams is not None:
                return  # explicit instantiation: instantiated on demand
            self._global(node)
        elif t in ("comment", "type_definition", "using_declaration", "namespace_definition",
                   "expression_statement", "preproc_call"):
            if t == "type_definition":
                self._typedef(node)
        elif t == "template_instantiation":
            return  # `template __global__ void f<3>(...);`: instantiated on demand
        elif t == "struct_specifier":
            self._top.struct_type(node)
        elif t == "enum_specifier":
            self._top.enum_type(node)
        elif t == "class_specifier":
            raise self._top.unsupported(node, "classes (structs with data members only are "
                                              "supported)")
        else:
            raise self._top.unsupported(node)

    def _typedef(self, node):
        base = self._top.base_type(node.child_by_field_name("type"))
        for d in node.children_by_field_name("declarator"):
            name, typ, _, _ = self._top.declarator(d, base)
            self.globals.names[name] = Binding("type", type=typ)

    def _template_params(self, node):
        out = []
        for p in node.named_children:
            if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration"):
                ident = [c for c in p.named_children if c.type == "type_identifier"]
                out.append(("type", ident[0].text.decode(), None))
            elif p.type in ("parameter_declaration", "optional_parameter_declaration"):
                t = self._top.base_type(p.child_by_field_name("type"))
                out.append(("value", p.child_by_field_name("declarator").text.decode(), t))
            else:
                raise self._top.unsupported(p, "this kind of template parameter")
        return out

    def _global(self, node):
        c = self._top
        quals = c.qualifiers(node)
        base = c.base_type(node.child_by_field_name("type"))
        for d in node.children_by_field_name("declarator"):
            name, t, init, _ = c.declarator(d, base)
            if "__constant__" in quals or "__device__" in quals:
                space = "constant" if "__constant__" in quals else "global"
                addr = HEAP.alloc(t.size, label=f"{space} symbol '{name}'", space=space)
                self.symbols[name] = (addr, t.size)
                if init is not None:
                    HEAP.write(addr, self._initial_bytes(t, init))
                a = np.uint64(addr)
                self.globals.names[name] = Binding("mem", type=t, addr=lambda b, a=a: a,
                                                   value=space)
            elif "__shared__" in quals and "extern" in quals and t.kind == "array":
                # SDK style: the launch's dynamic shared memory, seen by every kernel here
                self.globals.names[name] = Binding(
                    "mem", type=t, addr=lambda b: np.uint64(SHARED_BASE + b.dyn_offset),
                    value="shared",
                )
            elif "__shared__" in quals:
                raise c.unsupported(node, "a static __shared__ variable at file scope "
                                          "(declare it inside the kernel)")
            elif t.is_arith and init is not None:
                e = c.expr(init)
                if e.const is None:
                    raise c.unsupported(node, f"the non-constant global '{name}'")
                self.globals.names[name] = Binding("const", type=t,
                                                   value=convert(e.const, e.type, t))
            else:
                raise c.unsupported(node, f"the global variable '{name}' (use __device__ "
                                          f"or __constant__)")

    def _initial_bytes(self, t, init) -> bytes:
        c = self._top
        leaves = []

        def walk(n):
            if n.type == "initializer_list":
                for k in n.named_children:
                    walk(k)
            else:
                e = c.expr(n)
                if e.const is None:
                    raise c.unsupported(n, "a non-constant initializer")
                leaves.append(convert(e.const, e.type, t.base if t.kind == "array" else t))
        walk(init)
        et = t.base if t.kind == "array" else t
        out = np.zeros(t.size // et.size, et.dtype)
        out[: len(leaves)] = leaves
        return out.tobytes()

    # -- kernels ---------------------------------------------------------------------
    def kernel_names(self) -> list[str]:
        return [n for n, f in self.functions.items() if f.is_kernel]

    def kernel(self, spec: str) -> Kernel:
        """The kernel named ``spec``: ``"name"``, ``"name<256>"`` or a mangled name."""
        if spec in self._kernels:
            return self._kernels[spec]
        name, targs = _split_spec(spec)
        fdef = self.functions.get(name)
        if fdef is None or not fdef.is_kernel:
            known = ", ".join(self.kernel_names()) or "none"
            raise LaunchError(f"no kernel named '{spec}' in this module (kernels: {known})")
        if len(targs) != len(fdef.tparams):
            raise LaunchError(
                f"kernel '{name}' takes {len(fdef.tparams)} template arguments; ask for it as "
                f"get_function(\"{name}<...>\")" if fdef.tparams else
                f"kernel '{name}' is not a template")
        tb = {}
        for (kind, pname, ptype), a in zip(fdef.tparams, targs, strict=False):
            if kind == "type":
                t = ct.lookup(a)
                if t is None:
                    raise LaunchError(f"unknown template type argument '{a}' for '{name}'")
                tb[pname] = Binding("type", type=t)
            else:
                tb[pname] = Binding("const", type=ptype, value=convert(
                    np.int64(int(a.rstrip("uUlL"), 0)), ct.LONG, ptype))
        k = Kernel(spec, self)
        try:
            self._compile_into(k, fdef, tb, k, is_kernel=True)
        except CudakitError:
            raise
        except Exception as exc:  # a gap in the emulator's compiler
            line = self.unit.user_line(fdef.node.start_point[0])
            raise UnsupportedError(
                f"the emulator cannot compile kernel '{spec}' (line {line}): "
                f"{type(exc).__name__}: {exc}. Please report it; it runs on a GPU.") from exc
        self._kernels[spec] = k
        return k

    def _signature(self, c: Compiler, fdef):
        """``(return type, [(name, type, is_reference, default)])`` of ``fdef``.

        ``const T&`` parameters behave as values; other ``T&`` parameters hold the
        argument's address (type ``T*``, ``is_reference`` True). ``default`` is the
        syntax node of a default argument, or ``None``.
        """
        node = fdef.node
        ret = c.base_type(node.child_by_field_name("type"))
        decl = node.child_by_field_name("declarator")
        while decl.type == "pointer_declarator":
            ret = ct.pointer(ret)
            decl = decl.named_children[-1]
        params = []
        for p in decl.child_by_field_name("parameters").named_children:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                raise c.unsupported(p, "this kind of parameter")
            pt = c.base_type(p.child_by_field_name("type"))
            d = p.child_by_field_name("declarator")
            if d is None:
                if pt.kind == "void":
                    continue
                raise c.unsupported(p, "an unnamed parameter")
            ref = d.type == "reference_declarator"
            if ref:
                if fdef.is_kernel:
                    raise c.unsupported(p, "a reference parameter of a __global__ function")
                d = d.named_children[-1]
                ref = "const" not in c.qualifiers(p)
            pname, pt, _, _ = c.declarator(d, pt)
            if pt.kind == "array":
                pt = ct.pointer(pt.base)
            params.append((pname, pt, ref, p.child_by_field_name("default_value")))
        return ret, params

    def _compile_into(self, target, fdef, tb, kernel, is_kernel):
        c = Compiler(self, kernel, tb, fdef.name)
        c.is_kernel = is_kernel
        node = fdef.node
        c.addressed = addressed_names(node.child_by_field_name("body"), self.reference_positions)
        c.ret_type, params = self._signature(c, fdef)
        for pname, pt, ref, _ in params:
            slot = c.nslots
            c.nslots += 1
            c.scope.names[pname] = Binding("ref" if ref else "reg", type=pt, slot=slot)
        self._set_params(target, params)
        if isinstance(target, Function):
            target.ret = c.ret_type
        target.body = c.stmt(node.child_by_field_name("body")) or (lambda b: None)
        target.nslots = c.nslots
        target.frame_bytes = c.frame_bytes
        return target

    @staticmethod
    def _set_params(target, params):
        target.params = [(n, ct.pointer(t) if ref else t) for n, t, ref, _ in params]
        target.refs = {i for i, (_, _, ref, _) in enumerate(params) if ref}
        target.defaults = [d for _, _, _, d in params]

    @functools.cached_property
    def reference_positions(self) -> dict[str, set[int]]:
        """Per function name: the positions of its non-const reference parameters."""
        out: dict[str, set[int]] = {}
        for name, fdef in ((n, f) for n, fs in self.overloads.items() for f in fs):
            decl = fdef.node.child_by_field_name("declarator")
            while decl.type == "pointer_declarator":
                decl = decl.named_children[-1]
            plist = decl.child_by_field_name("parameters")
            if plist is None:
                continue
            refs = {i for i, p in enumerate(plist.named_children)
                    if p.child_by_field_name("declarator") is not None
                    and p.child_by_field_name("declarator").type == "reference_declarator"
                    and "const" not in self._top.qualifiers(p)}
            if refs:
                out.setdefault(name, set()).update(refs)
        return out

    def overload(self, name: str, args, caller) -> FunctionDef:
        """The definition of ``name`` a call with arguments ``args`` (Exprs) selects: the
        right number of parameters, then the most parameter types matching exactly."""
        best, best_score = None, -1
        for fdef in self.overloads[name]:
            if fdef.tparams:
                score = 0
            else:
                _, params = self._signature(Compiler(self, caller.k, {}, name), fdef)
                required = sum(d is None for _, _, _, d in params)
                if not required <= len(args) <= len(params):
                    continue
                score = sum(pt == (a.type if a.type.kind != "array" else ct.pointer(a.type.base))
                            for (_, pt, _, _), a in zip(params, args, strict=False))
            if score > best_score:
                best, best_score = fdef, score
        return best or self.functions[name]

    def device_function(self, fdef, tb, kernel, node, caller) -> Function:
        name = fdef.name
        key = (id(fdef.node), tuple(sorted((k, v.kind, str(v.type), v.value)
                                           for k, v in tb.items())), id(kernel))
        fn = self._devfns.get(key)
        if fn is None:
            if fdef.is_kernel:
                raise caller.unsupported(node, f"calling the __global__ function '{name}' "
                                               f"from device code")
            fn = Function(name, ct.VOID, [])
            self._devfns[key] = fn
            # parameters must be known before a recursive call compiles
            self._compile_header(fn, fdef, tb, kernel)
            self._compile_into(fn, fdef, tb, kernel, is_kernel=False)
        return fn

    def _compile_header(self, fn, fdef, tb, kernel):
        c = Compiler(self, kernel, tb, fdef.name)
        fn.ret, params = self._signature(c, fdef)
        self._set_params(fn, params)

    def deduce(self, fdef, arg_types, node, caller) -> dict:
        """Template arguments of ``fdef`` deduced from the call's argument types."""
        out = {}
        decl = fdef.node.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters").named_children
        tnames = {n for k, n, _ in fdef.tparams if k == "type"}
        for p, at in zip(params, arg_types, strict=False):
            tn = p.child_by_field_name("type").text.decode()
            d = p.child_by_field_name("declarator")
            depth = 0
            while d is not None and d.type == "pointer_declarator":
                depth += 1
                d = d.child_by_field_name("declarator")
            if tn in tnames and tn not in out:
                t = at
                for _ in range(depth):
                    t = t.base
                out[tn] = Binding("type", type=t)
        missing = [n for k, n, _ in fdef.tparams if n not in out]
        if missing:
            raise caller.unsupported(node, f"deducing the template argument(s) "
                                           f"{', '.join(missing)} of '{fdef.name}'; write "
                                           f"them explicitly: {fdef.name}<...>(...)")
        return out


_MANGLED = re.compile(r"^_Z(\d+)(\w+)")


def _split_spec(spec: str) -> tuple[str, list[str]]:
    spec = spec.strip()
    m = _MANGLED.match(spec)
    if m:
        n = int(m.group(1))
        return m.group(2)[:n], []
    if "<" in spec and spec.endswith(">"):
        name, _, rest = spec.partition("<")
        return name.strip(), [a.strip() for a in rest[:-1].split(",") if a.strip()]
    return spec, []

