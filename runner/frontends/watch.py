"""`evalrun watch PATH…`: run the suites, then rerun the cases a change affects, each time a file changes.

What a change reruns:
- evalrun.yaml, or a template of its prompts_dir: every case (the judge, the simulator, the agents may differ);
- a suite file: its cases (new ones included);
- a recorded conversation: the cases that replay it;
- the module of a python agent, or a file a command agent runs: the live cases of that agent;
- another source file (.py, .js, .ts, ...) beside them: every live case (an agent may import it).
Files evalrun writes itself (.evalrun/, hidden files, caches) are never watched.

Each rerun is `evalrun run` in a fresh process, so a changed agent module is imported anew; after it, one
line gives the run's verdict (runner.results.verdict: its exit code and why) and one says what changed since
the last run of those cases (newly failing, newly passing). `watchfiles` is
an optional dependency: `pip install 'evalrun[watch]'`.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..layout import REPORTS_ROOT, SUITE_SUFFIXES

SOURCE_SUFFIXES = frozenset({".py", ".js", ".mjs", ".ts", ".rb", ".go", ".java", ".sh"})


@dataclass
class WatchOptions:
    paths: Sequence[Path]
    config: Path | None = None
    filters: Sequence[str] = ()
    tags: Sequence[str] = ()
    agent: str | None = None
    debounce_ms: int = 400


@dataclass
class CaseInfo:
    id: str
    suite: Path  # resolved
    transcript: Path | None  # resolved, for replayed cases
    agent: str | None  # the agent of a live case


@dataclass
class Project:
    """What the watched files mean: the cases and what each depends on."""

    config: Path | None
    prompts: Path | None
    home: Path = field(default_factory=Path.cwd)  # where a run's .evalrun/reports/latest is
    cases: list[CaseInfo] = field(default_factory=list)
    agent_sources: dict[Path, str] = field(default_factory=dict)  # a file -> the agent it is the code of

    def affected(self, changed: Iterable[Path]) -> tuple[list[str] | None, list[str]]:
        """(ids to rerun, None meaning all; the reasons, one per changed file that matters)."""
        ids: dict[str, None] = {}
        reasons = []
        for path in changed:
            shown = _shown(path)
            if self.config is not None and path == self.config:
                return None, [f"{shown} (the configuration)"]
            if self.prompts is not None and self.prompts in path.parents:
                return None, [f"{shown} (a prompt template)"]
            hit = [c.id for c in self.cases if c.suite == path]
            if hit:
                reasons.append(f"{shown} (a suite)")
            else:
                hit = [c.id for c in self.cases if c.transcript == path]
                if hit:
                    reasons.append(f"{shown} (a recorded conversation)")
                elif path in self.agent_sources:
                    agent = self.agent_sources[path]
                    hit = [c.id for c in self.cases if c.agent == agent]
                    reasons.append(f"{shown} (agent {agent})")
                elif path.suffix in SOURCE_SUFFIXES:
                    hit = [c.id for c in self.cases if c.agent is not None]
                    reasons.append(f"{shown} (source beside the agents)")
                elif path.suffix in SUITE_SUFFIXES and path.exists():
                    reasons.append(f"{shown} (a new file)")  # a new suite: its cases are found on the next look
            ids.update(dict.fromkeys(hit))
        return list(ids), reasons


def read_project(options: WatchOptions) -> tuple[Project, list[str]]:
    """The cases selected under the paths and what they depend on; problems as printable lines."""
    from ..config.discovery import find_config, project_home
    from ..config.load import load_config
    from ..run.agent_choice import AgentNotFound, agent_name_for
    from ..session.collect import collect
    from ..suite.containment import transcript_location
    from ..util.files import split_selection

    config_path = options.config or find_config(list(options.paths))
    loaded, problems = load_config(config_path)
    collected = collect(options.paths, filters=options.filters, tags=options.tags, config=loaded)
    lines = [str(d) for d in [*problems, *collected.diagnostics] if d.severity == "error"]
    prompts = loaded.resolve(loaded.config.prompts_dir) if loaded.config.prompts_dir else None
    project = Project(config=_real(config_path) if config_path else None, prompts=_real(prompts) if prompts else None,
                      home=project_home(list(options.paths), config_path))
    for case in collected.cases:
        suite = _real(case.source.path)
        # the file a `FILE#ID` names is what changes (a trace file, a run's conversations.jsonl)
        transcript = _real(split_selection(transcript_location(suite, case.transcript))[0]) if case.transcript else None
        agent = None
        if transcript is None:
            try:
                agent = agent_name_for(case, loaded.config, options.agent)
            except AgentNotFound:
                agent = case.agent
        project.cases.append(CaseInfo(case.id, suite, transcript, agent))
    for name, agent in loaded.config.agents.items():
        for source in _agent_sources(agent, loaded.base_dir):
            project.agent_sources[source] = name
    return project, lines


def _agent_sources(agent, base_dir: Path) -> list[Path]:
    """The files that are an agent's code: a python agent's module, the files a command agent runs."""
    kind = getattr(agent, "type", None)
    if kind == "python":
        module = agent.entrypoint.partition(":")[0].replace(".", "/")
        candidates = [base_dir / f"{module}.py", base_dir / module / "__init__.py"]
    elif kind == "command":
        command = agent.command if isinstance(agent.command, list) else str(agent.command).split()
        candidates = [base_dir / part for part in command[1:]]
    else:
        candidates = []
    return [_real(c) for c in candidates if c.is_file()]


def watch(options: WatchOptions, out: TextIO, err: TextIO) -> int:
    try:
        from watchfiles import DefaultFilter, watch as changes_of
    except ImportError:
        print("evalrun watch needs the watchfiles package: pip install 'evalrun[watch]'", file=err)
        return 4
    project, problems = read_project(options)
    for line in problems:
        print(line, file=err)
    if problems:
        return 4
    roots = _roots(options, project)

    class Relevant(DefaultFilter):
        """Not what evalrun writes itself: its run folders and caches, and the hidden temporaries of its writes."""

        def __call__(self, change, path: str) -> bool:
            where = Path(path)
            return super().__call__(change, path) and ".evalrun" not in where.parts \
                and not where.name.startswith(".")

    # Yielding on a timeout, the watcher is set up at the first step: a change made from then on (during the
    # first run too) is seen.
    changes = changes_of(*roots, watch_filter=Relevant(), debounce=options.debounce_ms, raise_interrupt=True,
                         yield_on_timeout=True, rust_timeout=500)
    try:
        next(changes)
        last = _run(options, project.home, None, out, err, {})
        print(f"watching {', '.join(_shown(r) for r in roots)} (Ctrl-C stops)", file=err)
        for batch in changes:
            if not batch:
                continue
            changed = sorted({_real(path) for _, path in batch})
            project, problems = read_project(options)
            ids, reasons = project.affected(changed)
            if problems:
                for line in problems:
                    print(line, file=err)
                continue
            if ids is not None and not ids:
                continue
            print(f"\nchanged: {'; '.join(reasons)}", file=out)
            last = _run(options, project.home, ids, out, err, last)
    except KeyboardInterrupt:
        pass
    print("stopped watching", file=err)
    return 0


def _roots(options: WatchOptions, project: Project) -> list[Path]:
    roots = {_real(p) if _real(p).is_dir() else _real(p).parent for p in options.paths}
    for path in [project.config, project.prompts, *project.agent_sources]:
        if path is not None:
            roots.add(path if path.is_dir() else path.parent)
    for case in project.cases:
        if case.transcript is not None:
            roots.add(case.transcript.parent)
    # a folder inside another watched folder is watched already
    return sorted(r for r in roots if not any(other in r.parents for other in roots))


def _run(options: WatchOptions, home: Path, ids: list[str] | None, out: TextIO, err: TextIO,
         last: dict[str, str]) -> dict[str, str]:
    """One `evalrun run` of `ids` (None: the selection), in its own process; the statuses it reported,
    merged into `last` after printing what changed."""
    command = [sys.executable, "-m", "runner", "run", *map(str, options.paths)]
    if options.config is not None:
        command += ["-c", str(options.config)]
    if options.agent:
        command += ["--agent", options.agent]
    if ids is None:
        command += [a for f in options.filters for a in ("-k", f)] + [a for t in options.tags for a in ("--tag", t)]
    else:
        command += [a for case_id in ids for a in ("-k", exact_glob(case_id))]
    out.flush()
    finished = subprocess.run(command, stdout=out, stderr=err, check=False)
    report = home / REPORTS_ROOT / "latest" / "report.json"
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        cases, summary = data["cases"], data["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        print(verdict_line(finished.returncode, None), file=out)
        print(f"(no report to compare: evalrun run exited {finished.returncode})", file=err)
        out.flush()
        return last
    print(verdict_line(finished.returncode, summary), file=out)
    now = {c["id"]: c["status"] for c in cases}
    if last:
        print(change_line(last, now), file=out)
    out.flush()  # a pipe or a file (`| tee log`, a CI log) buffers: the verdict is read now, not at the next change
    return {**last, **now}


def verdict_line(exit_code: int, summary: dict | None) -> str:
    """The run's verdict (runner.results.verdict) as the rerun exited with it: the reason its report gives, when
    that report is the rerun's own (a run that ended before it played writes none; `latest` is then older)."""
    if isinstance(summary, dict) and summary.get("exit_code") == exit_code and summary.get("exit_reason"):
        return f"run verdict: {summary['exit_reason']}"
    return f"run verdict: exit {exit_code}"


