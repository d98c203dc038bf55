"""PTX front end: the text nvcc emits -> functions, instructions and user source locations.

Only what nvcc generates is read (one module, ``.version``/``.target`` header, module
variables, ``.entry``/``.func`` bodies); ``.loc`` directives and their ``inlined_at``
chains are resolved to the line and column of the user's own file, so every
instruction knows the line the participant wrote even when it comes from a header.

>>> m = parse_ptx('''
... .visible .entry k(.param .u64 k_param_0)
... {
... .reg .b32 %r<3>;
... .loc 1 2 5
... mov.u32 %r1, %tid.x;
... ret;
... }
... .file 1 "/tmp/k.cu"''', "k.cu")
>>> f = m.functions["k"]
>>> [i.opcode for i in f.body], f.body[0].operands, f.body[0].line
(['mov.u32', 'ret'], ['%r1', '%tid.x'], 2)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import UnsupportedError


@dataclass
class Var:
    """A declared variable: register set, ``.param``, ``.shared``, ``.local``, ``.global``..."""

    name: str
    space: str  # reg, param, shared, local, global, const
    type: str  # b32, u64, f32, pred, b8 ...
    count: int = 1  # array elements (0: extern, unsized)
    align: int = 0
    init: list[int] | None = None
    extern: bool = False

    @property
    def elem_size(self) -> int:
        return type_size(self.type)

    @property
    def size(self) -> int:
        return self.elem_size * self.count


@dataclass
class Instr:
    """One PTX instruction: ``@guard opcode operands`` at the user's ``line``/``column``."""

    opcode: str
    operands: list
    guard: str | None = None  # "%p1" or "!%p1"
    line: int = 0
    column: int = 0
    label_targets: list[str] | None = None  # brx.idx tables
    base: str | None = None  # memory instructions: the C name the address derives from
    file: str | None = None  # a header's path when ``line`` is a line of it (a kernel a
    # header defines), None for the user's file


@dataclass
class Function:
    name: str
    entry: bool
    params: list[Var] = field(default_factory=list)
    returns: list[Var] = field(default_factory=list)
    regs: dict[str, Var] = field(default_factory=dict)
    vars: dict[str, Var] = field(default_factory=dict)  # .local/.shared/.param inside the body
    body: list[Instr] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index in body
    extern: bool = False
    # body indices that a `.pragma "nounroll"` precedes (loops ptxas must keep rolled)
    nounroll: set[int] = field(default_factory=set)


@dataclass
class PtxModule:
    functions: dict[str, Function]
    variables: dict[str, Var]
    user_file: str


_SIZES = {"8": 1, "16": 2, "32": 4, "64": 8, "128": 16}


def type_size(t: str) -> int:
    """Bytes of a PTX scalar type (``pred`` counts as 1).

    >>> type_size("f32"), type_size("b8"), type_size("f16x2"), type_size("pred")
    (4, 1, 4, 1)
    """
    if t == "pred":
        return 1
    if t.endswith("x2"):
        return 2 * type_size(t[:-2])
    m = re.search(r"(\d+)$", t)
    return _SIZES[m.group(1)] if m else 4


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:\s*,\s*function_name\s+\S+\s*,\s*inlined_at\s+"
                  r"(\d+)\s+(\d+)\s+(\d+))?")
_DECL = re.compile(
    r"^(?P<pre>(?:\.(?:visible|extern|weak|common)\s+)*)\.(?P<space>reg|param|shared|local|global|"
    r"const)\s+(?P<attrs>(?:\.(?:align\s+\d+|v[248]|ptr|global|shared|const|local)\s+)*)"
    r"\.(?P<type>\w+)\s+(?P<name>[%$\w.]+)(?:<(?P<range>\d+)>)?(?:\[(?P<count>\d*)\])*"
    r"(?:\s*,\s*[%$\w.]+)*"
    r"(?:\s*=\s*(?P<init>.*))?$", re.S)


