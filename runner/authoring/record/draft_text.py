"""Draft cases -> suite YAML text, with a comment on every line a person should look at.

A file of one draft is a single-case suite; several drafts become one file with `cases:`. The same
case text is used when drafts are added to an existing suite (append.py), indented as a list item.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..write.yamltext import entry, flow, one_line
from .draft import DraftCase, DraftTextGoal, DraftToolGoal

JUDGE_MARK = "written by the judge"


def suite_text(drafts: Sequence[DraftCase], intro: Sequence[str] = ()) -> str:
    """A whole suite file holding `drafts` (one case at the top level, or several under `cases:`)."""
    head = "".join(f"# {one_line(line)}\n" for line in intro) + ("\n" if intro else "")
    if len(drafts) == 1:
        return head + case_text(drafts[0])
    return head + "cases:\n" + "".join(list_item(case_text(d), indent=2) for d in drafts)


def list_item(text: str, indent: int) -> str:
    """Block text turned into one item of a YAML list at `indent` (`- ` before its first key)."""
    pad = " " * indent
    lines = text.splitlines(keepends=True)
    out = []
    first_key = next(i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#"))
    for i, line in enumerate(lines):
        if i == first_key:
            out.append(f"{pad}- {line}")
        elif i < first_key and line.strip():  # comments about the item, above its `- `
            out.append(f"{pad}{line}")
        elif line.strip():
            out.append(f"{pad}  {line}")
        else:
            out.append(line)
    return "".join(out)


def case_text(draft: DraftCase) -> str:
    out = [f"# {one_line(line)}\n" for line in draft.header]
    out.append(entry("id", draft.id, 0))
    if draft.description:
        out.append(entry("description", draft.description, 0))
    if draft.agent:
        out.append(entry("agent", draft.agent, 0))
    if draft.story:
        out.append(entry("story", draft.story, 0, _judge(draft, "story", "check: what the user wants, "
                                                          "for a simulated user")))
    if draft.starting_sentence is not None:
        out.append(entry("starting_sentence", draft.starting_sentence, 0))
    if draft.user_prompts:
        out.append("user_prompts:\n")
        out.extend(_scalar_item(prompt, 2) for prompt in draft.user_prompts)
    if draft.goals:
        out.append("goals:  # each goal before the next, as they happened\n")
        out.extend(entry(name, after, 2) for name, after in draft.goals.items())
    out.append("goal_details:\n")
    for goal in draft.goal_details:
        body = _tool_goal(goal, draft) if isinstance(goal, DraftToolGoal) else _text_goal(goal, draft)
        out.append(list_item(body, indent=2))
    if draft.transcript:
        out.append(entry("transcript", draft.transcript, 0, "the recorded conversation; remove this line to "
                                                            "run the case live against its agent"))
    return "".join(out)


def _scalar_item(value, indent: int) -> str:
    text = flow(value)
    pad = " " * indent
    if "\n" not in text:
        return f"{pad}- {text}\n"
    continuation = "".join(f"{pad}  {line}" if line.strip() else line for line in text.splitlines(keepends=True)[1:])
    return f"{pad}- {text.splitlines(keepends=True)[0]}{continuation}" + ("" if text.endswith("\n") else "\n")


def _tool_goal(goal: DraftToolGoal, draft: DraftCase) -> str:
    notes = [*goal.notes, f"message {goal.message_number}"]
    out = [entry("type", "tool_call", 0, "; ".join(notes)), entry("name", goal.name, 0),
           entry("tool_name", goal.tool_name, 0)]
    if not goal.args:
        out.append(entry("args", {}, 0))
    else:
        out.append("args:\n")
        for key, value in goal.args.items():
            under = [c for c in goal.choices if _under(c.path, key)]
            note = "; ".join(dict.fromkeys(c.note for c in under if c.note))
            judged = any(f"arg:{goal.name}:{c.path}" in draft.judge_wrote for c in under)
            out.append(entry(key, value, 2, f"{JUDGE_MARK}; {note}" if judged else note))
    if goal.arg_matching:
        out.append("arg_matching:\n")
        out.extend(entry(path, mode, 2) for path, mode in goal.arg_matching.items())
    if goal.has_output:
        out.append(entry("output", goal.output, 0))
    return "".join(out)


def _text_goal(goal: DraftTextGoal, draft: DraftCase) -> str:
    out = [entry("type", "text", 0, "; ".join(goal.notes)), entry("name", goal.name, 0),
           entry("response", goal.response, 0),
           entry("keywords", goal.keywords, 0, _judge(draft, "keywords", "check: the facts the answer must hold"))]
    return "".join(out)


def _under(path: str, key: str) -> bool:
    return path == key or path.startswith(key + ".")


def _judge(draft: DraftCase, part: str, note: str) -> str:
    if part in draft.judge_wrote:
        return f"{JUDGE_MARK}; {note}" if note else JUDGE_MARK
    return note
