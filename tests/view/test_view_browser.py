"""`evalrun view` in a real browser (headless Chromium over the DevTools protocol, tests/helpers/browser.py), served by a real
`evalrun view` process and as its `--export`, at 1280 px and 400 px: the runs list, a run, a case, a comparison with
its regressed cases and their first divergence, the matrix grid, a case across runs. Agent text that is HTML or
closes a script stays text. Nothing is cut without a scroll cue: the page never grows wider than the window, and
a table wider than its box scrolls in it and says so."""
from __future__ import annotations

import os
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.helpers.browser import Browser
from tests.helpers.cli_helpers import run_cli
from tests.helpers.view_runs import (
    BROKEN,
    GOING,
    HOSTILE_ID,
    HOSTILE_RUN,
    MATRIX,
    NEW,
    OLD,
    PWN,
    ViewServer,
    hold_lock,
    make_project,
)

WIDTHS = (1280, 400)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("view-browser"))


@pytest.fixture(scope="module")
def served(project):
    lock = hold_lock(project / ".evalrun" / "reports" / GOING)
    server = ViewServer(project)
    try:
        yield server.url
    finally:
        server.stop()
        os.close(lock)


@pytest.fixture(scope="module")
def exported(project, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "site"
    lock = hold_lock(project / ".evalrun" / "reports" / GOING)  # the run still writing while the export is made
    try:
        done = run_cli("view", str(project), "--export", str(out), cwd=project)
    finally:
        if lock is not None:  # else `served` holds it already
            os.close(lock)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote the app over 5 run(s) to {out}: open {out / 'index.html'}\n"
    return (out / "index.html").as_uri()


def shots(tmp_path: Path) -> Path:
    """Where screenshots go: $EVALRUN_TEST_ARTIFACTS keeps them after the run."""
    folder = Path(os.environ.get("EVALRUN_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def q(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def go(b: Browser, base: str, route: str, page: str) -> None:
    b.evaluate(f"document.body && (document.body.dataset.ready = '0'); location.href = {base + route!r};")
    drawn(b, route, page)


def drawn(b: Browser, route: str, page: str) -> None:
    """Wait until the app has drawn `page` (the route is for the message)."""
    deadline = time.monotonic() + 60
    ready = f"document.body && document.body.dataset.ready === '1' && document.body.dataset.page === {page!r}"
    while b.evaluate(ready) is not True:
        assert time.monotonic() < deadline, f"{route} did not draw: {b.evaluate('document.body.innerText')[:500]}"
        time.sleep(0.05)
    problem = b.evaluate("(document.querySelector('main > .problem') || {}).textContent || ''")
    assert not problem or route.startswith("#/compare/") or "unreadable" in problem, f"{route}: {problem}"


def layout_problems(b: Browser) -> list:
    """What is cut without a cue: the page wider than the window, or a box wider than it shows with no cue."""
    return b.evaluate("""(() => {
      const out = [];
      const page = document.documentElement;
      if (page.scrollWidth > page.clientWidth + 1)
        out.push('page is ' + page.scrollWidth + 'px wide in a ' + page.clientWidth + 'px window');
      document.querySelectorAll('main *, header *').forEach(node => {  // nothing reaches past the window's edge
        const r = node.getBoundingClientRect();
        if (r.width && r.right > page.clientWidth + 1 && !node.closest('.scroll-x'))
          out.push('past the edge: ' + node.tagName + '.' + node.className + ' ' +
                   (node.textContent || '').slice(0, 40));
      });
      document.querySelectorAll('.scroll-x').forEach((box, n) => {
        if (box.scrollWidth > box.clientWidth + 1) {
          const cue = box.nextElementSibling;
          if (!box.classList.contains('overflowing') || !cue || getComputedStyle(cue).display === 'none')
            out.push('box ' + n + ' overflows with no cue');
        }
      });
      document.querySelectorAll('main *').forEach(node => {
        const s = getComputedStyle(node);
        if ((s.overflowX === 'hidden' || s.textOverflow === 'ellipsis') && node.scrollWidth > node.clientWidth + 1)
          out.push('cut: ' + node.tagName + '.' + node.className);
      });
      return out; })()""")


def row_text(b: Browser, run_id: str) -> str:
    return b.evaluate(f"document.querySelector('tr[data-run=\"{run_id}\"]').innerText")


def text(b: Browser, selector: str = "main") -> str:
    return b.evaluate(f"document.querySelector({selector!r}).innerText")


def at_width(b: Browser, width: int) -> None:
    """The viewport exactly `width` CSS px wide (a headless window has a minimum width of its own)."""
    b.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1,
                                                  "mobile": False})


def walk(b: Browser, base: str, shots: Path, label: str) -> None:
    # the runs list
    go(b, base, "#/", "runs")
    assert b.evaluate("window.innerWidth") == int(label.rsplit("-", 1)[1])
    rows = b.evaluate("Array.from(document.querySelectorAll('tr.run-row')).map(r => r.dataset.run)")
    assert rows == [MATRIX, GOING, HOSTILE_RUN, NEW, OLD, BROKEN]
    assert "cannot be read: " in row_text(b, BROKEN)
    assert "running: 2 case(s) done so far" in row_text(b, GOING)
    assert "33.3%" in row_text(b, NEW)
    b.evaluate("const s = document.getElementById('run-search'); s.value = 'r2-n'; s.dispatchEvent(new Event('input'))")
    assert b.evaluate("Array.from(document.querySelectorAll('tr.run-row')).map(r => r.dataset.run)") == [NEW]
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-runs.png")

    # a run, then a failing case from its list
    go(b, base, f"#/run/{q(NEW)}", "run")
    assert b.evaluate("Array.from(document.querySelectorAll('tr.case')).map(r => r.dataset.status)") == \
        ["failed", "failed", "passed"]
    assert b.evaluate("document.getElementById('case-count').textContent") == "3 of 3 cases shown"
    b.evaluate("document.querySelector('input.status-filter[value=passed]').click()")
    assert b.evaluate("document.getElementById('case-count').textContent") == "2 of 3 cases shown"
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-run.png")
    b.evaluate("document.body.dataset.ready = '0'; document.querySelector('tr.case').click()")
    drawn(b, "a click on the first case", "case")
    assert b.evaluate("location.hash") == f"#/run/{q(NEW)}/case/{q('bank-one-transfer')}"
    shown = text(b)
    assert "Checks (every one, passing too)" in shown and "final_state" in shown
    verdicts = b.evaluate("Array.from(document.querySelectorAll('.arg-verdicts tbody tr')).map(r => "
                          "[r.cells[1].innerText, r.cells[5].innerText, r.cells[6].innerText])")
    assert ["amount", "mismatch", "number"] in verdicts and ["from_account", "match", "exact"] in verdicts
    assert "Sent 51 from A-100 to B-200 (transfer 1)." in text(b, ".chat")
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-case.png", full_page=True)

    # a passing case's checks are shown too
    go(b, base, f"#/run/{q(OLD)}/case/{q('bank-one-transfer')}", "case")
    assert b.evaluate("document.querySelector('.checks tbody tr').innerText").split("\t")[:3] == \
        ["final_state", "final_state", "passed"]

    # two runs side by side: the regressed cases and where their conversations part
    go(b, base, f"#/compare/{q(OLD)}/{q(NEW)}", "compare")
    failing = b.evaluate("Array.from(document.querySelectorAll('.newly-failing .flip h3 a')).map(a => a.textContent)")
    assert failing == ["bank-one-transfer", "bank-two-turns"]
    assert text(b, ".gate").startswith("Baseline gate: the new run falls behind the old one: "
                                       "--baseline OLD would exit 1")
    first = b.evaluate("document.querySelector('.newly-failing .divergence .what').textContent")
    assert first == "First divergence, step 2: transfer_funds called with different arguments: amount"
    sides = b.evaluate("Array.from(document.querySelectorAll('.newly-failing .flip')[0].querySelectorAll('.side pre'))"
                       ".map(p => JSON.parse(p.textContent).amount)")
    assert sides == [50, 51]
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-compare.png", full_page=True)

    # the matrix grid: a column per variant, the cases where they disagree first
    go(b, base, f"#/run/{q(MATRIX)}", "run")
    grid = b.evaluate("Array.from(document.querySelectorAll('table.grid tbody tr')).map(r => "
                      "Array.from(r.cells).map(c => c.innerText.trim()))")
    assert grid[0][0] == "pass rate · cost" and grid[0][1].startswith("33.3%") and "$0.0123" in grid[0][1]
    assert grid[1:] == [["bank-one-transferVARIANTS DISAGREE".replace("VARIANTS DISAGREE", "variants disagree"),
                         "failed", "passed"],
                        ["bank-two-turnsvariants disagree", "failed", "passed"],
                        ["bank-insufficient-funds", "passed", "passed"]]
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-matrix.png", full_page=True)

    # a case across runs, flaky standing out
    go(b, base, f"#/case/{q('bank-one-transfer')}", "history")
    assert b.evaluate("document.querySelector('.badge.flaky').textContent") == "flaky"
    assert b.evaluate("Array.from(document.querySelectorAll('tr.history-row')).map(r => r.cells[1].innerText)") == \
        [MATRIX, MATRIX, GOING, NEW, OLD]
    assert layout_problems(b) == []

    # hostile agent text: shown as text, never markup
    go(b, base, f"#/run/{q(HOSTILE_RUN)}/case/{q(HOSTILE_ID)}", "case")
    assert b.evaluate("document.querySelector('h1').textContent") == HOSTILE_ID
    assert PWN in text(b, ".chat") and PWN in text(b)
    assert b.evaluate("document.title") == "evalrun view"
    assert b.evaluate("document.querySelectorAll('img, main script, [onerror]').length") == 0
    assert layout_problems(b) == []
    b.screenshot(shots / f"{label}-hostile.png", full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_served(served, width, tmp_path, chromium):
    b = Browser(chromium, width=width, height=900)
    try:
        at_width(b, width)
        b.call("Page.navigate", {"url": served})
        walk(b, served, shots(tmp_path), f"served-{width}")
    finally:
        b.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_exported(exported, width, tmp_path, chromium):
    b = Browser(chromium, width=width, height=900)
    try:
        at_width(b, width)
        b.call("Page.navigate", {"url": exported})
        walk(b, exported, shots(tmp_path), f"export-{width}")
        # the export holds each run's comparison with the run before it; any other pair needs the server
        go(b, exported, f"#/compare/{q(OLD)}/{q(MATRIX)}", "compare")
        assert text(b, ".problem").startswith("this export compares each run with the run just before it only")
    finally:
        b.close()