def _split_top(text: str) -> list[str]:
    """Split at commas that are not inside braces or brackets."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    return out


def _operand(text: str):
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        return [t.strip() for t in text[1:-1].split(",")]
    return text


def _decl(stmt: str) -> Var | None:
    m = _DECL.match(stmt.strip())
    if not m:
        return None
    attrs = m.group("attrs")
    align = re.search(r"\.align\s+(\d+)", attrs)
    vec = re.search(r"\.v(\d)", attrs)
    dims = re.findall(r"\[(\d*)\]", stmt.split("=")[0])
    count = 1
    for d in dims:
        count = count * int(d) if d else 0
    if vec:
        count *= int(vec.group(1))
    init = None
    if m.group("init"):
        raw = m.group("init").strip().strip("{}")
        init = [_int_literal(v) for v in raw.replace("{", "").replace("}", "").split(",")
                if v.strip()]  # ints, or names whose address goes there (virtual tables)
    return Var(m.group("name"), m.group("space"), m.group("type"), count,
               int(align.group(1)) if align else 0, init, "extern" in m.group("pre"))


def _int_literal(v: str) -> int | str:
    v = v.strip()
    if not re.fullmatch(r"-?(0[xXfFdD])?[0-9a-fA-F]+", v):
        return re.sub(r"^generic\((.*)\)$", r"\1", v)  # a symbol: its address
    if v.startswith(("0f", "0F")):
        return int(v[2:], 16)
    if v.startswith(("0d", "0D")):
        return int(v[2:], 16)
    return int(v, 0) if not re.fullmatch(r"-?0\d+", v) else int(v, 8)


def parse_ptx(text: str, user_file: str) -> PtxModule:
    """Parse nvcc's PTX; ``user_file`` is the base name of the user's ``.cu`` file."""
    files = {int(n): p for n, p in _FILE.findall(text)}
    # the user's file: by name, or the one cudakit.compile wrote (a cached PTX keeps the
    # name of the cell that compiled it first)
    user = {n for n, p in files.items() if os.path.basename(p) == user_file
            or os.path.basename(os.path.dirname(p)).startswith("cudakit-")}
    text = re.sub(r"\.section\s+\.debug\w*\s*\{.*?\n\s*\}", "", text, flags=re.S)
    text = _FILE.sub("", text)
    text = _COMMENT.sub("", text)
    text = re.sub(r"^\s*\.(?:version|target|address_size)[^\n]*", "", text, flags=re.M)
    functions: dict[str, Function] = {}
    variables: dict[str, Var] = {}
    pos = 0
    header = re.compile(r"(?P<pre>(?:\.(?:visible|extern|weak)\s+)*)\.(?P<kind>entry|func)\s*"
                        r"(?:\((?P<ret>[^)]*)\))?\s*(?P<name>[\w$]+)\s*(?:\((?P<params>[^)]*)\))?",
                        re.S)
    while pos < len(text):
        m = header.search(text, pos)
        chunk = text[pos: m.start() if m else len(text)]
        for stmt in chunk.split(";"):
            stmt = stmt.strip()
            if not stmt or stmt.startswith((".version", ".target", ".address_size")):
                continue
            v = _decl(stmt)
            if v is not None:
                variables[v.name] = v
        if not m:
            break
        fn = Function(m.group("name"), m.group("kind") == "entry")
        fn.params = [_decl(p) for p in _split_top(m.group("params") or "")]
        fn.returns = [_decl(p) for p in _split_top(m.group("ret") or "")]
        rest = text[m.end():].lstrip()
        while rest.startswith("."):  # performance directives (.maxntid 256, 1, 1 ...)
            d = re.match(r"\.\w+(?:\s+[\d,\s]+)?", rest)
            rest = rest[d.end():].lstrip()
        body_start = len(text) - len(rest)
        if rest.startswith(";"):
            fn.extern = True
            functions.setdefault(fn.name, fn)
            pos = body_start + 1
            continue
        end = _matching_brace(text, body_start)
        _body(fn, text[body_start + 1: end], user, files)
        functions[fn.name] = fn
        pos = end + 1
    return PtxModule(functions, variables, user_file)


def _matching_brace(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    raise UnsupportedError("PTX function body without a closing brace")


def _body(fn: Function, body: str, user: set[int], files: dict[int, str]) -> None:
    """Instructions, labels and declarations of a function body. An instruction's place is
    the user's line it comes from (through ``inlined_at`` for code a header inlines into
    the user's); code that no user line leads to (a kernel a header defines, and what it
    inlines from headers) keeps the header's own line and names the header."""
    line, col, file = 0, 0, None
    resolved: dict[tuple, tuple] = {}
    pending_labels: list[str] = []
    for raw in body.split(";"):
        stmt = raw.strip()
        for loc in _LOC.finditer(stmt):  # several .loc may share a chunk
            f, ln, c = int(loc.group(1)), int(loc.group(2)), int(loc.group(3))
            in_user = file is None and line > 0  # the place so far is the user's
            if f in user:
                here = (ln, c, None) if ln else (line, col, file)
            elif loc.group(4):
                parent = (int(loc.group(4)), int(loc.group(5)), int(loc.group(6)))
                outer = (parent[1], parent[2], None) if parent[0] in user else \
                    resolved.get(parent)
                if outer is not None and (outer[2] is None or not ln):
                    here = outer  # inlined into the user's code: their line
                else:  # into a header's kernel: the inlined function's own header line
                    here = (line, col, file) if outer is None and (in_user or not ln) \
                        else (ln, c, files.get(f))
            else:
                here = (line, col, file) if in_user or not ln else (ln, c, files.get(f))
            resolved[(f, ln, c)] = here
            line, col, file = here
        stmt = _LOC.sub("", stmt)
        while True:  # labels and braces precede statements
            stmt = stmt.lstrip("{} \t\n")
            lm = re.match(r"^([$\w]+):", stmt)
            if not lm:
                break
            pending_labels.append(lm.group(1))
            stmt = stmt[lm.end():]
        stmt = stmt.strip()
        while stmt.endswith(("{", "}")) and stmt.count("{") != stmt.count("}"):
            stmt = stmt[:-1].rstrip()
        if not stmt:
            continue
        stmt = _LOC.sub("", stmt).strip()
        if stmt.startswith(".pragma") and '"nounroll"' in stmt:
            fn.nounroll.add(len(fn.body))
        if not stmt or stmt.startswith((".pragma", ".maxnreg", ".maxntid", ".reqntid",
                                        ".minnctapersm", ".noreturn")):
            continue
        if stmt.startswith(".branchtargets") or ".callprototype" in stmt:
            continue  # brx.idx tables (read below), prototypes of indirect calls
        if stmt.startswith("."):
            v = _decl(stmt)
            if v is None:
                raise UnsupportedError(f"the PTX directive '{stmt.split()[0]}'")
            if v.space == "reg":
                m = re.search(r"<(\d+)>", stmt)
                names = [f"{v.name}{i}" for i in range(int(m.group(1)))] if m else \
                    [n.strip() for n in stmt.split(f".{v.type}", 1)[1].split(",")]
                for n in names:
                    fn.regs[n] = Var(n, "reg", v.type)
            else:
                old = fn.vars.get(v.name)
                if old is None or old.size < v.size:
                    fn.vars[v.name] = v
            continue
        for lab in pending_labels:
            fn.labels[lab] = len(fn.body)
        pending_labels = []
        guard = None
        gm = re.match(r"^@(!?[%$\w.]+)\s+", stmt)
        if gm:
            guard = gm.group(1)
            stmt = stmt[gm.end():]
        parts = stmt.split(None, 1)
        opcode = parts[0]
        ops_text = parts[1] if len(parts) > 1 else ""
        if opcode.startswith("call"):
            operands = _call_operands(ops_text)
        else:
            operands = [_operand(o) for o in _split_top(ops_text)]
        fn.body.append(Instr(opcode, operands, guard, line, col, file=file))
    for lab in pending_labels:
        fn.labels[lab] = len(fn.body)
    _branch_tables(fn, body)


def _call_operands(text: str) -> list:
    """``(ret), func, (a, b)`` / ``func, (a)`` / ``func`` -> [rets, name, args]."""
    groups = re.findall(r"\(([^)]*)\)", text)
    names = re.sub(r"\([^)]*\)", "", text).replace(",", " ").split()
    stripped = text.strip()
    rets = [g.strip() for g in groups[0].split(",") if g.strip()] \
        if stripped.startswith("(") else []
    args_text = groups[1] if stripped.startswith("(") and len(groups) > 1 else \
        (groups[0] if not stripped.startswith("(") and groups else "")
    args = [a.strip() for a in args_text.split(",") if a.strip()]
    return [rets, names[0], args]


def _branch_tables(fn: Function, body: str) -> None:
    tables = dict(re.findall(r"([$\w]+):\s*\.branchtargets\s+([^;]+);", body))
    for ins in fn.body:
        if ins.opcode.startswith("brx.idx"):
            ins.label_targets = [t.strip() for t in tables[ins.operands[1]].split(",")]
