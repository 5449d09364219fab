"""The suites' cases without running them: collect (the cases and their diagnostics), validate (the
diagnostics only, of the suites and of evalrun.yaml), list_cases (what `evalrun list` shows)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..config.discovery import find_config, project_home
from ..config.load import LoadedConfig, load_config, suite_roots
from ..results.verdict import EXIT_NO_CASES, EXIT_OK, EXIT_USAGE
from ..run.case_index import index_cases
from ..suite.load import Exclusion, LoadResult, load_suites
from ..util.diagnostics import Diagnostic, has_errors, sort_diagnostics
from .gc_passes import fewer_gc_passes


def collect(paths: Sequence[Path], *, filters: Sequence[str] = (), tags: Sequence[str] = (),
            config: LoadedConfig | None = None) -> LoadResult:
    """Load every suite under `paths` and keep the cases selected by `filters` (globs on the id) and `tags`."""
    from ..run.case_index import selected

    if config is None:
        config, _ = load_config(find_config(list(paths)))
    result = load_suites(paths, _exclusion(config), roots=suite_roots(list(paths), config))
    result.cases = [c for c in result.cases if selected(c.id, c.tags, filters, tags)]
    return result


def _exclusion(loaded: LoadedConfig) -> Exclusion | None:
    return Exclusion(loaded.base_dir, loaded.config.exclude) if loaded.config.exclude else None


def validate(paths: Sequence[Path], *, config_path: Path | None = None,
             eval_config: Path | None = None, quick: bool = False) -> list[Diagnostic]:
    """Problems of the suites under `paths` and of the evalrun.yaml that applies to them. `eval_config`: the
    ADK/Agentflow eval config for every eval set (--eval-config). `quick`: as `evalrun quick` reads them (a
    case needs nothing to check of its own)."""
    from ..checks.judged import samples_warnings
    from ..config.load import check_cases_against_config
    from ..run.agent_choice import check_agent_names
    from ..run.sources import opening_errors, replayed_agent_warnings

    with fewer_gc_passes():
        loaded, config_problems = load_config(config_path or find_config(list(paths)))
        roots = suite_roots(list(paths), loaded)
        loaded_suites = load_suites(paths, _exclusion(loaded), roots=roots, eval_config=eval_config, referenceless=quick)
        return sort_diagnostics([*config_problems, *loaded_suites.diagnostics,  # a file with errors too: all at once
                                 *check_agent_names([*loaded_suites.cases, *loaded_suites.unbuilt], loaded.config),
                                 *replayed_agent_warnings(loaded_suites.cases, loaded.config),
                                 *opening_errors(loaded_suites.cases, roots),
                                 *check_cases_against_config(loaded_suites.cases, loaded.config),
                                 *samples_warnings(loaded_suites.cases, loaded.config)])


@dataclass
class ListedCase:
    """One case a run would collect, as `evalrun list` shows it."""

    id: str
    source: str  # file:line
    format: str  # the file's format: yaml or json
    tags: list[str]
    agent: str | None  # the agent that would play it, or None when it replays a transcript
    transcript: str | None  # the recording it replays, as written in the case
    turns: int  # scripted user messages (starting_sentence and user_prompts)
    simulated: bool  # a simulated user would go on from its story after the script

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Listing:
    exit_code: int
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cases: list[ListedCase] = field(default_factory=list)


def list_cases(paths: Sequence[Path], *, config_path: Path | None = None, filters: Sequence[str] = (),
               tags: Sequence[str] = ()) -> Listing:
    """The cases `run` would collect under `paths` with these -k/--tag selections (the same collection
    code: evalrun.yaml's `exclude`, the case index, the selection), without running anything."""
    from ..run.agent_choice import AgentNotFound, agent_name_for
    from ..run.case_index import CaseLoader

    loaded, config_problems = load_config(config_path or find_config(list(paths)))
    if loaded.path is None:
        loaded.home = project_home(list(paths), loaded.path)
    roots = suite_roots(list(paths), loaded)
    index = index_cases(paths, _exclusion(loaded), roots=roots, filters=filters, tags=tags, config=loaded.config)
    diagnostics = sort_diagnostics([*config_problems, *index.diagnostics])
    if has_errors(diagnostics):
        return Listing(EXIT_USAGE, diagnostics)
    if not index.refs:
        return Listing(EXIT_NO_CASES, diagnostics)
    reader = CaseLoader(roots)
    listed = []
    formats: dict[Path, str] = {}
    for ref in index.refs:
        case = reader.load(ref)
        agent = None
        if case.transcript is None:
            try:
                agent = agent_name_for(case, loaded.config)
            except AgentNotFound:
                agent = case.agent  # `run` would end this case in error, saying why
        if ref.path not in formats:
            formats[ref.path] = _file_format(ref.path)
        listed.append(ListedCase(
            id=ref.id, source=f"{ref.source.path}:{ref.source.line}", format=formats[ref.path],
            tags=list(case.tags), agent=agent, transcript=case.transcript,
            turns=(1 if case.starting_sentence else 0) + len(case.user_prompts),
            simulated=bool(case.story) and loaded.config.simulator is not None))
    return Listing(EXIT_OK, diagnostics, listed)


def _file_format(path: Path) -> str:
    """yaml or json for evalrun's own files; the kind of a foreign eval set (ADK, Agentflow) by its content."""
    if path.suffix.lower() == ".json":
        from ..suite.formats.kinds import shape_of
        from ..suite.reader import read_document

        kind = shape_of(read_document(path).data)
        if kind is not None:
            return kind
    return path.suffix.lower().lstrip(".") or "yaml"
