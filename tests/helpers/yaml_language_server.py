"""The YAML language server editors use (Red Hat's `yaml-language-server`, npm), driven over stdio with
LSP messages, as VS Code drives it: what an editor underlines in a suite under our JSON Schema.

It is installed by `.ci/run` (`npm ci --prefix .ci/yaml-language-server`, pinned by the lockfile there);
$EVALRUN_YAML_LANGUAGE_SERVER may name the server's `bin/yaml-language-server` instead. When it is
missing, a test skips with the reason, and fails where EVALRUN_REQUIRE_YAML_LANGUAGE_SERVER=1 (`.ci/run`
sets it), where a skip would hide a test that never ran (tests/helpers/external.py).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

from tests.helpers.external import missing

REPO = Path(__file__).resolve().parents[2]
INSTALLED = REPO / ".ci" / "yaml-language-server" / "node_modules" / "yaml-language-server" / "bin" / "yaml-language-server"


def server_path() -> Path | None:
    configured = os.environ.get("EVALRUN_YAML_LANGUAGE_SERVER")
    path = Path(configured) if configured else INSTALLED
    return path if path.is_file() and shutil.which("node") else None


def require_server() -> Path:
    __tracebackhide__ = True  # the skip is reported at the test that needs it
    path = server_path()
    if path is None:
        missing("yaml-language-server not found (install it with `npm ci --prefix .ci/yaml-language-server`, "
                "as .ci/run does, or set $EVALRUN_YAML_LANGUAGE_SERVER), or node is not on PATH",
                "EVALRUN_REQUIRE_YAML_LANGUAGE_SERVER")
    return path


class LanguageServer:
    """One server process; `diagnostics_of_all(paths)` opens files under the schemas `associate` mapped and
    returns what the server publishes for each."""

    def __init__(self, server: Path, root: Path):
        self.process = subprocess.Popen(["node", str(server), "--stdio"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.incoming: Queue = Queue()
        self.next_id = 0
        self.settings: dict[str, Any] = {}  # what the server pulls with workspace/configuration, by section
        self.configured = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"publishDiagnostics": {"relatedInformation": False}}}})
        self.notify("initialized", {})

    def associate(self, schemas: dict[Path, list[str]]) -> None:
        """Map files to schemas (schema -> globs, `!` negates), as `yaml.schemas` in VS Code's settings does.
        The server pulls its settings (workspace/configuration) when told they changed; wait until it has them."""
        self.settings = {"yaml": {"validate": True, "hover": False, "completion": False, "format": {"enable": False},
                                  "schemaStore": {"enable": False},
                                  "schemas": {schema.as_uri(): globs for schema, globs in schemas.items()}}}
        self.configured.clear()
        self.notify("workspace/didChangeConfiguration", {"settings": self.settings})
        if not self.configured.wait(30):
            raise TimeoutError("yaml-language-server did not ask for its settings")
        # the server answers a code-lens request only once the settings it pulled are applied
        self.request("textDocument/codeLens", {"textDocument": {"uri": "file:///nothing.yaml"}})

    def diagnostics_of_all(self, paths: list[Path], timeout: float = 60) -> dict[Path, list[dict[str, Any]]]:
        """What the server publishes first for each path (its diagnostics), the files opened together: the server
        validates each after a pause, which one file at a time makes a wait per file (~0.2 s), not one for all."""
        uris = {path.resolve().as_uri(): path for path in paths}
        for uri, path in uris.items():
            self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                                                  "text": path.read_text(encoding="utf-8")}})
        found: dict[Path, list[dict[str, Any]]] = {}
        deadline = time.monotonic() + timeout
        try:
            while len(found) < len(uris):
                try:
                    message = self.incoming.get(timeout=max(0.01, deadline - time.monotonic()))
                except Empty:
                    waiting = sorted(str(uris[uri]) for uri in uris if uris[uri] not in found)
                    raise TimeoutError(f"yaml-language-server published no diagnostics for {waiting}") from None
                if message.get("method") == "textDocument/publishDiagnostics":
                    path = uris.get(message["params"]["uri"])
                    if path is not None and path not in found:  # the first publish: the one for the opened text
                        found[path] = message["params"]["diagnostics"]
        finally:
            for uri in uris:
                self.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return found

    def request(self, method: str, params: dict, timeout: float = 60) -> Any:
        self.next_id += 1
        wanted = self.next_id
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.incoming.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("id") == wanted and "method" not in message:
                return message.get("result")

    def notify(self, method: str, params: dict) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            message = json.loads(stream.read(int(headers["content-length"])))
            if "id" in message and "method" in message:  # the server asks the client something: answer plainly
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message)})
            else:
                self.incoming.put(message)

    def _answer(self, message: dict) -> Any:
        if message["method"] == "workspace/configuration":
            answer = [self.settings.get(item.get("section")) for item in message["params"]["items"]]
            self.configured.set()
            return answer
        return None

    def close(self) -> None:
        try:
            self.request("shutdown", {}, timeout=10)
            self.notify("exit", {})
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()
