"""The layer's own event loop, in a daemon thread: blocking calls from threads (scoring) and every litellm
call run on it. It never closes during the process; at exit, the cleanups registered here (litellm's
logging worker drained, pooled HTTP sessions closed) run on it before it stops, so the interpreter's exit
finds nothing pending to complain about, and the loop itself is closed (an unclosed loop is a ResourceWarning
when the interpreter collects it)."""
from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Awaitable, Callable
from typing import Any

Cleanup = Callable[[], Awaitable[None]]

_layer: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()
_cleanups: list[Cleanup] = []
_closed: list[bool] = []
_thread: threading.Thread | None = None


def layer_loop() -> asyncio.AbstractEventLoop:
    """The layer's loop: one per process, shared by every run, started on first use."""
    global _layer, _thread
    with _lock:
        if _layer is None or _layer.is_closed():
            loop = asyncio.new_event_loop()
            _thread = threading.Thread(target=loop.run_forever, name="evalrun-llm", daemon=True)
            _thread.start()
            _layer = loop
            atexit.register(_close)
        return _layer


async def run_aside(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in a thread of its own, awaited: blocking work a call needs while it holds its slot of the
    run's limit (reading the price list, importing litellm), a few times a process. Never in the calling loop's
    default executor: the caller's threads may fill it while they wait for a slot, and then nothing frees either.
    The thread ends with the work: an idle one would keep a later run in this process from forking its pools."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not done.cancelled():
            done.set_result(result) if error is None else done.set_exception(error)

    def work() -> None:
        try:
            result, error = function(*args), None
        except BaseException as exc:
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop closed meanwhile: nobody waits any more

    threading.Thread(target=work, name="evalrun-llm-aside", daemon=True).start()
    return await done


def at_layer_exit(cleanup: Cleanup) -> None:
    """Run `cleanup` on the layer's loop at exit. Registering (again) also moves the closing after any exit
    handler registered meanwhile: handlers run last-registered first, and litellm's own (which flushes its
    logging queue on a new loop, the source of "cannot reuse already awaited coroutine") must find it empty."""
    with _lock:
        if cleanup in _cleanups:
            return
        _cleanups.append(cleanup)
    atexit.register(_close)


def _close() -> None:
    loop = _layer
    if _closed or loop is None or loop.is_closed() or not loop.is_running():
        return
    _closed.append(True)

    async def cleanups() -> None:
        for cleanup in reversed(_cleanups):
            try:
                await cleanup()
            except Exception:
                pass

    try:
        asyncio.run_coroutine_threadsafe(cleanups(), loop).result(timeout=5)
    except Exception:
        pass
    loop.call_soon_threadsafe(loop.stop)
    thread = _thread
    if thread is not None:
        thread.join(timeout=5)
    if not loop.is_running():
        loop.close()
