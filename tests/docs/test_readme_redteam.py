"""The docs' red-team page (how-to/red-team.md) shows real output: its commands, run on a copy of the bundled suites, print
what it shows, and the suites it plans validate."""
from __future__ import annotations

import re
import shlex
import shutil

from tests.helpers.cli_helpers import REPO, run_cli
from tests.helpers.docs_pages import page

SECTION = page("how-to/red-team.md")


def shown(command_start: str) -> tuple[list[str], list[str]]:
    """(the command's arguments, the output lines) of the README's text block that runs it."""
    for block in re.findall(r"```text\n(.*?)```", SECTION, flags=re.S):
        first, *output = block.rstrip("\n").split("\n")
        if first.startswith(f"$ {command_start}"):
            return shlex.split(first[2:])[1:], output
    raise AssertionError(f"no block runs {command_start}")


def test_the_readme_red_team_commands_print_what_it_shows(tmp_path):
    shutil.copytree(REPO / "suites", tmp_path / "suites", ignore=shutil.ignore_patterns(".evalrun", "__pycache__"))
    args, output = shown("evalrun redteam list")
    listing = run_cli(*args, cwd=tmp_path)
    assert listing.returncode == 0 and listing.stdout.splitlines() == output

    args, output = shown("evalrun redteam plan")
    planned = run_cli(*args, cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.splitlines() + planned.stderr.splitlines() == output

    validated = run_cli("validate", "suites/redteam/", cwd=tmp_path)
    assert validated.returncode == 0 and validated.stderr.splitlines()[-1] == "0 error(s), 3 warning(s)"

    args, output = shown("evalrun suites/redteam/")
    ran = run_cli(*args, cwd=tmp_path)
    assert ran.returncode == 3
    timeless = [re.sub(r" in \d+\.\d+s$", " in Ns", line) for line in ran.stdout.splitlines()]
    tail = [re.sub(r" in \d+\.\d+s$", " in Ns", line) for line in output[1:]]  # after the "..." line
    assert timeless[-len(tail) - 1:-1] == tail  # the last line names the report's folder
