"""Compressed HTTP bodies are decoded within the size limit (issue 26, item 17): a few kilobytes of zstd (or gzip,
deflate) that inflate to hundreds of megabytes are the case's error, with the memory of the whole run measured
in a real subprocess against a real local server. Both places evalrun reads a body: an `http` agent (its
replies and its state_url) and the OpenAI-compatible fast path (evalrun's own HTTP/1.1 client, and aiohttp,
taken here through a proxy)."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
import zlib
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import zstandard

from tests.helpers import peak_memory
from tests.helpers.cli_helpers import cli_env, run_cli, write

MiB = 1024 * 1024
MEMORY_BOUND = 300 * MiB  # the whole evalrun process, peak; a 512 MiB bomb inflated once would pass it


@cache
def bomb(coding: str, mib: int = 0) -> bytes:
    """A small body that inflates to `mib` MiB of spaces (default: zstd 512 MiB from 16 KB; gzip and deflate
    128 MiB from 130 KB)."""
    if coding == "zstd":
        compressor = zstandard.ZstdCompressor(level=3).compressobj()
        return b"".join([compressor.compress(b" " * MiB) for _ in range(mib or 512)] + [compressor.flush()])
    # run-length matching only: as small a bomb as the default strategy's (one byte repeated), at a third of the
    # CPU (0.7 s for the 512 MiB one, not 2.7 s)
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16 if coding == "gzip" else zlib.MAX_WBITS,
                                  strategy=zlib.Z_RLE)
    return b"".join([compressor.compress(b" " * MiB) for _ in range(mib or 128)] + [compressor.flush()])


def encoded(coding: str, data: bytes) -> bytes:
    if coding == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    if coding == "gzip":
        return gzip.compress(data)
    if coding == "raw-deflate":  # what some servers send as `deflate`
        compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        return compressor.compress(data) + compressor.flush()
    return zlib.compress(data)


class Server:
    """127.0.0.1: each path answers with (Content-Encoding, body); a proxied request (absolute URI) too."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[str, bytes]] = {}
        self.seen_accept: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._answer()

            def _answer(self) -> None:
                owner.seen_accept.append(self.headers.get("Accept-Encoding", ""))
                path = "/" + self.path.split("://", 1)[-1].split("/", 1)[-1] if "://" in self.path else self.path
                coding, body = owner.routes[path.split("?")[0]]
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Encoding", coding)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        # shutdown() waits for the loop to see its flag: at the default poll of 0.5 s, half a second per test
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    with Server() as running:
        yield running


def run_measured(root: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, int]:
    """`evalrun suites` in a subprocess; its result and its own peak memory (tests/helpers/peak_memory.py)."""
    return peak_memory.run_measured([sys.executable, "-m", "runner", "suites", "--output-dir", "out", *args], root,
                                    cli_env(**env))


def run_here(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`evalrun suites` in this process, for the tests that need no memory figure."""
    return run_cli("suites", "--output-dir", "out", *args, cwd=root, env=env)


def case_of(root: Path) -> dict:
    return json.loads((root / "out" / "report.json").read_text(encoding="utf-8"))["cases"][0]


def http_project(root: Path, url: str, **agent: str) -> None:
    extra = "".join(f", {key}: {value}" for key, value in agent.items())
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          web: {{type: http, url: "{url}", max_reply_bytes: 1048576{extra}}}
        """)
    write(root / "suites" / "s.yaml", """
        id: bomb
        agent: web
        starting_sentence: hi
        goal_details: [{type: text, name: t, keywords: [ok]}]
        """)


@pytest.mark.process  # the command's own peak memory, which only a process of its own has
@pytest.mark.parametrize("coding", ["zstd", "gzip", "deflate"])
def test_an_http_agents_compressed_bomb_is_the_cases_error_in_bounded_memory(tmp_path, server, coding):
    server.routes["/chat"] = (coding, bomb(coding))
    http_project(tmp_path, server.url + "/chat")
    done, peak = run_measured(tmp_path)
    assert peak < MEMORY_BOUND, f"peak memory {peak / MiB:.0f} MiB"
    assert done.returncode == 3, done.stdout + done.stderr  # an agent error: exit 3, with a report
    case = case_of(tmp_path)
    assert (case["status"], case["error"]) == ("error", (
        f"the reply from {server.url}/chat is larger than 1 MiB (max_reply_bytes: 1048576; raise it to allow larger "
        f"replies): it holds {len(bomb(coding)):,} bytes that inflate past the limit (Content-Encoding: {coding})"))
    assert server.seen_accept == ["gzip, deflate, zstd"]  # only codings evalrun decodes within a limit


@pytest.mark.process  # the command's own peak memory, which only a process of its own has
def test_a_compressed_state_bomb_is_bounded_too(tmp_path, server):
    reply = json.dumps({"messages": [{"role": "assistant", "content": "ok"}]}).encode()
    server.routes["/chat"] = ("zstd", encoded("zstd", reply))
    server.routes["/state"] = ("zstd", bomb("zstd"))
    http_project(tmp_path, server.url + "/chat", state_url=f'"{server.url}/state"')
    (tmp_path / "suites" / "s.yaml").write_text((tmp_path / "suites" / "s.yaml").read_text() + "final_state: {a: 1}\n")
    done, peak = run_measured(tmp_path)
    assert peak < MEMORY_BOUND, f"peak memory {peak / MiB:.0f} MiB"
    assert done.returncode == 3, done.stdout + done.stderr
    assert case_of(tmp_path)["error"].endswith(f"it holds {len(bomb('zstd')):,} bytes that inflate past the limit "
                                               "(Content-Encoding: zstd)")


