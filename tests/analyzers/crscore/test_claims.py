"""Claim parsing on the real GPT-4 answers and on messy small-model output; generation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.crscore.claims import build_messages, generate_claims, parse_claims
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import DATA, require

GPT4 = DATA / "codereviewer" / "validation-500-gpt4-claims.jsonl"


def _answers() -> list[str]:
    require(GPT4.exists(), f"{GPT4} is missing")
    return [json.loads(line)["change_summary"] for line in GPT4.read_text(encoding="utf-8").splitlines() if line]


def test_gpt4_answers_parse_into_their_numbered_points() -> None:
    answers = _answers()
    assert len(answers) == 500
    for text in answers:
        claims = parse_claims(text)
        head, _, tail = text.partition("Implications:")
        numbered_head = len(re.findall(r"^\s*\d+\.\s", head, re.M))
        numbered_tail = len(re.findall(r"^\s*\d+\.\s", tail, re.M))
        assert len(claims.summary) == numbered_head
        # every implication is kept, except a last one the model did not finish
        cut = not tail.rstrip().endswith((".", ")", "`", '"', "'", "!", "?", "]"))
        assert len(claims.implications) == numbered_tail - (1 if cut and numbered_tail else 0)
        assert all(not re.match(r"^\d+\.", c) for c in claims.all)


def test_a_known_answer_exactly() -> None:
    first = parse_claims(_answers()[0])
    assert first.summary == ["The logging level for the message \"ExecutionFlow polling lock value: \" + "
                             "hasLocked has been changed from 'info' to 'debug'."]
    assert len(first.implications) == 3
    assert first.implications[2].startswith("On the other hand, if the log message")


def test_cut_off_answers_lose_only_their_unfinished_last_point() -> None:
    cut = [t for t in _answers() if not t.rstrip().endswith(".")]
    assert cut, "the data has cut-off answers"
    for text in cut:
        claims = parse_claims(text)
        assert all(c.rstrip()[-1] in ".)`\"'!?]" for c in claims.all)


def test_small_model_mess() -> None:
    text = (
        "Sure! Here is the summary.\n"
        "**Summary of changes:**\n"
        "1) Adds a null check before the loop.\n"
        "1) Adds a null check before the loop.\n"
        "- Renames `foo` to `bar`\n   in both call sites.\n"
        "## Implications\n"
        "2. Callers that passed None no longer crash.\n"
        "3. The old name `foo` will no longer"
    )
    claims = parse_claims(text)
    assert claims.summary == ["Adds a null check before the loop.", "Renames `foo` to `bar` in both call sites."]
    assert claims.implications == ["Callers that passed None no longer crash."]


def test_unnumbered_answer_keeps_each_line() -> None:
    claims = parse_claims("The retry limit was raised.\nImplications: more load on the server.")
    assert claims.summary == ["The retry limit was raised."]
    assert claims.implications == ["more load on the server."]
    assert parse_claims("").all == []


def test_prompt_cuts_each_block() -> None:
    msgs = build_messages("+" + "x" * 9000, "", "y" * 5000)
    user = msgs[-1]["content"]
    assert "Summary of changes" in user and "Implications" in user
    assert "(none)" in user  # no removed lines
    assert len(user) < 4000 * 2 + 1500


def test_generate_claims_asks_once_and_is_cached(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    answer = "1. Adds a retry.\n\nImplications:\n1. Fewer failed jobs.\n2. Slower failure"
    server = scripted_llm(lambda req: answer if "Diff:" in last_user_text(req) else "?")
    llm = client_for(server, tmp_path)
    claims = generate_claims(llm, "@@ -1 +1 @@\n-a\n+b\n", "a\n", "b\n")
    assert claims.all == ["Adds a retry.", "Fewer failed jobs."]
    again = generate_claims(llm, "@@ -1 +1 @@\n-a\n+b\n", "a\n", "b\n")
    assert again.all == claims.all
    assert server.request_count == 1
    assert server.requests[0]["temperature"] == 0.0


@pytest.mark.model
@pytest.mark.slow
def test_claims_from_the_embedded_model(embedded_llm: object) -> None:
    # 64 tokens, not the default 256: the real model's answer, cut off as long ones are, still
    # parses into whole points (a quarter of the generation on a 2-core machine)
    claims = generate_claims(embedded_llm,  # type: ignore[arg-type]
                             "@@ -1,2 +1,2 @@\n def f(x):\n-    return x\n+    return x + 1\n",
                             "    return x\n", "    return x + 1\n", max_tokens=64)
    assert isinstance(claims.all, list)
    assert all(c.strip() for c in claims.all)
