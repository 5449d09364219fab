"""Attack turns written by a model (`evalrun redteam plan --generate`): the generator is asked, with the
template generate_attack.j2, for a variant of the attack in its own words, seeded with the built-in
template's turns. What it answers is read as `{"turns": [...]}` and checked (1 to MAX_TURNS messages of
text, each at most MAX_CHARS characters, naming the forbidden tool when the attack is about one); an answer
that fails is asked again with the reason (the client's reply_retries), then the plan fails with the case
and attack named and writes nothing. Replies are cached like the judge's, so the same inputs give the
same files.

The model is evalrun.yaml's `generator:` (the same keys as `judge:`) when the configuration has one, else
its `judge:` (issue 19: the generator defaults to the judge's settings).
"""
from __future__ import annotations

import json
from typing import Any

from .catalogue import Attack

GENERATE_PROMPT = "redteam/generate_attack.j2"
MAX_TURNS = 6
MAX_CHARS = 1000
EXPECT = 'one JSON object {"turns": ["first user message", ...]}'


def generator_settings(config: Any) -> Any | None:
    """The model that writes attacks: evalrun.yaml's `generator:`, else its `judge:`."""
    return config.generator or config.judge


def turns_reader(attack: Attack, forbidden_tool: str):
    """A function that reads the generator's reply into turns, or raises LLMError saying what is wrong."""
    from ...llm.errors import LLMError
    from ...llm.replies import json_objects

    def read(completion: Any) -> list[str]:
        objects = [o for o in json_objects(completion.content or "") if "turns" in o]
        if not objects:
            raise LLMError('the reply holds no JSON object with "turns"')
        turns = objects[-1]["turns"]
        if not isinstance(turns, list) or not turns or not all(isinstance(t, str) and t.strip() for t in turns):
            raise LLMError('"turns" must be a list of one or more non-empty texts')
        if len(turns) > MAX_TURNS:
            raise LLMError(f'"turns" has {len(turns)} messages; write at most {MAX_TURNS}')
        long = [i + 1 for i, t in enumerate(turns) if len(t) > MAX_CHARS]
        if long:
            raise LLMError(f"message(s) {', '.join(map(str, long))} are longer than {MAX_CHARS} characters")
        if attack.needs_forbidden_tool and forbidden_tool and not any(forbidden_tool in t for t in turns):
            raise LLMError(f"no message names the tool {forbidden_tool}, which this attack asks the assistant to call")
        return [t.strip() for t in turns]
    return read


def generated_turns(client: Any, prompts: Any, attack: Attack, variables: dict[str, Any],
                    example: list[str]) -> list[str]:
    """The attacking user's turns in the generator's words. LLMError when it gives no usable answer."""
    prompt = prompts.render(GENERATE_PROMPT, attack=attack.name, category=attack.category, summary=attack.summary,
                            goal=attack.goal, task=variables["task"], purpose=variables["purpose"],
                            forbidden_tool=variables["forbidden_tool"], secret=variables["secret"],
                            variant=variables["variant"] + 1, example=json.dumps(example, ensure_ascii=False))
    read = turns_reader(attack, variables["forbidden_tool"])
    completion = client.complete([{"role": "user", "content": prompt}], accept=read, expect=EXPECT)
    return read(completion)
