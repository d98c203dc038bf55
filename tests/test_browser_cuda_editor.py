"""cudakit's JupyterLab extension in a real browser (JupyterLab + Debian's Chromium).

Over a copy of labs/00_hello_cuda.ipynb on the emulator: a %%cuda cell is highlighted
as CUDA C++ (CodeMirror's syntax classes) while a Python cell is not; the stored compile
error of the "typo" cell is marked at its line on opening; a syntax error typed into a
%%cuda cell is marked at that line with nvcc's message, and the mark goes when the line is
fixed and the cell re-run; an out-of-bounds write caught by memcheck in a launch marks
the kernel's line in its %%cuda cell, and a fixed kernel clears it. The status bar names
the engine (and, with the H100's recorded answer, GPU memory), and JupyterLab logs no
console error from the extension. Screenshots go to
test-output/.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from cudakit import lab

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "labs" / "00_hello_cuda.ipynb"
SHOTS = ROOT / "test-output"
LOAD_EXT, ADD_ONE, RUN_ADD_ONE, TYPO = 1, 5, 7, 36  # cell indices in lab 00

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

KERNEL_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && panel.content.widgets.length > 30;
}"""

RUN_CELL = """async (index) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cell = panel.content.widgets[index];
    panel.content.activeCellIndex = index;
    cell.model.executionCount = null;  // a fresh kernel may count this run as the stored one
    await window.jupyterapp.commands.execute('notebook:run-cell');
}"""

START_CELL = """(index) => {
    const panel = window.jupyterapp.shell.currentWidget;
    panel.content.activeCellIndex = index;
    panel.content.widgets[index].model.executionCount = null;
    void window.jupyterapp.commands.execute('notebook:run-cell');
}"""

CELL_DONE = """(index) => {
    const panel = window.jupyterapp.shell.currentWidget;
    return panel.content.widgets[index].model.executionCount !== null
        && panel.sessionContext.session.kernel.status === 'idle';
}"""

TAG_CELLS = """() => {
    window.jupyterapp.shell.currentWidget.content.widgets.forEach(
        (cell, i) => cell.node.setAttribute('data-test-cell', String(i)));
}"""


def h100_status() -> dict:
    """What /cudakit/engine answers on the H100 holding 4623 MiB (recorded nvidia-smi)."""
    smi = ROOT / "tests" / "fixtures" / "nvidia_smi" / "h100_4gib.csv"
    gpu = lab.parse_smi(smi.read_text())[0]
    return {"engine": "gpu", "label": f"GPU: {gpu['name']}", **gpu}


def cell(page, index: int):
    return page.locator(f'[data-test-cell="{index}"]')


def run(page, index: int) -> None:
    page.evaluate(RUN_CELL, index)
    page.wait_for_function(CELL_DONE, arg=index, timeout=120_000, polling=200)


def line_of(page, index: int, locator) -> int:
    """1-based editor line (counting the %%cuda line) that holds ``locator``'s element."""
    return locator.evaluate(
        """(node, index) => {
            const lines = [...document.querySelectorAll(
                `[data-test-cell="${index}"] .cm-content .cm-line`)];
            return lines.indexOf(node.closest('.cm-line')) + 1;
        }""",
        index,
    )


MARKER_LINE = """(index) => {
    const root = document.querySelector(`[data-test-cell="${index}"]`);
    const marker = root.querySelector('.cm-lint-marker-error');
    if (!marker) return 0;
    const box = marker.closest('.cm-gutterElement').getBoundingClientRect();
    const mid = (box.top + box.bottom) / 2;
    const lines = [...root.querySelectorAll('.cm-content .cm-line')];
    return lines.findIndex(l => {
        const r = l.getBoundingClientRect();
        return r.top <= mid && mid <= r.bottom;
    }) + 1;
}"""


def marker_line(page, index: int, expected: int) -> int:
    """1-based line beside which the gutter's error marker sits (by position), once the
    editor has laid out its gutter (a cell scrolled into view is measured a moment later)."""
    page.evaluate(
        "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node"
        ".scrollIntoView({block: 'center'})",
        index,
    )
    with contextlib.suppress(Exception):  # the caller's assertion reports the line found
        page.wait_for_function(
            f"(i) => ({MARKER_LINE})(i) === {expected}", arg=index, timeout=5_000
        )
    return page.evaluate(MARKER_LINE, index)


