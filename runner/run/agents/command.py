"""`type: command` — an agent in any language: a process speaking JSON lines on stdin/stdout.

One process per conversation. Each user turn evalrun writes one line, the same body the http kind
POSTs (`{"messages": [...], "case_id": ..., "turn": n, "runtime_context": {...}}`), and reads one
line back in the same shapes (`{"messages": [...]}`, optionally `"stop": true`, or a chat
completion). Logs belong on stderr: its last lines are kept with the case. A crash, a line that is not
JSON, a line longer than `max_reply_bytes` or no answer within `timeout_s` is that case's error, quoting
the last stderr lines. When the conversation ends evalrun closes stdin, then stops the process's whole
group, children included, whatever the process itself did (runner.run.agents._process).

The process gets a minimal environment (BASE_ENVIRONMENT and the locale's LC_* variables) plus what
`env:` names: evalrun's own variables, a judge's API key among them, stay out unless `inherit_env: true`.
"""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from ._base import (Agent, AgentEnv, AgentError, AgentStop, TurnContext, excerpt, expand_env, parse_reply, redacted,
                    reply_json, scrub, unreadable_reply)
from ._process import ProcessChannel

KIND = "command"
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024  # one reply line may be this long
# What a program needs to run at all; LC_* variables (the locale) go along too.
BASE_ENVIRONMENT = frozenset({"PATH", "HOME", "TMPDIR", "TZ", "LANG", "LANGUAGE"})


class CommandAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Command agent",
        json_schema_extra={"description": "A process that reads one JSON request per line on stdin and writes one "
                                          "JSON reply per line on stdout; one process per case.",
                           "examples": [{"type": "command", "command": ["node", "agent.js"]}]})

    type: Literal["command"] = Field(title="Kind", description="`command`: run a process.", examples=["command"])
    command: Union[list[str], str] = Field(
        title="Command",
        description="The program and its arguments, as a list or as one string split like a shell would "
        "(no shell features). Run from `cwd`.", examples=[["python", "agent.py"], "node agent.js --quiet"])
    cwd: Optional[str] = Field(
        None, title="Working folder", description="Where the command runs (relative to evalrun.yaml). Default: "
        "the folder of evalrun.yaml.", examples=["agents"])
    env: dict[str, str] = Field(
        default_factory=dict, title="Environment",
        description="Variables the process gets besides PATH, HOME, TMPDIR, TZ and the locale (LANG, LANGUAGE, "
        "LC_*). `${NAME}` is replaced by the variable NAME of evalrun's environment. Values never appear in "
        "reports or logs.",
        examples=[{"AGENT_TOKEN": "${AGENT_TOKEN}", "LOG_LEVEL": "debug"}])
    inherit_env: bool = Field(
        False, title="Inherit the environment",
        description="true: the process gets evalrun's whole environment (every API key in it included), plus `env`. "
        "false (the default): only PATH, HOME, TMPDIR, TZ, the locale and `env`.", examples=[True])
    timeout_s: float = Field(
        60, gt=0, title="Turn timeout (seconds)", description="How long the process may take to answer one turn.",
        examples=[60])
    stderr_lines: int = Field(
        50, ge=0, title="Kept stderr lines", description="How many of the last stderr lines are kept with the case.",
        examples=[50])
    max_reply_bytes: int = Field(
        DEFAULT_MAX_REPLY_BYTES, gt=0, title="Largest reply (bytes)",
        description="How long one reply line may be; a longer one is that case's error (it is never read whole). "
        "Default 16 MiB.", examples=[67108864])

    @field_serializer("env")
    def _hide_values(self, env: dict[str, str]) -> dict[str, str]:
        return {name: redacted(value) for name, value in env.items()}


class CommandAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: CommandAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.base_dir = Path(env.base_dir)
        self._secrets: list[str] = []
        self.channel = ProcessChannel("the agent process", stderr_lines=options.stderr_lines,
                                      max_line_bytes=options.max_reply_bytes, secrets=self._secrets,
                                      limit_hint=f" (max_reply_bytes: {options.max_reply_bytes}; raise it to "
                                                 "allow longer replies)")

    @property
    def process(self):
        return self.channel.process

    def _argv(self) -> list[str]:
        command = self.options.command
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise AgentError("command is empty")
        return argv

    def _environment(self) -> dict[str, str]:
        """What the process sees: evalrun's whole environment with `inherit_env: true`, else only the
        basics every program needs (so a judge's or simulator's API key never reaches the agent), plus `env:`."""
        if self.options.inherit_env:
            environment = dict(os.environ)
        else:
            environment = {name: value for name, value in os.environ.items()
                           if name in BASE_ENVIRONMENT or name.startswith("LC_")}
        for name, value in self.options.env.items():
            environment[name] = expand_env(value, f"env '{name}'")
            self._secrets.append(environment[name])
        return environment

    async def start(self, case) -> None:
        argv = self._argv()
        environment = self._environment()
        cwd = (self.base_dir / self.options.cwd) if self.options.cwd else self.base_dir
        try:
            await self.channel.start(argv, str(cwd), environment)
        except OSError as exc:
            raise AgentError(f"cannot start command {excerpt(argv[0])} (in {cwd}): "
                             f"{exc.strerror or type(exc).__name__}") from None

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        request = json.dumps({"messages": messages, **ctx.to_json()}, ensure_ascii=False) + "\n"
        what = f"turn {ctx.turn}"
        await self.channel.send(request.encode("utf-8"), self.options.timeout_s, what)
        line = await self.channel.receive(self.options.timeout_s, what)
        text = line.decode("utf-8", "replace")
        try:
            data = reply_json(text)
        except ValueError as exc:
            raise AgentError(self.channel.with_stderr(
                f"the agent process answered {what} with a line that is {unreadable_reply(exc)}: "
                f"{excerpt(scrub(text.strip(), self._secrets))} (logs belong on stderr)")) from None
        try:
            reply = parse_reply(data, f"the agent process's answer to {what}")
        except AgentError as exc:
            raise AgentError(self.channel.with_stderr(scrub(exc.reason, self._secrets))) from None
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages

    def stderr_tail(self) -> list[str]:
        return self.channel.stderr_tail()

    async def close(self) -> None:
        await self.channel.close()

    def kill(self) -> None:
        self.channel.kill()


Options = CommandAgentOptions  # the registry reads each kind's Options


def create(name: str, options: CommandAgentOptions, env: AgentEnv) -> CommandAgent:
    return CommandAgent(name, options, env)
