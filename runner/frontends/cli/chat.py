"""`evalrun record` without --from: a person chats with an agent in the terminal, and the chat becomes a draft.

The conversation runs through the same code as a live case of a run (runner/run/conversation.py): the
agent evalrun.yaml declares, started, asked once per user message and closed. The person is the user:
`TerminalUser` shows what the agent did since the last message (its text, each tool call with its
arguments and result) and reads the next message. `/save`, Ctrl-D and Ctrl-C end the chat; what was
said is then written as a draft suite and the conversation beside it (output.py).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

from ...run.simulate import UserMove
from ...transcripts.read import build_trajectory, content_text
from ...transcripts.recording import Recording
from ...util.secrets import redact

SAVE = "/save"
HELP = "/help"
_RESULT_SHOWN = 300  # characters of a tool result shown; the transcript keeps all of it


class TerminalUser:
    """The user side of a live conversation, played by the person at the terminal."""

    default_max_turns: int | None = None

    def __init__(self, out: TextIO, read_line=input, echo: bool = False):
        self.out = out
        self.read_line = read_line
        self.echo = echo  # input from a pipe is not echoed by a terminal: show it, so the log reads as a chat
        self.shown = 0  # messages of the conversation already shown
        self.ended_by: str | None = None  # "/save", "Ctrl-D" or "Ctrl-C"

    def ending_without_asking(self) -> str | None:
        return None

    async def next_message(self, messages: list[dict]) -> UserMove:
        self.show_new(messages)
        while True:
            try:
                line = self.read_line("you> ")
            except EOFError:
                self.ended_by = "Ctrl-D"
                print(file=self.out)
                return UserMove(stop="user_stop")
            except KeyboardInterrupt:
                self.ended_by = "Ctrl-C"
                print(file=self.out)
                return UserMove(stop="user_stop")
            if self.echo:
                print(line, file=self.out)
            text = line.strip()
            if text == SAVE:
                self.ended_by = SAVE
                return UserMove(stop="user_stop")
            if text == HELP or not text:
                print("Type the user's message and press Enter. /save (or Ctrl-D, Ctrl-C) ends the chat and writes "
                      "the draft.", file=self.out)
                continue
            self.shown = len(messages) + 1  # the person's own message is on their screen already
            return UserMove(message=line)

    def show_new(self, messages: list[dict]) -> None:
        show_messages(messages[self.shown:], self.out)
        self.shown = len(messages)


def show_messages(messages: list[dict], out: TextIO, *, users: bool = False) -> None:
    """What the agent did (its text, each tool call with its arguments, each result), control characters
    made visible; with `users`, the user's messages too."""
    from ...report.console import visible

    for message in messages:
        role = message.get("role")
        if role == "user" and users:
            print(f"user> {visible(content_text(message.get('content')))}", file=out)
        elif role == "assistant":
            text = content_text(message.get("content")).strip()
            if text:
                print(f"agent> {visible(text)}", file=out)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                print(f"  call  {visible(str(function.get('name')))} {visible(_arguments(function.get('arguments')))}",
                      file=out)
        elif role == "tool":
            print(f"  result {visible(_short(content_text(message.get('content'))))}", file=out)
    out.flush()


def _arguments(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False, default=str)


def _short(text: str) -> str:
    text = redact(text)  # before the cut, which would leave a fragment of a secret no redactor knows
    return text if len(text) <= _RESULT_SHOWN else text[:_RESULT_SHOWN] + f"… ({len(text)} characters)"


def _raise_interrupt(signum, frame):  # not signal.default_int_handler: asyncio then leaves Ctrl-C to us
    raise KeyboardInterrupt


