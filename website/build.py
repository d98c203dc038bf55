"""Build the course website (``make site``): every lab and exercise as a page, in English and
Japanese, from the notebooks with their stored H100 outputs.

    python website/build.py [--out build/website] [--lang en --lang ja]

For each language the notebooks are staged in a private temporary folder (two builds at once,
as parallel tests make, do not meet) with a header
cell under the title (the textbook sections the page follows, links to run or download
the notebook), the occupancy calculator's widget replaced by a static picture of it, and
a home page; Sphinx with MyST-NB (the engine of Jupyter Book 1, offline: Jupyter Book 2's
site theme is downloaded at build time from outside the package registries) writes
``<out>/<lang>/``, with its search page. ``<out>/index.html`` lets the reader pick a language.

Staging is written by hand because no tool adds course metadata to notebook pages.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LANGS = ("en", "ja")
#: JupyterLab as ``make lab`` starts it; the header's "run" link opens the lab there.
LAB_URL = os.environ.get("CUDAKIT_SITE_LAB_URL", "http://localhost:8888/lab/tree/")

TEXT = {
    "en": {
        "title": "CUDA programming: the labs",
        "intro": "Hands-on labs and auto-graded exercises for an introductory CUDA course that "
                 "follows RIKEN's textbook 「CUDA プログラミング入門」. Each page shows a "
                 "notebook with the outputs it gave on an NVIDIA H100. To run one yourself, "
                 "clone the course and type `make lab` (no GPU needed: kernels then run on "
                 "cudakit's CPU emulator).",
        "other": "日本語版", "labs": "Labs", "exercises": "Exercises",
        "page": "page", "textbook": "Textbook", "run": "Run this lab in JupyterLab",
        "download": "Download the notebook", "grade": "grade it with `cudakit grade {path}`",
        "static": "A static picture of the interactive occupancy calculator at the settings "
                  "above. Run the lab to move its sliders.",
        "static_kernel": "Here the lab shows the interactive occupancy calculator for this "
                         "kernel. Run the lab to use it.",
        "make_lab": "make lab",
    },
    "ja": {
        "title": "CUDA プログラミング入門 演習",
        "intro": "理化学研究所の教科書「CUDA プログラミング入門」に沿った CUDA 入門コースの、"
                 "ラボ（実習ノートブック）と自動採点つき演習です。各ページには、NVIDIA H100 で"
                 "実行したときの出力つきでノートブックを載せています。自分で実行するには、"
                 "コースを clone して `make lab LANG=ja` と入力してください（GPU がなくても、"
                 "カーネルは cudakit の CPU エミュレータで動きます）。",
        "other": "English", "labs": "ラボ", "exercises": "演習",
        "page": "ページ", "textbook": "教科書", "run": "このラボを JupyterLab で実行",
        "download": "ノートブックをダウンロード", "grade": "採点は `cudakit grade {path}`",
        "static": "上の設定での占有率計算機（インタラクティブなウィジェット）の静止画です。"
                  "スライダーを動かすにはラボを実行してください。",
        "static_kernel": "ラボでは、ここにこのカーネルの占有率計算機（インタラクティブな"
                         "ウィジェット）が表示されます。ラボを実行して使ってください。",
        "make_lab": "make lab LANG=ja",
    },
}

WIDGET = "application/vnd.jupyter.widget-view+json"


def _load(name: str) -> dict:
    return yaml.safe_load((HERE / name).read_text(encoding="utf-8"))


def source_notebook(kind: str, name: str, lang: str) -> Path:
    """The notebook a page shows: ``labs/00_x.ipynb`` or its edition ``labs/ja/00_x.ipynb``."""
    folder = ROOT / kind if lang == "en" else ROOT / kind / lang
    return folder / f"{name}.ipynb"


def sections_line(sections: list[str], lang: str) -> str:
    """The textbook sections with their titles, e.g. ``6-1 Choosing ... (2)``."""
    titles = _load("textbook.yml")
    index = 0 if lang == "ja" else 1
    return " · ".join(f"{s} {titles[s][index]}" for s in sections)


def header_cell(kind: str, name: str, sections: list[str], lang: str):
    """The Markdown cell put under a page's title."""
    text = TEXT[lang]
    path = f"{kind}/{lang}/{name}.ipynb" if lang != "en" else f"{kind}/{name}.ipynb"
    links = [f"{{download}}`{text['download']} <{name}.ipynb>`"]
    if kind == "labs":
        links.insert(0, f"[{text['run']}]({LAB_URL}{name}.ipynb) (`{text['make_lab']}`)")
    else:
        links.append(text["grade"].format(path=path))
    other = "ja" if lang == "en" else "en"
    links.append(f'<a class="course-language" href="../../{other}/{kind}/{name}.html">'
                 f'{text["other"]}</a>')
    body = (f"**{text['textbook']}:** {sections_line(sections, lang)}\n\n"
            + " · ".join(links))
    return nbformat.v4.new_markdown_cell(f":::{{container}} course-header\n{body}\n:::",
                                         id=f"header-{name}"[:64])


