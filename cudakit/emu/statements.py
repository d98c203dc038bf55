"""Statements: each compiles to a closure that runs under the batch's active mask
(``if``/``else`` narrow it, loops keep per-lane break and continue masks, ``return``
retires lanes), plus declarations of registers, local, shared and addressable variables.
"""

from __future__ import annotations

import numpy as np

from ..errors import CompileError
from .c_types import CType
from .memory import LOCAL_BASE, SHARED_BASE
from .names import Binding, MemoryLV, Scope
from .operators import truth
from .runtime import LoopCtx, SharedSymbol
from .values import convert, full, select, zero


class Statements:
    """Mixin of :class:`~cudakit.emu.compiler.Compiler`: the statement compilers."""

    def stmt(self, node):
        method = getattr(self, "s_" + node.type, None)
        if method is None:
            if node.type == "comment":
                return None
            raise self.unsupported(node)
        f = method(node)
        if f is None or node.type == "compound_statement":
            return f
        ops, line = static_ops(node), self.line(node)

        def step(b):
            if b.counter is not None:
                b.counter.add(ops, b.mask)
            b.line = line
            f(b)
        return step

    def block(self, nodes):
        steps = [f for n in nodes if (f := self.stmt(n)) is not None]

        def run(b):
            for f in steps:
                if not b.any:
                    return
                f(b)
        return run

    def s_compound_statement(self, node):
        self.scope = Scope(self.scope)
        try:
            return self.block([c for c in node.named_children])
        finally:
            self.scope = self.scope.parent

    def s_expression_statement(self, node):
        if not node.named_children:
            return None
        return self.s_expression_statement_of(node.named_children[0])

    def s_declaration(self, node):
        quals = self.qualifiers(node)
        base = self.base_type(node.child_by_field_name("type"))
        runs = []
        for d in node.children_by_field_name("declarator"):
            name, t, init, unsized = self.declarator(d, base)
            f = self.declare(name, t, init, unsized, quals, d)
            if f is not None:
                runs.append(f)
        if not runs:
            return None
        if len(runs) == 1:
            return runs[0]

        def run(b):
            for f in runs:
                f(b)
        return run

    def declare(self, name, t: CType, init, unsized, quals, node):
        if "__shared__" in quals:
            return self.declare_shared(name, t, init, unsized, quals, node)
        if "__constant__" in quals or "extern" in quals:
            raise self.unsupported(node, f"the declaration of '{name}' inside a function")
        if t.kind == "array":
            off = self.frame_bytes
            self.frame_bytes += -(-t.size // 16) * 16
            addr = (lambda b: np.uint64(LOCAL_BASE + b.frame_base + off))
            self.scope.names[name] = Binding("mem", type=t, addr=addr, value="local")
            if init is None:
                return None
            return self.array_init(name, t, addr, init, node)
        if name in self.addressed:
            return self.declare_addressable(name, t, init, node)
        if quals & {"const", "constexpr"} and init is not None and t.is_arith:
            e = self.expr(init)
            if e.const is not None:
                self.scope.names[name] = Binding("const", type=t, value=convert(e.const, e.type, t))
                return None
        slot = self.nslots
        self.nslots += 1
        if init is None:
            z = zero(t)
            self.scope.names[name] = Binding("reg", type=t, slot=slot)

            def run(b):
                b.frame[slot] = z
            return run
        if init.type == "initializer_list":
            if t.kind == "vec":
                parts = [t.base] * t.dims[0]
            elif t.kind == "struct" and all(ft.kind != "array" for _, ft, _ in t.fields):
                parts = [ft for _, ft, _ in t.fields]
            else:
                raise self.unsupported(init, f"a brace initializer for '{t}'")
            exprs = [self.expr(c) for c in init.named_children]
            if len(exprs) > len(parts):
                raise CompileError(f"line {self.line(init)}: too many initializers for '{t}'")
            comps = [self.converter(e.type, pt, init)
                     for e, pt in zip(exprs, parts[:len(exprs)], strict=True)]
            rest = tuple(zero(pt) for pt in parts[len(exprs):])
            self.scope.names[name] = Binding("reg", type=t, slot=slot)

            def run(b):
                b.frame[slot] = tuple(c(e.fn(b)) for c, e in zip(comps, exprs,
                                                                  strict=True)) + rest
            return run
        e = self.expr(init)
        conv = self.converter(e.type, t, init)
        fn = e.fn
        self.scope.names[name] = Binding("reg", type=t, slot=slot)

        def run(b):
            b.frame[slot] = conv(fn(b))
        return run

    def declare_addressable(self, name, t, init, node):
        """A local variable whose address is taken (``&x``) lives in local memory."""
        off = self.frame_bytes
        self.frame_bytes += -(-t.size // 16) * 16
        addr = (lambda b: np.uint64(LOCAL_BASE + b.frame_base + off))
        self.scope.names[name] = Binding("mem", type=t, addr=addr, value="local")
        lv = MemoryLV(addr, t, self.site(node))
        if init is None:
            return None
        if init.type == "initializer_list":
            raise self.unsupported(init, f"a brace initializer for '{name}', whose address "
                                         f"is taken")
        e = self.expr(init)
        conv, fn = self.converter(e.type, t, init), e.fn

        def run(b):
            lv.store_at(b, lv.addr(b), conv(fn(b)))
        return run

    def declare_shared(self, name, t, init, unsized, quals, node):
        if init is not None:
            raise self.unsupported(node, f"an initializer on __shared__ '{name}'")
        k = self.k
        if "extern" in quals:
            if t.kind != "array":
                raise self.unsupported(node, "an extern __shared__ that is not an array")

            def addr(b):
                return np.uint64(SHARED_BASE + b.dyn_offset)
            self.scope.names[name] = Binding("mem", type=t, addr=addr, value="shared")
            k.shared_symbols.append(SharedSymbol(name + " (dynamic)", -1, 0))
            return None
        # compiled once per kernel (device functions too), so each declaration gets one slot
        off = -(-k.shared_static // 16) * 16
        k.shared_static = off + t.size
        sym = SharedSymbol(name, off, t.size)
        k.shared_symbols.append(sym)
        a = np.uint64(SHARED_BASE + sym.offset)
        self.scope.names[name] = Binding("mem", type=t, addr=lambda b: a, value="shared")
        return None

    def array_init(self, name, t, addr, init, node):
        if init.type != "initializer_list":
            raise self.unsupported(init, f"this initializer for the array '{name}'")
        et = t.base
        leaves = []

        def walk(n):
            for k in n.named_children:
                if k.type == "initializer_list":
                    walk(k)
                else:
                    leaves.append(k)
        walk(init)
        vals = [self.expr(c) for c in leaves]
        convs = [self.converter(v.type, et, init) for v in vals]
        n = int(np.prod(t.dims))
        lv = MemoryLV(None, et, self.site(node))
        step = np.uint64(et.size)

        def run(b):
            base = addr(b)
            for i in range(n):
                v = convs[i](vals[i].fn(b)) if i < len(vals) else zero(et)
                lv.store_at(b, base + np.uint64(i) * step, v)
        return run

    def s_if_statement(self, node):
        cond = self.expr(node.child_by_field_name("condition").child_by_field_name("value"))
        then = self.stmt(node.child_by_field_name("consequence")) or (lambda b: None)
        alt_node = node.child_by_field_name("alternative")
        alt = None
        if alt_node is not None:
            alt = self.stmt(alt_node.named_children[-1] if alt_node.type == "else_clause"
                            else alt_node)
        fc = cond.fn

        def run(b):
            c = truth(fc(b))
            if not isinstance(c, np.ndarray):
                if c:
                    then(b)
                elif alt is not None:
                    alt(b)
                return
            m = b.mask
            mt = m & c
            if not mt.any():
                if alt is not None:
                    alt(b)
                return
            me = m & ~c
            if not me.any():
                then(b)
                return
            b.set_mask(mt)
            then(b)
            end = b.mask
            if alt is not None:
                b.set_mask(me)
                alt(b)
                end = end | b.mask
            else:
                end = end | me
            b.set_mask(end)
        return run

    def s_else_clause(self, node):
        return self.stmt(node.named_children[-1])

    def loop(self, node, cond, body, update, check_first: bool):
        site = self.site(node)
        fc = cond.fn if cond is not None else None
        per_iteration = 1 + sum(static_ops(node.child_by_field_name(f))
                                for f in ("condition", "update")
                                if node.child_by_field_name(f) is not None)

        def run(b):
            ctx = LoopCtx("loop")
            b.loops.append(ctx)
            active = b.mask
            done = None
            first = True
            while True:
                if fc is not None and (check_first or not first):
                    if active is not b.mask:
                        b.set_mask(active)
                    c = truth(fc(b))
                    if isinstance(c, np.ndarray):
                        leaving = active & ~c
                        done = leaving if done is None else done | leaving
                        active = active & c
                    elif not c:
                        done = active if done is None else done | active
                        active = None
                    if active is None or not active.any():
                        break
                first = False
                if active is not b.mask:
                    b.set_mask(active)
                if b.counter is not None:
                    b.counter.add(per_iteration, active)
                ctx.brk = ctx.cont = None
                body(b)
                active = b.mask if ctx.cont is None else b.mask | ctx.cont
                if ctx.brk is not None:
                    done = ctx.brk if done is None else done | ctx.brk
                if update is not None:
                    if not active.any():
                        break
                    if active is not b.mask:
                        b.set_mask(active)
                    update(b)
                    active = b.mask
                elif not active.any():
                    break
                b.check_time(site)
            b.loops.pop()
            b.set_mask(done if done is not None else np.zeros(b.size, bool))
        return run

    def s_for_statement(self, node):
        self.scope = Scope(self.scope)
        try:
            init_n = node.child_by_field_name("initializer")
            init = None
            if init_n is not None:
                init = (self.stmt(init_n) if init_n.type == "declaration"
                        else self.s_expression_statement_of(init_n))
            cn = node.child_by_field_name("condition")
            cond = self.expr(cn) if cn is not None else None
            un = node.child_by_field_name("update")
            update = self.s_expression_statement_of(un) if un is not None else None
            body = self.stmt(node.child_by_field_name("body")) or (lambda b: None)
            loop = self.loop(node, cond, body, update, True)
        finally:
            self.scope = self.scope.parent
        if init is None:
            return loop

        def run(b):
            init(b)
            loop(b)
        return run

    def s_expression_statement_of(self, node):
        fn = self.expr(node).fn

        def run(b):
            fn(b)
        return run

    def s_while_statement(self, node):
        cond = self.expr(node.child_by_field_name("condition").child_by_field_name("value"))
        body = self.stmt(node.child_by_field_name("body")) or (lambda b: None)
        return self.loop(node, cond, body, None, True)

    def s_do_statement(self, node):
        body = self.stmt(node.child_by_field_name("body")) or (lambda b: None)
        cond = self.expr(node.child_by_field_name("condition"))
        return self.loop(node, cond, body, None, False)

    def s_break_statement(self, node):
        def run(b):
            ctx = b.loops[-1]
            ctx.brk = b.mask if ctx.brk is None else ctx.brk | b.mask
            b.set_mask(np.zeros(b.size, bool))
        return run

    def s_continue_statement(self, node):
        def run(b):
            ctx = next(c for c in reversed(b.loops) if c.kind == "loop")
            ctx.cont = b.mask if ctx.cont is None else ctx.cont | b.mask
            b.set_mask(np.zeros(b.size, bool))
        return run

    def s_return_statement(self, node):
        vals = node.named_children
        conv = None
        fn = None
        if vals:
            e = self.expr(vals[0])
            conv = self.converter(e.type, self.ret_type, node)
            fn = e.fn
        top = self.is_kernel

        def run(b):
            if fn is not None:
                v = conv(fn(b))
                cur = b.rets[-1]
                b.rets[-1] = v if b.full or cur is None else select(
                    b.mask, v, full(cur, b.size))
            if top:
                b.exited = b.exited | b.mask
            b.set_mask(np.zeros(b.size, bool))
        return run

    def s_switch_statement(self, node):
        val = self.expr(node.child_by_field_name("condition").child_by_field_name("value"))
        body = node.child_by_field_name("body")
        cases = []  # (labels or None for default, stmt fn)
        self.scope = Scope(self.scope)
        try:
            for c in body.named_children:
                if c.type != "case_statement":
                    raise self.unsupported(c, "a statement before the first case label")
                vnode = c.child_by_field_name("value")
                label = None if vnode is None else self.const_int(vnode)
                stmts = [s for s in c.named_children if s != vnode]
                cases.append((label, self.block(stmts)))
        finally:
            self.scope = self.scope.parent
        labels = [lab for lab, _ in cases if lab is not None]
        fv = val.fn

        def run(b):
            v = full(fv(b), b.size)
            m = b.mask
            ctx = LoopCtx("switch")
            b.loops.append(ctx)
            entered = np.zeros(b.size, bool)
            default = m & ~np.isin(v, labels) if labels else m
            for label, f in cases:
                entered = entered | (default if label is None else m & (v == label))
                if entered.any():
                    b.set_mask(entered)
                    f(b)
                    entered = b.mask
            b.loops.pop()
            out = entered if ctx.brk is None else entered | ctx.brk
            b.set_mask(out)
        return run

    def s_labeled_statement(self, node):
        raise self.unsupported(node, "labels and goto")

    def s_goto_statement(self, node):
        raise self.unsupported(node, "goto")


OPERATIONS = {"binary_expression", "unary_expression", "assignment_expression",
              "update_expression", "call_expression", "subscript_expression", "cast_expression",
              "conditional_expression", "pointer_expression"}
CONTROL = {"if_statement": "condition", "switch_statement": "condition"}
LOOPS = {"for_statement", "while_statement", "do_statement"}


def static_ops(node) -> int:
    """Operations one execution of statement ``node`` performs (loops count per iteration).

    Used for the warp-operation count of benchmarks: each operator, call, load or
    store is one operation; a branch is one more.
    """
    if node is None or node.type in LOOPS or node.type == "compound_statement":
        return 0
    if node.type in CONTROL:
        return 1 + static_ops_expr(node.child_by_field_name(CONTROL[node.type]))
    return static_ops_expr(node)


def static_ops_expr(node) -> int:
    n = int(node.type in OPERATIONS)
    for c in node.named_children:
        if c.type.endswith("_statement") or c.type == "else_clause":
            continue
        n += static_ops_expr(c)
    return n


def addressed_names(node, references: dict[str, set[int]]) -> set[str]:
    """Names ``x`` whose address is taken under ``node``: ``&x``, or ``x`` passed to a
    non-const reference parameter (positions per function in ``references``)."""
    out, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n.type == "pointer_expression" and n.child_by_field_name("operator").type == "&":
            arg = n.child_by_field_name("argument")
            if arg.type == "identifier":
                out.add(arg.text.decode())
        elif n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f.type == "template_function":
                f = f.child_by_field_name("name")
            for i in references.get(f.text.decode(), ()):
                args = n.child_by_field_name("arguments").named_children
                if i < len(args) and args[i].type == "identifier":
                    out.add(args[i].text.decode())
        stack.extend(n.named_children)
    return out
