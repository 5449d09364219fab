"""Write the generated reference pages, docs/reference/{checks,agents,config,cli,exit-codes}.md and the field tables
of reports.md, from the code's one definition of each fact (the check registry, the agent kinds, evalrun.yaml's
model, the argparse parsers, the exit codes, report.json's model), or check that the committed pages are what it
would write.

    python docs/gen/reference.py           write the pages
    python docs/gen/reference.py --check   exit 1 naming each page that differs (tests/docs/test_docs_reference.py)

It is a tool of the repository, not of the installed package: the pages are read on the docs site, and users of
evalrun have `evalrun --help` and `evalrun schema` for the same facts. A description missing from the code (a
check, an option, a command's argument) stops it with the list of what is missing: write them in the code.
Output is deterministic: sorted (or in the CLI's own order), wrapped at fixed widths, evalrun's own extensions only
(installed plugins are left out).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
TARGET = REPO / "docs" / "reference"
COMMAND = "python docs/gen/reference.py"

if str(HERE) not in sys.path:  # the page modules beside this file
    sys.path.insert(0, str(HERE))
if str(REPO) not in sys.path:  # this checkout's runner, when run from elsewhere
    sys.path.insert(0, str(REPO))

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def pages() -> dict[str, Callable[[], str]]:
    import page_agents
    import page_checks
    import page_cli
    import page_config
    import page_exit_codes
    import page_reports

    return {"checks.md": page_checks.render, "agents.md": page_agents.render, "config.md": page_config.render,
            "cli.md": page_cli.render, "exit-codes.md": page_exit_codes.render,
            # hand-written, its field tables generated between two markers
            "reports.md": lambda: page_reports.render(TARGET / "reports.md")}


def generate() -> dict[str, str]:
    """Every page's text, by file name. reference_md.Missing when the code lacks descriptions (all of them, every page)."""
    from reference_md import Missing

    texts: dict[str, str] = {}
    missing: list[str] = []
    for name, render in pages().items():
        try:
            texts[name] = render()
        except Missing as exc:
            missing += exc.where
    if missing:
        raise Missing(missing)
    return texts


def stale(texts: dict[str, str]) -> list[str]:
    """The pages whose committed file differs from the generated text (or is missing)."""
    found = []
    for name, text in texts.items():
        path = TARGET / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            found.append(f"docs/reference/{name}")
    return found


def main(argv: list[str]) -> int:
    from reference_md import Missing

    if argv not in ([], ["--check"]):
        print(f"usage: {COMMAND} [--check]", file=sys.stderr)
        return 2
    try:
        texts = generate()
    except Missing as exc:
        print("the code lacks descriptions the reference needs; write them where each is defined:", file=sys.stderr)
        for where in exc.where:
            print(f"  {where}", file=sys.stderr)
        return 2
    if argv == ["--check"]:
        out_of_date = stale(texts)
        for page in out_of_date:
            print(f"{page} is stale: regenerate it with `{COMMAND}`", file=sys.stderr)
        return 1 if out_of_date else 0
    TARGET.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (TARGET / name).write_text(text, encoding="utf-8")
        print(f"wrote docs/reference/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
