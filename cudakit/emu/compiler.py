"""Compile the tree-sitter syntax tree of a kernel into Python closures.

Types are resolved at compile time; each expression becomes a closure that
computes all lanes of a batch at once with NumPy, each statement a closure that
runs under the batch's active mask. The tree is walked once per kernel (and per
template instantiation), never per thread.
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileError, UnsupportedError
from . import c_types as ct
from .c_types import BOOL, DOUBLE, FLOAT, INT, LONG, UINT, ULONG, CType
from .names import (
    Binding,
    ComponentLV,
    Expr,
    MemoryLV,
    RegisterLV,
    Scope,
    constant,
    lv_expr,
    offset,
)
from .operators import ARITH, COMPARE, SHIFT, c_div, caster, decay, fused, truth
from .runtime import SharedSymbol, Site
from .statements import Statements
from .values import cast_dtype, select, zero

BUILTIN_VARS = {"threadIdx": "t", "blockIdx": "b", "blockDim": "bd", "gridDim": "gd"}


class Kernel:
    """A compiled kernel instantiation, ready to launch."""

    def __init__(self, name: str, module):
        self.name = name
        self.module = module
        self.params: list[tuple[str, CType]] = []
        self.refs: set[int] = set()
        self.defaults: list = []
        self.body = None
        self.nslots = 0
        self.frame_bytes = 0
        self.shared_static = 0
        self.shared_symbols: list[SharedSymbol] = []
        self.sites = module.sites


class Function:
    """A compiled ``__device__`` function instantiation (body filled after compiling)."""

    def __init__(self, name, ret: CType, params):
        self.name, self.ret, self.params = name, ret, params
        self.refs: set[int] = set()  # positions of reference parameters (passed as addresses)
        self.defaults: list = []  # default-argument syntax nodes (None where there is none)
        self.body = None
        self.nslots = 0
        self.frame_bytes = 0


class Compiler(Statements):
    """Compiles one function body (kernel or device function) into closures."""

    def __init__(self, module, kernel: Kernel, tbind: dict, source_name: str):
        self.m = module
        self.k = kernel
        self.scope = Scope(module.globals)
        for n, bnd in tbind.items():
            self.scope.names[n] = bnd
        self.nslots = 0
        self.frame_bytes = 0
        self.ret_type: CType = ct.VOID
        self.fname = source_name
        self.addressed: set[str] = set()  # locals whose address the body takes

    # -- errors and sites ------------------------------------------------------------
    def line(self, node) -> int:
        return self.m.unit.user_line(node.start_point[0])

    def unsupported(self, node, what: str | None = None):
        text = node.text.decode(errors="replace").split("\n")[0][:60]
        what = what or f"'{node.type}' ({text})"
        return UnsupportedError(
            f"the emulator does not support {what} at line {self.line(node)} in "
            f"'{self.fname}'. Rewrite it with the supported subset (see cudakit.emu docs) "
            f"or run on a GPU."
        )

    def site(self, node) -> Site:
        text = " ".join(node.text.decode(errors="replace").split())[:60]
        s = Site(len(self.m.sites), self.line(node), node.start_point[1] + 1, text)
        self.m.sites.append(s)
        return s

    # -- types -----------------------------------------------------------------------
    def base_type(self, node) -> CType:
        if node.type in ("primitive_type", "type_identifier"):
            name = node.text.decode()
            b = self.scope.find(name)
            if b is not None and b.kind == "type":
                return b.type
            t = ct.lookup(name)
            if t is None:
                raise self.unsupported(node, f"the type '{name}'")
            return t
        if node.type == "sized_type_specifier":
            words = [c.text.decode() for c in node.children if c.type != "comment"]
            t = ct.lookup(" ".join(words))
            if t is None:
                raise self.unsupported(node, f"the type '{' '.join(words)}'")
            return t
        if node.type == "qualified_identifier":
            return self.base_type(node.child_by_field_name("name"))
        if node.type == "struct_specifier":
            return self.struct_type(node)
        if node.type == "enum_specifier":
            return self.enum_type(node)
        raise self.unsupported(node, f"the type '{node.text.decode()}'")

    def enum_type(self, node) -> CType:
        """``enum [Name] { A, B = 5 }``: the enumerators become int constants."""
        body = node.child_by_field_name("body")
        value = -1
        for e in body.named_children if body is not None else ():
            if e.type != "enumerator":
                continue
            v = e.child_by_field_name("value")
            value = self.const_int(v) if v is not None else value + 1
            self.scope.names[e.child_by_field_name("name").text.decode()] = Binding(
                "const", type=INT, value=np.int32(value))
        name = node.child_by_field_name("name")
        if name is not None:
            self.scope.names[name.text.decode()] = Binding("type", type=INT)
        return INT

    def s_enum_specifier(self, node):
        self.enum_type(node)

    def s_struct_specifier(self, node):
        self.struct_type(node)

    def struct_type(self, node) -> CType:
        """The type of ``struct Name { ... }`` (defining it) or of ``struct Name``."""
        name_node = node.child_by_field_name("name")
        name = (name_node.text.decode() if name_node is not None
                else f"<unnamed struct at line {self.line(node)}>")
        body = node.child_by_field_name("body")
        if body is None:
            b = self.scope.find(name)
            if b is None or b.kind != "type":
                raise CompileError(f"line {self.line(node)}: unknown struct '{name}'")
            return b.type
        self.scope.names[name] = Binding("type", type=ct.CType(name, "struct"))  # for T* members
        members = []
        for f in body.named_children:
            if f.type == "comment":
                continue
            if f.type != "field_declaration":
                raise self.unsupported(f, "this struct member (only data members are supported)")
            ftype = self.base_type(f.child_by_field_name("type"))
            for d in f.children_by_field_name("declarator"):
                fname, t, _, _ = self.declarator(d, ftype)
                members.append((fname, t))
        t = ct.struct(name, members)
        self.scope.names[name] = Binding("type", type=t)
        return t

    def qualifiers(self, node) -> set[str]:
        out = set()
        for c in node.children:
            if c.type in ("type_qualifier", "storage_class_specifier"):
                out.add(c.text.decode().strip())
            elif c.type in ("__global__", "__device__", "__host__", "__forceinline__"):
                out.add(c.type)
        return out

    def declarator(self, node, t: CType):
        """Unwrap a declarator: return ``(name, type, init_node, unsized)``."""
        init = None
        dims: list = []
        while True:
            if node.type == "init_declarator":
                init = node.child_by_field_name("value")
                node = node.child_by_field_name("declarator")
            elif node.type == "pointer_declarator":
                t = ct.pointer(t)
                node = node.child_by_field_name("declarator")
            elif node.type == "array_declarator":
                size = node.child_by_field_name("size")
                dims.insert(0, None if size is None else self.const_int(size))
                node = node.child_by_field_name("declarator")
            elif node.type in ("identifier", "field_identifier", "type_identifier"):
                break
            elif node.type == "parenthesized_declarator":
                node = node.named_children[0]
            else:
                raise self.unsupported(node, f"the declarator '{node.text.decode()}'")
        unsized = bool(dims) and dims[0] is None
        if dims:
            if None in dims[1:]:
                raise self.unsupported(node, "an array with an unknown inner extent")
            if unsized:
                dims[0] = 0
                if init is not None and init.type == "initializer_list":
                    dims[0] = len(init.named_children)
                    unsized = False
            t = ct.array(t, tuple(dims))
        return node.text.decode(), t, init, unsized

    def type_descriptor(self, node) -> CType:
        t = self.base_type(node.child_by_field_name("type"))
        d = node.child_by_field_name("declarator")
        while d is not None:
            if d.type == "abstract_pointer_declarator":
                t = ct.pointer(t)
                d = d.child_by_field_name("declarator")
            elif d.type == "abstract_array_declarator":
                raise self.unsupported(d, "an array type in a cast")
            else:
                raise self.unsupported(d)
        return t

    def const_int(self, node) -> int:
        e = self.expr(node)
        if e.const is None:
            raise self.unsupported(node, f"a non-constant size '{node.text.decode()}'")
        return int(e.const)

    # -- expressions -----------------------------------------------------------------
    def expr(self, node) -> Expr:
        method = getattr(self, "x_" + node.type, None)
        if method is None:
            raise self.unsupported(node)
        return method(node)

    def x_parenthesized_expression(self, node):
        return self.expr(node.named_children[-1])

    def x_number_literal(self, node):
        text = node.text.decode().lower().replace("'", "")
        is_hex = text.startswith("0x")
        if not is_hex and ("." in text or "e" in text) or text.endswith("f") and not is_hex:
            if text.endswith("f"):
                return constant(np.float32(float(text[:-1])), FLOAT)
            return constant(np.float64(float(text.rstrip("l"))), DOUBLE)
        body = text.rstrip("ul")
        suffix = text[len(body):]
        if body.startswith("0b"):
            v = int(body[2:], 2)
        elif is_hex:
            v = int(body, 16)
        elif len(body) > 1 and body.startswith("0"):
            v = int(body, 8)
        else:
            v = int(body)
        uns = "u" in suffix
        long = "l" in suffix
        cands = ([UINT, ULONG] if uns else [INT, LONG] if not is_hex and body[:2] != "0b"
                 else [INT, UINT, LONG, ULONG])
        if long:
            cands = [c for c in cands if c.size == 8]
        for c in cands:
            info = np.iinfo(c.dtype)
            if v <= info.max:
                return constant(v, c)
        return constant(v & (2**64 - 1), ULONG)

    def x_char_literal(self, node):
        body = node.text.decode()[1:-1]
        v = ord(body.encode().decode("unicode_escape")) if body.startswith("\\") else ord(body)
        return constant(v, ct.CHAR)

    def x_true(self, node):
        return constant(True, BOOL)

    def x_false(self, node):
        return constant(False, BOOL)

    def x_null(self, node):
        return constant(0, ct.pointer(ct.VOID))

    x_nullptr = x_null

    def x_identifier(self, node):
        name = node.text.decode()
        if name == "warpSize":
            return constant(32, INT)
        b = self.scope.find(name)
        if b is None:
            raise CompileError(f"line {self.line(node)}: identifier '{name}' is undefined "
                               f"(in '{self.fname}')")
        if b.kind == "const":
            return constant(b.value, b.type)
        if b.kind == "reg":
            lv = RegisterLV(b.slot, b.type)
            return lv_expr(lv, b.type, True)
        if b.kind == "ref":  # a reference parameter holds the address of its object
            slot = b.slot
            lv = MemoryLV(lambda b: b.frame[slot], b.type, self.site(node))
            return lv_expr(lv, b.type, False)
        if b.kind == "mem":
            addr = b.addr
            if b.type.kind == "array":
                # extern __shared__ arrays are unsized: only the window check applies
                root = (name, addr, b.type.size, b.value) if b.type.size else None
                return Expr(addr, b.type, root=root)
            lv = MemoryLV(addr, b.type, self.site(node))
            return lv_expr(lv, b.type, False)
        raise self.unsupported(node, f"'{name}' used as a value")

    def x_field_expression(self, node):
        arg = node.child_by_field_name("argument")
        field = node.child_by_field_name("field").text.decode()
        op = node.child_by_field_name("operator").type
        if arg.type == "identifier" and arg.text.decode() in BUILTIN_VARS and op == ".":
            return self.builtin_var(BUILTIN_VARS[arg.text.decode()], field, node)
        base = self.expr(arg)
        t = base.type
        if op == "->":
            if t.kind != "ptr":
                raise self.unsupported(node, "'->' on a non-pointer")
            t = t.base
            lv = MemoryLV(base.fn, t, self.site(node))
        else:
            lv = base.lv
        if t.kind == "struct":
            names = [f for f, _, _ in t.fields]
            if field not in names:
                raise CompileError(f"line {self.line(node)}: '{t}' has no member '{field}'")
            comp = names.index(field)
            _, et, off = t.fields[comp]
        elif t.kind == "vec" and len(field) == 1 and field in "xyzw"[: t.dims[0]]:
            comp = "xyzw".index(field)
            et, off = t.base, comp * t.base.size
        else:
            raise self.unsupported(node, f"the member '.{field}' of type '{t}'")
        if isinstance(lv, MemoryLV):
            addr_fn = offset(lv.addr_fn, off)
            if et.kind == "array":
                return Expr(addr_fn, et, pure=False)
            return lv_expr(MemoryLV(addr_fn, et, lv.site), et, False)
        if isinstance(lv, (RegisterLV, ComponentLV)):
            clv = ComponentLV(lv, comp, et)
            return lv_expr(clv, et, True)
        fn = base.fn
        return Expr(lambda b: fn(b)[comp], et, pure=base.pure)

    def builtin_var(self, which: str, field: str, node):
        if field not in ("x", "y", "z"):
            raise self.unsupported(node, f"the member '.{field}'")
        i = "xyz".index(field)
        if which == "t":
            attr = ("tx", "ty", "tz")[i]
            return Expr(lambda b: getattr(b, attr), UINT)
        if which == "b":
            attr = ("bx", "by", "bz")[i]
            return Expr(lambda b: getattr(b, attr), UINT)
        if which == "bd":
            return Expr(lambda b: b.block_dim[i], UINT)
        return Expr(lambda b: b.grid_dim[i], UINT)

    def x_subscript_expression(self, node):
        base = self.expr(node.child_by_field_name("argument"))
        idx_nodes = node.child_by_field_name("indices").named_children
        if len(idx_nodes) != 1:
            raise self.unsupported(node, "a multi-index subscript")
        idx = self.expr(idx_nodes[0])
        if base.type.kind not in ("ptr", "array"):
            base, idx = idx, base
        t = base.type
        if t.kind not in ("ptr", "array") or not idx.type.is_arith:
            raise self.unsupported(node, "subscripting a non-pointer")
        if t.kind == "array":
            et = ct.array(t.base, t.dims[1:]) if len(t.dims) > 1 else t.base
        else:
            et = t.base
        addr = self.offset_fn(base.fn, idx, et.size)
        if et.kind == "array":
            return Expr(addr, et, pure=base.pure and idx.pure, root=base.root)
        lv = MemoryLV(addr, et, self.site(node), bounds=base.root)
        return lv_expr(lv, et, False)

    @staticmethod
    def offset_fn(base_fn, idx: Expr, size: int):
        ifn = idx.fn
        sz = np.int64(size)
        if idx.const is not None:
            off = np.uint64((int(idx.const) * size) % 2**64)
            return lambda b: base_fn(b) + off
        return lambda b: base_fn(b) + (cast_dtype(ifn(b), np.dtype(np.int64)) * sz).astype(
            np.uint64)

    def x_pointer_expression(self, node):
        op = node.child_by_field_name("operator").type
        arg_node = node.child_by_field_name("argument")
        arg = self.expr(arg_node)
        if op == "*":
            t = decay(arg.type)
            if t.kind != "ptr":
                raise self.unsupported(node, "'*' on a non-pointer")
            if t.base.kind == "array":
                return Expr(arg.fn, t.base, pure=arg.pure)
            lv = MemoryLV(arg.fn, t.base, self.site(node))
            return lv_expr(lv, t.base, False)
        if arg.type.kind == "array":
            return Expr(arg.fn, ct.pointer(arg.type), pure=arg.pure)
        if not isinstance(arg.lv, MemoryLV):
            raise self.unsupported(node, "taking the address of a local variable "
                                         f"('{arg_node.text.decode()}')")
        return Expr(arg.lv.addr_fn, ct.pointer(arg.type), pure=arg.pure)

    def x_unary_expression(self, node):
        op = node.child_by_field_name("operator").type
        a = self.expr(node.child_by_field_name("argument"))
        t = a.type
        fn = a.fn
        if op == "!":
            r = Expr(lambda b: np.logical_not(truth(fn(b))), BOOL, pure=a.pure)
        elif t.kind not in ("int", "bool", "float"):
            raise self.unsupported(node, f"unary '{op}' on '{t}'")
        else:
            rt = ct.promote(t)
            c = caster(t, rt) or (lambda x: x)
            f = {"-": np.negative, "+": lambda x: x, "~": np.invert}[op]
            if op == "~" and rt.kind == "float":
                raise self.unsupported(node, "'~' on a floating-point value")
            r = Expr(lambda b: f(c(fn(b))), rt, pure=a.pure)
        return self.fold(r, a)

    @staticmethod
    def fold(r: Expr, *parts: Expr) -> Expr:
        if all(p.const is not None for p in parts):
            with np.errstate(all="ignore"):
                v = r.fn(None)
            return Expr(lambda b: v, r.type, const=v)
        return r

    def arith(self, op: str, ta: CType, tb: CType, node):
        """``(fn(x, y), result_type)`` for arithmetic/comparison operator ``op``."""
        ta, tb = decay(ta), decay(tb)
        if op in ("+", "-") and (ta.kind == "ptr" or tb.kind == "ptr"):
            return self.pointer_arith(op, ta, tb, node)
        if op in COMPARE and (ta.kind == "ptr" or tb.kind == "ptr"):
            f = COMPARE[op]
            return (lambda x, y: f(cast_dtype(x, np.dtype(np.uint64)),
                                   cast_dtype(y, np.dtype(np.uint64)))), BOOL
        if not (ta.is_arith and tb.is_arith):
            raise self.unsupported(node, f"the operator '{op}' on '{ta}' and '{tb}'")
        if op in SHIFT:
            rt = ct.promote(ta)
            ca, cb = caster(ta, rt), caster(tb, rt)
            f = SHIFT[op]
        else:
            rt = ct.usual_arithmetic(ta, tb)
            ca, cb = caster(ta, rt), caster(tb, rt)
            if op in COMPARE:
                f = COMPARE[op]
            else:
                f = ARITH[op]
                if rt.kind == "float" and op in "%&|^":
                    raise self.unsupported(node, f"'{op}' on floating-point values")
        res = BOOL if op in COMPARE else rt
        if ca and cb:
            return (lambda x, y: f(ca(x), cb(y))), res
        if ca:
            return (lambda x, y: f(ca(x), y)), res
        if cb:
            return (lambda x, y: f(x, cb(y))), res
        return f, res

    def pointer_arith(self, op, ta, tb, node):
        if ta.kind == "ptr" and tb.kind == "ptr":
            if op != "-":
                raise self.unsupported(node, "adding two pointers")
            size = np.int64(ta.base.size)
            return (lambda x, y: c_div(cast_dtype(x - y, np.dtype(np.int64)), size)), LONG
        if tb.kind == "ptr":
            f, t = self.pointer_arith(op, tb, ta, node)
            return (lambda x, y: f(y, x)), t
        size = np.int64(ta.base.size if ta.base.kind != "void" else 1)
        sign = 1 if op == "+" else -1

        def f(x, y):
            off = cast_dtype(y, np.dtype(np.int64)) * np.int64(sign) * size
            return x + cast_dtype(off, np.dtype(np.uint64))
        return f, ta

    def x_binary_expression(self, node):
        op = node.child_by_field_name("operator").type
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-"):
            fused = self.contract(left, op, right)
            if fused is not None:
                return fused
        a = self.expr(left)
        b_ = self.expr(right)
        if op in ("&&", "||"):
            return self.logical(op, a, b_)
        f, rt = self.arith(op, a.type, b_.type, node)
        fa, fb = a.fn, b_.fn
        return self.fold(Expr(lambda b: f(fa(b), fb(b)), rt, pure=a.pure and b_.pure), a, b_)

    def product(self, node):
        """The float operands of ``node`` if it is a float (not double) multiplication."""
        while node.type == "parenthesized_expression":
            node = node.named_children[-1]
        if node.type != "binary_expression" or node.child_by_field_name("operator").type != "*":
            return None
        x = self.expr(node.child_by_field_name("left"))
        y = self.expr(node.child_by_field_name("right"))
        if not (x.type.is_arith and y.type.is_arith) or \
                ct.usual_arithmetic(x.type, y.type) != FLOAT:
            return None
        return x, y

    def contract(self, left, op: str, right):
        """``a*b + c`` in float as one fused multiply-add, as nvcc compiles it (-fmad=true).

        The product of two floats is exact in double, so one rounding of the double sum
        to float gives the FMA's result (except for rare double-rounding ties).
        """
        mul_left = self.product(left)
        mul = mul_left or self.product(right)
        if mul is None:
            return None
        other = self.expr(right if mul_left else left)
        if not other.type.is_arith or ct.usual_arithmetic(FLOAT, other.type) != FLOAT:
            return None
        return Expr(fused(mul[0], mul[1], other, op, mul_left is not None), FLOAT,
                    pure=mul[0].pure and mul[1].pure and other.pure)

    def logical(self, op, a: Expr, b_: Expr) -> Expr:
        fa, fb = a.fn, b_.fn
        is_and = op == "&&"
        if b_.pure:
            g = np.logical_and if is_and else np.logical_or
            return self.fold(Expr(lambda b: g(truth(fa(b)), truth(fb(b))), BOOL,
                                  pure=a.pure), a, b_)

        def fn(b):
            left = truth(fa(b))
            if not isinstance(left, np.ndarray):
                if bool(left) != is_and:
                    return left
                return truth(fb(b))
            sub = b.mask & (left if is_and else ~left)
            if not sub.any():
                return left
            right = b.under(sub, lambda: truth(fb(b)))
            return (left & right) if is_and else (left | right)
        return Expr(fn, BOOL, pure=False)

    def x_conditional_expression(self, node):
        c = self.expr(node.child_by_field_name("condition"))
        x = self.expr(node.child_by_field_name("consequence"))
        y = self.expr(node.child_by_field_name("alternative"))
        tx, ty = decay(x.type), decay(y.type)
        if tx == ty:
            rt = tx
        elif tx.is_arith and ty.is_arith:
            rt = ct.usual_arithmetic(tx, ty)
        elif tx.kind == "ptr" and ty.kind in ("ptr", "int"):
            rt = tx
        elif ty.kind == "ptr" and tx.kind == "int":
            rt = ty
        else:
            raise self.unsupported(node, f"'?:' mixing '{tx}' and '{ty}'")
        cx, cy = caster(tx, rt) or (lambda v: v), caster(ty, rt) or (lambda v: v)
        fc, fx, fy = c.fn, x.fn, y.fn
        if x.pure and y.pure:
            def fn(b):
                cond = truth(fc(b))
                if not isinstance(cond, np.ndarray):
                    return cx(fx(b)) if cond else cy(fy(b))
                return select(cond, cx(fx(b)), cy(fy(b)))
            return self.fold(Expr(fn, rt, pure=c.pure), c, x, y)

        def fn(b):
            cond = truth(fc(b))
            if not isinstance(cond, np.ndarray):
                return cx(fx(b)) if cond else cy(fy(b))
            m = b.mask
            mx, my = m & cond, m & ~cond
            vx = b.under(mx, lambda: cx(fx(b))) if mx.any() else zero(rt)
            vy = b.under(my, lambda: cy(fy(b))) if my.any() else zero(rt)
            return select(cond, vx, vy)
        return Expr(fn, rt, pure=False)

    def x_cast_expression(self, node):
        t = self.type_descriptor(node.child_by_field_name("type"))
        return self.cast(self.expr(node.child_by_field_name("value")), t, node)

    def cast(self, e: Expr, t: CType, node) -> Expr:
        src = decay(e.type)
        if t.kind == "void":
            return Expr(e.fn, t, pure=e.pure)
        if src.kind == "vec" or t.kind == "vec":
            if src != t:
                raise self.unsupported(node, f"a cast from '{src}' to '{t}'")
            return e
        if t.kind == "ptr" and src.kind == "ptr":
            return Expr(e.fn, t, pure=e.pure, const=e.const)
        c = caster(src, t)
        if c is None:
            return Expr(e.fn, t, pure=e.pure, const=e.const)
        fn = e.fn
        return self.fold(Expr(lambda b: c(fn(b)), t, pure=e.pure), e)

    def x_sizeof_expression(self, node):
        tn = node.child_by_field_name("type")
        if tn is not None:
            return constant(self.type_descriptor(tn).size, ULONG)
        value = node.child_by_field_name("value")
        inner = value
        while inner.type == "parenthesized_expression":
            inner = inner.named_children[-1]
        if inner.type == "identifier":  # sizeof(Name) that the grammar read as a value
            b = self.scope.find(inner.text.decode())
            if b is not None and b.kind == "type":
                return constant(b.type.size, ULONG)
        return constant(self.expr(value).type.size, ULONG)

    def x_comma_expression(self, node):
        a = self.expr(node.child_by_field_name("left"))
        c = self.expr(node.child_by_field_name("right"))
        fa, fc = a.fn, c.fn
        return Expr(lambda b: (fa(b), fc(b))[1], c.type, pure=a.pure and c.pure)

    def x_assignment_expression(self, node):
        op = node.child_by_field_name("operator").type
        left = self.expr(node.child_by_field_name("left"))
        right = self.expr(node.child_by_field_name("right"))
        lv = left.lv
        if lv is None:
            raise self.unsupported(node, "assigning to something that is not a variable "
                                         "or memory location")
        lt = left.type
        if op == "=":
            conv = self.converter(right.type, lt, node)
            rf = right.fn

            def assign(b):
                v = conv(rf(b))
                lv.store_at(b, lv.addr(b), v)
                return v
            return Expr(assign, lt, pure=False)
        if op in ("+=", "-=") and lt == FLOAT:
            mul = self.product(node.child_by_field_name("right"))
            if mul is not None:
                targets: list = []  # the target's address per active call (calls may nest)
                current = Expr(lambda b: lv.load_at(b, targets[-1]), FLOAT)
                fma = fused(mul[0], mul[1], current, op[0], False)

                def fused_compound(b):
                    a = lv.addr(b)
                    targets.append(a)
                    try:
                        v = fma(b)
                    finally:
                        targets.pop()
                    lv.store_at(b, a, v)
                    return v
                return Expr(fused_compound, lt, pure=False)
        f, rt = self.arith(op[:-1], lt, right.type, node)
        back = self.converter(rt, lt, node)
        rf = right.fn

        def compound(b):
            a = lv.addr(b)
            v = back(f(lv.load_at(b, a), rf(b)))
            lv.store_at(b, a, v)
            return v
        return Expr(compound, lt, pure=False)

    def converter(self, src: CType, dst: CType, node):
        src = decay(src)
        if src.kind in ("vec", "struct") or dst.kind in ("vec", "struct"):
            if src != dst:
                raise self.unsupported(node, f"converting '{src}' to '{dst}'")
            return lambda v: v
        if dst.kind == "ptr" and src.kind not in ("ptr", "int"):
            raise self.unsupported(node, f"converting '{src}' to '{dst}'")
        c = caster(src, dst)
        return c or (lambda v: v)

    def x_update_expression(self, node):
        op = node.child_by_field_name("operator").type
        arg = self.expr(node.child_by_field_name("argument"))
        lv = arg.lv
        if lv is None:
            raise self.unsupported(node, f"'{op}' on a non-variable")
        prefix = node.children[0].type in ("++", "--")
        t = arg.type
        if t.kind == "ptr":
            step = np.uint64(t.base.size) if op == "++" else np.uint64(2**64 - t.base.size)
            f = np.add
        else:
            f, _ = self.arith("+" if op == "++" else "-", t, INT, node)
            back = caster(ct.usual_arithmetic(t, INT), t) or (lambda v: v)
            step = np.int32(1)
            f0 = f
            f = (lambda x, y: back(f0(x, y)))

        def upd(b):
            a = lv.addr(b)
            old = lv.load_at(b, a)
            new = f(old, step)
            lv.store_at(b, a, new)
            return new if prefix else old
        return Expr(upd, t, pure=False)

    def x_call_expression(self, node):
        from .builtins import call_builtin

        fnode = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments").named_children
        targs = None
        if fnode.type == "template_function":
            targs = fnode.child_by_field_name("arguments").named_children
            fnode = fnode.child_by_field_name("name")
        if fnode.type == "qualified_identifier":
            fnode = fnode.child_by_field_name("name")
        if fnode.type in ("primitive_type", "type_identifier") and targs is None:
            t = ct.lookup(fnode.text.decode())
            if t is not None and len(args) == 1:
                return self.cast(self.expr(args[0]), t, node)
        if fnode.type != "identifier" and fnode.type not in ("primitive_type",):
            raise self.unsupported(node, f"calling '{fnode.text.decode()}'")
        name = fnode.text.decode()
        if name in ("static_cast", "reinterpret_cast", "const_cast") and targs:
            return self.cast(self.expr(args[0]), self.type_descriptor(targs[0]), node)
        if name in self.m.functions:
            return self.call_user(name, targs, args, node)
        return call_builtin(self, name, args, node)

    def template_bindings(self, params, targs, node) -> dict:
        out = {}
        for (kind, pname, ptype), a in zip(params, targs, strict=False):
            if kind == "type":
                out[pname] = Binding("type", type=self.type_descriptor(a)
                                     if a.type == "type_descriptor" else self.base_type(a))
            else:
                if a.type == "type_descriptor":  # a name the grammar took for a type
                    a = a.child_by_field_name("type")
                    b = self.scope.find(a.text.decode())
                    if b is None or b.kind != "const":
                        raise self.unsupported(a, f"the template argument '{a.text.decode()}'")
                    out[pname] = Binding("const", type=ptype, value=b.value)
                    continue
                out[pname] = Binding("const", type=ptype, value=self.const_int(a))
        if len(targs) < len(params):
            raise self.unsupported(node, "a template call without all template arguments")
        return out

    def call_user(self, name, targs, arg_nodes, node):
        args = [self.expr(a) for a in arg_nodes]
        fdef = self.m.overload(name, args, self)
        tb = self.template_bindings(fdef.tparams, targs, node) if fdef.tparams else {}
        if fdef.tparams and not targs:
            tb = self.m.deduce(fdef, [a.type for a in args], node, self)
        fn = self.m.device_function(fdef, tb, self.k, node, self)
        if len(args) < len(fn.params) and all(d is not None for d in fn.defaults[len(args):]):
            args += [self.expr(d) for d in fn.defaults[len(args):]]  # default arguments
            arg_nodes = list(arg_nodes) + fn.defaults[len(arg_nodes):]
        if len(fn.params) != len(args):
            raise CompileError(f"line {self.line(node)}: '{name}' takes {len(fn.params)} "
                               f"arguments, not {len(args)}")
        convs, afns = [], []
        for i, (a, (pname, pt)) in enumerate(zip(args, fn.params, strict=True)):
            if i in fn.refs:  # pass the object's address
                if not isinstance(a.lv, MemoryLV) or decay(a.type) != pt.base:
                    raise self.unsupported(arg_nodes[i], f"binding the reference parameter "
                                                         f"'{pname}' of '{name}' to this "
                                                         f"argument")
                convs.append(lambda v: v)
                afns.append(a.lv.addr_fn)
            else:
                convs.append(self.converter(a.type, pt, node))
                afns.append(a.fn)
        site = self.site(node)
        ret_t = fn.ret

        def call(b):
            vals = [c(f(b)) for c, f in zip(convs, afns, strict=False)]
            return b.call(fn, vals, site)
        return Expr(call, ret_t, pure=False)

    def x_initializer_list(self, node):
        raise self.unsupported(node, "a brace initializer outside an array declaration")

    def x_string_literal(self, node):
        raise self.unsupported(node, "a string outside printf")

    def x_concatenated_string(self, node):
        raise self.unsupported(node, "a string outside printf")

    is_kernel = False
