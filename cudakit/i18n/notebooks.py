"""Translated editions of the course notebooks: English code, translated prose.

The prose of a notebook lives once per language in a translation file,
``translations/<lang>/<folder>/<name>.md``: one section per Markdown cell of the
English notebook, headed by a comment that names the cell id and a hash of the
English source it translates::

    <!-- cell 27903d4a en:0123456789ab -->
    ## 1. C のループからカーネルへ (教科書 1-3)

``edition`` copies the English notebook (code cells, outputs, metadata) and puts
the translation in place of each Markdown cell, so a code change is made once,
in English. ``problems`` names every Markdown cell whose translation is missing
or stale (its English source changed since it was translated), and every section
whose cell is gone. ``tools/translate-notebooks`` writes ``labs/<lang>/``,
``solutions/<lang>/`` and ``exercises/<lang>/`` (the student notebooks made from
the translated solutions), or with ``--check`` only reports.

>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Hello", id="c1"),
...                                      nbformat.v4.new_code_cell("x = 1", id="c2")])
>>> text = section("c1", "# Hello", "# こんにちは")
>>> [c.source for c in edition(nb, parse(text)).cells]
['# こんにちは', 'x = 1']
>>> problems(nb, parse(text), "nb.ipynb"), problems(nb, {}, "nb.ipynb")[0].kind
([], 'missing')
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

HEADER = re.compile(r"^<!-- cell (?P<id>\S+) en:(?P<hash>[0-9a-f]{12}) -->$", re.MULTILINE)

#: English folders with translated editions, and whether they hold exercise solutions.
FOLDERS = {"labs": False, "solutions": True}


@dataclass(frozen=True)
class Entry:
    """One translated Markdown cell: the hash of the English it translates, and the text."""

    source_hash: str
    text: str


@dataclass(frozen=True)
class Problem:
    """A cell that needs a translator: ``kind`` is missing, stale or orphan (or listed:
    a notebook listed as untranslated that has a translation file)."""

    notebook: str
    cell_id: str
    index: int
    kind: str
    first_line: str

    def __str__(self) -> str:
        what = {"missing": "no translation",
                "stale": "translation is stale (the English changed since it was translated)",
                "orphan": "translation of a cell that is no longer in the English notebook",
                "listed": "is translated: remove it from untranslated.txt"}
        where = f"cell {self.cell_id}" + (f" (#{self.index})" if self.index >= 0 else "")
        return f"{self.notebook}: {where} {self.first_line!r}: {what[self.kind]}"


def source_hash(source: str) -> str:
    """The 12-hex-digit hash that a translation records of its English source.

    >>> source_hash("# Hello")
    '01c8de44e04d'
    """
    return hashlib.sha256(source.encode()).hexdigest()[:12]


def section(cell_id: str, english: str, translation: str) -> str:
    """One section of a translation file."""
    return f"<!-- cell {cell_id} en:{source_hash(english)} -->\n{translation.strip()}\n"


def parse(text: str, name: str = "translation") -> dict[str, Entry]:
    """The sections of a translation file by cell id; ValueError names a bad file."""
    heads = list(HEADER.finditer(text))
    if text[: heads[0].start() if heads else len(text)].strip():
        raise ValueError(f"{name}: text before the first '<!-- cell ID en:HASH -->' line")
    entries: dict[str, Entry] = {}
    for head, after in zip(heads, heads[1:] + [None], strict=True):
        body = text[head.end(): after.start() if after else len(text)].strip("\n")
        cell_id = head["id"]
        if cell_id in entries:
            raise ValueError(f"{name}: cell {cell_id} is translated twice")
        entries[cell_id] = Entry(head["hash"], body.rstrip())
    return entries


def _first_line(source: str) -> str:
    line = next((s for s in source.splitlines() if s.strip()), "")
    return line[:60]


def problems(nb, entries: dict[str, Entry], name: str) -> list[Problem]:
    """Every Markdown cell of English ``nb`` without an up-to-date translation, and
    every translation whose cell is gone."""
    found = []
    ids = set()
    for index, cell in enumerate(nb.cells):
        ids.add(cell.id)
        if cell.cell_type != "markdown":
            continue
        entry = entries.get(cell.id)
        if entry is None or entry.source_hash != source_hash(cell.source):
            kind = "missing" if entry is None else "stale"
            found.append(Problem(name, cell.id, index, kind, _first_line(cell.source)))
    for cell_id, entry in entries.items():
        if cell_id not in ids:
            found.append(Problem(name, cell_id, -1, "orphan", _first_line(entry.text)))
    return found


def edition(nb, entries: dict[str, Entry], lang: str = "ja", source: str = ""):
    """The translated edition of English notebook ``nb`` (a new notebook).

    Markdown cells take their translation, stale or not (``problems`` reports those);
    a cell with none keeps its English. Everything else is the English notebook's.
    """
    out = copy.deepcopy(nb)
    for cell in out.cells:
        entry = entries.get(cell.id)
        if cell.cell_type == "markdown" and entry is not None:
            cell.source = entry.text
    out.metadata["cudakit"] = {**out.metadata.get("cudakit", {}), "lang": lang}
    if source:
        out.metadata["cudakit"]["translated_from"] = source
    return out


def translation_path(root: Path, lang: str, folder: str, name: str) -> Path:
    """Where the translation of ``folder/name`` (e.g. labs/00_hello_cuda.ipynb) lives."""
    return Path(root, "translations", lang, folder, Path(name).with_suffix(".md").name)


def read_entries(path: Path) -> dict[str, Entry]:
    """The sections of translation file ``path`` (none if the file does not exist)."""
    return parse(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else {}


def notebook_text(nb) -> str:
    """A notebook as the exact text written to disk (as ``tools/make-exercises`` writes)."""
    return nbformat.writes(nb) + "\n"
