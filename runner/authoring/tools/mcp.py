"""An MCP server's tools, listed over stdio with the `mcp` package (an optional extra: evalrun[mcp])."""
from __future__ import annotations

import sys
from typing import Any

from .defs import ToolsError, without_titles

MCP_TIMEOUT_S = 30.0
_MCP_MAX_TOOLS = 10_000  # a server that pages forever is stopped here


def list_mcp_tools(command: str, *, timeout_s: float = MCP_TIMEOUT_S) -> list[dict[str, Any]]:
    """The tools an MCP server lists (tools/list), the server started with `command` and spoken to over
    stdio with the `mcp` package. ToolsError when the package is missing or the server cannot be reached."""
    import shlex

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ToolsError(f"--tools-mcp {command!r}: cannot split the command: {exc}") from None
    if not argv:
        raise ToolsError("--tools-mcp: the command is empty")
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ToolsError("--tools-mcp needs the `mcp` package: pip install 'evalrun[mcp]'") from None
    import logging

    import anyio

    quiet = logging.getLogger("mcp")  # the package logs a traceback per unparsable line: the error says it once
    was_disabled, quiet.disabled = quiet.disabled, True
    try:
        listed = anyio.run(_list_mcp_tools, argv, timeout_s)
    except BaseException as exc:  # the server died, spoke no MCP, or never answered
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ToolsError(f"--tools-mcp {command!r}: could not list the server's tools: {_mcp_reason(exc)}") from None
    finally:
        quiet.disabled = was_disabled
    return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                              "parameters": _input_schema(t)}} for t in listed]


def _input_schema(tool: Any) -> dict:
    schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)  # mcp 2.x / 1.x
    return without_titles(schema) if isinstance(schema, dict) else {"type": "object"}


async def _list_mcp_tools(argv: list[str], timeout_s: float) -> list:
    import os

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    parameters = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    with anyio.fail_after(timeout_s):
        async with stdio_client(parameters, errlog=_devnull()) as (read, write):  # noqa: SIM117 - the session needs these streams
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools: list = []
                page = await session.list_tools()
                while True:
                    tools.extend(page.tools)
                    cursor = getattr(page, "next_cursor", None) or getattr(page, "nextCursor", None)
                    if not cursor or len(tools) > _MCP_MAX_TOOLS:
                        return tools
                    from mcp import types

                    page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))


def _devnull():
    import os

    return open(os.devnull, "w")


def _exception_group() -> type[BaseException] | tuple[()]:
    """The class anyio wraps failures in: the builtin from 3.11, the `exceptiongroup` backport (which anyio
    requires before 3.11) on 3.10."""
    if sys.version_info >= (3, 11):
        return BaseExceptionGroup  # noqa: F821 - a builtin from 3.11, reached only there
    try:
        from exceptiongroup import BaseExceptionGroup as backport
    except ImportError:  # no anyio, so nothing raised a group
        return ()
    return backport


def _mcp_reason(exc: BaseException) -> str:
    """The innermost cause of an exception group (anyio wraps the server's failure), worded."""
    group = _exception_group()
    while isinstance(exc, group):
        inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
        if not inner:
            break
        exc = inner[0]
    if isinstance(exc, TimeoutError):
        return "it did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"no such program: {exc.filename or exc}"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
