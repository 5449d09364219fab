"""`evalrun rescore RUN_DIR`: what a finished run folder may decide when its conversations are scored
again, and what it may not.

A run folder is data, and it may come from anywhere (a CI artifact of a fork's pull request, a
colleague's upload). Its report.json may say which cases the run selected (-k, --tag, --shard,
--last-failed) and how many repeats it played: rescoring the same cases the same way needs that. It
may not choose what runs or where keys go: the suites (whose `python` checks are code) and the
evalrun.yaml (whose judge receives the user's API key at its `api_base`) come from the command line
or the current project. The suite paths the report recorded are used only when they lie inside the
project the command is started in; any other is refused, naming it. And nothing inside the run folder is
read as a suite, a config or code, whether the report names it, a link leads there or the project holds the
folder (where people unpack a fork's CI artifact): see `refuse_run_folder_sources`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..results.auto_repeat import AutoRepeat
from ..results.models import Selection
from ..suite.load import Exclusion
from ..transcripts.saved_conversations import FILE_NAME as CONVERSATIONS_FILE

REPORT_NAME = "report.json"
_CASES_MARKER = b', "cases": ['  # where evalrun's report.json ends its header (a string cannot hold it unescaped)
_HEADER_LIMIT = 64 << 20  # a header (config, summary, ids not run) far beyond any real one is refused
_CHUNK = 1 << 20


class NotRescorable(ValueError):
    """The folder cannot be rescored; the message says why and what to give instead."""


@dataclass
class SavedRun:
    """What rescoring takes from a finished run folder: data only."""

    folder: Path
    paths: list[Path]  # the suites as the run recorded them: a hint, used only inside the current project
    conversations: Path  # its conversations.jsonl, or the conversations/ folder of an earlier version
    repeats: int = 1  # the run's --repeat N: its live conversations were saved per repeat
    shard: str | None = None  # the run's --shard I/N: rescore the same part
    selection: Selection = field(default_factory=Selection)  # its -k, --tag, --last-failed
    repeat_auto: AutoRepeat | None = None  # its --repeat auto rule: the same outcomes ask for the same saved runs


def read_saved_run(folder: Path) -> SavedRun:
    """The run saved in `folder`, from its report.json header, checked as any saved report is
    (runner.report.saved). NotRescorable with a reason people can act on."""
    from ..report.saved import parse_report_json, report_problems

    report = folder / REPORT_NAME
    if not report.is_file():
        raise NotRescorable(f"{folder} holds no {REPORT_NAME}: give the folder of a finished run "
                            "(for example .evalrun/reports/latest)")
    try:
        header = parse_report_json(_header_bytes(report) + b"}")
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise NotRescorable(f"{report} is not a report evalrun wrote: {exc}") from None
    problems = report_problems(header, with_cases=False)
    if problems:
        raise NotRescorable(f"{report} is not a valid evalrun report: {'; '.join(problems[:3])}")
    if header.get("matrix"):  # its conversations are saved per (case, variant), which rescore does not read yet
        raise NotRescorable(f"{report} is a --matrix run, which `evalrun rescore` cannot score again yet: run the "
                            "matrix again (each variant's model answers come from the cache)")
    if not header.get("paths"):
        raise NotRescorable(f"{report} does not say which suites it ran: give them, as in "
                            f"`evalrun rescore {folder} suites/`")
    repeats = (header["summary"].get("repeats") or {}).get("runs") or 1
    auto = (header["summary"].get("repeats") or {}).get("auto")
    conversations = folder / CONVERSATIONS_FILE  # else the folder of one file per conversation, as earlier versions saved them
    if not conversations.is_file():
        conversations = folder / "conversations"
    return SavedRun(folder, [Path(p) for p in header["paths"]], conversations, int(repeats),
                    header.get("shard"), Selection.model_validate(header.get("selection") or {}),
                    AutoRepeat(max=auto["max"], confidence=auto["confidence"], min=auto["min"],
                               threshold=auto["threshold"]) if auto else None)


def _header_bytes(report: Path) -> bytes:
    """report.json up to its list of cases, read in chunks: the cases come after and may be gigabytes."""
    head = b""
    with report.open("rb") as source:
        while _CASES_MARKER not in head:
            chunk = source.read(_CHUNK)
            if not chunk or len(head) > _HEADER_LIMIT:
                raise ValueError("it has no list of cases after its summary")
            head += chunk
    return head.split(_CASES_MARKER, 1)[0]


def suites_to_rescore(saved: SavedRun, given: Sequence[Path], project: Path, *, config: Path | None = None,
                      cwd: Path | None = None) -> list[Path]:
    """The suites to score: those given on the command line; else the recorded ones, each of which
    must lie inside `project` (the folder the command runs in: its evalrun.yaml's folder, or its
    repository). Nothing is taken from the run folder, whatever its report says or links point at
    (`refuse_run_folder_sources`). NotRescorable names the first path refused and what to give instead."""
    from ..util.files import display_path, real_path

    _refuse_standing_inside(saved.folder, project, cwd)  # said first: from inside, every other answer misleads
    paths = list(given)
    if not given:
        for path in saved.paths:
            if not real_path(path).is_relative_to(project):
                raise NotRescorable(
                    f"{saved.folder / REPORT_NAME} names suites outside this project ({display_path(project)}): "
                    f"'{path}'. A run folder cannot choose what runs (its suites may hold `python` checks, its "
                    f"config a judge to send your API key to): give the suites to score, as in "
                    f"`evalrun rescore {saved.folder} suites/`")
        paths = saved.paths
    refuse_run_folder_sources(saved.folder, paths, project, recorded=not given, config=config, cwd=cwd)
    return paths


def refuse_run_folder_sources(folder: Path, paths: Sequence[Path], project: Path, *, recorded: bool,
                              config: Path | None = None, cwd: Path | None = None) -> None:
    """A run folder is data: it never supplies the suites, the evalrun.yaml or the current folder (whose modules
    `python -m` would import) of its own rescoring. Every path is compared with symlinks followed and `..`
    resolved. A suite folder holding the run folder is collected without it (`excluding_run_folder`), and the
    modules python checks import are refused there, when the run starts (runner.run.code_guard).
    NotRescorable says which path and what to give instead."""
    from ..config.discovery import find_config
    from ..util.files import display_path, real_path

    run = real_path(folder)
    report = folder / REPORT_NAME
    fix = (f"give suites that lie outside it, as in `evalrun rescore {folder} suites/` (copy a suite out of the "
           "run folder first if you trust it)")
    _refuse_standing_inside(folder, project, cwd)
    for path in paths:
        real = real_path(path)
        named = f"{report} names suites" if recorded else "the suites"
        if _within(real, run):
            raise NotRescorable(f"{named} '{path}' inside the run folder {display_path(folder) or '.'}: a run folder "
                                f"is data, and its suites are not run (their `python` checks are code); {fix}")
    used = config if config is not None else find_config(list(paths))
    if used is not None and _within(real_path(used), run):
        raise NotRescorable(f"the evalrun.yaml to use, {display_path(used)}, lies inside the run folder "
                            f"{display_path(folder) or '.'}: a run folder cannot choose the config (its judge would "
                            "receive your API key); give your project's with --config, or start from your project")


def _refuse_standing_inside(folder: Path, project: Path, cwd: Path | None) -> None:
    """Started inside the run folder, its evalrun.yaml would be the project's and its modules importable
    (`python -m` puts the current folder on sys.path)."""
    from ..util.files import display_path, real_path

    run, here = real_path(folder), real_path(cwd or Path.cwd())
    if _within(here, run) or _within(project, run):
        raise NotRescorable(f"{'the current folder' if _within(here, run) else 'the project'} lies inside the run "
                            f"folder {display_path(folder) or '.'}: a run folder is data, and nothing in it is read "
                            "as a suite, an evalrun.yaml or code; start evalrun rescore from your project")


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


@dataclass
class _ExcludingRunFolder(Exclusion):
    """The project's `exclude`, and the run folder: a suite folder holding it never collects its files."""

    run: Path = Path()  # a real path

    def matches(self, path: Path) -> bool:
        from ..util.files import real_path

        real = real_path(path)
        return real == self.run or self.run in real.parents or (bool(self.globs) and super().matches(path))


def excluding_run_folder(folder: Path, exclusion: Exclusion | None) -> Exclusion:
    """`exclusion` (the project's `exclude`, or None), passing over the run folder being rescored as well."""
    from ..util.files import real_path

    if exclusion is None:
        return _ExcludingRunFolder(Path(folder), [], real_path(folder))
    return _ExcludingRunFolder(exclusion.base, exclusion.globs, real_path(folder))


def current_project(cwd: Path | None = None) -> Path:
    """The project the command is started in: the folder of the evalrun.yaml that applies to the
    current folder, else the repository holding it, else the current folder itself."""
    from ..config.discovery import find_config, project_home

    here = cwd or Path.cwd()
    return project_home([here], find_config([here], here))
