"""`evalrun generate`: suites written by a model from user stories and the agent's tools.

For each story the generator model (evalrun.yaml `generator:`, defaulting to `judge:`) is asked, with the
template prompts/generate_cases.j2, for N cases. Its answer is accepted only when it makes a suite that
the suite loader takes as it takes a hand-written one and that uses only the tools and parameters that
exist, with arguments that fit their schemas. Otherwise it is asked again with the problems (the LLM
layer's reply retries), then the story is reported by its place and first words, and nothing is
written for it. Accepted answers are cached, so the same inputs give the same files. Every file is
written whole or not at all (a temporary, then a rename).
"""
from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...suite.tool_specs import ToolSet, read_tools
from ...util.atomic import write_text_atomically
from ...util.secrets import redact, redact_data
from ..tools.load import ToolsError, load_mcp_tools, load_tools
from .generated import build_suite, parse_answer
from .stories import StoriesError, Story, read_stories

TEMPLATE = "generate_cases.j2"
_VERSION = re.compile(r"\A\{#-?\s*\S+\s+(v\d+)")
EXPECT = 'one JSON object {"cases": [...]} in the form the instructions give, with the problems fixed'
_SLUG_WORDS = 6
_CONCURRENCY = 4


class GenerateError(Exception):
    """The command cannot start: bad stories or tools, no model, an output folder that is a file."""


@dataclass
class GenerateReport:
    written: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one per story that gave no suite
    stories: int = 0

    def summary_line(self) -> str:
        failed = len(self.problems)
        line = f"{len(self.written)} of {self.stories} stor{'y' if self.stories == 1 else 'ies'} written as suites"
        return line + (f"; {failed} could not be (see above): exit 1" if failed else "")


def generate_suites(stories_path: Path, *, tools: str | None = None, tools_mcp: str | None = None,
                    per_story: int = 2, output_dir: Path, config_path: Path | None = None,
                    no_cache: bool = False, on_line: Callable[[str], None] = lambda line: None) -> GenerateReport:
    """Write one suite per story into `output_dir`. GenerateError when nothing can start."""
    from ...config.discovery import find_config
    from ...config.load import load_config

    if per_story < 1:
        raise GenerateError("-n/--cases must be at least 1")
    if (tools is None) == (tools_mcp is None):
        raise GenerateError("give the agent's tools with --tools TOOLS or --tools-mcp \"COMMAND\" (one of them)")
    if output_dir.exists() and not output_dir.is_dir():
        raise GenerateError(f"-o {output_dir}: exists and is not a folder")
    try:
        stories = read_stories(stories_path)
    except StoriesError as exc:
        raise GenerateError(str(exc)) from None
    loaded, problems = load_config(config_path or find_config([stories_path]), for_run=True)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise GenerateError("evalrun.yaml has problems:\n" + "\n".join(str(p) for p in errors))
    try:
        definitions = load_mcp_tools(tools_mcp) if tools_mcp is not None else load_tools(tools, config=loaded)  # type: ignore[arg-type]  # one of the two: checked above
    except ToolsError as exc:
        raise GenerateError(str(exc)) from None
    _check_agents(stories, loaded.config)
    settings = _generator_settings(loaded)
    toolset = read_tools(definitions, tools_mcp or str(tools))

    from ...llm.client import LLMClient
    from ...llm.prompts import PromptError, PromptLibrary
    from ...llm.runtime import configure

    configure(concurrency=_CONCURRENCY, cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=no_cache)
    library = PromptLibrary(loaded.resolve(loaded.config.prompts_dir))
    try:
        version = template_version(library)
    except PromptError as exc:
        raise GenerateError(str(exc)) from None
    client = LLMClient(settings, loaded.resolve(loaded.config.cache_dir), role="generator")
    writer = _StoryWriter(client, library, version, toolset, definitions, per_story, output_dir, settings.model)
    report = GenerateReport(stories=len(stories))
    with ThreadPoolExecutor(max_workers=_CONCURRENCY, thread_name_prefix="evalrun-generate") as pool:
        outcomes = list(pool.map(writer.write, stories))
    for story, outcome in zip(stories, outcomes, strict=True):
        if isinstance(outcome, Path):
            report.written.append(outcome)
            on_line(f"{story.where}: {story.label} -> {outcome}")
        else:
            report.problems.append(f"{story.where}: error: {story.label}: {outcome}")
    return report


def _check_agents(stories: list[Story], config: Any) -> None:
    """A story's agent must be one evalrun.yaml declares (when it declares any): its suite would name it."""
    from ...util.diagnostics import did_you_mean

    declared = config.agents
    for story in stories:
        if declared and story.agent is not None and story.agent not in declared:
            raise GenerateError(f"{story.where}:1: error: {story.label}: agent '{story.agent}' is not declared in "
                                f"evalrun.yaml{did_you_mean(story.agent, declared)} (declared: {', '.join(declared)})")


def _generator_settings(loaded: Any):
    from ...llm.settings import GeneratorSettings

    config = loaded.config
    generator = config.generator or GeneratorSettings()
    try:
        settings = generator.merged_over(config.judge)
    except ValueError as exc:
        raise GenerateError(f"evalrun.yaml `generator`: {exc}") from None
    if settings is None:
        raise GenerateError("no generator model is configured: add `generator: {model: ...}` (or a `judge:`) to "
                            "evalrun.yaml, for example:\n  generator:\n    model: openai/gpt-4o-mini\n"
                            "    api_key_env: OPENAI_API_KEY")
    return settings


def template_version(library: Any) -> str:
    """`generate_cases.j2 v1`: the template's name and the version its first line declares."""
    source = library.source(TEMPLATE)
    found = _VERSION.match(source)
    return f"{TEMPLATE} {found.group(1) if found else 'unversioned'}"


class _StoryWriter:
    """Asks for one story's cases, checks them, writes the file: a Path, or the reason nothing was written."""

    def __init__(self, client: Any, library: Any, version: str, tools: ToolSet, definitions: list[dict],
                 per_story: int, output_dir: Path, model: str):
        self.client, self.library, self.version = client, library, version
        self.tools, self.per_story, self.output_dir, self.model = tools, per_story, output_dir, model
        self.tools_json = json.dumps(definitions, ensure_ascii=False, sort_keys=True)

    def write(self, story: Story) -> Path | str:
        from ...llm.errors import LLMError

        prompt = self.library.render(TEMPLATE, story=story.text, starting_sentence=story.starting_sentence or "",
                                     n=self.per_story, tools_json=self.tools_json)
        slug = f"{story.number:02d}-{slugify(story.text)}"
        accepted: list[str] = []

        def accept(completion: Any) -> None:
            text, problems = self.suite_text(completion.content, story, slug)
            if problems:
                raise LLMError("; ".join(problems[:12]) + (f"; and {len(problems) - 12} more" if len(problems) > 12
                                                           else ""))
            accepted.append(text)

        try:
            self.client.complete([{"role": "user", "content": prompt}], accept=accept, expect=EXPECT,
                                 response_format={"type": "json_object"})
        except LLMError as exc:
            return f"the generator's answer was not used, nothing written: {exc.reason}"
        target = self.output_dir / f"{slug}.yaml"
        try:
            write_text_atomically(target, accepted[-1])
        except OSError as exc:
            return f"cannot write {target}: {exc.strerror or exc}"
        return target

    def suite_text(self, content: str | None, story: Story, slug: str) -> tuple[str, list[str]]:
        """The file's text for this answer, and its problems (none: it may be written)."""
        cases, problems = parse_answer(content)
        if cases is None:
            return "", problems
        suite, problems = build_suite(cases, story, self.tools, self.per_story, slug)
        text = self.header(story) + dump_yaml(suite)
        return text, problems + loader_problems(text, f"{slug}.yaml")

    def header(self, story: Story) -> str:
        words = printable(redact(" ".join(story.text.split()[:30])))
        return (f"# Generated by `evalrun generate` from {story.where} ({story.label.split(' (')[0]}): {words}\n"
                f"# model: {self.model}; template: {self.version}\n"
                "# Review the expected calls, outputs and answers before trusting them: they are the model's reading "
                "of the story.\n")


def loader_problems(text: str, name: str) -> list[str]:
    """What the suite loader says about `text` as a suite file: each error as `line:col: message`."""
    from ...suite.load import load_file

    with tempfile.TemporaryDirectory(prefix="evalrun-generate-") as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        _, diagnostics, _ = load_file(path, explicit=True)
    return [f"the suite is invalid at {d.line}:{d.column}: {d.message}" for d in diagnostics if d.severity == "error"]


def printable(text: str) -> str:
    """`text` fit for a comment line: control characters (which YAML refuses in a file) shown as `?`."""
    return "".join(c if c.isprintable() else "?" for c in text)


def dump_yaml(data: Any) -> str:
    import yaml

    return yaml.safe_dump(redact_data(data), sort_keys=False, allow_unicode=True, width=120, default_flow_style=False)


def slugify(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:_SLUG_WORDS]
    return "-".join(words) or "story"