def chat_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ...authoring.write.output import is_folder_target
    from ...run.agent_choice import AgentNotFound, agent_for, agent_name_for
    from ...run.conversation import Conversation, converse
    from ...suite.models import Case, SourceRef
    from .record_console import load_record_config

    loaded = load_record_config(args, err)
    if loaded is None:
        return 4
    if args.annotate:
        from ...authoring.record.annotate import NoJudge, check_judge

        try:
            check_judge(loaded)
        except NoJudge as exc:
            print(f"evalrun record: {exc}", file=err)
            return 4
    stem = args.output.stem if not is_folder_target(args.output) and not args.output.exists() else "chat"
    case = Case(id=stem, source=SourceRef(path="<chat>"))
    chatty = [n for n, agent in loaded.config.agents.items() if agent.type != "replay"]
    chosen = args.agent or loaded.config.default_agent or (chatty[0] if len(chatty) == 1 else None)
    try:
        if chosen is None and len(loaded.config.agents) > 1:
            raise AgentNotFound(f"which agent? name one with --agent (declared: {', '.join(loaded.config.agents)})")
        name = agent_name_for(case, loaded.config, chosen)
        if loaded.config.agents[name].type == "replay":
            raise AgentNotFound(f"agent '{name}' replays recordings and cannot chat; use `evalrun record --from` "
                                "with its transcripts, or name another agent with --agent")
        _prepare_models(loaded, name)
        agent = agent_for(case, loaded, override=name)
    except AgentNotFound as exc:
        print(f"evalrun record: {exc.reason}", file=err)
        return 4
    case = case.model_copy(update={"agent": name})
    user = TerminalUser(out, echo=not sys.stdin.isatty())
    conversation = Conversation()
    print(f"Chatting with agent '{name}'. Type the user's messages; /save, Ctrl-D or Ctrl-C ends the chat and "
          "writes the draft.", file=out)
    previous = signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        asyncio.run(converse(case, agent, user, conversation=conversation))
    except KeyboardInterrupt:  # during the agent's turn: it was stopped; what was said until then is kept
        user.ended_by = "Ctrl-C"
        print(file=out)
    finally:
        signal.signal(signal.SIGINT, previous)
    user.show_new(conversation.messages)
    if conversation.error is not None:
        print(f"the agent failed: {conversation.error}", file=err)
    return _save(conversation, name, case.id, args.output, out, err, loaded, args.annotate)


def _prepare_models(loaded, name: str) -> None:
    """A model agent's client, as a run prepares it (no cache: a chat wants fresh answers)."""
    from ...llm.client import prepare_transports
    from ...llm.runtime import configure

    prepare_transports([loaded.config.agents[name]])
    configure(concurrency=1, cache_dir=None, no_cache=True)


def _save(conversation, agent_name: str, case_id: str, target: Path, out: TextIO, err: TextIO, loaded,
          annotate: bool) -> int:
    from ...authoring.record.draft import NothingToCheck, draft_case
    from ...authoring.write.output import OutputError, Planned, redacted_recording, suite_ids, write_drafts
    from .record_console import print_written, shown

    if not any(m.get("role") == "user" for m in conversation.messages):
        print("nothing to save: no message was sent", file=err)
        return 5
    # every secret masked before the judge (--annotate) reads the chat, and before anything is written
    recording = redacted_recording(Recording(messages=conversation.messages,
                                             termination_reason=conversation.termination_reason))
    try:
        draft = draft_case(build_trajectory(recording.messages), case_id)
    except NothingToCheck as exc:
        print(f"evalrun record: no draft: {exc}", file=err)
        return 4
    draft.agent = agent_name
    draft.description = f"Recorded in a chat with {agent_name}"
    if annotate:  # the judge is set up now: the chat's agent had the LLM layer to itself
        from ...authoring.record.annotate import annotator_for

        annotator_for(loaded)(draft, recording)
    intro = [f"Draft written by `evalrun record` from a chat with {agent_name}: read the lines marked `check:`.",
             "It runs live against the agent; the chat itself is saved under transcripts/ beside this file."]
    planned = Planned(draft, recording, link_transcript=False)
    try:
        written = write_drafts([planned], target, intro, suite_ids(loaded, target))
    except OutputError as exc:
        print(f"evalrun record: {exc}", file=err)
        return exc.exit_code
    print_written(written, [draft], target, out)
    if planned.transcript_path is not None:
        print(f"replay the chat without the agent: evalrun run {shown(written.suites[0])} --replay "
              f"{shown(planned.transcript_path.parent)}", file=out)
    return 0


