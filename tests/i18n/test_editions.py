"""The translated editions: generated from the English notebooks plus translations/, with the
English code cells and outputs; a missing or stale translation is named by notebook and cell."""

from __future__ import annotations

import doctest
import shutil
from pathlib import Path

import nbformat
import pytest

from cudakit.i18n import editions, notebooks
from cudakit.i18n.editions import LANGS, build, main
from cudakit.i18n.notebooks import section

ROOT = Path(__file__).resolve().parents[2]


def test_doctests():
    assert doctest.testmod(notebooks).failed == 0
    assert doctest.testmod(editions).failed == 0


@pytest.mark.parametrize("lang", LANGS)
def test_repository_editions_are_current_and_fully_translated(lang):
    result = build(ROOT, lang, check=True)
    assert not result.changed, ("run tools/translate-notebooks: "
                                + ", ".join(p.as_posix() for p in result.changed))
    assert not result.problems, "\n".join(map(str, result.problems))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("folder", ["labs", "solutions", "exercises"])
def test_editions_keep_every_code_cell_and_output(lang, folder):
    english = sorted((ROOT / folder).glob("*.ipynb"))
    assert len(english) >= 11
    for path in english:
        en = nbformat.read(path, as_version=4)
        tr = nbformat.read(ROOT / folder / lang / path.name, as_version=4)
        assert [c.id for c in tr.cells] == [c.id for c in en.cells], path.name
        for a, b in zip(en.cells, tr.cells, strict=True):
            if a.cell_type == "code":
                assert (b.source, b.get("outputs"), b.metadata) == \
                    (a.source, a.get("outputs"), a.metadata), f"{path.name} cell {a.id}"
            assert b.metadata == a.metadata


def test_translated_text_is_japanese_where_translated():
    pending = editions.untranslated(ROOT, "ja")
    for folder in ("labs", "solutions"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            if f"{folder}/{path.name}" in pending:
                continue
            nb = nbformat.read(ROOT / folder / "ja" / path.name, as_version=4)
            title = nb.cells[0].source
            assert any("\u3040" <= ch <= "\u30ff" for ch in title), (path.name, title[:60])


# -- the generator on a small repository ------------------------------------------------

def _repo(tmp_path: Path) -> Path:
    """labs/x.ipynb (two Markdown cells, one code cell) and solutions/ex.ipynb, translated."""
    from cudakit.grading.exercise import answer_cell, graded_cell, locked_cell

    (tmp_path / "labs").mkdir()
    (tmp_path / "solutions").mkdir()
    lab = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Lab X", id="title"),
        nbformat.v4.new_code_cell("print(1)", id="code"),
        nbformat.v4.new_markdown_cell("A **kernel** runs on the GPU.", id="text")])
    lab.cells[1].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nbformat.write(lab, tmp_path / "labs/x.ipynb")
    ex = nbformat.v4.new_notebook(cells=[
        locked_cell("# Exercise", "intro", markdown=True),
        answer_cell("### BEGIN SOLUTION\nx = 2\n### END SOLUTION", "ans"),
        graded_cell("assert x == 2", "t", points=1)])
    nbformat.write(ex, tmp_path / "solutions/ex.ipynb")
    tr = tmp_path / "translations/ja"
    (tr / "labs").mkdir(parents=True)
    (tr / "solutions").mkdir()
    (tr / "labs/x.md").write_text(section("title", "# Lab X", "# ラボ X") + "\n"
                                  + section("text", "A **kernel** runs on the GPU.",
                                            "**カーネル**は GPU で実行されます。"))
    (tr / "solutions/ex.md").write_text(section(ex.cells[0].id, "# Exercise", "# 演習"))
    assert build(tmp_path, "ja").problems == []
    return tmp_path


def test_generated_notebooks_hold_translations_code_and_student_version(tmp_path):
    root = _repo(tmp_path)
    lab = nbformat.read(root / "labs/ja/x.ipynb", as_version=4)
    assert [c.source for c in lab.cells] == [
        "# ラボ X", "print(1)", "**カーネル**は GPU で実行されます。"]
    assert lab.cells[1].outputs[0].text == "1\n"
    assert lab.metadata.cudakit == {"lang": "ja", "translated_from": "labs/x.ipynb"}
    student = nbformat.read(root / "exercises/ja/ex.ipynb", as_version=4)
    assert student.cells[0].source == "# 演習"
    assert "x = 2" not in student.cells[1].source
    assert "NotImplementedError" in student.cells[1].source
    solution = nbformat.read(root / "solutions/ja/ex.ipynb", as_version=4)
    assert "x = 2" in solution.cells[1].source


