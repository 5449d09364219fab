"""Examples of the docs that the older README tests did not cover, run as a reader would run them: the
--save-failures output (tutorials/from-a-chat.md), what `exclude:` is relative to (how-to/run.md), the fake
judge and the model cache (how-to/without-api-key.md); and every link of the README leads to a file."""
from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_helpers import REPO, cli_env, run_cli, write
from tests.helpers.docs_pages import code_blocks, page, pages, section

_TIME = re.compile(r" in \d+\.\d+s$")
_RUN = re.compile(r"reports/\d{8}-\d{6}-[\w-]+/")


def steady(lines: list[str]) -> list[str]:
    return [_RUN.sub("reports/RUN/", _TIME.sub(" in TIME", line)) for line in lines]


def transcript(text: str, first: str) -> list[str]:
    """The lines of the text/console block whose first line is `$ first`, up to its next `$ ` line."""
    for block in code_blocks(text, "(?:text|console)"):
        if block.startswith(f"$ {first}\n") or f"\n$ {first}\n" in block:
            return ("\n" + block).split(f"\n$ {first}\n", 1)[1].split("\n$ ", 1)[0].rstrip("\n").split("\n")
    raise AssertionError(f"no block runs {first}")


def bundled_suites(root: Path) -> None:
    shutil.copytree(REPO / "suites", root / "suites", ignore=shutil.ignore_patterns(".evalrun", "__pycache__"))
    (root / ".git").mkdir()  # a checkout of its own: the config search stops here


