"""The occupancy lab in a real browser: JupyterLab + Debian's Chromium via Playwright.

Starts JupyterLab headless on localhost over a copy of labs/01_occupancy.ipynb,
runs every cell, moves the first calculator's block-size slider from 480 to 256
threads, and checks that the shown occupancy (94% -> 100%, textbook 6-1) and
the plot change. A screenshot goes to test-output/ and the test's tmp dir.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "labs" / "01_occupancy.ipynb"
pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


@pytest.fixture
def jupyterlab(lab_server):
    """(url, token) of a JupyterLab serving a copy of the lab; stopped afterwards."""
    return lab_server(LAB)


ALL_CELLS_DONE = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    if (!panel || !panel.content || !panel.sessionContext.session) return false;
    const kernel = panel.sessionContext.session.kernel;
    if (!kernel || kernel.status !== 'idle') return false;
    const cells = panel.content.model.cells;
    for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type === 'code' && c.executionCount === null) return false;
    }
    return true;
}"""

ERRORS = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
    const found = [];
    for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type !== 'code') continue;
        for (let j = 0; j < c.outputs.length; j++) {
            const o = c.outputs.get(j).toJSON();
            if (o.output_type === 'error') found.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
        }
    }
    return found;
}"""


def test_lab_runs_and_the_block_size_slider_updates_occupancy_and_plot(
    jupyterlab, chromium, tmp_path
):
    sync_api = pytest.importorskip("playwright.sync_api")
    url, token = jupyterlab
    shots = [tmp_path / "occupancy.png", ROOT / "test-output" / "browser_occupancy.png"]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(**chromium)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        try:
            page.goto(f"{url}/lab/tree/{LAB.name}?token={token}", timeout=60_000)
            page.wait_for_function(
                "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                timeout=60_000)
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(ALL_CELLS_DONE, timeout=150_000, polling=500)
            assert page.evaluate(ERRORS) == []

            calc = page.locator(".cudakit-occ-summary").first
            calc.scroll_into_view_if_needed()
            value = calc.locator(".cudakit-occupancy")
            assert value.text_content() == "94%"
            plot = page.locator("img.cudakit-occ-plot").first
            before = plot.get_attribute("src")
            assert before

            handle = page.locator(".cudakit-occ-block .noUi-handle").first
            handle.focus()
            for _ in range(7):  # 480 -> 256 threads in steps of 32
                handle.press("ArrowLeft")
            # the summary is re-rendered on each change: query it afresh
            sync_api.expect(value).to_have_text("100%", timeout=20_000)
            sync_api.expect(plot).not_to_have_attribute("src", before, timeout=20_000)
            assert "32 of 32" in calc.text_content()
            news = page.get_by_role("button", name="No")
            if news.count():
                news.first.click()
            plot.scroll_into_view_if_needed()
        finally:
            shots[1].parent.mkdir(exist_ok=True)
            for shot in shots:
                page.screenshot(path=str(shot), full_page=False)
            browser.close()
    assert shots[0].stat().st_size > 10_000
