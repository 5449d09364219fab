"""The app's HTTP server (aiohttp): GET only, the JSON API of api.py under /api/, the single-page app of
static/ at /. Reports hold conversations: the server binds 127.0.0.1 unless asked otherwise, answers only
requests addressed to this machine's own names when it listens there (a page elsewhere cannot reach it by DNS
rebinding), and serves every page with a Content-Security-Policy that allows its own script only.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

from .api import NotFound, Unreadable, ViewApi, shown

STATIC = ("index.html", "page.js", "case.js", "app.js", "app.css")
_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
}


def static_text(name: str) -> str:
    return resources.files("runner.view").joinpath("static").joinpath(name).read_text(encoding="utf-8")


def make_app(api: ViewApi, allowed_hosts: set[str] | None):
    from aiohttp import web

    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="evalrun-view")

    async def off_loop(work: Callable[[], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, work)

    @web.middleware
    async def guard(request, handler):
        if request.method not in ("GET", "HEAD"):
            return _error(405, "evalrun view is read-only: GET only")
        if allowed_hosts is not None and request.host.lower() not in allowed_hosts:
            return _error(421, f"this server answers requests for {', '.join(sorted(allowed_hosts))} only")
        try:
            response = await handler(request)
        except NotFound as exc:
            response = _error(404, str(exc))
        except Unreadable as exc:
            response = _error(422, str(exc))
        except web.HTTPException:
            raise
        except Exception as exc:  # a bug, or a file that changed under the reader: said, and the server goes on
            import traceback

            traceback.print_exc()
            response = _error(500, f"evalrun view could not answer {request.path_qs}: {type(exc).__name__}: {exc}")
        response.headers.update(SECURITY_HEADERS)
        return response

    def param(request, name: str) -> str:
        value = request.query.get(name)
        if value is None:
            raise web.HTTPBadRequest(text=json.dumps({"error": f"missing ?{name}="}), content_type="application/json")
        return value

    async def page(request):
        name = request.match_info.get("name") or "index.html"
        if name not in STATIC:
            raise NotFound(f"no file {name}")
        return web.Response(text=static_text(name), content_type=_TYPES[name.rsplit(".", 1)[1]].split(";")[0],
                            charset="utf-8")

    async def runs(request):
        return _json(await off_loop(api.runs_list))

    async def run(request):
        run_id = param(request, "id")
        return _json(await off_loop(lambda: api.run(run_id)), compress=True)

    async def chunk(request):
        run_id, k = param(request, "id"), param(request, "k")
        if not k.isdigit():
            raise NotFound(f"no chunk {k!r}")
        body = await off_loop(lambda: api.chunk_gzip(run_id, int(k)))
        return web.Response(body=body, headers={"Content-Type": "application/json; charset=utf-8",
                                                "Content-Encoding": "gzip"})

    async def compare(request):
        old, new = param(request, "a"), param(request, "b")
        return _json(await off_loop(lambda: api.compare(old, new)), compress=True)

    async def case(request):
        key = param(request, "key")
        return _json(await off_loop(lambda: api.case(key)))

    app = web.Application(middlewares=[guard])
    app.router.add_get("/", page)
    app.router.add_get("/static/{name}", page)
    app.router.add_get("/api/runs", runs)
    app.router.add_get("/api/run", run)
    app.router.add_get("/api/chunk", chunk)
    app.router.add_get("/api/compare", compare)
    app.router.add_get("/api/case", case)

    async def close_pool(_app) -> None:
        pool.shutdown(wait=False, cancel_futures=True)

    app.on_cleanup.append(close_pool)
    return app


def _json(value: Any, compress: bool = False):
    from aiohttp import web

    response = web.Response(text=json.dumps(shown(value), ensure_ascii=False, separators=(",", ":")),
                            content_type="application/json", charset="utf-8")
    if compress:
        response.enable_compression()
    return response


def _error(status: int, message: str):
    from aiohttp import web

    return web.Response(status=status, text=json.dumps(shown({"error": message})), content_type="application/json")


def allowed_hosts(host: str, port: int) -> set[str] | None:
    """The Host headers a server on this machine's loopback answers (its names for itself); None for a server
    listening on another address, which was asked to be reached by whatever name the network gives it."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    return {(f"[{name}]:{port}" if ":" in name else f"{name}:{port}") for name in ("localhost", "127.0.0.1", "::1")}


def serve(given: Path, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve until interrupted. OSError when the port cannot be bound (the caller says which and why)."""
    from aiohttp import web

    api = ViewApi(given)

    async def main() -> None:
        runner = None
        try:
            # the app's host check needs the real port: bind first, then build the app's allowed hosts
            import socket

            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                raise
            sock.listen(128)
            bound = sock.getsockname()[1]
            runner = web.AppRunner(make_app(api, allowed_hosts(host, bound)), access_log=None)
            await runner.setup()
            await web.SockSite(runner, sock).start()
            shown = f"[{host}]" if ":" in host else host
            on_ready(f"http://{shown}:{bound}/")
            await asyncio.Event().wait()
        finally:
            if runner is not None:
                await runner.cleanup()

    asyncio.run(main())
