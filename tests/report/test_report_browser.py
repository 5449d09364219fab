"""The HTML report in a real browser (headless Chromium over the DevTools protocol): the status filter
hides passing cases, a failing case opens on its tool-call diff, hostile agent text stays text, and a
5,000-case report opens quickly. Screenshots are written as test artifacts (their paths are printed;
$EVALRUN_TEST_ARTIFACTS keeps them after the run)."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from runner.report.html_split import SPLIT_FROM_BYTES
from runner.report.render import render
from tests.bench.bench_replay import make_case
from tests.helpers.browser import Browser, chromium_or_skip
from tests.helpers.cli_helpers import run_cli, write
from tests.helpers.html_page import page_data
from tests.helpers.report_formats import HOSTILE, make_run

# Agent text that would run script if it ever became markup: it sets the page's title.
PWN = "</script><img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"


@pytest.fixture
def browser(chromium):
    b = Browser(chromium)
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
    assert visible_rows(browser) == [["failed", "wrong-user"], ["error", "broken"], ["passed", "lookup"]]  # problems first

    browser.evaluate("document.querySelector('input.status-filter[value=passed]').click()")
    assert visible_rows(browser) == [["failed", "wrong-user"], ["error", "broken"]]
    assert browser.evaluate("document.getElementById('case-count').textContent") == "2 of 3 cases shown"

    browser.evaluate("document.querySelector('tr.case.failed').click()")
    wait_for(browser, "document.querySelector('tr.detail .calls-diff') !== null")  # decoded from its chunk
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


def bench_shaped_report(root: Path, total: int) -> Path:
    """A run of bench_replay's cases (10 goals, 40 messages) scored by the real CLI, its cases copied
    under new ids up to `total`, rendered by `evalrun report`. The first case's last answer and one
    tool call's arguments carry PWN."""
    write(root / "evalrun.yaml", "embeddings: {enabled: false}\n")
    (root / "suites" / "t").mkdir(parents=True)
    for n in range(4):
        make_case(root / "suites", n)
    transcript = root / "suites" / "t" / "case-0000.json"
    messages = json.loads(transcript.read_text())
    messages[-1]["content"] = PWN
    messages[2]["tool_calls"][0]["function"]["arguments"] = json.dumps({"account": PWN})
    transcript.write_text(json.dumps(messages))
    done = run_cli("suites", "-q", "--output-dir", "out", cwd=root)
    assert done.returncode == 1, done.stdout + done.stderr  # case-0000's first goal is not achieved
    data = json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))
    originals = data["cases"]
    data["cases"] = [{**originals[n % 4], "id": f"{originals[n % 4]['id']}-{n:04d}"} for n in range(total)]
    data["summary"].update(total=total, passed=total - total // 4, failed=total // 4)
    (root / "big").mkdir()
    (root / "big" / "report.json").write_text(json.dumps(data), encoding="utf-8")
    done = run_cli("report", "big", "--format", "html", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "big" / "report.html"


def test_a_report_of_a_thousand_bench_cases_opens_from_disk_with_details_and_a_deep_link(tmp_path, browser):
    """1,000 cases keep what 5,000 exercised (the 5,000-case size and its timings are tests/bench/bench_html.py's):
    report.json is ~21 MB, over html_split.SPLIT_FROM_BYTES (8 MB), so the page is made by the forking encoder;
    its ~100 gzip chunks (html_data.CHUNK_BYTES) are decoded lazily; the 250 failing cases are more than the 200
    drawn in the first batch, so the deep link opens a row that was not drawn yet."""
    page = bench_shaped_report(tmp_path, 1000)
    assert (tmp_path / "big" / "report.json").stat().st_size > SPLIT_FROM_BYTES
    text = page.read_text(encoding="utf-8")
    assert len(page_data(text)["cases"]) == 1000
    assert len(re.search(r'"chunks":\[([^\]]*)\]', text).group(1).split(",")) > 10
    print(f"1,000 bench cases: report.json {(tmp_path / 'big' / 'report.json').stat().st_size / 1e6:.1f} MB, "
          f"report.html {page.stat().st_size / 1e6:.1f} MB")

    seconds = browser.open(page.as_uri())
    print(f"ready in {seconds:.2f}s")
    assert browser.evaluate("document.getElementById('case-count').textContent") == \
        "1000 of 1000 cases shown (200 listed)"
    assert visible_rows(browser)[:2] == [["failed", "case-0000-0000"], ["failed", "case-0000-0004"]]  # problems first
    browser.evaluate("document.querySelector('tr.case').click()")
    wait_for(browser, "document.querySelector('tr.detail .chat') !== null")
    said = browser.evaluate("Array.from(document.querySelectorAll('tr.detail .msg .text')).map(t => t.textContent)")
    assert len(browser.evaluate("Array.from(document.querySelectorAll('tr.detail .msg'))")) == 41
    assert said[-1] == PWN  # the agent's answer, shown as text
    assert PWN.replace('"', '\\"') in browser.evaluate("document.querySelector('tr.detail .actual').innerText")
    assert browser.evaluate("location.hash") == "#case=case-0000-0000"

    browser.open("about:blank", ready="true")  # a new load, not a hash change of the page that is open
    browser.open(page.as_uri() + "#case=case-0000-0960")  # far down the list: failing row 241
    opened = browser.evaluate("""Array.from(document.querySelectorAll('tr.case.open'))
        .map(r => [r.querySelector('td.id').textContent, r.getBoundingClientRect().top])""")
    assert [row_id for row_id, _ in opened] == ["case-0000-0960"] and abs(opened[0][1]) < 2  # scrolled to it
    assert browser.evaluate("document.querySelector('tr.detail .case-detail code').textContent") == "case-0000-0960"
    assert browser.evaluate("document.querySelectorAll('tr.detail .msg').length") == 41
    browser.open("about:blank", ready="true")
    browser.open(page.as_uri() + "#case=case-0003-0963")  # and one in a passing case, in another chunk
    assert browser.evaluate("document.querySelector('tr.detail .case-detail code').textContent") == "case-0003-0963"
    assert browser.evaluate("document.querySelector('tr.detail ul.why-failed')") is None

    # Agent text never became markup: no image, no third script, the title untouched.
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 2
    assert browser.evaluate("document.title").startswith("evalrun report ")


def test_deep_links_a_narrow_window_problems_first_and_regressions_marked(tmp_path, browser):
    assert make_run(tmp_path).returncode == 3
    baseline = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    for case in baseline["cases"]:
        if case["id"] == "wrong-user":  # it passed in the baseline: now it is a regression
            case.update(status="passed", failures=[])
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "report.json").write_text(json.dumps(baseline), encoding="utf-8")
    done = run_cli("suites", "--output-dir", "now", "--baseline", "base", "--format", "html", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    page = (tmp_path / "now" / "report.html").as_uri()

    browser.call("Emulation.setDeviceMetricsOverride", {"width": 400, "height": 800, "deviceScaleFactor": 1,
                                                        "mobile": False})
    browser.open(page + "#case=broken")
    assert visible_rows(browser) == [["failed", "wrong-user"], ["error", "broken"], ["passed", "lookup"]]
    assert browser.evaluate("""Array.from(document.querySelectorAll('tr.case')).map(r =>
        [r.querySelector('td.id').textContent, r.classList.contains('regressed'),
         Array.from(r.querySelectorAll('.badge')).map(b => b.textContent).join(' ')])""") == [
        ["wrong-user", True, "failed regressed"], ["broken", False, "error"], ["lookup", False, "passed"]]
    opened = "Array.from(document.querySelectorAll('tr.case.open')).map(r => r.querySelector('td.id').textContent)"
    assert browser.evaluate(opened) == ["broken"]  # the link opened its case
    assert browser.evaluate("document.querySelector('tr.detail .case-detail code').textContent") == "broken"

    browser.evaluate("location.hash = '#case=' + encodeURIComponent('wrong-user')")
    wait_for(browser, "document.querySelectorAll('tr.case.open').length === 2")
    assert browser.evaluate("document.querySelector('tr.case.open').getBoundingClientRect().top") == pytest.approx(0, abs=2)
    assert "Regression: this case passed in the baseline" in browser.evaluate(
        "document.querySelector('tr.case.regressed + tr.detail').innerText")
    # 400 px wide: nothing is clipped or pushed out of the window; a wide table scrolls in its own box.
    widths = browser.evaluate("""(() => {
        const vw = document.documentElement.clientWidth;
        const beyond = Array.from(document.body.querySelectorAll('*'))
            .filter(e => !e.closest('.scroll-x') && e.getBoundingClientRect().right > vw + 0.5)
            .map(e => e.tagName + '.' + e.className);
        const details = Array.from(document.querySelectorAll('tr.detail .case-detail'))
            .map(d => [d.getBoundingClientRect().left, d.getBoundingClientRect().right]);
        const args = document.querySelector('tr.detail .arg-verdicts .scroll-x');
        return {vw, page: document.documentElement.scrollWidth, beyond, details,
                args: [args.clientWidth, args.scrollWidth]}; })()""")
    assert widths["page"] == widths["vw"] and widths["beyond"] == [], widths
    assert all(left >= 0 and right <= widths["vw"] and right - left > 0.8 * widths["vw"]
               for left, right in widths["details"]), widths
    assert widths["args"][0] <= widths["vw"] < widths["args"][1]  # the arguments table scrolls inside its box

    browser.evaluate("document.querySelector('input.status-filter[value=passed]').click()")  # lookup hidden
    browser.evaluate("location.hash = '#case=lookup'")
    wait_for(browser, f"JSON.stringify({opened}) === '[\"lookup\"]'")
    assert ["passed", "lookup"] in visible_rows(browser)  # a link to a filtered-out case shows it
    browser.evaluate("document.querySelector('tr.case.error').click()")  # opening a case: the address follows
    wait_for(browser, "location.hash === '#case=broken'")
    shot = browser.screenshot(artifact(tmp_path, "report-400px.png"), full_page=True)
    print(f"screenshot: {shot}")


def test_a_browser_without_decompression_says_so_and_a_damaged_chunk_is_named_on_its_case(tmp_path, browser,
                                                                                          chromium):
    assert make_run(tmp_path, "--format", "html").returncode == 3
    page = tmp_path / "out" / "report.html"
    browser.call("Page.enable")  # needed for the script below to run in the next document
    browser.call("Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.DecompressionStream;"})
    browser.open(page.as_uri(), ready="document.body && document.body.dataset.ready === 'failed'")
    assert browser.evaluate("document.getElementById('data-problem').textContent").startswith(
        "This browser cannot read the cases of this report: it has no DecompressionStream")
    assert browser.evaluate("document.getElementById('pass-rate').textContent").startswith("pass rate")  # the summary
    assert browser.evaluate("document.querySelectorAll('tr.case').length") == 0

    text = page.read_text(encoding="utf-8")
    chunk = re.search(r'"chunks":\["([A-Za-z0-9+/=]+)"', text).group(1)
    damaged = tmp_path / "damaged.html"
    damaged.write_text(text.replace(chunk, "H4sIAAAAAAAAA2thaW5u", 1), encoding="utf-8")  # a cut gzip member
    other = Browser(chromium)  # a page of its own: without the script that took DecompressionStream away
    try:
        other.open(damaged.as_uri())
        assert other.evaluate("document.getElementById('case-count').textContent") == "3 of 3 cases shown"
        other.evaluate("document.querySelector('tr.case').click()")
        wait_for(other, "document.querySelector('tr.detail') !== null")
        assert other.evaluate("document.querySelector('tr.detail .warn').textContent").startswith(
            "The details of this case could not be read from the page: ")
    finally:
        other.close()


def test_a_missing_browser_skips_even_under_ci_but_fails_where_insisted_on(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no chromium on it
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("EVALRUN_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="headless Chromium is not installed"):
        chromium_or_skip()
    monkeypatch.setenv("EVALRUN_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="EVALRUN_REQUIRE_BROWSER is set, so this is a failure"):
        chromium_or_skip()
