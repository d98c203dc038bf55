"""Write (or check) the translated editions of the labs, solutions and exercises.

``tools/translate-notebooks`` runs ``main``: for every English notebook in
``labs/`` and ``solutions/`` it writes ``labs/<lang>/`` and ``solutions/<lang>/``
from the translation files, and ``exercises/<lang>/`` as the student versions of
the translated solutions (as ``tools/make-exercises`` does for English), and a copy of
every data file (``*.json``) beside the English notebooks, which they open by a
relative path (lab 07 reads ``07_h100.json``), so the edition runs from its folder. With
``--check`` it writes nothing and exits 1 if a generated notebook is out of date
or a Markdown cell's translation is missing or stale, naming notebook and cell.

>>> import tempfile, nbformat
>>> from cudakit.i18n.notebooks import section
>>> with tempfile.TemporaryDirectory() as d:
...     Path(d, "labs").mkdir()
...     nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Hi", id="a")])
...     nbformat.write(nb, Path(d, "labs", "x.ipynb"))
...     Path(d, "translations/ja/labs").mkdir(parents=True)
...     _ = Path(d, "translations/ja/labs/x.md").write_text(section("a", "# Hi", "# やあ"))
...     result = build(Path(d), "ja")
...     again = build(Path(d), "ja", check=True)
>>> [p.as_posix() for p in result.changed], result.problems, again.changed
(['labs/ja/x.ipynb'], [], [])
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..grading.exercise import make_student
from .notebooks import Problem, edition, notebook_text, problems, read_entries, translation_path

LANGS = ("ja",)

#: A language's list of English notebooks not translated yet (one path a line, # comments).
UNTRANSLATED = "untranslated.txt"

#: Files beside the English notebooks that an edition needs a copy of (opened by relative path).
DATA = "*.json"


@dataclass
class Result:
    """What a build changed (or would change), and the cells that need a translator."""

    changed: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _put(root: Path, target: Path, text: str, wanted: set[Path], result: Result,
         check: bool) -> None:
    wanted.add(target)
    path = root / target
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    result.changed.append(target)
    if not check:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def untranslated(root: Path, lang: str) -> set[str]:
    """The notebooks (e.g. ``labs/10_reduction.ipynb``) listed as not translated yet."""
    path = Path(root, "translations", lang, UNTRANSLATED)
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return {line.split("#")[0].strip() for line in lines} - {""}


def build(root: Path, lang: str, check: bool = False) -> Result:
    """Write (or with ``check``, only compare) every translated notebook under ``root``.

    A notebook listed in ``translations/<lang>/untranslated.txt`` may have no translation
    file (its edition keeps the English prose); listing one that has a file is a problem,
    so the list only shrinks.
    """
    root = Path(root)
    result = Result()
    wanted: set[Path] = set()
    pending = untranslated(root, lang)
    for folder in ("labs", "solutions"):
        for english in sorted((root / folder).glob("*.ipynb")):
            name = f"{folder}/{english.name}"
            nb = nbformat.read(english, as_version=4)
            file = translation_path(root, lang, folder, english.name)
            entries = read_entries(file)
            if name not in pending:
                result.problems += problems(nb, entries, name)
            elif file.is_file():
                listed = Problem(name, "-", -1, "listed", str(file.relative_to(root)))
                result.problems.append(listed)
            translated = edition(nb, entries, lang, source=name)
            _put(root, Path(folder, lang, english.name), notebook_text(translated),
                 wanted, result, check)
            if folder == "solutions":
                student = make_student(translated, f"{folder}/{lang}/{english.name}")
                _put(root, Path("exercises", lang, english.name), notebook_text(student),
                     wanted, result, check)
        for data in sorted((root / folder).glob(DATA)):
            _put(root, Path(folder, lang, data.name), data.read_text(encoding="utf-8"),
                 wanted, result, check)
    for folder in ("labs", "solutions", "exercises"):
        for path in sorted([*(root / folder / lang).glob("*.ipynb"),
                            *(root / folder / lang).glob(DATA)]):
            target = path.relative_to(root)
            if target not in wanted:
                result.changed.append(target)
                if not check:
                    path.unlink()
    for folder in ("labs", "solutions"):
        for path in sorted((root / "translations" / lang / folder).glob("*.md")):
            if not (root / folder / path.with_suffix(".ipynb").name).is_file():
                result.problems.append(Problem(
                    str(path.relative_to(root)), "-", -1, "orphan", "(whole file)"))
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line of ``tools/translate-notebooks``."""
    parser = argparse.ArgumentParser(prog="translate-notebooks",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=".", type=Path, help="the repository (default: .)")
    parser.add_argument("--lang", choices=LANGS, action="append",
                        help=f"a language (default: all of {', '.join(LANGS)})")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if an edition is out of date or a "
                             "translation is missing or stale")
    parser.add_argument("--show", action="store_true",
                        help="print the English source of every cell that needs translating")
    args = parser.parse_args(argv)
    failed = False
    for lang in args.lang or LANGS:
        result = build(args.root, lang, check=args.check)
        for path in result.changed:
            print(("out of date: " if args.check else "updated: ") + path.as_posix())
        for problem in result.problems:
            print(f"translation ({lang}): {problem}")
            if args.show and problem.index >= 0:
                nb = nbformat.read(Path(args.root, problem.notebook), as_version=4)
                print("    " + nb.cells[problem.index].source.replace("\n", "\n    "))
        failed |= bool(result.problems) or (args.check and bool(result.changed))
    return 1 if failed else 0
