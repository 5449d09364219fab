"""The HTML report in a real browser (headless Chromium over the DevTools protocol): the status filter
hides passing cases, a failing case opens on its tool-call diff, hostile agent text stays text, and a
5,000-case report opens quickly. Screenshots are written as test artifacts (their paths are printed;
$EVALRUN_TEST_ARTIFACTS keeps them after the run)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from runner.report.render import render
from tests.browser import Browser, chromium_or_skip
from tests.test_report_formats import HOSTILE, make_run


@pytest.fixture
def browser():
    b = Browser(chromium_or_skip())
    try:
        yield b
    finally:
        b.close()


def artifact(tmp_path: Path, name: str) -> Path:
    folder = Path(os.environ.get("EVALRUN_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def wait_for(b: Browser, expression: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while b.evaluate(expression) is not True:
        assert time.monotonic() < deadline, f"not true within {timeout}s: {expression}"
        time.sleep(0.05)


def visible_rows(b: Browser) -> list[list[str]]:
    return b.evaluate("""Array.from(document.querySelectorAll('tr.case'))
        .filter(r => r.getBoundingClientRect().height > 0)
        .map(r => [r.dataset.status, r.querySelector('td.id').textContent])""")


def test_status_filter_and_failing_case_diff(tmp_path, browser):
    done = make_run(tmp_path, "--format", "html")
    assert done.returncode == 3, done.stderr
    page = tmp_path / "out" / "report.html"
    browser.open(page.as_uri())
    assert visible_rows(browser) == [["passed", "lookup"], ["failed", "wrong-user"], ["error", "broken"]]

    browser.evaluate("document.querySelector('input.status-filter[value=passed]').click()")
    assert visible_rows(browser) == [["failed", "wrong-user"], ["error", "broken"]]
    assert browser.evaluate("document.getElementById('case-count').textContent") == "2 of 3 cases shown"

    browser.evaluate("document.querySelector('tr.case.failed').click()")
    diff = browser.evaluate("""(() => { const d = document.querySelector('tr.detail .calls-diff');
        const r = d.getBoundingClientRect();
        return {height: r.height, width: r.width,
                expected: d.querySelector('.expected').innerText, actual: d.querySelector('.actual').innerText}; })()""")
    assert diff["height"] > 100 and diff["width"] > 600
    assert "get_id" in diff["expected"] and '"username": "nwaters"' in diff["expected"]
    assert "get_assignment_id" in diff["actual"] and "wrong arguments" in diff["actual"]
    # The agent's hostile argument is shown as text: no element was made from it.
    assert json.dumps(HOSTILE)[1:40] in diff["actual"]
    assert browser.evaluate("document.querySelectorAll('script').length") == 2
    assert browser.evaluate("document.querySelectorAll('img, failure').length") == 0
    why = browser.evaluate("Array.from(document.querySelectorAll('tr.detail ul.why-failed li')).map(li => li.textContent)")
    assert why == json.loads((tmp_path / "out" / "report.json").read_text())["cases"][1]["failures"]
    verdict = browser.evaluate("document.querySelector('tr.detail .arg-verdicts tr.mismatch').innerText")
    assert verdict.split("\t")[:3] == ["get_id (call #1)", "username", "strict"]
    assert "exact" in verdict.split("\t")
    keywords = browser.evaluate("document.querySelector('tr.detail .missing-keywords').textContent")
    assert keywords == "Missing keywords: 15009911"
    chat = browser.evaluate("Array.from(document.querySelectorAll('tr.detail .msg')).map(m => m.className)")
    assert chat == ["msg user", "msg assistant", "msg tool", "msg assistant"]
    said = browser.evaluate("document.querySelectorAll('tr.detail .msg')[3].querySelector('.text').textContent")
    assert said == HOSTILE.replace("\x1b", "\\u001b").replace("\x07", "\\u0007").replace("\u2028", "\\u2028")

    shot = browser.screenshot(artifact(tmp_path, "report-failing-case.png"), full_page=True)
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def test_five_thousand_cases_open_quickly_and_search_finds_one(tmp_path, browser):
    done = make_run(tmp_path)
    assert done.returncode == 3, done.stderr
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    originals = data["cases"]
    data["cases"] = []
    for n in range(5000):
        case = dict(originals[n % len(originals)])
        case["id"] = f"{case['id']}-{n:04d}"
        data["cases"].append(case)
    counts = {s: sum(c["status"] == s for c in data["cases"]) for s in ("passed", "failed", "error")}
    data["summary"].update(total=5000, **counts)
    big = tmp_path / "big"
    big.mkdir()
    (big / "report.json").write_text(json.dumps(data), encoding="utf-8")
    page = render("html", big)

    seconds = browser.open(page.as_uri())
    print(f"5,000 cases ({page.stat().st_size / 1e6:.1f} MB): ready in {seconds:.2f}s")
    assert seconds < 10  # generous for a shared CI machine; it takes well under a second here
    assert browser.evaluate("document.querySelectorAll('tr.case').length") == 200  # drawn in batches
    assert browser.evaluate("document.getElementById('case-count').textContent") == \
        "5000 of 5000 cases shown (200 listed)"
    browser.evaluate("document.getElementById('only-problems').click()")
    assert browser.evaluate("document.getElementById('case-count').textContent") == \
        f"{counts['failed'] + counts['error']} of 5000 cases shown (200 listed)"
    browser.evaluate("""(() => { const s = document.getElementById('search'); s.value = 'wrong-user-4000';
        s.dispatchEvent(new Event('input')); })()""")
    wait_for(browser, "document.getElementById('case-count').textContent === '1 of 5000 cases shown'")  # debounced
    assert visible_rows(browser) == [["failed", "wrong-user-4000"]]
    browser.evaluate("document.querySelector('tr.case').click()")
    shot = browser.screenshot(artifact(tmp_path, "report-5000-cases.png"))
    print(f"screenshot: {shot}")


def test_a_missing_browser_skips_locally_but_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no chromium on it
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI the browser test must run"):
        chromium_or_skip()
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="headless Chromium is not installed"):
        chromium_or_skip()
