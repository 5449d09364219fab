"""A small HTTP agent on 127.0.0.1 for the `http` target's tests: the path picks the behaviour.

/messages    {"messages": [{"role": "assistant", "content": "you said: <last>"}]}
/completion  the same answer as an OpenAI chat completion
/stop        /messages with "stop": true
/slow        answers after 2 s
/error       HTTP 500, the body repeating the request's Authorization header (as careless servers do)
/notjson     200 with an HTML body
Every request body and its headers are kept in `requests`.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class AgentServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict, dict]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "AgentServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"


def _handler(owner: AgentServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            owner.requests.append((self.path, body, dict(self.headers)))
            last = body["messages"][-1]["content"]
            answer: Any = {"messages": [{"role": "assistant", "content": f"you said: {last}"}]}
            status = 200
            if self.path == "/completion":
                answer = {"id": "chatcmpl-1", "object": "chat.completion", "model": "agent",
                          "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": f"you said: {last}",
                                                   "refusal": None}}]}
            elif self.path == "/stop":
                answer["stop"] = True
            elif self.path == "/slow":
                time.sleep(2)
            elif self.path == "/error":
                status, answer = 500, {"error": f"upstream failed for {self.headers.get('Authorization')}"}
            elif self.path == "/notjson":
                answer = "<html>oops</html>"
            data = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

    return Handler
