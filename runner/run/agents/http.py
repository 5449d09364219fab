"""`type: http` — an agent behind an HTTP endpoint, one POST per user turn.

Request body: `{"messages": [...], "case_id": ..., "turn": n, "runtime_context": {...}}` plus the
`body` fields of the options (`send_context: false` leaves out case_id, turn and runtime_context, for
servers that reject unknown fields). The reply is `{"messages": [...]}` (this turn's new messages,
optionally `"stop": true`) or an OpenAI chat completion, so an OpenAI-compatible `/chat/completions`
endpoint works as it is. Header values may hold `${ENV_VAR}` references; the values never appear in
errors, reports or logs.

Each request has one deadline, `timeout_s`, from sending to the last byte of the reply (a server that
trickles its answer cannot stretch it), and a reply may hold at most `max_reply_bytes` (counted as
they arrive, and again while a compressed reply is decoded, runner/util/http_body.py: a small body that
inflates past the limit is never inflated whole). Redirects are not followed:
a 3xx is that case's error saying where it pointed.

The state of the agent's world after the conversation (what a case's `final_state:` is compared with)
comes from `state_url`: one GET once the last turn is answered, with `case_id` and `conversation_id`
as query parameters (unless `send_context: false`), the same headers, deadline and size limit; the
reply's JSON body is the state. Without `state_url`, it is the `state` of the last reply that carried one.
"""
from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from runner.transcripts.state import ReportedState
from runner.util.http_body import BodyTooLarge, BodyUndecodable, accept_encoding, decoded_body

from ._base import (
    Agent,
    AgentEnv,
    AgentError,
    AgentStop,
    TurnContext,
    check_state,
    excerpt,
    parse_reply,
    reply_json,
    tools_field,
    unreadable_reply,
)
from ._env_refs import expand_env, redacted, scrub
from ._process import describe_size

KIND = "http"
DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024