def test_save_failures_prints_and_writes_what_the_tutorial_shows(tmp_path):
    text = page("tutorials/from-a-chat.md")
    command = "evalrun run suites/failing --save-failures failures.yaml -q"
    shown = transcript(text, command)
    bundled_suites(tmp_path)
    done = run_cli(*shlex.split(command)[1:], cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    err = done.stderr.splitlines()
    out = done.stdout.splitlines()
    # a terminal shows stderr's lines where they were written: the config first, the saved line after the cases
    blank = out.index("")
    printed = [err[0], *sorted(out[:blank]), err[1], *out[blank:]]
    assert len(err) == 2 and err[1].startswith("saved 7 cases that did not pass to failures.yaml: ")
    blank_shown = shown.index("")
    assert steady(printed) == steady([shown[0], *sorted(shown[1:blank_shown - 1]), *shown[blank_shown - 1:]])
    header = transcript(text, "head -6 failures.yaml")
    written = (tmp_path / "failures.yaml").read_text(encoding="utf-8").splitlines()[:6]
    assert written == [line.replace("/home/me/evalrun/", f"{tmp_path}/") for line in header]
    # "from any folder": the header's command, run elsewhere, reruns the same seven cases
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    rerun = header[1].split("Rerun them alone: ", 1)[1].replace("/home/me/evalrun/", f"{tmp_path}/")
    words = shlex.split(rerun)[1:]
    assert words[:2] == ["run", "failures.yaml"]
    again = run_cli("run", "../failures.yaml", *words[2:], cwd=elsewhere)
    assert (again.returncode, sum(line.startswith("FAIL  ") for line in again.stdout.splitlines())) == (1, 7), \
        again.stdout + again.stderr


def test_exclude_is_relative_to_the_config_folder_as_the_table_says(tmp_path):
    table = section(page("how-to/run.md"), "## `evalrun.yaml`")
    assert "With `exclude: [failing]` in `evals/evalrun.yaml`" in table
    (tmp_path / ".git").mkdir()
    for folder in ("evals/failing", "evals/hr/failing", "evals/hr"):
        write(tmp_path / folder / "c.yaml", f"""
            id: {folder.replace('/', '-')}
            starting_sentence: hi
            forbid_extra_calls: true
            agent: a
            """)

    def listed(*args: str, exclude: str) -> list[str]:
        write(tmp_path / "evals" / "evalrun.yaml", f"exclude: {exclude}\n")
        done = run_cli("list", *args, "--format", "json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return sorted(case["id"] for case in json.loads(done.stdout))

    assert listed("evals/", exclude="[failing]") == ["evals-hr", "evals-hr-failing"]
    assert listed("evals/failing", exclude="[failing]") == ["evals-failing"]  # named: always collected
    assert listed("evals/", exclude="['*/failing']") == ["evals-failing", "evals-hr"]
    assert listed("evals/", exclude="[failing, '*/failing']") == ["evals-hr"]


def test_the_fake_judge_page_runs_as_written(tmp_path):
    text = page("how-to/without-api-key.md")
    server = subprocess.Popen([sys.executable, "-m", "tests.fakes.fake_judge"], cwd=REPO, env=cli_env(),
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", url), url
        shown_url = transcript(text, "python -m tests.fakes.fake_judge")[0]
        bundled_suites(tmp_path)
        [mkdir] = [b.strip() for b in code_blocks(text, "bash") if b.startswith("mkdir judge-demo")]
        assert mkdir == "mkdir judge-demo && cp -r suites/hr judge-demo/hr"
        shutil.copytree(tmp_path / "suites" / "hr", tmp_path / "judge-demo" / "hr")
        [config] = list(code_blocks(text, 'yaml title="judge-demo/evalrun.yaml"'))
        write(tmp_path / "judge-demo" / "evalrun.yaml", config.replace(shown_url, url))
        command = "evalrun judge-demo/hr/timeoff.yaml -v"
        done = run_cli(*shlex.split(command)[1:], cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert steady(done.stderr.splitlines() + done.stdout.splitlines()) == steady(transcript(text, command))
        report = json.loads(next((tmp_path / "judge-demo" / ".evalrun" / "reports").glob("*/report.json")).read_text())
        decision = report["cases"][0]["goals"][2]["text_decision"]
        assert (decision["decided_by"], decision["reason"]) == ("llm", "the same meaning")
    finally:
        server.terminate()
        server.wait(timeout=30)
    for command in ("evalrun cache info judge-demo/", "evalrun cache clear judge-demo/"):
        done = run_cli(*shlex.split(command)[1:], cwd=tmp_path)
        shown = transcript(text, command)
        saved = re.compile(r"saved \d{4}-\d\d-\d\d \d\d:\d\d \.\. \d{4}-\d\d-\d\d \d\d:\d\d")
        assert done.returncode == 0 and [saved.sub("saved T", line) for line in done.stdout.splitlines()] == \
            [saved.sub("saved T", line) for line in shown], (command, done.stdout, done.stderr)


def test_every_link_of_the_readme_leads_to_a_file():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) >= 20
    assert [link for link in local if not (REPO / link).exists()] == []


def test_every_agent_declaration_in_the_docs_is_a_valid_config():
    import yaml

    from runner.config.model import Config
    declared = []
    for name in pages():
        for block in code_blocks(page(name), "yaml"):
            if block.startswith("agents:"):
                config = Config.model_validate(yaml.safe_load(block))
                declared += [(name, agent.type) for agent in config.agents.values()]
    kinds = {kind for _, kind in declared}
    assert {"python", "http", "command", "model", "replay", "adk", "agentflow"} <= kinds, declared
    for kind in ("python", "http", "command", "model", "agentflow"):  # each kind's page declares its kind
        assert (f"how-to/connect-{kind}.md", kind) in declared or (kind == "agentflow" and (
            "how-to/connect-agentflow.md", "10xgraph") in declared), kind


def test_what_the_code_tells_users_to_read_is_in_the_docs(tmp_path):
    """A message or a written file that sends the user to a page names one that exists and holds the section it
    names (the README no longer holds the manual's sections)."""
    from runner.frontends.python import evaluate

    try:
        evaluate(str(tmp_path), agent=42)
    except TypeError as error:
        message = str(error)
    pointed = re.search(r"see (docs/[\w/-]+\.md), '([^']+)'", message)
    assert pointed, message
    assert f"## {pointed.group(2)}" in (REPO / pointed.group(1)).read_text(encoding="utf-8")
    assert run_cli("init", "proj", cwd=tmp_path).returncode == 0
    config = (tmp_path / "proj" / "evalrun.yaml").read_text(encoding="utf-8")
    [named] = re.findall(r"see evalrun's (docs/[\w/.-]+\.md)", config)
    assert (REPO / named).is_file()


def test_every_yaml_example_in_the_docs_is_yaml_and_every_suite_among_them_loads(tmp_path):
    """Each ```yaml block of every page parses; each that is a suite (a case, or cases) loads without an error
    (a warning, such as a recording the example does not ship, is allowed)."""
    import yaml

    from runner.suite.load import load_file

    suites = 0
    for name in pages():
        for number, block in enumerate(code_blocks(page(name), "yaml")):
            data = yaml.safe_load(block)  # raises, naming the block, when an example is not YAML
            if isinstance(data, dict) and {"starting_sentence", "cases", "goal_details"} & set(data):
                path = write(tmp_path / name.replace("/", "-") / f"{number}.yaml", block)
                _, diagnostics, _ = load_file(path)
                assert [str(d) for d in diagnostics if d.severity == "error"] == [], (name, block[:200])
                suites += 1
    assert suites >= 7


def test_a_watsonx_dataset_is_listed_and_valid_as_the_migration_page_shows(tmp_path):
    text = page("how-to/migrate.md")
    bundled_suites(tmp_path)
    for command in ("evalrun list suites/hr/direct_reports.json", "evalrun validate suites/hr/direct_reports.json"):
        done = run_cli(*shlex.split(command)[1:], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        out, err = done.stdout.splitlines(), done.stderr.splitlines()
        printed = out + err if command.startswith("evalrun list") else err + out  # the count last; the config first
        assert printed == transcript(text, command), command


def test_every_judge_setting_of_the_judge_page_is_a_valid_config():
    import yaml

    from runner.config.model import Config
    judges = [b for b in code_blocks(page("how-to/judge-model.md"), "yaml") if b.startswith("judge:")]
    assert len(judges) == 4
    models = [Config.model_validate(yaml.safe_load(block)).judge.model for block in judges]
    assert models == ["openai/gpt-4o-mini", "openai/qwen2.5-7b-instruct", "ollama/llama3.1",
                      "litellm_proxy/gpt-4o-mini"]
