"""A judge that fails a fifth of its calls in every way a provider can: every comparison ends either
as the judge's own verdict or as an offline verdict marked with the judge's failure, never a crash,
never a silent stand-in. Real HTTP against the fake server; comparisons from several threads."""
from __future__ import annotations

import json
import random
import re
import threading

from runner.llm.client import LLMClient
from runner.llm.judge import LLMJudge
from runner.llm.prompts import PromptLibrary
from runner.llm.runtime import LLMRuntime
from runner.llm.settings import JudgeSettings
from runner.score.cascade import Cascade, CascadeSettings
from tests.fakes.openai_server import FakeOpenAI, provider_faults

DEADLINE_S = 0.3  # the judge's timeout, which the trickled fault outlasts
FAULTS = provider_faults(deadline_s=DEADLINE_S)


def test_every_comparison_is_the_judges_or_marked_as_not(monkeypatch):
    # a short back-off between retries: what is tested is where each verdict comes from, not how long retries wait
    monkeypatch.setattr("runner.llm.retries.BACKOFF_BASE_S", 0.01)
    rng = random.Random(20261123)
    lock = threading.Lock()

    def judge(request):
        with lock:
            fault = rng.random() < 0.2
            choice = rng.choice(FAULTS)
        if fault:
            return choice
        prompt = request["messages"][0]["content"]
        token = re.search(r"BEGIN-(V[0-9A-F]{20})", prompt).group(1)
        data = json.loads(prompt.split(f"BEGIN-{token}\n", 1)[1].split(f"\nEND-{token}", 1)[0])
        same = data["actual"].startswith("Paris")
        return json.dumps({"reason": "same city" if same else "another city", "match": same, "score": float(same),
                           "verdict_id": token})

    with FakeOpenAI(default=judge) as fake:
        settings = JudgeSettings(model="openai/fake-judge", api_base=fake.base_url, timeout_s=DEADLINE_S, max_retries=1,
                                 max_retry_wait_s=1, cache=False)
        client = LLMClient(settings, role="judge", runtime=LLMRuntime(concurrency=4))
        scorer = Cascade(CascadeSettings(use_embeddings=False), judge=LLMJudge(client, PromptLibrary()))
        actuals = [f"{'Paris' if i % 2 else 'Berlin'} option {chr(97 + i % 26)}{i // 26}" for i in range(80)]
        decisions: dict[str, object] = {}
        errors: list[BaseException] = []

        def work(chunk):
            try:
                for actual in chunk:
                    decisions[actual] = scorer.compare("Paris, France", actual, context="the agent's answer")
            except BaseException as error:  # surfaced by the assertion below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(actuals[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert errors == [] and len(decisions) == 80
        assert fake.max_in_flight <= 4

    judged = stood_in = 0
    for actual, decision in decisions.items():
        if decision.decided_by == "llm":
            judged += 1
            assert decision.judge_failure is None
            assert decision.matched is actual.startswith("Paris")  # the judge's verdict, never the injected one
        else:
            stood_in += 1
            assert decision.decided_by == "rapidfuzz" and decision.judge_failure
            assert decision.reason.startswith(f"decided by rapidfuzz because the judge failed: {decision.judge_failure}")
    assert judged > 0 and judged + stood_in == 80
