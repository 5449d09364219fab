"""A fake judge on 127.0.0.1 that agrees with every comparison: evalrun's judged paths without an API key.

    python -m tests.fakes.fake_judge        # from a checkout; prints its base URL, serves until Ctrl-C

Point evalrun.yaml's judge at it: `judge: {model: openai/fake-judge, api_base: URL}`. Each reply keeps the
judge's reply contract for a fuzzy comparison: one JSON object, reason first, carrying the request's
verdict_id (the token of the BEGIN-/END- delimiters evalrun puts around the texts it compares); a reply
without it is never taken as a verdict. Judged checks answer in shapes of their own (the judge protocol
reference lists them): this judge's reply does not fit them, and they end unscored, saying why.
"""
from __future__ import annotations

import json
import re
import threading

from tests.fakes.openai_server import FakeOpenAI

TOKEN = re.compile(r"BEGIN-(V[0-9A-F]{20})")


def agree(request: dict) -> str:
    token = TOKEN.search(json.dumps(request["messages"]))
    return json.dumps({"reason": "the same meaning", "match": True, "score": 1.0,
                       "verdict_id": token.group(1) if token else None})


def main() -> None:
    with FakeOpenAI(default=agree) as fake:
        print(fake.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