@pytest.mark.parametrize("coding", ["zstd", "gzip", "deflate", "raw-deflate"])
def test_a_compressed_reply_within_the_limit_is_read(tmp_path, server, coding):
    reply = json.dumps({"messages": [{"role": "assistant", "content": "ok " + "x" * 500_000}]}).encode()
    server.routes["/chat"] = ("deflate" if coding == "raw-deflate" else coding, encoded(coding, reply))
    http_project(tmp_path, server.url + "/chat")
    done = run_here(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert case_of(tmp_path)["status"] == "passed"


def test_a_brotli_reply_nobody_asked_for_is_named(tmp_path, server):
    server.routes["/chat"] = ("br", b"\x8b\x02\x80hello\x03")
    http_project(tmp_path, server.url + "/chat")
    done = run_here(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert case_of(tmp_path)["error"] == (
        f"the reply from {server.url}/chat cannot be read: it is brotli-encoded (Content-Encoding: br), which evalrun "
        "does not ask for and cannot decode within a size limit; have the server send gzip, zstd or no encoding")


def test_a_corrupt_compressed_reply_is_named(tmp_path, server):
    server.routes["/chat"] = ("gzip", gzip.compress(b'{"messages": []}')[:-12])
    http_project(tmp_path, server.url + "/chat")
    run_here(tmp_path)
    assert case_of(tmp_path)["error"].startswith(f"the reply from {server.url}/chat cannot be read: it does not "
                                                 "decode as gzip")


@pytest.mark.process  # the command's own peak memory, which only a process of its own has
def test_an_otlp_receivers_compressed_answer_is_never_read(tmp_path, server):
    """The exporter needs only the status of the receiver's answer: a bomb in its body (gzip, which requests would
    decode whole) is not even read."""
    server.routes["/chat"] = ("identity", json.dumps({"messages": [{"role": "assistant", "content": "ok"}]}).encode())
    server.routes["/v1/traces"] = ("gzip", bomb("gzip", 512))
    http_project(tmp_path, server.url + "/chat")
    done, peak = run_measured(tmp_path, "--otlp", server.url)
    assert peak < MEMORY_BOUND, f"peak memory {peak / MiB:.0f} MiB"
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"otlp: sent 2 spans to {server.url}/v1/traces" in done.stdout


# ------------------------------------------------------------------ the OpenAI-compatible fast path

def model_project(root: Path, base_url: str) -> None:
    write(root / "evalrun.yaml", f"""
        embeddings: {{enabled: false}}
        agents:
          bot: {{type: model, model: openai/fake-agent, api_base: "{base_url}", max_retries: 0,
                 system_prompt: You help.}}
        """)
    write(root / "suites" / "s.yaml", """
        id: bomb
        agent: bot
        starting_sentence: hi
        goal_details: [{type: text, name: t, keywords: [ok]}]
        """)


COMPLETION = json.dumps({"id": "x", "object": "chat.completion", "model": "fake-agent", "choices": [
    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()


@pytest.mark.process  # the command's own peak memory, which only a process of its own has
@pytest.mark.parametrize("through", ["own client", "aiohttp (a proxy)"])
def test_a_model_servers_compressed_bomb_is_the_cases_error_in_bounded_memory(tmp_path, server, through):
    server.routes["/v1/chat/completions"] = ("zstd", bomb("zstd"))
    model_project(tmp_path, server.url + "/v1")
    proxy = {"HTTP_PROXY": server.url, "http_proxy": server.url} if through != "own client" else {}
    done, peak = run_measured(tmp_path, **proxy)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "an answer longer than 64 MiB once decoded (Content-Encoding: zstd)" in case_of(tmp_path)["error"]
    assert peak < MEMORY_BOUND, f"peak memory {peak / MiB:.0f} MiB"


@pytest.mark.parametrize("through", ["own client", "aiohttp (a proxy)"])
@pytest.mark.parametrize("coding", ["zstd", "gzip"])
def test_a_model_servers_compressed_answer_is_read(tmp_path, server, through, coding):
    server.routes["/v1/chat/completions"] = (coding, encoded(coding, COMPLETION))
    model_project(tmp_path, server.url + "/v1")
    proxy = {"HTTP_PROXY": server.url, "http_proxy": server.url} if through != "own client" else {}
    done = run_here(tmp_path, **proxy)
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.seen_accept == ["gzip, deflate, zstd"]


@pytest.mark.process  # the command's own peak memory, which only a process of its own has
def test_the_peak_measured_is_the_commands_own_not_the_test_processs(tmp_path):
    ballast = b"x" * (400 * MiB)  # the test process's own peak, which a child forked from it would report
    done, peak = peak_memory.run_measured([sys.executable, "-c", "print('hi')"], tmp_path, cli_env())
    assert (done.returncode, done.stdout, len(ballast)) == (0, "hi\n", 400 * MiB)
    assert peak < 100 * MiB, f"peak memory {peak / MiB:.0f} MiB"