def _calculator_kwargs(source: str) -> dict | None:
    """The literal keyword arguments of an ``OccupancyCalculator(...)`` cell without a kernel."""
    lines = [line for line in source.splitlines() if not line.startswith(("#", "%"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    call = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "OccupancyCalculator"
            and not call.args):
        return None
    try:
        return {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        return None


def static_calculator(cell, lang: str) -> tuple[list, str]:
    """Outputs that stand for a calculator widget (its graphs and table, where the cell's
    arguments are literals), and the note under them."""
    from cudakit.widgets.occupancy import OccupancyCalculator

    kwargs = _calculator_kwargs(cell.source)
    if kwargs is None:
        return [], TEXT[lang]["static_kernel"]
    calc = OccupancyCalculator(**kwargs)
    data = {"image/png": base64.b64encode(calc.plot.value).decode(),
            "text/plain": "occupancy calculator"}
    table = nbformat.v4.new_output("display_data", data={"text/html": calc.summary.value})
    return [nbformat.v4.new_output("display_data", data=data), table], TEXT[lang]["static"]


def page(nb, kind: str, name: str, sections: list[str], lang: str):
    """The notebook as its page shows it (a new notebook)."""
    nb = copy.deepcopy(nb)
    cells = []
    for index, cell in enumerate(nb.cells):
        if index == 0:  # the header goes right under the title line
            title, _, rest = cell.source.partition("\n")
            cells += [nbformat.v4.new_markdown_cell(title, id=cell.id),
                      header_cell(kind, name, sections, lang)]
            if rest.strip():
                cells.append(nbformat.v4.new_markdown_cell(rest.strip(), id=f"{cell.id}-intro"))
            continue
        cells.append(cell)
        if cell.cell_type == "code" and any(WIDGET in o.get("data", {}) for o in cell.outputs):
            cell.outputs, note = static_calculator(cell, lang)
            link = f"[{TEXT[lang]['run']}]({LAB_URL}{name}.ipynb)"
            cells.append(nbformat.v4.new_markdown_cell(
                f":::{{container}} course-static-note\n{note} {link}\n:::", id=f"static-{cell.id}"))
    nb.cells = cells
    return nb


def home(lang: str, pages: dict) -> str:
    """The home page (MyST Markdown) of one language."""
    text = TEXT[lang]
    other = "ja" if lang == "en" else "en"
    out = [f"# {text['title']}", "",
           f'<a class="course-language" href="../{other}/index.html">{text["other"]}</a>', "",
           text["intro"], ""]
    for kind in ("labs", "exercises"):
        out += [f"## {text[kind]}", "", f"| {text['page']} | {text['textbook']} |", "|---|---|"]
        out += [f"| {{doc}}`{kind}/{name}` | {', '.join(sections)} |"
                for name, sections in pages[kind].items()]
        out += ["", "```{toctree}", ":hidden:", f":caption: {text[kind]}", ""]
        out += [f"{kind}/{name}" for name in pages[kind]] + ["```", ""]
    return "\n".join(out)


def stage(lang: str, folder: Path) -> None:
    """Write the Sphinx sources of one language into ``folder``."""
    pages = _load("pages.yml")
    if folder.exists():
        shutil.rmtree(folder)
    for kind, names in pages.items():
        (folder / kind).mkdir(parents=True)
        for name, sections in names.items():
            nb = nbformat.read(source_notebook(kind, name, lang), as_version=4)
            nbformat.write(page(nb, kind, name, sections, lang), folder / kind / f"{name}.ipynb")
    (folder / "index.md").write_text(home(lang, pages), encoding="utf-8")


CHOOSER = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>CUDA programming: the labs</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.6">
<h1>CUDA programming: the labs</h1>
<p><a href="en/index.html">English</a> · <a href="ja/index.html" lang="ja">日本語
(CUDA プログラミング入門 演習)</a></p>
</body></html>
"""


def build(out: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Stage and build every language; raise CalledProcessError if Sphinx fails."""
    out.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        with tempfile.TemporaryDirectory(prefix="cudakit-site-") as work:
            source = Path(work) / "src" / lang
            stage(lang, source)
            env = {**os.environ, "CUDAKIT_SITE_LANG": lang}
            subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W",
                            "--keep-going", "-c", str(HERE), "-d", str(Path(work) / "doctrees"),
                            str(source), str(out / lang)], check=True, env=env)
    (out / "index.html").write_text(CHOOSER, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "website")
    parser.add_argument("--lang", choices=LANGS, action="append")
    args = parser.parse_args(argv)
    build(args.out, tuple(args.lang or LANGS))
    print(f"website: {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