def change_line(before: dict[str, str], now: dict[str, str]) -> str:
    """What changed since the last run of these cases, in one line."""
    failing = [i for i, s in now.items() if s != "passed" and before.get(i) == "passed"]
    passing = [i for i, s in now.items() if s == "passed" and i in before and before[i] != "passed"]
    new = [i for i in now if i not in before]
    parts = []
    if failing:
        parts.append("now failing: " + ", ".join(failing))
    if passing:
        parts.append("now passing: " + ", ".join(passing))
    if new:
        parts.append("new: " + ", ".join(new))
    return "since the last run: " + ("; ".join(parts) if parts else f"no change ({len(now)} case(s) as before)")


def exact_glob(case_id: str) -> str:
    """A -k pattern that selects exactly this id (a plain word would select every id containing it)."""
    escaped = glob.escape(case_id)
    if escaped != case_id:
        return escaped  # it holds a [bracketed] character now: a glob, matched whole
    at = next((i for i, ch in enumerate(case_id) if ch.isalnum()), None)
    if at is None:
        return f"{case_id}*"  # no letter to bracket: the nearest there is (rare: ids of punctuation only)
    return f"{case_id[:at]}[{case_id[at]}]{case_id[at + 1:]}"


def _real(path) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))


def _shown(path: Path) -> str:
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative
