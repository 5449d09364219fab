"""Which agent plays a case: `--agent`, else the case's (or its file's) `agent:`, else the agent named like
its ADK app (`session_input.app_name`), else `default_agent`, else the only declared agent. Names are
checked by `validate` when evalrun.yaml declares agents."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from runner.suite.models import Case
from runner.util.diagnostics import Diagnostic, did_you_mean

from .agents._base import AgentEnv, AgentError

if TYPE_CHECKING:
    from runner.config.load import LoadedConfig
    from runner.config.model import Config
    from runner.suite.file_outcome import CaseOutline

    from .agents._base import Agent

EXAMPLE = "    {name}:\n      type: python\n      entrypoint: my_agent:respond   # or http, command, model, replay, adk"


class AgentNotFound(AgentError):
    """No declared agent can play the case; the message says how to declare or pick one."""


def check_agent_names(cases: Iterable[Case | CaseOutline], config: Config) -> list[Diagnostic]:
    """An error for each case naming an agent that evalrun.yaml does not declare (when it declares any:
    without an `agents:` section every name is accepted, as watsonx datasets name their own agents)."""
    declared = config.agents
    if not declared:
        return []
    found = []
    for case in cases:
        if case.agent is not None and case.agent not in declared:
            found.append(Diagnostic(case.source.path, case.source.line, case.source.column, "error",
                                    f"case '{case.id}': agent '{case.agent}' is not declared in evalrun.yaml"
                                    f"{did_you_mean(case.agent, declared)} (declared: {', '.join(declared)})",
                                    "unknown-agent"))
    return found


def check_agent_override(name: str, config: Config) -> str | None:
    """The usage error for `--agent NAME` naming no declared agent, else None."""
    if name in config.agents:
        return None
    if not config.agents:
        return f"--agent {name}: evalrun.yaml declares no agents; declare it under `agents:`:\n  agents:\n" \
               + EXAMPLE.format(name=name)
    return f"--agent {name}: not declared in evalrun.yaml{did_you_mean(name, config.agents)} " \
           f"(declared: {', '.join(config.agents)})"


def agent_name_for(case: Case, config: Config, override: str | None = None) -> str:
    """The name of the agent that plays `case`; AgentNotFound saying what to declare or add."""
    declared = config.agents
    # an ADK eval case names its app: the agent declared under that name plays it
    app = case.session_input.app_name if case.session_input is not None else None
    name = override or case.agent or (app if app in declared else None) or config.default_agent
    if name is None and len(declared) == 1:
        name = next(iter(declared))
    if name is None:
        if not declared:
            raise AgentNotFound("the case has no transcript and no agent to run it: declare one under `agents:` in "
                                "evalrun.yaml and name it in the case (`agent:`) or as `default_agent`:\n  agents:\n"
                                + EXAMPLE.format(name="my_agent"))
        raise AgentNotFound(f"the case names no agent: add `agent:` to the case or `default_agent` to evalrun.yaml "
                            f"(declared: {', '.join(declared)})")
    if name not in declared:
        if not declared:
            raise AgentNotFound(f"the case runs against agent '{name}', which is not declared: evalrun.yaml has no "
                                "`agents:` section. Declare it, for example:\n  agents:\n" + EXAMPLE.format(name=name))
        raise AgentNotFound(f"agent '{name}' is not declared in evalrun.yaml{did_you_mean(name, declared)} "
                            f"(declared: {', '.join(declared)})")
    return name


def agent_for(case: Case, loaded: LoadedConfig, *, override: str | None = None,
              llm_client: Any = None) -> Agent:
    """A fresh agent for one case's conversation, built from evalrun.yaml; AgentNotFound when none fits.
    `llm_client(settings, role)` gives model targets the run's LLM client."""
    from .agents._registry import create_agent

    try:
        name = agent_name_for(case, loaded.config, override)
    except AgentNotFound as exc:
        if loaded.path is None and not loaded.config.agents:  # not "evalrun.yaml has no agents": there is none
            raise AgentNotFound(no_config_reason(case, override)) from exc
        raise
    return create_agent(name, loaded.config.agents[name], AgentEnv(base_dir=loaded.base_dir, llm_client=llm_client))


def no_config_reason(case: Case, override: str | None = None) -> str:
    """Why a live case cannot be played when the run found no evalrun.yaml at all: where it is looked for
    (the run's `config:` line names the folders searched) and how to give it."""
    named = override or case.agent
    which = f"agent '{named}'" if named else "an agent"
    return (f"the case is played live by {which}, but this run found no evalrun.yaml to declare it (it is looked "
            "for next to the suite files and in the folders above them, up to the repository root or, outside a "
            "repository, the current folder; the run's `config:` line says where it looked): give it with "
            "--config PATH/evalrun.yaml, or keep the suite file under the folder of its evalrun.yaml")
