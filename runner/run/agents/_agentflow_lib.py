"""The Agentflow / 10xGraph library as `type: agentflow` uses it: imported on first use (never by evalrun's own
startup), under either import name, and the collector attached to a graph that is already compiled.

Why the attaching is done this way (10xscale-agentflow 0.10.1 and 10xgraph 0.10.3 alike): `StateGraph.compile()`
binds its CallbackManager in the injectq container and compiles the container, which caches that instance; a
later `bind_instance` (a second compile, the evaluator's own per-case rebind) changes nothing that nodes see, so
a collector wired that way records nothing when the graph was compiled at import time, as projects do. Nodes
fetch the manager from the active container per execution: registering one dispatcher on THAT manager, once,
and routing each event to the collector of the conversation being played (a ContextVar, so concurrent
conversations stay apart) records what Agentflow's own TrajectoryCollector records: node visits, tool calls
with the arguments the tool received (declared parameters only), never a call that failed.
"""
from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._base import AgentError

INSTALL_HINT = "pip install 'evalrun[agentflow]' (or 10xgraph) in a Python >= 3.12 environment"


@dataclass
class Library:
    name: str  # the import name used: tenxgraph or agentflow
    TrajectoryCollector: Any
    PublisherCallback: Any
    AfterInvokeCallback: Any
    CallbackManager: Any
    InvocationType: Any
    Message: Any
    InjectQ: Any


_library: Library | None = None
_current: contextvars.ContextVar[Any] = contextvars.ContextVar("evalrun_agentflow_collector", default=None)
_installed: set[int] = set()


def library() -> Library:
    """The library's names, imported once (tenxgraph first, then agentflow); AgentError saying how to install it."""
    global _library
    if _library is not None:
        return _library
    if sys.version_info < (3, 12):
        raise AgentError(f"type: agentflow needs Python 3.12 or newer (Agentflow and 10xGraph require it); this "
                         f"evalrun runs on Python {sys.version.split()[0]}: {INSTALL_HINT}")
    problems = []
    for name in ("tenxgraph", "agentflow"):
        try:
            evaluation = __import__(f"{name}.qa.evaluation", fromlist=["TrajectoryCollector", "PublisherCallback"])
            callbacks = __import__(f"{name}.utils.callbacks", fromlist=["CallbackManager"])
            state = __import__(f"{name}.core.state", fromlist=["Message"])
            from injectq import InjectQ
        except ImportError as exc:
            problems.append(f"{name}: {exc}")
            continue
        _library = Library(name, evaluation.TrajectoryCollector, evaluation.PublisherCallback,
                           callbacks.AfterInvokeCallback, callbacks.CallbackManager, callbacks.InvocationType,
                           state.Message, InjectQ)
        return _library
    raise AgentError(f"type: agentflow needs 10xscale-agentflow or 10xgraph, which cannot be imported "
                     f"({'; '.join(problems)}): {INSTALL_HINT}")


def is_compiled_graph(value: Any) -> bool:
    return callable(getattr(value, "ainvoke", None)) and hasattr(value, "_state_graph")


def install(lib: Library, graph: Any) -> None:
    """Register the dispatcher once on the CallbackManager the graph's nodes really use."""
    container = lib.InjectQ.get_instance()
    manager = container.try_get(lib.CallbackManager)
    graph_container = getattr(graph._state_graph, "_container", None)
    if graph_container is not None and graph_container is not container:
        raise AgentError("the graph was compiled with its own injectq container, which is not the active one: "
                         "evalrun cannot see its node and tool events; compile it on the default container")
    if manager is None:
        raise AgentError("the graph's injectq container holds no CallbackManager: was the graph compiled?")
    if id(manager) in _installed:
        return

    class Dispatch(lib.AfterInvokeCallback):  # type: ignore[name-defined]
        async def __call__(self, context: Any, input_data: Any, output_data: Any) -> Any:
            collector = _current.get()
            if collector is None:  # a graph run that is not one of ours (or another of its callbacks)
                return output_data
            return await lib.PublisherCallback(collector)(context, input_data, output_data)

    dispatch = Dispatch()
    # what the library's make_trajectory_callback registers: AI (node completions), TOOL and MCP calls
    for kind in (lib.InvocationType.AI, lib.InvocationType.TOOL, lib.InvocationType.MCP):
        manager.register_after_invoke(kind, dispatch)
    _installed.add(id(manager))


@contextlib.contextmanager
def collecting(collector: Any) -> Iterator[Any]:
    token = _current.set(collector)
    try:
        yield collector
    finally:
        _current.reset(token)
