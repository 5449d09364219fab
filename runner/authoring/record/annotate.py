"""`record --annotate`: the configured judge reads the conversation and the rule-based draft, and writes
the story, the answer's keywords and each argument's mode (prompts/annotate_draft.j2).

The judge's words change only what cannot make the draft fail on its own recording: a story; keywords
that the answer holds (one it does not is left out, and said so); a mode among strict, fuzzy and ignore
for an argument the draft has. Each line the judge wrote says so in its comment. A reply that cannot be
used (prose, no tagged object, the wrong shape, after the client asked again) or a judge that fails
leaves the rule-based draft as it was, with a note in its header saying why.
"""
from __future__ import annotations

import json
from typing import Any

from ...llm.errors import LLMError
from ...llm.judge import boundary_token, judge_prompt
from ...llm.replies import tagged_object
from ...score.keywords import missing_keywords
from ...transcripts.read import content_text
from ...transcripts.recording import Recording
from .argmodes import ArgChoice
from .draft import DraftCase, DraftTextGoal, DraftToolGoal

ANNOTATE_PROMPT = "annotate_draft.j2"
MODES = ("strict", "fuzzy", "ignore")
_SHAPE = ('one JSON object: {"story": "text", "keywords": ["text", ...], "argument_modes": {"<goal name>": '
          '{"<argument path>": "strict" | "fuzzy" | "ignore"}}, "verdict_id": "<the token>"}')


class Annotator:
    """Annotates drafts with one judge; `notes` collects what people should know about its answers."""

    def __init__(self, client: Any, prompts: Any):
        self.client = client
        self.prompts = prompts

    def __call__(self, draft: DraftCase, recording: Recording) -> None:
        data = json.dumps(_draft_data(draft, recording), ensure_ascii=False, indent=1, default=str)
        token = boundary_token(data)
        try:
            prompt = judge_prompt(self.prompts, ANNOTATE_PROMPT, token, data_json=data)
            completion = self.client.complete([{"role": "user", "content": prompt}],
                                              accept=lambda c: _read(c.content, token), expect=_SHAPE.replace(
                                                  "<the token>", token))
            answer = _read(completion.content, token)
        except LLMError as exc:
            draft.header.append(f"--annotate: the judge's answer could not be used ({exc.reason}); this is the "
                                "rule-based draft")
            return
        except Exception as exc:  # a prompt template that does not render: the rules' draft stands
            draft.header.append(f"--annotate: the judge was not asked ({exc}); this is the rule-based draft")
            return
        _apply(draft, answer)


def _draft_data(draft: DraftCase, recording: Recording) -> dict:
    conversation = []
    for message in recording.messages:
        role = message.get("role")
        text = content_text(message.get("content"))
        if role == "user":
            conversation.append({"user": text})
        elif role == "assistant":
            if text.strip():
                conversation.append({"agent": text})
            for call in message.get("tool_calls") or []:
                conversation.append({"tool_call": call["function"]["name"], "arguments": call["function"]["arguments"]})
        elif role == "tool":
            conversation.append({"tool_result": text})
    arguments = {goal.name: {c.path: {"value": c.value, "mode": c.mode} for c in goal.choices}
                 for goal in draft.goal_details if isinstance(goal, DraftToolGoal) and goal.choices}
    answer = next((g.response for g in draft.goal_details if isinstance(g, DraftTextGoal)), None)
    return {"conversation": conversation, "arguments": arguments, "last_answer": answer}


def _read(content: Any, token: str) -> dict:
    """The judge's tagged answer, checked for shape; LLMError (asked again by the client) otherwise."""
    answer = tagged_object(content, token)
    story = answer.get("story")
    if story is not None and not isinstance(story, str):
        raise LLMError("'story' must be text")
    keywords = answer.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise LLMError("'keywords' must be a list of texts")
    modes = answer.get("argument_modes", {})
    if not isinstance(modes, dict) or not all(isinstance(v, dict) for v in modes.values()):
        raise LLMError("'argument_modes' must map each goal name to an object of argument paths")
    for goal, paths in modes.items():
        for path, mode in paths.items():
            if mode not in MODES:
                raise LLMError(f"argument_modes.{goal}.{path} is {json.dumps(mode)[:40]}; want one of {', '.join(MODES)}")
    return answer


def _apply(draft: DraftCase, answer: dict) -> None:
    story = (answer.get("story") or "").strip()
    if story:
        draft.story = story
        draft.judge_wrote.add("story")
    text_goal = next((g for g in draft.goal_details if isinstance(g, DraftTextGoal)), None)
    keywords = [k.strip() for k in answer.get("keywords", []) if k.strip()]
    if text_goal is not None and keywords:
        kept = [k for k in dict.fromkeys(keywords) if not missing_keywords(text_goal.response, [k])]
        dropped = [k for k in keywords if k not in kept]
        if kept:
            text_goal.keywords = kept
            draft.judge_wrote.add("keywords")
        if dropped:
            draft.header.append("--annotate: left out the judge's keywords that the answer does not hold: "
                                + ", ".join(json.dumps(k, ensure_ascii=False) for k in dropped))
    goals = {g.name: g for g in draft.goal_details if isinstance(g, DraftToolGoal)}
    unknown = []
    for goal_name, paths in (answer.get("argument_modes") or {}).items():
        goal = goals.get(goal_name)
        for path, mode in paths.items():
            at = next((i for i, c in enumerate(goal.choices) if c.path == path and not c.fixed), None) if goal else None
            if goal is None or at is None:  # no goal: no index either
                unknown.append(f"{goal_name}.{path}")
                continue
            choice = goal.choices[at]
            goal.choices[at] = ArgChoice(choice.path, choice.value, mode, f"{mode}: chosen by the judge")
            draft.judge_wrote.add(f"arg:{goal_name}:{path}")
    if unknown:
        draft.header.append("--annotate: the judge named arguments the draft does not have (left alone): "
                            + ", ".join(unknown))
    draft.header.append("--annotate: the lines marked `written by the judge` are its words; check them too")


class NoJudge(Exception):
    """--annotate without a judge in evalrun.yaml; the message shows how to configure one."""


def check_judge(loaded: Any) -> None:
    """NoJudge unless evalrun.yaml configures a judge."""
    if loaded.config.judge is None:
        from ...util.files import display_path

        where = display_path(loaded.path) if loaded.path else "evalrun.yaml (none was found)"
        raise NoJudge(f"--annotate asks the judge, and {where} configures none; add one, for example:\n"
                      "  judge:\n    model: openai/gpt-4o-mini\n    api_key_env: OPENAI_API_KEY")


def annotator_for(loaded: Any) -> Annotator:
    """The annotator for evalrun.yaml's judge, with the LLM layer set up for it (its cache included)."""
    check_judge(loaded)
    judge = loaded.config.judge
    from ...llm.client import LLMClient, prepare_transports
    from ...llm.prompts import PromptLibrary
    from ...llm.runtime import configure

    prepare_transports([judge])
    configure(concurrency=1, cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=False)
    return Annotator(LLMClient(judge, role="judge"), PromptLibrary(loaded.resolve(loaded.config.prompts_dir)))
