"""A small HTTP agent on 127.0.0.1 for the `http` target's tests: the path picks the behaviour.

/messages    {"messages": [{"role": "assistant", "content": "you said: <last>"}]}
/completion  the same answer as an OpenAI chat completion
/stop        /messages with "stop": true
/slow        answers after 2 s
/error       HTTP 500, the body repeating the request's Authorization header (as careless servers do)
/notjson     200 with an HTML body
/trickle     a valid reply sent one byte every 0.05 s (each read is quick, the whole takes seconds)
/trickle-fast  the same, one byte every 0.005 s (the whole in ~0.3 s: for a reply that must be read whole)
/huge        a valid reply of HUGE_BYTES, sent without Content-Length (the length is known at the end)
/declared    headers saying Content-Length: 300 MB, then a trickle of bytes that never ends
/gzipbomb    a small gzip body that inflates to 64 MiB
/redirect    302 to `redirect_to` (default http://elsewhere.example/chat)
/raw         200 with `reply_text` as it is
GET /state   `state_status` with `state_text` (a state_url); GET on the misbehaving paths above misbehaves alike
Every request body and its headers are kept in `requests` (a GET's body as {}).
"""
from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HUGE_BYTES = 20 * 1024 * 1024
_BOMB = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)


class AgentServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict, dict]] = []
        self.reply_text = ""
        self.redirect_to = "http://elsewhere.example/chat"
        self.state_text = "{}"
        self.state_status = 200
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> AgentServer:
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

        def do_GET(self) -> None:
            owner.requests.append((self.path, {}, dict(self.headers)))
            self.path = self.path.split("?")[0]  # the query names the conversation; the path picks the behaviour
            try:
                if self._hostile("state"):
                    return
            except (BrokenPipeError, ConnectionResetError):
                return
            data = owner.state_text.encode()
            self._head(owner.state_status, {"Content-Length": str(len(data))})
            self.wfile.write(data)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            owner.requests.append((self.path, body, dict(self.headers)))
            last = body["messages"][-1]["content"]
            try:
                if self._hostile(last):
                    return
            except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                return
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
            elif self.path == "/raw":
                answer = owner.reply_text
            data = (answer if isinstance(answer, str) else json.dumps(answer)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

        def _hostile(self, last: str) -> bool:
            """The paths whose replies misbehave on the wire; False for the others."""
            reply = json.dumps({"messages": [{"role": "assistant", "content": f"you said: {last}"}]}).encode()
            if self.path in ("/trickle", "/trickle-fast"):
                self._head(200, {"Content-Length": str(len(reply))})
                pace = 0.05 if self.path == "/trickle" else 0.005
                for byte in reply:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(pace)
            elif self.path == "/huge":
                self._head(200, {})  # no length: the body ends when the connection closes
                self.wfile.write(b'{"messages": [{"role": "assistant", "content": "')
                for _ in range(HUGE_BYTES // 65536):
                    self.wfile.write(b"x" * 65536)
                self.wfile.write(b'"}]}')
            elif self.path == "/declared":
                self._head(200, {"Content-Length": str(300 * 1024 * 1024)})
                while True:
                    self.wfile.write(b"x" * 1024)
                    self.wfile.flush()
                    time.sleep(0.01)
            elif self.path == "/gzipbomb":
                self._head(200, {"Content-Encoding": "gzip", "Content-Length": str(len(_BOMB))})
                self.wfile.write(_BOMB)
            elif self.path == "/redirect":
                self._head(302, {"Location": owner.redirect_to, "Content-Length": "0"})
            else:
                return False
            return True

        def _head(self, status: int, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()

    return Handler
