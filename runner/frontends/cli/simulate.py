"""`evalrun simulate SUITE [-k ID] [--batch N] [-o DIR]`: the simulated user plays each selected case against
its agent, and the conversation is printed, not scored: to see a story play out before writing its goals.

The conversation is the run's own (runner/run/conversation.py: the case's agent, its scripted messages,
then the simulator of evalrun.yaml from its `story`), played live even when the case names a transcript.
`--batch N` plays N conversations per case, each with its own model-cache slot (as `run --repeat` does,
so they differ and a rerun gives the same N); `-o DIR` saves each as DIR/<case id>-<n>.json, the
transcripts `evalrun record --from` turns into draft suites.
"""
from __future__ import annotations

import argparse
import asyncio
import json
from typing import TextIO

from ...util.atomic import write_text_atomically
from ...util.secrets import redact_data


def simulate_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ...config.discovery import find_config
    from ...config.load import config_line, load_config
    from ...llm.calls import repeat_scope
    from ...llm.client import prepare_transports
    from ...llm.runtime import configure
    from ...run.agent_choice import AgentNotFound, agent_name_for, check_agent_override
    from ...run.conversation import Conversation, converse_case
    from ...session.collect import collect
    from ...util.diagnostics import has_errors
    from .chat import show_messages

    if args.batch < 1:
        print("evalrun simulate: --batch must be at least 1", file=err)
        return 4
    loaded, problems = load_config(args.config or find_config(list(args.paths)), for_run=True)
    print(config_line(list(args.paths), args.config), file=err)
    collected = collect(args.paths, filters=args.filter, tags=args.tag, config=loaded)
    diagnostics = [*problems, *collected.diagnostics]
    for diagnostic in diagnostics:
        print(diagnostic, file=err)
    if has_errors(diagnostics):
        return 4
    if args.agent and check_agent_override(args.agent, loaded.config):
        print(f"evalrun simulate: {check_agent_override(args.agent, loaded.config)}", file=err)
        return 4
    if not collected.cases:
        print("no cases collected" + (" (check -k/--tag)" if args.filter or args.tag else ""), file=err)
        return 5
    if loaded.config.simulator is None:
        print("no simulator is configured in evalrun.yaml: each conversation is the case's scripted messages only",
              file=err)
    prepare_transports([loaded.config.simulator, *loaded.config.agents.values()])
    configure(concurrency=1, cache_dir=loaded.resolve(loaded.config.cache_dir), no_cache=args.no_cache)

    problems_seen = 0
    for case in collected.cases:
        try:
            name = agent_name_for(case, loaded.config, args.agent)
        except AgentNotFound as exc:
            print(f"{case.id}: {exc.reason}", file=err)
            problems_seen += 1
            continue
        if loaded.config.agents[name].type == "replay":
            print(f"{case.id}: agent '{name}' replays recordings; name a live agent with --agent", file=err)
            problems_seen += 1
            continue
        live = case.model_copy(update={"transcript": None})
        for n in range(1, args.batch + 1):
            print(f"== {case.id}" + (f" ({n}/{args.batch})" if args.batch > 1 else "") + f" with agent '{name}'",
                  file=out)
            conversation = Conversation()
            with repeat_scope(n - 1):
                asyncio.run(converse_case(live, loaded, agent_override=name, conversation=conversation))
            show_messages(conversation.messages, out, users=True)
            print(f"-- ended: {conversation.termination_reason}", file=out)
            if conversation.error is not None:
                print(f"{case.id}: {conversation.error}", file=err)
                problems_seen += 1
            if args.output is not None:
                path = args.output / f"{case.id}-{n}.json"
                transcript = redact_data(conversation.to_transcript())  # every secret masked, in any form
                write_text_atomically(path, json.dumps(transcript, indent=1, ensure_ascii=False) + "\n")
                print(f"saved {path}", file=out)
    return 3 if problems_seen else 0
