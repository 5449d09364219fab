"""response_match: our ROUGE-1 agrees with Google's rouge-score package (Porter stemmer on) on many strings."""
from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings, strategies as st

from runner.checks.response_match import rouge1, rouge_tokens
from runner.checks.run import run_checks
from runner.suite.models import Case
from runner.transcripts.read import build_trajectory

SENTENCES = [
    "Your time off between January 1 and March 3, 2025 is on January 5, 2025.",
    "You are off on Jan 5th, 2025 (one day).",
    "The cats were running happily through the generously sized gardens!",
    "cat run happy garden",
    "Flights: NYC->SFO, $420; departing 08:30 — arriving 11:55.",
    "I'm sorry, I can't help with that request.",
    "", "   ", "!!!", "Ünïcödé wörds and naïve café résumés",
    "relational conditional rational hopefulness agreed feed plastered",
    "123 456 7890 a b c abcd abcde",
    "generalizations oscillators connected connecting connection connections",
]
WORDS = ["running", "runs", "ran", "cats", "caresses", "ponies", "ties", "agreed", "plastered", "motoring",
         "happy", "happiness", "relational", "conditional", "hopeful", "goodness", "sized", "January", "2025",
         "the", "a", "is", "on", "off", "e-mail", "don't", "C3PO", "résumé", "ÆSIR", "x" * 30, "sses", "ing"]


@functools.cache
def scorer():
    """Google's scorer, imported when a test first needs it: rouge-score imports nltk (2 s), which collection in
    every worker would otherwise pay."""
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer", reason="the dev extra installs rouge-score")
    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)


def reference_f1(reference: str, answer: str) -> float:
    return scorer().score(reference, answer)["rouge1"].fmeasure


@pytest.mark.parametrize("reference", SENTENCES)
@pytest.mark.parametrize("answer", SENTENCES)
def test_matches_rouge_score_on_sentences(reference, answer):
    assert rouge1(reference, answer)[2] == pytest.approx(reference_f1(reference, answer), abs=1e-12)


def test_tokens_match_rouge_score_tokenizer():
    from rouge_score import tokenizers

    tokenizer = tokenizers.DefaultTokenizer(use_stemmer=True)
    for text in SENTENCES + WORDS:
        assert rouge_tokens(text) == tokenizer.tokenize(text), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12), st.lists(st.sampled_from(WORDS), max_size=12),
       st.sampled_from([" ", ", ", ". ", "\n", "--"]))
def test_matches_rouge_score_on_generated_texts(ref_words, answer_words, glue):
    reference, answer = glue.join(ref_words), glue.join(answer_words)
    assert rouge1(reference, answer)[2] == pytest.approx(reference_f1(reference, answer), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_matches_rouge_score_on_any_text(reference, answer):
    assert rouge1(reference, answer)[2] == pytest.approx(reference_f1(reference, answer), abs=1e-12)


def _check(spec, answer, **fields):
    case = Case.model_validate({"id": "t", "source": {"path": "t.yaml"}, "checks": [spec], **fields})
    messages = [{"role": "user", "content": "hi"}] + ([{"role": "assistant", "content": answer}] if answer else [])
    [result] = run_checks(case, build_trajectory(messages))
    return result


def test_check_defaults_to_the_text_goal_and_threshold_0_8():
    goals = [{"type": "text", "name": "say", "response": "The cat runs home"}]
    result = _check({"type": "response_match_score"}, "The cats are running home", goal_details=goals)
    assert (result.status, result.threshold) == ("passed", 0.8)
    assert result.score == pytest.approx(reference_f1("The cat runs home", "The cats are running home"))
    assert result.evidence["matched_unigrams"] == ["cat", "home", "run", "the"]


def test_check_without_a_reference_is_skipped_and_without_an_answer_fails():
    skipped = _check({"type": "response_match"}, "anything")
    assert (skipped.status, skipped.explanation) == (
        "skipped", "skipped: no reference answer: give `reference:` or a text goal with `response`")
    silent = _check({"type": "response_match", "reference": "hello"}, None)
    assert (silent.status, silent.score, silent.explanation) == ("failed", 0.0, "the agent gave no final answer")


def test_the_stemmer_loads_without_the_rest_of_nltk_and_leaves_nltk_importable():
    """NLTK's package imports most of itself (and scipy): the stemmer's module is loaded alone, and a
    later `import nltk` still gets the whole real package."""
    import subprocess
    import sys

    probe = ("import sys; from runner.checks.response_match import stem; words = [stem(w) for w in "
             "('running', 'generously', 'cancellation')]; "
             "loaded = sorted(m for m in sys.modules if m.startswith(('nltk', 'scipy'))); "
             "import nltk; print(words, loaded, hasattr(nltk, 'word_tokenize'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['run', 'gener', 'cancel'] [] True"


def test_threads_stemming_at_once_still_load_the_stemmer_alone():
    """Scoring threads stem at the same time: the bundled suites' first run imported the whole of NLTK and
    scipy (1.2 s of a 1.8 s run) when a second thread imported while the first had its stand-ins in place."""
    import subprocess
    import sys

    probe = ("import sys, threading; from runner.checks.response_match import stem\n"
             "gate = threading.Barrier(8)\n"
             "def work():\n    gate.wait(); [stem(w) for w in ('running', 'generously', 'cancellation')]\n"
             "threads = [threading.Thread(target=work) for _ in range(8)]\n"
             "[t.start() for t in threads]; [t.join() for t in threads]\n"
             "print(sorted(m for m in sys.modules if m.startswith(('nltk', 'scipy'))), stem('running'))")
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        assert out.strip() == "[] run"
