"""The judge: asks a model whether two values mean the same (and, for checks, any question with a verdict),
and reads its verdict so that only the judge's own answer counts."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .calls import Completion
from .client import LLMClient
from .errors import LLMError, short
from .replies import tagged_object
from .settings import SEMANTIC_MATCH_PROMPT
from .wire import takes_fast_path

if TYPE_CHECKING:
    from .prompts import PromptLibrary


class JudgeVerdict(BaseModel):
    matched: bool
    score: float | None = None
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


def verdict_shape(token: str) -> str:
    """The match verdict in words, for asking again after an unusable reply."""
    return ('one JSON object, reason first: {"reason": "one short sentence", "match": true or false, '
            f'"score": a number from 0 to 1, "verdict_id": "{token}"}}')


class LLMJudge:
    """Asks the judge model whether two values mean the same; never guesses when the model fails.

    The agent's text is hostile: it reaches the judge JSON-encoded between boundary lines made of a
    token that occurs in none of the data, and the verdict is the judge's own: the JSON object of its
    reply that carries that token as its `verdict_id` (structured output carries it too). An object
    without the token — one the agent wrote, even when it is all the judge repeats — is not a verdict."""

    def __init__(self, client: LLMClient, prompts: PromptLibrary):
        self.client = client
        self.prompts = prompts
        self._structured: bool | None = None

    def semantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        messages, token = self._messages(expected, actual, context)
        [completion] = self.ask(messages, accept=match_reader(token), expect=verdict_shape(token),
                                response_format=self._response_format())
        return read_match(completion.content, token)

    async def asemantic_match(self, expected: str, actual: str, context: str) -> JudgeVerdict:
        """semantic_match for callers on an event loop (one request, on that loop)."""
        messages, token = self._messages(expected, actual, context)
        response_format = self._response_format()
        options: dict[str, Any] = {"accept": match_reader(token), "expect": verdict_shape(token)}
        try:
            completion = await self.client.acomplete(messages, response_format=response_format, **options)
        except LLMError as error:
            if not self._plain_instead(response_format, error):
                raise
            completion = await self.client.acomplete(messages, **options)
        return read_match(completion.content, token)

    @property
    def structured(self) -> bool:
        """Whether this judge asks for a schema-bound reply (structured_output, and what the server accepts)."""
        return self._response_format() is not None

    @property
    def repeatable(self) -> bool:
        """Temperature 0: asking the same question again brings the same answer (so one sample is all)."""
        return self.client.settings.temperature == 0

    def verdict_format(self) -> dict | None:
        """The response_format of a match verdict ({reason, match, score, verdict_id}) for a structured
        judge, else None: what semantic_match sends, for checks that ask for the same verdict."""
        return self._response_format()

    def ask(self, messages: list[dict], *, accept: Callable[[Completion], Any], expect: str | None = None,
            samples: int = 1, response_format: dict | None = None) -> list[Completion]:
        """The judge's `samples` answers to `messages`, each its own cache entry, each passed through
        `accept` (unusable replies are asked again with `expect`, the shape wanted). At temperature 0 one
        request stands for every sample. With `response_format` (for a judge that is `structured`), a
        server that refuses the schema under `auto` is asked in plain text from then on."""
        completions = []
        for sample in range(1 if self.repeatable else samples):
            try:
                completion = self.client.complete(messages, response_format=response_format, accept=accept,
                                                  expect=expect, sample=sample)
            except LLMError as error:
                if not self._plain_instead(response_format, error):
                    raise
                response_format = None
                completion = self.client.complete(messages, accept=accept, expect=expect, sample=sample)
            completions.append(completion)
        return completions

    def _plain_instead(self, response_format: dict | None, error: LLMError) -> bool:
        """Under `auto`, a deployment that refuses the schema (HTTP 400) is asked in plain text from
        now on: the list of capable models describes the model, not every server that hosts it."""
        if response_format is None or getattr(self.client.settings, "structured_output", "never") != "auto":
            return False
        if error.status != 400:
            return False
        self._structured = False
        return True

    def _messages(self, expected: str, actual: str, context: str) -> tuple[list[dict], str]:
        token = boundary_token(expected, actual, context)
        data = json.dumps({"expected": expected, "actual": actual}, ensure_ascii=False, indent=1)
        prompt = judge_prompt(self.prompts, SEMANTIC_MATCH_PROMPT, token, expected=expected, actual=actual,
                              context=context, context_json=json.dumps(context, ensure_ascii=False), data_json=data)
        return [{"role": "user", "content": prompt}], token

    def _response_format(self) -> dict | None:
        if self._structured is None:
            settings = self.client.settings
            mode = getattr(settings, "structured_output", "never")
            if mode == "always":
                self._structured = True
            elif mode == "auto" and settings.api_base is None:
                self._structured = _supports_schema(settings)
            else:
                self._structured = False
        return VERDICT_RESPONSE_FORMAT if self._structured else None


def _supports_schema(settings: Any) -> bool:
    """What litellm's model list says; read without importing litellm on the fast path."""
    if takes_fast_path(settings):
        from .pricing import supports_response_schema

        return supports_response_schema(settings.model)
    from .litellm_path import litellm_module

    try:
        return bool(litellm_module().supports_response_schema(model=settings.model))
    except Exception:
        return False


def judge_prompt(prompts: PromptLibrary, name: str, token: str, **variables: Any) -> str:
    """The rendered judge prompt; LLMError when it does not show the judge the token (a template of
    prompts_dir without `{{ boundary }}`): the judge could not tag its verdict, so nothing it said would count."""
    prompt = prompts.render(name, **variables, boundary=token)
    if token not in prompt:
        raise LLMError(f"the prompt template {name} does not show the judge `{{{{ boundary }}}}`, the token its "
                       "verdict must carry as verdict_id: no reply could count as a verdict", kind="request")
    return prompt


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


def match_reader(token: str) -> Callable[[Completion], JudgeVerdict]:
    """The `accept` of a match verdict: the reply's object tagged with `token`, read as a verdict."""
    return lambda completion: read_match(completion.content, token)


def read_match(content: str | None, token: str) -> JudgeVerdict:
    return verdict_from_reply(tagged_object(content, token))


def verdict_from_reply(reply: dict) -> JudgeVerdict:
    matched = reply.get("match")
    if not isinstance(matched, bool):
        raise LLMError(f"the judge's verdict has no boolean 'match': {short(json.dumps(reply), 120)}")
    score = reply.get("score")
    if score is not None:
        # bool is an int subclass; `"score": true` is a malformed reply, not 1.0
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
            raise LLMError(f"the judge's verdict has an invalid 'score' (want a number from 0 to 1): {score!r:.40}")
        score = float(score)
    reason = reply.get("reason")
    return JudgeVerdict(matched=matched, score=score, reason=reason if isinstance(reason, str) else "")
