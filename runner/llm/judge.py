"""The judge: asks a model whether two values mean the same, and reads its verdict so that only the
judge's own answer counts."""
from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Callable, Optional

from pydantic import BaseModel

from .calls import Completion
from .client import LLMClient
from .errors import LLMError, _short
from .litellm_path import _litellm
from .settings import SEMANTIC_MATCH_PROMPT

if TYPE_CHECKING:
    from .prompts import PromptLibrary


class JudgeVerdict(BaseModel):
    matched: bool
    score: Optional[float] = None
    reason: str


VERDICT_SCHEMA: dict = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "match": {"type": "boolean"},
        "score": {"type": "number"},
        "verdict_id": {"type": "string"},
    },
    "required": ["reason", "match", "score", "verdict_id"],
    "additionalProperties": False,
}
VERDICT_RESPONSE_FORMAT = {"type": "json_schema",
                           "json_schema": {"name": "semantic_match_verdict", "strict": True, "schema": VERDICT_SCHEMA}}


class LLMJudge:
    """Asks the judge model whether two values mean the same; never guesses when the model fails.

    The agent's text is hostile: it reaches the judge JSON-encoded between boundary lines made of a
    token that occurs in none of the data, and the verdict is the judge's own: the reply's only JSON
    object, or else the last one carrying that token as its `verdict_id`. A verdict the agent wrote
    (and the judge quoted) carries no token and counts for nothing."""

    def __init__(self, client: LLMClient, prompts: "PromptLibrary"):
        self.client = client
        self.prompts = prompts
        self._structured: Optional[bool] = None

    def semantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        messages, token = self._messages(expected, actual, context)
        accept = lambda c: verdict_from_reply(parse_verdict(c.content, token))  # noqa: E731
        response_format = self._response_format()
        try:
            completion = self.client.complete(messages, response_format=response_format, accept=accept)
        except LLMError as error:
            if not self._plain_instead(response_format, error):
                raise
            completion = self.client.complete(messages, accept=accept)
        return verdict_from_reply(parse_verdict(completion.content, token))

    async def asemantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        messages, token = self._messages(expected, actual, context)
        accept = lambda c: verdict_from_reply(parse_verdict(c.content, token))  # noqa: E731
        response_format = self._response_format()
        try:
            completion = await self.client.acomplete(messages, response_format=response_format, accept=accept)
        except LLMError as error:
            if not self._plain_instead(response_format, error):
                raise
            completion = await self.client.acomplete(messages, accept=accept)
        return verdict_from_reply(parse_verdict(completion.content, token))

    @property
    def structured(self) -> bool:
        """Whether this judge asks for a schema-bound reply (structured_output, and what the server accepts)."""
        return self._response_format() is not None

    def verdict_format(self) -> Optional[dict]:
        """The response_format of a match verdict ({reason, match, score, verdict_id}) for a structured
        judge, else None: what semantic_match sends, for checks that ask for the same verdict."""
        return self._response_format()

    def ask(self, messages: list[dict], *, accept: Callable[[Completion], Any], samples: int = 1,
            response_format: Optional[dict] = None) -> list[Completion]:
        """The judge's `samples` answers to `messages`, each its own cache entry, each passed through
        `accept`. With `response_format` (for a judge that is `structured`), a server that refuses the
        schema under `auto` is asked in plain text from then on."""
        completions = []
        for sample in range(samples):
            try:
                completion = self.client.complete(messages, response_format=response_format, accept=accept,
                                                  sample=sample)
            except LLMError as error:
                if not self._plain_instead(response_format, error):
                    raise
                response_format = None
                completion = self.client.complete(messages, accept=accept, sample=sample)
            completions.append(completion)
        return completions

    def _plain_instead(self, response_format: Optional[dict], error: LLMError) -> bool:
        """Under `auto`, a deployment that refuses the schema (HTTP 400) is asked in plain text from
        now on: litellm's list of capable models describes the model, not every server that hosts it."""
        if response_format is None or getattr(self.client.settings, "structured_output", "never") != "auto":
            return False
        if not error.reason.startswith("HTTP 400 "):
            return False
        self._structured = False
        return True

    def _messages(self, expected: str, actual: str, context: str) -> tuple[list[dict], str]:
        token = boundary_token(expected, actual, context)
        data = json.dumps({"expected": expected, "actual": actual}, ensure_ascii=False, indent=1)
        prompt = self.prompts.render(SEMANTIC_MATCH_PROMPT, expected=expected, actual=actual, context=context,
                                     context_json=json.dumps(context, ensure_ascii=False), data_json=data,
                                     boundary=token)
        return [{"role": "user", "content": prompt}], token

    def _response_format(self) -> Optional[dict]:
        if self._structured is None:
            settings = self.client.settings
            mode = getattr(settings, "structured_output", "never")
            if mode == "always":
                self._structured = True
            elif mode == "auto" and settings.api_base is None:
                try:
                    self._structured = bool(_litellm().supports_response_schema(model=settings.model))
                except Exception:
                    self._structured = False
            else:
                self._structured = False
        return VERDICT_RESPONSE_FORMAT if self._structured else None


