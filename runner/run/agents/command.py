"""`type: command` — an agent in any language: a process speaking JSON lines on stdin/stdout.

One process per conversation. Each user turn evalrun writes one line, the same body the http kind
POSTs (`{"messages": [...], "case_id": ..., "turn": n, "runtime_context": {...}}`), and reads one
line back in the same shapes (`{"messages": [...]}`, optionally `"stop": true`, or a chat
completion). Logs belong on stderr: its last lines are kept with the case. A crash, a line that is not
JSON or no answer within `timeout_s` is that case's error, quoting the last stderr lines. When the
conversation ends evalrun closes stdin, then terminates the process (and its children) if it lingers.
"""
from __future__ import annotations

import asyncio
import collections
import json
import os
import shlex
import signal
from pathlib import Path
from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from ._base import (Agent, AgentEnv, AgentError, AgentStop, TurnContext, excerpt, expand_env, parse_reply, redacted, scrub)
from ._base import tools_field

KIND = "command"
LINE_LIMIT = 16 * 1024 * 1024  # one reply line may be this long
ERROR_STDERR_LINES = 5  # how many stderr lines an error message quotes (all kept lines go with the case)


class CommandAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="Command agent",
        json_schema_extra={"description": "A process that reads one JSON request per line on stdin and writes one "
                                          "JSON reply per line on stdout; one process per case.",
                           "examples": [{"type": "command", "command": ["node", "agent.js"]}]})

    type: Literal["command"] = Field(title="Kind", description="`command`: run a process.", examples=["command"])
    tools: Optional[list[dict[str, Any]]] = tools_field()
    command: Union[list[str], str] = Field(
        title="Command",
        description="The program and its arguments, as a list or as one string split like a shell would "
        "(no shell features). Run from `cwd`.", examples=[["python", "agent.py"], "node agent.js --quiet"])
    cwd: Optional[str] = Field(
        None, title="Working folder", description="Where the command runs (relative to evalrun.yaml). Default: "
        "the folder of evalrun.yaml.", examples=["agents"])
    env: dict[str, str] = Field(
        default_factory=dict, title="Environment",
        description="Variables added to the process's environment. `${NAME}` is replaced by the variable NAME "
        "of evalrun's environment. Values never appear in reports or logs.",
        examples=[{"AGENT_TOKEN": "${AGENT_TOKEN}", "LOG_LEVEL": "debug"}])
    timeout_s: float = Field(
        60, gt=0, title="Turn timeout (seconds)", description="How long the process may take to answer one turn.",
        examples=[60])
    stderr_lines: int = Field(
        50, ge=0, title="Kept stderr lines", description="How many of the last stderr lines are kept with the case.",
        examples=[50])

    @field_serializer("env")
    def _hide_values(self, env: dict[str, str]) -> dict[str, str]:
        return {name: redacted(value) for name, value in env.items()}


class CommandAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: CommandAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self.base_dir = Path(env.base_dir)
        self.process: Optional[asyncio.subprocess.Process] = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=max(options.stderr_lines, ERROR_STDERR_LINES))
        self._stderr_task: Optional[asyncio.Task] = None
        self._secrets: list[str] = []

    def _argv(self) -> list[str]:
        command = self.options.command
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise AgentError("command is empty")
        return argv

    async def start(self, case) -> None:
        argv = self._argv()
        environment = dict(os.environ)
        for name, value in self.options.env.items():
            environment[name] = expand_env(value, f"env '{name}'")
            self._secrets.append(environment[name])
        cwd = (self.base_dir / self.options.cwd) if self.options.cwd else self.base_dir
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(cwd), env=environment, limit=LINE_LIMIT,
                start_new_session=True)  # its own process group: children die with it
        except OSError as exc:
            raise AgentError(f"cannot start command {excerpt(argv[0])} (in {cwd}): "
                             f"{exc.strerror or type(exc).__name__}") from None
        self._stderr_task = asyncio.create_task(self._collect_stderr())

    async def _collect_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while True:
            try:
                line = await self.process.stderr.readline()
            except (ValueError, asyncio.LimitOverrunError):  # an endless line: keep its start
                self._stderr.append("(a stderr line too long to keep)")
                continue
            if not line:
                return
            self._stderr.append(excerpt(scrub(line.decode("utf-8", "replace").rstrip("\n"), self._secrets), 500))

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        request = json.dumps({"messages": messages, **ctx.to_json()}, ensure_ascii=False) + "\n"
        try:
            process.stdin.write(request.encode("utf-8"))
            await asyncio.wait_for(process.stdin.drain(), self.options.timeout_s)  # a process that never reads
        except (BrokenPipeError, ConnectionResetError):
            raise await self._crashed(f"before reading turn {ctx.turn}") from None
        except asyncio.TimeoutError:
            raise AgentError(self._with_stderr(f"the agent process did not read turn {ctx.turn} within "
                                               f"{self.options.timeout_s:g} s")) from None
        while True:
            try:
                line = await asyncio.wait_for(process.stdout.readline(), self.options.timeout_s)
            except asyncio.TimeoutError:
                raise AgentError(self._with_stderr(f"the agent process gave no answer to turn {ctx.turn} within "
                                                   f"{self.options.timeout_s:g} s")) from None
            except (ValueError, asyncio.LimitOverrunError):
                raise AgentError(self._with_stderr(f"the agent process wrote a line longer than {LINE_LIMIT} bytes "
                                                   f"in turn {ctx.turn}")) from None
            if not line:
                raise await self._crashed(f"before answering turn {ctx.turn}")
            if line.strip():
                break  # blank lines are tolerated between replies
        text = line.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            raise AgentError(self._with_stderr(f"the agent process answered turn {ctx.turn} with a line that is not "
                                               f"JSON: {excerpt(scrub(text.strip(), self._secrets))} (logs belong "
                                               "on stderr)")) from None
        try:
            reply = parse_reply(data, f"the agent process's answer to turn {ctx.turn}")
        except AgentError as exc:
            raise AgentError(self._with_stderr(scrub(exc.reason, self._secrets))) from None
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages

    async def _crashed(self, when: str) -> AgentError:
        assert self.process is not None
        try:
            code = await asyncio.wait_for(self.process.wait(), 5)
        except asyncio.TimeoutError:
            code = None
        await self._stderr_drained()
        how = f"exited with code {code}" if code is not None and code >= 0 else \
            f"was killed by signal {-code}" if code is not None else "closed its output"
        return AgentError(self._with_stderr(f"the agent process {how} {when}"))

    async def _stderr_drained(self) -> None:
        if self._stderr_task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 2)
            except (asyncio.TimeoutError, Exception):
                pass

    def _with_stderr(self, message: str) -> str:
        lines = list(self._stderr)[-ERROR_STDERR_LINES:]
        if not lines:
            return message + " (nothing on stderr)"
        return message + "; last stderr lines:\n" + "\n".join(f"  {line}" for line in lines)

    def stderr_tail(self) -> list[str]:
        return list(self._stderr)[-self.options.stderr_lines:] if self.options.stderr_lines else []

    async def close(self) -> None:
        process = self.process
        if process is None:
            return
        try:
            if process.returncode is None and process.stdin is not None:
                process.stdin.close()  # the polite way to say "the conversation is over"
                try:
                    await asyncio.wait_for(process.wait(), 2)
                except asyncio.TimeoutError:
                    self._signal(signal.SIGTERM)
                    try:
                        await asyncio.wait_for(process.wait(), 2)
                    except asyncio.TimeoutError:
                        self._signal(signal.SIGKILL)
                        await process.wait()
        except Exception:
            self.kill()
        await self._stderr_drained()
        if self._stderr_task is not None and not self._stderr_task.done():
            self._stderr_task.cancel()

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        process = self.process
        if process is None or process.returncode is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


Options = CommandAgentOptions  # the registry reads each kind's Options


def create(name: str, options: CommandAgentOptions, env: AgentEnv) -> CommandAgent:
    return CommandAgent(name, options, env)