class HttpAgentOptions(BaseModel):
    model_config = ConfigDict(
        extra="forbid", title="HTTP agent",
        json_schema_extra={"description": "An agent served over HTTP: one POST per user turn with the conversation so "
                                          "far; the reply holds the turn's new messages or is a chat completion.",
                           "examples": [{"type": "http", "url": "http://localhost:8080/chat",
                                         "headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}}]})

    type: Literal["http"] = Field(title="Kind", description="`http`: POST to an endpoint.", examples=["http"])
    tools: list[dict[str, Any]] | None = tools_field()
    url: str = Field(
        pattern=r"^https?://", title="URL", description="Where each turn is POSTed.",
        examples=["http://localhost:8080/chat", "http://localhost:8000/v1/chat/completions"])
    headers: dict[str, str] = Field(
        default_factory=dict, title="Headers",
        description="HTTP headers sent with every request. `${NAME}` is replaced by the environment variable "
        "NAME; put credentials there, not in the file. Values never appear in reports or logs.",
        examples=[{"Authorization": "Bearer ${AGENT_TOKEN}"}])
    body: dict[str, Any] = Field(
        default_factory=dict, title="Extra body fields",
        description="Fields added to every request body, such as the `model` an OpenAI-compatible server needs.",
        examples=[{"model": "my-agent"}])
    send_context: bool = Field(
        True, title="Send context",
        description="true: the body also carries case_id, turn and runtime_context. false: only messages and "
        "`body` (for servers that reject unknown fields).", examples=[False])
    timeout_s: float = Field(
        60, gt=0, title="Request timeout (seconds)",
        description="How long one request may take, from sending it to the last byte of the reply; a request "
        "that takes longer is that case's error.", examples=[60])
    max_reply_bytes: int = Field(
        DEFAULT_MAX_REPLY_BYTES, gt=0, title="Largest reply (bytes)",
        description="How large one reply may be (after decompression); a larger one is that case's error and is "
        "never read whole. Default 16 MiB.", examples=[67108864])

    state_url: str | None = Field(
        None, pattern=r"^https?://", title="State URL",
        description="Where the state of the agent's world is read after the conversation (one GET with `case_id` "
        "and `conversation_id` as query parameters, the same headers and limits as the turns); its JSON body "
        "is what a case's `final_state:` is compared with.", examples=["http://localhost:8080/state"])

    @field_serializer("headers")
    def _hide_values(self, headers: dict[str, str]) -> dict[str, str]:
        return {name: redacted(value) for name, value in headers.items()}


class HttpAgent(Agent):
    kind = KIND

    def __init__(self, name: str, options: HttpAgentOptions, env: AgentEnv):
        self.name = name
        self.options = options
        self._client: Any = None
        self._headers: dict[str, str] = {}
        self._secrets: list[str] = []

    async def start(self, case) -> None:
        import httpx

        for header, value in self.options.headers.items():
            expanded = expand_env(value, f"header '{header}'")
            self._headers[header] = expanded
            self._secrets.append(expanded)
        self._client = httpx.AsyncClient(timeout=self.options.timeout_s)

    async def turn(self, messages: list[dict], ctx: TurnContext) -> list[dict]:
        url = self.options.url
        body: dict[str, Any] = {**self.options.body, "messages": messages}
        if self.options.send_context:
            body.update(ctx.to_json())
        text = await self._within_deadline("POST", url, json=body)
        try:
            data = reply_json(text)
        except ValueError as exc:
            raise AgentError(self._clean(f"the reply from {url} is {unreadable_reply(exc)}: {excerpt(text)}")) from None
        try:
            reply = parse_reply(data, f"the reply from {url}")
        except AgentError as exc:  # it quotes the reply, which could echo a header back
            raise AgentError(self._clean(exc.reason)) from None
        self.keep_reply_state(reply, f"the reply from {url} to turn {ctx.turn}")
        if reply.stop:
            raise AgentStop("agent_stop", reply.messages)
        return reply.messages

    async def final_state(self, ctx: TurnContext) -> ReportedState:
        url = self.options.state_url
        if url is None:
            return await super().final_state(ctx)
        params = {"case_id": ctx.case_id, "conversation_id": ctx.conversation_id} if self.options.send_context else None
        text = await self._within_deadline("GET", url, params=params)
        if not text.strip():
            return ReportedState.none(f"agent '{self.name}': GET {url} answered with no state (an empty body)")
        try:
            data = reply_json(text)
        except ValueError as exc:
            raise AgentError(self._clean(f"the state from {url} is {unreadable_reply(exc)}: {excerpt(text)}")) from None
        return ReportedState(value=check_state(data, f"the state from {url}"), source=f"GET {url}")

    def how_to_report_state(self) -> str:
        return "it has no `state_url`, and its replies carried no `state`"

    async def _within_deadline(self, method: str, url: str, **request: Any) -> str:
        try:  # one deadline for the whole exchange: httpx's own timeout applies to each read alone
            return await asyncio.wait_for(self._exchange(method, url, **request), self.options.timeout_s)
        except asyncio.TimeoutError:
            raise AgentError(f"no complete answer from {url} within {self.options.timeout_s:g} s") from None

    async def _exchange(self, method: str, url: str, **request: Any) -> str:
        """Send one request and read the reply's text, refusing redirects and replies above the size limit."""
        import httpx

        limit = self.options.max_reply_bytes
        too_large = (f"the reply from {url} is larger than {describe_size(limit)} (max_reply_bytes: {limit}; raise "
                     "it to allow larger replies)")
        try:
            headers = self._headers if any(name.lower() == "accept-encoding" for name in self._headers) else \
                {"Accept-Encoding": accept_encoding(), **self._headers}  # the codings decoded_body bounds
            async with self._client.stream(method, url, headers=headers, **request) as response:
                if response.is_redirect or 300 <= response.status_code < 400:
                    where = response.headers.get("location")
                    pointed = f"to {excerpt(where)}" if where else "without saying where (no Location header)"
                    raise AgentError(self._clean(f"HTTP {response.status_code} from {url}: the endpoint redirects "
                                                 f"{pointed}; evalrun does not follow redirects: set the agent's "
                                                 "`url` to where it points"))
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise AgentError(too_large + f": it says it holds {int(declared):,} bytes")
                chunks, size = [], 0
                async for chunk in response.aiter_raw():  # as sent: decoded below, within the limit
                    size += len(chunk)
                    if size > limit:
                        raise AgentError(too_large)
                    chunks.append(chunk)
                content = decoded_body(b"".join(chunks), response.headers.get("content-encoding"), limit)
                encoding = response.charset_encoding or "utf-8"
        except BodyTooLarge as exc:
            raise AgentError(f"{too_large}: it holds {size:,} bytes that inflate past the limit (Content-Encoding: "
                             f"{exc.codings})") from None
        except BodyUndecodable as exc:
            raise AgentError(self._clean(f"the reply from {url} cannot be read: {exc}")) from None
        except httpx.TimeoutException:
            raise AgentError(f"no complete answer from {url} within {self.options.timeout_s:g} s") from None
        except httpx.ConnectError as exc:
            raise AgentError(self._clean(f"cannot reach {url}: {exc or type(exc).__name__}")) from None
        except httpx.HTTPError as exc:  # dropped connection, protocol error, a body that does not decompress
            raise AgentError(self._clean(f"request to {url} failed: {type(exc).__name__}: {exc}")) from None
        text = _decode(content, encoding)
        if response.status_code >= 400:
            raise AgentError(self._clean(f"HTTP {response.status_code} from {url}: {excerpt(text)}"))
        return text

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            try:
                await client.aclose()
            except Exception:  # closing must not turn a finished conversation into an error
                pass

    def _clean(self, message: str) -> str:
        return scrub(message, self._secrets)


def _decode(content: bytes, encoding: str) -> str:
    try:
        return content.decode(encoding, "replace")
    except LookupError:  # a charset Python does not know
        return content.decode("utf-8", "replace")


Options = HttpAgentOptions  # the registry reads each kind's Options


def create(name: str, options: HttpAgentOptions, env: AgentEnv) -> HttpAgent:
    return HttpAgent(name, options, env)
