"""`type: command` — an agent in any language: a process speaking JSON lines on stdin/stdout.

One process per conversation. Each user turn evalrun writes one line, the same body the http kind
POSTs (`{"messages": [...], "case_id": ..., "turn": n, "runtime_context": {...}}`), and reads one
line back in the same shapes (`{"messages": [...]}`, optionally `"stop": true`, or a chat
completion). Logs belong on stderr: its last lines are kept with the case. A crash, a line that is not
JSON, a line longer than `max_reply_bytes` or no answer within `timeout_s` is that case's error, quoting
the last stderr lines. When the conversation ends evalrun closes stdin, then stops the process's whole
group, children included, whatever the process itself did (runner.run.agents._process).

The state of the agent's world after the conversation (what a case's `final_state:` is compared
with) is the JSON file named by `state_file`, read once after the last turn's answer: each conversation
gets an empty folder of its own, passed to the process as EVALRUN_CASE_DIR, and the file's full path as
EVALRUN_STATE_FILE. A file that is not there leaves the case unscored; one that is not a regular file,
is larger than `max_reply_bytes`, or is not JSON is the case's error. Without `state_file`, the state is
the `state` of the last reply line that carried one.

The process gets a minimal environment (BASE_ENVIRONMENT and the locale's LC_* variables) plus what
`env:` names: evalrun's own variables, a judge's API key among them, stay out unless `inherit_env: true`.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from runner.transcripts.state import ReportedState

from ._base import (
    Agent,
    AgentEnv,
    AgentError,
    AgentStop,
    TurnContext,
    check_state,
    excerpt,
    parse_reply,
    reply_json,
    tools_field,
    unreadable_reply,
)
from ._env_refs import expand_env, redacted, scrub
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
    tools: list[dict[str, Any]] | None = tools_field()
    command: list[str] | str = Field(
        title="Command",
        description="The program and its arguments, as a list or as one string split like a shell would "
        "(no shell features). Run from `cwd`.", examples=[["python", "agent.py"], "node agent.js --quiet"])
    cwd: str | None = Field(
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

    state_file: str | None = Field(
        None, min_length=1, title="State file",
        description="Where the process writes the state of its world as JSON (what a case's `final_state:` is "
        "compared with), relative to the folder evalrun creates for each conversation and passes as "
        "EVALRUN_CASE_DIR (the file's full path is EVALRUN_STATE_FILE). Read once after the last turn; at most "
        "`max_reply_bytes`.", examples=["state.json"])

    @field_validator("state_file")
    @classmethod
    def _inside_the_case_folder(cls, value: str | None) -> str | None:
        if value is not None and (PurePosixPath(value).is_absolute() or ".." in PurePosixPath(value).parts
                                  or "\\" in value):
            raise ValueError("state_file is a relative path inside the conversation's folder, without '..'")
        return value

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
        self.case_dir: Path | None = None  # the conversation's own folder, with a state_file
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
        if self.case_dir is not None and self.options.state_file is not None:
            environment["EVALRUN_CASE_DIR"] = str(self.case_dir)
            environment["EVALRUN_STATE_FILE"] = str(self.case_dir / self.options.state_file)
        return environment

    async def start(self, case) -> None:
        if self.options.state_file is not None:
            self.case_dir = Path(tempfile.mkdtemp(prefix="evalrun-case-"))
            (self.case_dir / self.options.state_file).parent.mkdir(parents=True, exist_ok=True)
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
        self.keep_reply_state(reply, f"the agent process's answer to {what}")
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        if self.options.state_file is None or self.case_dir is None:
            return await super().final_state(ctx)
        path = self.case_dir / self.options.state_file
        where = f"the state_file {self.options.state_file}"
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            return ReportedState.none(f"agent '{self.name}' did not write its state_file {self.options.state_file} "
                                      "(the process finds its full path in EVALRUN_STATE_FILE)")
        except OSError as exc:
            raise AgentError(f"{where} cannot be read: {exc.strerror or type(exc).__name__}") from None
        if not stat.S_ISREG(found.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(found.st_mode) else "not a regular file"
            raise AgentError(f"{where} is {kind}; the process must write its state into the file itself")
        from runner.util.files import InputFileError, read_bytes

        limit = self.options.max_reply_bytes
        try:
            raw = read_bytes(path, limit, "state files")
        except InputFileError as exc:
            raise AgentError(f"{where} cannot be read: {exc} (max_reply_bytes: {limit})") from None
        text = raw.decode("utf-8", "replace")
        try:
            value = reply_json(text)
        except ValueError as exc:
            raise AgentError(f"{where} is {unreadable_reply(exc)}: {excerpt(scrub(text.strip(), self._secrets))}") \
                from None
        return ReportedState(value=check_state(value, where), source=where)

    def how_to_report_state(self) -> str:
        return "it has no `state_file`, and its replies carried no `state`"

    def stderr_tail(self) -> list[str]:
        return self.channel.stderr_tail()

    async def close(self) -> None:
        try:
            await self.channel.close()
        finally:
            if self.case_dir is not None:
                shutil.rmtree(self.case_dir, ignore_errors=True)

    def kill(self) -> None:
        self.channel.kill()
        if self.case_dir is not None:
            shutil.rmtree(self.case_dir, ignore_errors=True)


Options = CommandAgentOptions  # the registry reads each kind's Options


def create(name: str, options: CommandAgentOptions, env: AgentEnv) -> CommandAgent:
    return CommandAgent(name, options, env)