def boundary_token(*data: str) -> str:
    """A token derived from the data that occurs in none of it. Deterministic (so the prompt, and the
    cache key, is the same on a re-run); not forgeable by the agent, whose text would have to contain
    a hash of itself."""
    material = json.dumps(data, ensure_ascii=False)
    counter = 0
    while True:
        token = "V" + hashlib.sha256(f"{counter}:{material}".encode()).hexdigest()[:20].upper()
        if not any(token in text for text in data):
            return token
        counter += 1


def verdict_from_reply(reply: dict) -> JudgeVerdict:
    matched = reply.get("match")
    if not isinstance(matched, bool):
        raise LLMError(f"judge reply has no boolean 'match': {_short(json.dumps(reply), 120)}")
    score = reply.get("score")
    if score is not None:
        # bool is an int subclass; `"score": true` is a malformed reply, not 1.0
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise LLMError(f"judge reply has an invalid 'score' (want 0..1): {score!r}")
        score = float(score)
    reason = reply.get("reason")
    return JudgeVerdict(matched=matched, score=score, reason=reason if isinstance(reason, str) else "")


# -- reply parsing ---------------------------------------------------------------------------------
_FENCED = re.compile(r"\A```(?:json|JSON)?\s*(.*?)\s*```\Z", re.DOTALL)
_MAX_REPLY = 50_000


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object in `text`, in order (objects nested in one are part of it)."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    text = text[:_MAX_REPLY]
    while True:
        start = text.find("{", position)
        if start < 0:
            return found
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end


def parse_verdict(content: Optional[str], token: Optional[str]) -> dict:
    """The judge's own verdict in its reply: the reply itself when it is one JSON object (bare or in a
    ```json fence), else the LAST object whose `verdict_id` is this call's token. Objects without the
    token (a verdict quoted from the agent's text, before or after the judge's own) never count."""
    if not isinstance(content, str):
        raise LLMError("judge reply has no text")
    text = content.strip()
    fenced = _FENCED.match(text)
    whole = fenced.group(1) if fenced else text
    try:
        value = json.loads(whole)
    except ValueError:
        value = None
    if isinstance(value, dict):
        if token is not None and "verdict_id" in value and value["verdict_id"] != token:
            raise LLMError(f"judge reply carries another call's verdict_id: {_short(whole, 120)}")
        return value
    if token is not None:
        tagged = [obj for obj in json_objects(text) if obj.get("verdict_id") == token]
        if tagged:
            return tagged[-1]
    raise LLMError(f"judge reply has no final verdict (one JSON object, or one carrying verdict_id {token}): "
                   f"{_short(text, 200)}" if token else f"reply is not JSON: {_short(text, 200)}")


def parse_json_object(content: str) -> dict:
    """The model's final JSON object: the whole reply when it is one (bare or in a ```json fence), else
    the LAST top-level object in it, never an earlier one it quoted; LLMError when there is none."""
    if not isinstance(content, str):
        raise LLMError("reply has no text")
    try:
        return parse_verdict(content, None)
    except LLMError:
        found = json_objects(content)
        if found:
            return found[-1]
        raise
