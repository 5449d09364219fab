"""The worker process of a `python` agent with `isolate: process`: it imports the agent once, then
answers one turn per request line until its input ends.

The protocol runs over the stdin and stdout evalrun gave the process, one JSON object per line (ASCII,
so any text, lone surrogates included, arrives as it was). Before the agent's module is imported those
two descriptors are moved aside to private copies that no child inherits: file descriptor 0 becomes
/dev/null and 1 becomes stderr, so whatever the agent prints or reads — from Python, C code or a
program it starts — cannot touch the protocol; its prints reach evalrun's kept stderr lines.

    worker -> evalrun  {"ready": true, "has_state": <a state(context) function beside it>}
                       | {"failed": "<why the entry point cannot be loaded>"}
    evalrun -> worker  {"messages": [...], "context": {"case_id": ..., "turn": n, "runtime_context": {...}}}
                       | {"state": true, "context": {...}}   (after the last turn: call state(context))
    worker -> evalrun  {"reply": <what the function returned>} | {"raised": "<exception summary>"}
                       | {"unsendable": "<why the return value is not JSON>"}

An async function runs on one event loop that lives as long as the worker, so what it keeps between
turns (a client session, say) stays usable. The worker never stops for what the agent raises; it ends
when its input does, or when evalrun kills its process group (a timeout, a cancelled run).
"""
from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from ._base import AgentError, TurnContext, deep_json_text
from ._entrypoint import exception_summary
from .python import find_state_function, load_entrypoint


def _private_protocol_streams() -> tuple[BinaryIO, BinaryIO]:
    """The protocol's own copies of stdin/stdout; 0 and 1 then point at /dev/null and stderr."""
    requests = os.fdopen(os.dup(0), "rb")  # dup'ed descriptors are not inherited by child processes
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a TextIOWrapper here; prints reach stderr as they happen, even if the worker dies
    return requests, replies


def serve(entrypoint: str, base_dir: str) -> None:
    requests, replies = _private_protocol_streams()

    def send(answer: dict) -> None:
        replies.write(json.dumps(answer).encode("ascii") + b"\n")
        replies.flush()

    try:
        function = load_entrypoint(entrypoint, Path(base_dir))
    except AgentError as exc:
        send({"failed": exc.reason})
        return
    state_function = find_state_function(entrypoint)
    send({"ready": True, "has_state": state_function is not None})
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        for line in requests:
            request = json.loads(line)
            try:
                context = TurnContext(**request["context"])
                if request.get("state"):
                    result = _call(state_function, (context,), loop)  # type: ignore[arg-type]  # asked only when has_state
                else:
                    result = _call(function, (request["messages"], context), loop)
            except BaseException as exc:  # whatever the agent raises is its answer, SystemExit included
                send({"raised": exception_summary(exc)})
                continue
            try:
                answer = json.dumps({"reply": result})
            except RecursionError:  # tool arguments nested past json's reach: evalrun reads them as text
                answer = deep_json_text({"reply": result})
            except (TypeError, ValueError) as exc:
                send({"unsendable": f"{type(exc).__name__}: {exc}"[:400]})
                continue
            replies.write(answer.encode("ascii") + b"\n")
            replies.flush()
    finally:
        loop.close()


def _call(function: Callable[..., Any], args: tuple, loop: asyncio.AbstractEventLoop) -> Any:
    if inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(getattr(function, "__call__", None)):  # noqa: B004 - the method, not callability
        return loop.run_until_complete(function(*args))
    result = function(*args)
    if inspect.isawaitable(result):
        result = loop.run_until_complete(result)
    return result