def test_a_code_change_reaches_the_edition_without_touching_translations(tmp_path):
    root = _repo(tmp_path)
    lab = nbformat.read(root / "labs/x.ipynb", as_version=4)
    lab.cells[1].source = "print(2)"
    nbformat.write(lab, root / "labs/x.ipynb")
    assert [p.as_posix() for p in build(root, "ja", check=True).changed] == ["labs/ja/x.ipynb"]
    result = build(root, "ja")
    assert result.problems == []
    assert nbformat.read(root / "labs/ja/x.ipynb", as_version=4).cells[1].source == "print(2)"


def test_stale_missing_and_orphan_translations_are_named(tmp_path, capsys):
    root = _repo(tmp_path)
    lab = nbformat.read(root / "labs/x.ipynb", as_version=4)
    lab.cells[2].source = "A **kernel** runs on the GPU, once per thread."
    lab.cells.append(nbformat.v4.new_markdown_cell("## New section", id="added"))
    del lab.cells[0]
    nbformat.write(lab, root / "labs/x.ipynb")
    assert main(["--root", str(root), "--check", "--show"]) == 1
    out = capsys.readouterr().out
    assert "out of date: labs/ja/x.ipynb" in out
    assert "labs/x.ipynb: cell text (#1) 'A **kernel** runs on the GPU, once per thread.': " \
           "translation is stale" in out
    assert "labs/x.ipynb: cell added (#2) '## New section': no translation" in out
    assert "labs/x.ipynb: cell title '# ラボ X': translation of a cell that is no longer" in out
    assert "    ## New section" in out  # --show prints the English to translate
    # The stale translation is kept in the edition until someone updates it.
    build(root, "ja")
    assert nbformat.read(root / "labs/ja/x.ipynb", as_version=4).cells[1].source.startswith(
        "**カーネル**")


def test_untranslated_list_only_shrinks_and_removed_notebooks_go(tmp_path):
    root = _repo(tmp_path)
    (root / "translations/ja/untranslated.txt").write_text("labs/x.ipynb  # later\n")
    problems = build(root, "ja", check=True).problems
    assert [(p.notebook, p.kind) for p in problems] == [("labs/x.ipynb", "listed")]
    (root / "translations/ja/labs/x.md").unlink()
    assert build(root, "ja").problems == []
    (root / "labs/x.ipynb").unlink()
    assert [p.as_posix() for p in build(root, "ja").changed] == ["labs/ja/x.ipynb"]
    assert not (root / "labs/ja/x.ipynb").exists()


def test_data_files_beside_the_notebooks_are_copied_kept_current_and_removed(tmp_path):
    # Lab 07 opens 07_h100.json by a relative path, so labs/ja needs it too.
    root = _repo(tmp_path)
    (root / "labs/x_h100.json").write_text('{"ms": [1.5]}\n')
    assert [p.as_posix() for p in build(root, "ja", check=True).changed] == ["labs/ja/x_h100.json"]
    build(root, "ja")
    assert (root / "labs/ja/x_h100.json").read_text() == '{"ms": [1.5]}\n'
    (root / "labs/x_h100.json").write_text('{"ms": [2.5]}\n')
    assert [p.as_posix() for p in build(root, "ja", check=True).changed] == ["labs/ja/x_h100.json"]
    build(root, "ja")
    assert (root / "labs/ja/x_h100.json").read_text() == '{"ms": [2.5]}\n'
    (root / "labs/x_h100.json").unlink()
    assert [p.as_posix() for p in build(root, "ja").changed] == ["labs/ja/x_h100.json"]
    assert not (root / "labs/ja/x_h100.json").exists()
    assert build(root, "ja", check=True).changed == []


@pytest.mark.parametrize("text, message", [
    ("stray\n<!-- cell a en:0123456789ab -->\nx", "text before the first"),
    ("<!-- cell a en:0123456789ab -->\nx\n<!-- cell a en:0123456789ab -->\ny",
     "cell a is translated twice"),
])
def test_bad_translation_files_are_named(tmp_path, text, message):
    path = tmp_path / "x.md"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as error:
        notebooks.read_entries(path)
    assert str(path) in str(error.value)


def test_tool_runs_from_the_shell(tmp_path):
    import os
    import subprocess
    import sys

    root = _repo(tmp_path)
    shutil.copytree(ROOT / "tools", root / "tools")
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(root / "tools/translate-notebooks"), "--check"], cwd=root,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
