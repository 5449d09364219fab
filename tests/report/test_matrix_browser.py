"""The HTML report of a --matrix run in a real headless Chromium: the grid renders, the disagreement first, at a
desktop width and at a phone's (the grid scrolls sideways inside its box instead of being cut)."""
from __future__ import annotations

import pytest

from tests.helpers.browser import Browser, chromium_or_skip
from tests.helpers.matrix_project import project


@pytest.mark.parametrize("width", [1280, 400])
def test_the_matrix_grid_renders_in_the_html_report(tmp_path, evalrun, width):
    root = project(tmp_path)
    code, _, err = evalrun(root, "run", "suite.yaml", "--matrix", "agent=polite,terse", "--output-dir", "run",
                           "--format", "html")
    assert code == 1, err
    browser = Browser(chromium_or_skip(), width=width, height=900)
    try:
        browser.open((root / "run" / "report.html").as_uri())
        grid = browser.evaluate("""Array.from(document.querySelectorAll('#matrix-grid tr'))
            .map(r => Array.from(r.children).map(c => c.textContent))""")
        assert grid == [["case", "agent=polite", "agent=terse"],
                        ["pass rate", "100.0% (3/3)", "66.7% (2/3)"],
                        ["cost", "n/a", "n/a"],
                        ["balance ≠", "PASS", "FAIL"],
                        ["greets", "PASS", "PASS"],
                        ["amount", "PASS", "PASS"]]
        box = browser.evaluate("""(() => { const b = document.querySelector('#matrix .grid-scroll').getBoundingClientRect();
            const t = document.getElementById('matrix-grid').getBoundingClientRect();
            return {left: b.left, right: b.right, view: document.documentElement.clientWidth, height: t.height,
                    scrolls: getComputedStyle(document.querySelector('.grid-scroll')).overflowX}; })()""")
        assert box["height"] > 0 and box["scrolls"] == "auto"
        assert box["left"] >= 0 and box["right"] <= box["view"]  # the box fits the page; a wide grid scrolls inside
        shown = browser.evaluate("document.querySelector('#matrix-grid tr.differs td.s-failed').offsetWidth")
        assert shown > 0
        # the case list names each case with its variant
        ids = browser.evaluate("Array.from(document.querySelectorAll('tr.case td.id')).map(td => td.textContent)")
        assert "balance [agent=terse]" in ids and "balance [agent=polite]" in ids
        assert browser.console_errors() == []
    finally:
        browser.close()