def hover_message(page, locator, shot: Path) -> str:
    """The message shown when the mouse rests on ``locator`` (screenshot taken meanwhile)."""
    locator.hover()
    tooltip = page.locator(".cm-tooltip-lint").first
    tooltip.wait_for(timeout=10_000)
    text = tooltip.text_content()
    page.screenshot(path=str(shot))
    page.mouse.move(0, 0)
    return text


def test_cuda_cells_are_highlighted_and_errors_marked_at_their_lines(
    lab_server, chromium, tmp_path
):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    url, token = lab_server(LAB)
    SHOTS.mkdir(exist_ok=True)
    console_errors = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on(
            "console",
            lambda m: m.type == "error" and console_errors.append((m.text, m.location.get("url"))),
        )
        page.on("pageerror", lambda e: console_errors.append((str(e), e.stack or "")))
        shot = "startup"
        try:
            page.goto(f"{url}/lab/tree/{LAB.name}?token={token}", timeout=60_000)
            page.wait_for_function(KERNEL_READY, timeout=90_000, polling=250)
            assert page.evaluate(
                "() => window.jupyterapp.isPluginActivated('cudakit-jupyterlab:plugin')"
            )
            page.evaluate(TAG_CELLS)

            # the engine in the status bar (no GPU here)
            expect(page.locator(".jp-cudakit-engine")).to_have_text("emulator (no GPU)")

            # highlighting: CUDA C++ in a %%cuda cell, Python elsewhere
            shot = "highlighting"
            cuda_cell = cell(page, ADD_ONE)
            cuda_cell.scroll_into_view_if_needed()
            keywords = cuda_cell.locator(".tok-keyword").all_text_contents()
            types = cuda_cell.locator(".tok-typeName").all_text_contents()
            assert "void" in types + keywords and "int" in types + keywords
            assert cuda_cell.locator(".cm-cuda-qualifier").all_text_contents() == ["__global__"]
            assert "threadIdx" in cuda_cell.locator(".cm-cuda-builtin").all_text_contents()
            assert "%%cuda" in cuda_cell.locator(".cm-cuda-magic").first.text_content()
            assert cuda_cell.locator(".tok-comment").count() >= 1  # "// which loop ..."
            python_cell = cell(page, LOAD_EXT)
            assert python_cell.locator(".tok-keyword, .cm-cuda-builtin").count() == 0
            page.screenshot(path=str(SHOTS / "cuda_editor_highlighting.png"))

            # the stored compile error of the "typo" cell is marked on opening
            shot = "stored-error"
            typo = cell(page, TYPO)
            typo.scroll_into_view_if_needed()
            expect(typo.locator(".cm-lint-marker-error")).to_have_count(1, timeout=20_000)
            assert marker_line(page, TYPO, 5) == 5
            assert line_of(page, TYPO, typo.locator(".cm-lintRange-error").first) == 5
            assert typo.locator(".cm-lintRange-error").first.text_content() == "y"

            run(page, LOAD_EXT)

            # a syntax error typed into line 5 of the add_one cell
            shot = "syntax-error"
            cuda_cell.scroll_into_view_if_needed()
            cuda_cell.locator(".cm-content .cm-line").nth(4).click()
            page.keyboard.press("End")
            typed = " a[i] = ;"
            page.keyboard.type(typed)
            run(page, ADD_ONE)
            expect(cuda_cell.locator(".cm-lint-marker-error")).to_have_count(1, timeout=20_000)
            assert marker_line(page, ADD_ONE, 5) == 5
            expect(cuda_cell.locator(".cm-gutter-lint")).to_have_count(1)
            underline = cuda_cell.locator(".cm-lintRange-error").first
            assert line_of(page, ADD_ONE, underline) == 5
            error_text = cuda_cell.locator(".jp-OutputArea-output").last.text_content()
            assert "line 5: error: expected an expression" in error_text
            shown = hover_message(page, underline, SHOTS / "cuda_editor_compile_error.png")
            assert "expected an expression" in shown

            shot = "syntax-fixed"
            cuda_cell.locator(".cm-content .cm-line").nth(4).click()
            page.keyboard.press("End")
            for _ in typed:
                page.keyboard.press("Backspace")
            run(page, ADD_ONE)
            assert "add_one:" in cuda_cell.locator(".jp-OutputArea-output").last.text_content()
            expect(cuda_cell.locator(".cm-lint-marker-error")).to_have_count(0)
            expect(cuda_cell.locator(".cm-lintRange-error")).to_have_count(0)
            expect(cuda_cell.locator(".cm-gutter-lint")).to_have_count(0)  # no empty gutter

            # an out-of-bounds write: a new line 6 writes a[i + 4] of a 4-element array
            shot = "memcheck"
            cuda_cell.locator(".cm-content .cm-line").nth(4).click()
            page.keyboard.press("End")
            page.keyboard.press("Enter")
            page.keyboard.type("a[i + 4] = 0.0f;")
            run(page, ADD_ONE)
            run(page, RUN_ADD_ONE)
            launch_output = cell(page, RUN_ADD_ONE).locator(".jp-OutputArea-output").last
            assert "MemcheckError: memcheck: out of bounds write" in launch_output.text_content()
            assert "at line 6" in launch_output.text_content()
            cuda_cell.scroll_into_view_if_needed()
            expect(cuda_cell.locator(".cm-lint-marker-error")).to_have_count(1, timeout=20_000)
            assert marker_line(page, ADD_ONE, 6) == 6
            underline = cuda_cell.locator(".cm-lintRange-error").first
            assert line_of(page, ADD_ONE, underline) == 6
            shown = hover_message(page, underline, SHOTS / "cuda_editor_memcheck.png")
            assert "out of bounds write" in shown and "line 6" in shown

            shot = "memcheck-fixed"
            page.keyboard.press("Escape")
            cuda_cell.locator(".cm-content .cm-line").nth(5).click()
            page.keyboard.press("End")
            page.keyboard.press("Shift+Home")
            page.keyboard.press("Shift+Home")
            page.keyboard.press("Backspace")
            page.keyboard.press("Backspace")
            # editing the cell dismisses its marks at once; a clean re-run keeps them away
            expect(cuda_cell.locator(".cm-lint-marker-error")).to_have_count(0)
            run(page, ADD_ONE)
            run(page, RUN_ADD_ONE)
            assert "matches the C loop: True" in cell(page, RUN_ADD_ONE).text_content()
            expect(cuda_cell.locator(".cm-lint-marker-error")).to_have_count(0)
            # a sweep through cudakit.progress shows a bar while it runs, nothing afterwards
            shot = "progress"
            last = page.evaluate("""() => {
                const panel = window.jupyterapp.shell.currentWidget;
                const cells = panel.content.model.sharedModel;
                cells.insertCell(cells.cells.length, {cell_type: 'code', source:
                    'import time\\nfor n in cudakit.progress(range(10), "demo sweep"):\\n'
                    + '    time.sleep(0.5)\\nprint("swept", n + 1)'});
                return panel.content.widgets.length - 1;
            }""")
            page.evaluate(  # a cell out of view is not rendered, nor is its widget
                "(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node"
                ".scrollIntoView({block: 'center'})", last)
            page.evaluate(START_CELL, last)  # returns at once: the bar is looked at meanwhile
            bars = """(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node
                .querySelectorAll('.jp-OutputArea .widget-hprogress').length"""
            page.wait_for_function(f"(i) => ({bars})(i) === 1", arg=last, timeout=20_000)
            output = """(i) => window.jupyterapp.shell.currentWidget.content.widgets[i].node
                .querySelector('.jp-OutputArea').textContent"""
            shown = page.evaluate(output, last).replace("\u2007", " ")  # tqdm's figure spaces
            assert "demo sweep:" in shown and "0/10" in shown
            page.screenshot(path=str(SHOTS / "cuda_editor_progress_bar.png"))
            page.wait_for_function(CELL_DONE, arg=last, timeout=60_000, polling=200)
            assert page.evaluate(bars, last) == 0
            assert page.evaluate(output, last).strip() == "swept 10"

            shot = "gpu-status"
            gpu_page = browser.new_page(viewport={"width": 1400, "height": 1000})
            gpu_page.route(re.compile(r".*/cudakit/engine.*"),
                           lambda route: route.fulfill(json=h100_status()))
            gpu_page.goto(f"{url}/lab?token={token}", timeout=60_000)
            expect(gpu_page.locator(".jp-cudakit-engine")).to_have_text(
                "GPU: NVIDIA H100 80GB HBM3 · 4.5 / 79.6 GiB", timeout=30_000)
            gpu_page.screenshot(path=str(SHOTS / "cuda_editor_gpu_status_bar.png"))
            gpu_page.close()
            shot = "done"
        finally:
            page.screenshot(path=str(SHOTS / f"cuda_editor_{shot}.png"))
            browser.close()
    ours = [e for e in console_errors if "cudakit" in " ".join(map(str, e))]
    assert ours == [], ours
