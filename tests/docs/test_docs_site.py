"""The documentation site: `mkdocs build --strict` passes (broken links, bad anchors, a missing page or one
left out of the navigation fail it), every page of docs/ becomes a page of the site; and in headless Chromium,
served over HTTP as a reader gets it, the navigation leads to the tutorial and the search box finds
"arg_matching" and lands on the suite-format reference."""
from __future__ import annotations

import functools
import json
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.browser import Browser, chromium_or_skip
from tests.helpers.docs_pages import pages
from tests.helpers.docs_site import build_site


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site")
    built = build_site(folder)
    assert built.returncode == 0, built.stdout + built.stderr
    return folder, built


def test_the_site_builds_strict_with_every_page(site):
    folder, built = site
    assert "WARNING" not in built.stderr, built.stderr
    for name in pages():
        page = name.removesuffix(".md")
        built_page = folder / ("index.html" if page == "index" else f"{page}/index.html")
        assert built_page.is_file(), name
    index = json.loads((folder / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert any("arg_matching" in doc["text"] and doc["location"].startswith("reference/suite-format/")
               for doc in index["docs"])


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # keep the test's output clean
        pass


@pytest.fixture
def served(site):
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site[0])))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)  # shutdown() waits a poll
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser():
    b = Browser(chromium_or_skip())
    try:
        yield b
    finally:
        b.close()


def wait_for(b: Browser, expression: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        value = b.evaluate(expression)
        if value:
            return value
        assert time.monotonic() < deadline, f"not true within {timeout}s: {expression}"
        time.sleep(0.1)


LOADED = "document.readyState === 'complete' && !!document.querySelector('.md-search__input')"


def test_navigation_and_search_lead_to_the_suite_format(served, browser):
    browser.open(served, ready=LOADED)
    assert browser.evaluate("document.querySelector('h1').textContent").startswith("evalrun")
    # navigation: the tutorial from the sidebar
    href = browser.evaluate("""Array.from(document.querySelectorAll('nav.md-nav a.md-nav__link'))
        .find(a => a.textContent.trim() === 'Test your agent in ten minutes').href""")
    browser.open(href, ready=LOADED)
    assert browser.evaluate("location.pathname") == "/tutorials/first-suite/"
    assert browser.evaluate("document.querySelector('h1').textContent").startswith("Test your agent in ten minutes")
    # search: type into the box as a reader does; the results come from the search worker
    browser.evaluate("""(() => { const box = document.querySelector('.md-search__input');
        box.focus(); box.value = 'arg_matching';
        box.dispatchEvent(new Event('input', {bubbles: true}));
        box.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 'g'})); return true; })()""")
    first = wait_for(browser, """(() => { const a = document.querySelector('.md-search-result__item a');
        return a ? a.href : null; })()""")
    assert "/reference/suite-format/" in first, first
    browser.open(first, ready=LOADED)
    assert browser.evaluate("location.pathname") == "/reference/suite-format/"
    assert browser.evaluate("document.querySelector('h1').textContent").startswith("Suite format")
    assert browser.evaluate("document.querySelector('article').textContent.includes('arg_matching')")


def test_without_mkdocs_the_site_tests_skip_saying_so_and_fail_where_ci_insists(monkeypatch):
    import importlib.util

    from tests.helpers import docs_site

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mkdocs" else real(name, *a))
    monkeypatch.delenv("EVALRUN_REQUIRE_MKDOCS", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.skip.Exception) as skipped:
        docs_site.mkdocs_or_skip()
    assert str(skipped.value) == ("mkdocs and mkdocs-material are not installed (pip install -e '.[dev]') "
                                  "(set EVALRUN_REQUIRE_MKDOCS=1 to make this a failure)")
    monkeypatch.setenv("EVALRUN_REQUIRE_MKDOCS", "1")
    with pytest.raises(pytest.fail.Exception):
        docs_site.mkdocs_or_skip()
