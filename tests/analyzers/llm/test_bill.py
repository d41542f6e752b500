"""The bill: each sample's share of what its request cost, cached with its answer, so that the
figures a public output shows are the endpoint's own counts on a fresh run and the very same
when the cache answers; the endpoint's cached prompt tokens counted apart (never public)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from analyzers.llm.bill import Bill
from analyzers.llm.client import LLMClient, LLMSettings
from tests.fakes.llm_server import ScriptedLLM


def client(srv: ScriptedLLM, cache: Path | None = None) -> LLMClient:
    return LLMClient(LLMSettings(base_url=srv.base_url, model=srv.model, cache_path=cache,
                                 retry_wait_initial=0.01, retry_wait_max=0.02))


def test_shares_add_up_to_the_request_s_bill() -> None:
    shares = Bill(1, 100, 11).shares(3)
    assert shares == [Bill(1, 100, 5), Bill(0, 0, 3), Bill(0, 0, 3)]
    assert Bill.from_json(Bill(1, 2, 3).to_json()) == Bill(1, 2, 3)
    assert Bill.from_json(None) is None and Bill.from_json("[1, -2, 3]") is None and Bill.from_json("{") is None


@pytest.mark.parametrize("honour_n", [True, False])
def test_the_bill_is_the_endpoint_s_count_and_the_same_from_the_cache(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, honour_n: bool) -> None:
    srv = scripted_llm(lambda req: "two words", honour_n=honour_n, cached_share=0.5)
    fresh = client(srv, tmp_path / "c.sqlite3")
    fresh.sample([{"role": "user", "content": "one two three four"}], n=3, temperature=1.0)
    fresh.sample([{"role": "user", "content": "five six"}], n=1)
    u = fresh.usage
    assert (u.billed_requests, u.billed_prompt_tokens, u.billed_completion_tokens) == \
        (srv.request_count, srv.prompt_tokens, srv.completion_tokens) == ((2, 6, 8) if honour_n else (4, 14, 8))
    assert (u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens) == \
        (srv.prompt_tokens, srv.completion_tokens, srv.cached_tokens)
    assert u.cached_prompt_tokens > 0

    again = client(srv, tmp_path / "c.sqlite3")
    again.sample([{"role": "user", "content": "one two three four"}], n=3, temperature=1.0)
    again.sample([{"role": "user", "content": "five six"}], n=1)
    assert srv.request_count == (2 if honour_n else 4)  # every answer from the cache…
    v = again.usage
    assert (v.requests, v.prompt_tokens, v.cached_prompt_tokens, v.cache_hits) == (0, 0, 0, 4)
    assert (v.billed_requests, v.billed_prompt_tokens, v.billed_completion_tokens) == \
        (u.billed_requests, u.billed_prompt_tokens, u.billed_completion_tokens)  # …and the same bill


def test_an_answer_cached_without_its_bill_is_asked_again(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("fresh")
    path = tmp_path / "c.sqlite3"
    first = client(srv, path)
    first.sample([{"role": "user", "content": "hi"}])
    assert first.cache is not None
    key = next(iter(first.cache._conn().execute("SELECT key FROM llm_cache WHERE key LIKE '%:bill'")))[0]  # type: ignore[attr-defined]  # noqa: SLF001
    first.cache._conn().execute("DELETE FROM llm_cache WHERE key = ?", (key,)).connection.commit()  # type: ignore[attr-defined]  # noqa: SLF001
    second = client(srv, path)
    assert second.sample([{"role": "user", "content": "hi"}]) == ["fresh"]
    assert srv.request_count == 2 and second.usage.billed_requests == 1 and second.usage.cache_hits == 0
