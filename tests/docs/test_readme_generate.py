"""The docs' page on `evalrun generate` and `evalrun quick` (tutorials/from-stories.md) is true: its commands, run as written on a copy of the
bundled examples (the fake server standing in for the generator model, as the section says), print the lines shown
(times left out), and the generated suites validate and pass against the reference agent."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess

from tests.fakes.openai_server import FakeOpenAI
from tests.helpers.cli_helpers import REPO, run_cli
from tests.helpers.docs_pages import page
from tests.helpers.generate import good

SECTION = page("tutorials/from-stories.md")
_TIME = re.compile(r" in \d+\.\d+s$")


def bash_block(after: str) -> list[list[str]]:
    block = SECTION.split(after, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def shown(command: str) -> list[str]:
    """The lines the README shows under `$ command`, up to the next `$ ` line or the end of the block."""
    for block in re.findall(r"```text\n(.*?)```", SECTION, flags=re.S):
        if f"$ {command}\n" in block:
            lines = block.split(f"$ {command}\n", 1)[1].split("\n$ ", 1)[0]
            return list(lines.splitlines())
    raise AssertionError(f"no output shown for {command}")


def run(argv: list[str], cwd) -> subprocess.CompletedProcess:
    """The README's `evalrun ...` line, in this process: nothing here needs one of its own (exit codes and output
    are run_cli's as a process's), and the embedding model the run loads is then loaded once for the session."""
    assert argv[0] == "evalrun"
    return run_cli(*argv[1:], cwd=cwd)


def printed(done: subprocess.CompletedProcess) -> list[str]:
    return [_TIME.sub("", line) for line in (done.stderr + done.stdout).splitlines()]


def in_order(expected: list[str], actual: list[str]) -> bool:
    position = 0
    for line in expected:
        try:
            position = actual.index(line, position) + 1
        except ValueError:
            return False
    return True


def project(tmp_path, url: str):
    shutil.copytree(REPO / "suites", tmp_path / "suites", ignore=shutil.ignore_patterns("__pycache__", "generated"))
    (tmp_path / ".git").mkdir()  # the copy is a project of its own: its config search stops here
    config = tmp_path / "suites" / "evalrun.yaml"
    config.write_text(config.read_text() + f"generator: {{model: openai/fake-writer, api_base: '{url}'}}\n")


def test_generate_as_the_readme_shows_it(tmp_path):
    steps = bash_block("## `evalrun generate`")
    assert [step[:2] for step in steps] == [["evalrun", "generate"], ["evalrun", "validate"],
                                            ["evalrun", "suites/generated/"]]
    with FakeOpenAI(default=good) as fake:
        project(tmp_path, fake.base_url)
        generated = run(steps[0], tmp_path)
    assert generated.returncode == 0, generated.stderr
    expected = shown(shlex.join(steps[0]))
    assert sorted(printed(generated)) == sorted(expected)  # stdout and stderr interleave as they please
    validated = run(steps[1], tmp_path)
    assert validated.returncode == 0 and "all suites are valid" in validated.stderr, validated.stdout
    ran = run(steps[2], tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert sorted(line for line in shown("evalrun suites/generated/") if line.startswith("PASS")) == \
        sorted(line for line in printed(ran) if line.startswith("PASS"))
    assert "4 passed, 0 failed" in printed(ran)
    header = SECTION.split("Each file is an ordinary suite", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    written = (tmp_path / "suites" / "generated" / "01-my-username-is-nwaters-i-want.yaml").read_text()
    assert written.startswith(header)


def test_quick_as_the_readme_shows_it(tmp_path):
    [step] = bash_block("## `evalrun quick`")
    shutil.copytree(REPO / "suites", tmp_path / "suites", ignore=shutil.ignore_patterns("__pycache__", "generated"))
    (tmp_path / ".git").mkdir()
    done = run(step, tmp_path)
    assert done.returncode == 3
    expected = shown(shlex.join(step))
    actual = printed(done)
    assert sorted(line for line in expected if line.startswith("UNSCORED")) == \
        sorted(line for line in actual if line.startswith("UNSCORED"))
    assert in_order([line for line in expected if not line.startswith("UNSCORED")],
                    [line for line in actual if not line.startswith("UNSCORED")])
