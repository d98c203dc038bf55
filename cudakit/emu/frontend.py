"""Front end: the C preprocessor (pcpp) and the CUDA C++ grammar (tree-sitter-cuda).

``parse`` returns the syntax tree of the preprocessed text and a map from its
lines back to the user's lines, so every error names the line the user wrote.

>>> unit = parse("#define N 4\\n__global__ void k(int* a) { a[0] = N; }\\n")
>>> unit.root.type, unit.user_line(1)
('translation_unit', 2)
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import pcpp
import tree_sitter_cuda
from tree_sitter import Language, Node, Parser

from ..errors import CompileError

_LANGUAGE = Language(tree_sitter_cuda.language())

# Macros nvcc and the CUDA headers provide that course kernels rely on.
PREDEFINED = {
    "__CUDACC__": "1",
    "__NVCC__": "1",
    "__CUDA_ARCH__": "900",
    "CUDART_VERSION": "13000",
    "INT_MAX": "2147483647",
    "INT_MIN": "(-2147483647 - 1)",
    "UINT_MAX": "4294967295u",
    "LLONG_MAX": "9223372036854775807LL",
    "FLT_MAX": "3.402823466e+38f",
    "FLT_MIN": "1.175494351e-38f",
    "FLT_EPSILON": "1.192092896e-07f",
    "DBL_MAX": "1.7976931348623158e+308",
    "CUDART_INF_F": "__int_as_float(0x7f800000)",
    "INFINITY": "__int_as_float(0x7f800000)",
    "NAN": "__int_as_float(0x7fffffff)",
    "M_PI": "3.14159265358979323846",
    "NULL": "0",
    "__launch_bounds__(...)": "",
    "__align__(n)": "",
}

_LINE = re.compile(r'^\s*#\s*line\s+(\d+)')


class _Preprocessor(pcpp.Preprocessor):
    """pcpp that drops includes it cannot find (CUDA's own headers need no text here)."""

    def __init__(self):
        super().__init__()
        self.line_directive = "#line"
        self.errors: list[str] = []

    def on_include_not_found(self, is_malformed, is_system_include, curdir, includepath):
        raise pcpp.OutputDirective(pcpp.Action.IgnoreAndRemove)

    def on_error(self, file, line, msg):
        self.errors.append(f"line {line}: {msg}")


@dataclass
class Unit:
    """A parsed translation unit: preprocessed ``text``, syntax ``root``, line map."""

    text: str
    root: Node
    lines: list[int]  # preprocessed line index (0-based) -> user's line (1-based)

    def user_line(self, row: int) -> int:
        """User's 1-based line of the 0-based preprocessed row ``row``."""
        if 0 <= row < len(self.lines):
            return self.lines[row]
        return row + 1


def _defines(options) -> dict[str, str]:
    out = {}
    opts = list(options or ())
    for i, opt in enumerate(opts):
        if opt.startswith("-D") or opt.startswith("--define-macro"):
            body = opt[2:] if opt.startswith("-D") else opt.split("=", 1)[-1]
            if not body and i + 1 < len(opts):
                body = opts[i + 1]
            name, _, value = body.partition("=")
            out[name] = value if value else "1"
    return out


def preprocess(source: str, options=()) -> tuple[str, list[int]]:
    """Run the C preprocessor; return the text (directives blanked) and its line map."""
    pp = _Preprocessor()
    for name, value in {**PREDEFINED, **_defines(options)}.items():
        pp.define(f"{name} {value}")
    pp.parse(source, "cell.cu")
    buf = io.StringIO()
    pp.write(buf)
    if pp.errors:
        raise CompileError("preprocessor error: " + "; ".join(pp.errors))
    out_lines, line_map = [], []
    current = 1
    for raw in buf.getvalue().split("\n"):
        m = _LINE.match(raw)
        if m:
            current = int(m.group(1))
            out_lines.append("")
        else:
            out_lines.append("" if raw.lstrip().startswith("#") else raw)
            current += 1
        line_map.append(current - 1 if not m else current)
    return "\n".join(out_lines), line_map


def _first_error(node: Node) -> Node | None:
    if node.type == "ERROR" or node.is_missing:
        return node
    if not node.has_error:
        return None
    for child in node.children:
        found = _first_error(child)
        if found is not None:
            return found
    return node


CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"}


def _template_names(root: Node) -> set[str]:
    names = set(CASTS)
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "template_declaration":
            for d in n.named_children:
                decl = d.child_by_field_name("declarator")
                while decl is not None and decl.type != "identifier":
                    decl = decl.child_by_field_name("declarator")
                if decl is not None:
                    names.add(decl.text.decode())
        stack.extend(n.named_children)
    return names


def _misread_templates(root: Node, templates: set[str]) -> list[Node]:
    """``a < b && c > d`` read as a template call ``a<...>``: the names to parenthesise."""
    out, stack = [], [root]
    while stack:
        n = stack.pop()
        if n.type == "template_function":
            name = n.child_by_field_name("name")
            if name is not None and name.text.decode() not in templates:
                out.append(name)
        stack.extend(n.named_children)
    return out


def _parse_text(text: str) -> Node:
    """Parse, rewriting comparisons the C++ grammar took for template calls as ``(a) < b``."""
    data = text.encode()
    for _ in range(20):
        root = Parser(_LANGUAGE).parse(data).root_node
        bad = _misread_templates(root, _template_names(root))
        if not bad:
            return root
        for name in sorted(bad, key=lambda n: n.start_byte, reverse=True):
            data = (data[:name.start_byte] + b"(" + data[name.start_byte:name.end_byte] + b")"
                    + data[name.end_byte:])
    return root


def parse(source: str, options=()) -> Unit:
    """Preprocess and parse ``source``; syntax errors raise ``CompileError``."""
    text, lines = preprocess(source, options)
    tree = _parse_text(text)
    unit = Unit(text, tree, lines)
    bad = _first_error(tree)
    if bad is not None:
        line = unit.user_line(bad.start_point[0])
        snippet = bad.text.decode(errors="replace").strip().splitlines()
        what = snippet[0][:60] if snippet else "?"
        raise CompileError(f"syntax error at line {line}: cannot parse {what!r}")
    return unit
