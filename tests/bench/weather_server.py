"""A fake OpenAI-compatible server for the wire-speed benchmark, in a process of its own (its CPU must not
count against the client measured): the bundled weather shape, answered after --delay seconds.

    python tests/bench/weather_server.py --delay 0.1      # prints its base URL, serves until killed

A request whose last message is not a tool result gets a `get_weather` tool call; one that answers a tool
call gets the text "It is 21 degrees in <city>.". Built on aiohttp's server (asyncio, no thread per
connection), so 64 concurrent keep-alive clients cost it little. Counts requests and the most in flight at
once; GET /stats returns them as JSON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import time

from aiohttp import web


def answer(request: dict) -> dict:
    messages = request.get("messages") or [{}]
    last = messages[-1]
    if last.get("role") == "tool":
        city = "Paris"
        for message in messages:
            for call in message.get("tool_calls") or []:
                city = json.loads(call["function"]["arguments"]).get("city", city)
        message = {"role": "assistant", "content": f"It is 21 degrees in {city}."}
        finish = "stop"
    else:
        text = str(last.get("content") or "")
        city = text.rsplit(" ", 1)[-1].strip("?.") or "Paris"
        message = {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{time.monotonic_ns()}", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]}
        finish = "tool_calls"
    return {"id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28}}


def app(delay: float) -> web.Application:
    stats = {"requests": 0, "in_flight": 0, "max_in_flight": 0}

    async def chat(request: web.Request) -> web.Response:
        stats["requests"] += 1
        stats["in_flight"] += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
        try:
            body = json.loads(await request.read())
            if delay:
                await asyncio.sleep(delay)
            return web.Response(body=json.dumps(answer(body)).encode(), content_type="application/json")
        finally:
            stats["in_flight"] -= 1

    async def read_stats(request: web.Request) -> web.Response:
        return web.json_response(stats)

    application = web.Application()
    application.router.add_post("/v1/chat/completions", chat)
    application.router.add_get("/stats", read_stats)
    return application


async def serve(delay: float) -> None:
    runner = web.AppRunner(app(delay), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    port = runner.addresses[0][1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.1, help="seconds before each answer")
    try:
        asyncio.run(serve(parser.parse_args().delay))
    except KeyboardInterrupt:
        pass
