"""The course website (website/build.py, `make site`) in Debian's Chromium via Playwright.

Builds the site into a temporary folder, serves it on 127.0.0.1, follows every internal link
from the language chooser (each page and file must load), checks that every image on every
page loaded, that each lab and exercise page of both languages carries its textbook header,
that lab 01 shows the occupancy calculator as a static figure with a link to run the lab, and
that the search box finds pages. Screenshots of the home page and lab 01 in each language go to
test-output/website/.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGES = yaml.safe_load((ROOT / "website/pages.yml").read_text())
SHOTS = ROOT / "test-output" / "website"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

IMAGES_LOADED = """() => Array.from(document.images)
    .filter(img => !img.complete || img.naturalWidth === 0)
    .map(img => img.getAttribute('src'))"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The URL of the freshly built site, served on 127.0.0.1 until the tests end."""
    out = tmp_path_factory.mktemp("website")
    done = subprocess.run([sys.executable, str(ROOT / "website/build.py"), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(site, chromium):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(**chromium)
        context = chromium.new_context(viewport={"width": 1300, "height": 900})
        outside: list[str] = []

        def only_local(route):
            if urlparse(route.request.url).hostname == "127.0.0.1":
                route.continue_()
            else:  # e.g. MathJax's CDN: the test stays on this machine
                outside.append(route.request.url)
                route.abort()

        context.route("**/*", only_local)
        yield context
        context.close()
        chromium.close()


def _is_page(url: str) -> bool:
    path = urlparse(url).path
    return path.endswith("/") or path.endswith(".html")


def test_every_internal_link_and_image_loads(site, browser):
    page = browser.new_page()
    seen: set[str] = set()
    queue = [f"{site}/index.html", f"{site}/en/index.html", f"{site}/ja/index.html"]
    broken, missing_images, files = [], {}, []
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        if not _is_page(url):
            response = browser.request.get(url)
            files.append(url)
            if not response.ok:
                broken.append(f"{url}: {response.status}")
            continue
        response = page.goto(url, wait_until="load")
        if response is None or not response.ok:
            broken.append(f"{url}: {response.status if response else 'no response'}")
            continue
        bad = page.evaluate(IMAGES_LOADED)
        if bad:
            missing_images[url] = bad
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            target = urldefrag(href).url
            if target.startswith(site) and target not in seen:
                queue.append(target)
    pages = [u for u in seen if _is_page(u)]
    assert not broken, broken
    assert not missing_images, missing_images
    for lang in ("en", "ja"):
        for kind, names in PAGES.items():
            for name in names:
                assert f"{site}/{lang}/{kind}/{name}.html" in seen, (lang, kind, name)
    assert any(u.endswith(".ipynb") for u in files)  # the download links were followed
    assert len(pages) >= 2 * (16 + 11) + 3


@pytest.mark.parametrize("lang, word", [("en", "Textbook"), ("ja", "教科書")])
def test_pages_carry_the_textbook_sections_in_their_header(site, browser, lang, word):
    page = browser.new_page()
    for kind, names in PAGES.items():
        for name, sections in names.items():
            page.goto(f"{site}/{lang}/{kind}/{name}.html")
            header = page.locator(".course-header").first.inner_text()
            assert header.startswith(word), (name, header)
            assert all(s in header for s in sections), (name, sections, header)
            other = page.locator(".course-header a.course-language").get_attribute("href")
            assert other == f"../../{'ja' if lang == 'en' else 'en'}/{kind}/{name}.html"
    page.goto(f"{site}/{lang}/labs/06_speedup.html")
    after_title = page.locator("h1:has(a.headerlink)").first.evaluate(
        "h => [h.nextElementSibling.className, h.nextElementSibling.innerText]")
    assert "course-header" in after_title[0] and "5-1" in after_title[1], after_title


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_occupancy_calculator_is_a_static_figure_with_a_run_link(site, browser, lang):
    page = browser.new_page()
    page.goto(f"{site}/{lang}/labs/01_occupancy.html", wait_until="load")
    note = page.locator(".course-static-note").first
    assert "localhost:8888/lab/tree/01_occupancy.ipynb" in note.locator("a").get_attribute("href")
    figure = note.locator("xpath=preceding::img[1]")
    assert figure.evaluate("img => img.naturalWidth") > 400
    # the calculator's table at the cell's settings (textbook 6-1, CC 1.3: two blocks of 480
    # threads, 30 of 32 warps)
    table = page.locator(".cudakit-occupancy").first
    assert table.inner_text() == "94%"
    assert "30 of 32" in table.locator("xpath=ancestor::div[2]").inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{lang}-lab01.png"), full_page=False)
    page.goto(f"{site}/{lang}/index.html", wait_until="load")
    page.screenshot(path=str(SHOTS / f"{lang}-home.png"), full_page=False)
    assert (SHOTS / f"{lang}-home.png").stat().st_size > 10_000


@pytest.mark.parametrize("lang, query, expected", [
    ("en", "coalescing", "labs/02_memory_access.html"),
    ("ja", "バンクコンフリクト", "exercises/07_transpose_tiles.html"),
])
def test_search_box_finds_pages(site, browser, lang, query, expected):
    page = browser.new_page()
    page.goto(f"{site}/{lang}/index.html", wait_until="load")
    assert page.locator("form[action*='search'] input[name='q']").count() >= 1
    page.goto(f"{site}/{lang}/search.html?q={query}", wait_until="load")
    results = page.locator("#search-results a")
    results.first.wait_for(timeout=20_000)
    hrefs = results.evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert any(expected in h for h in hrefs), hrefs
