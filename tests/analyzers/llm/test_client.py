from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from analyzers.llm.client import (
    BudgetExceeded,
    LLMClient,
    LLMError,
    LLMSettings,
    Usage,
)
from analyzers.llm.http import SHARDS
from analyzers.llm.retry import FAILURE_REASONS
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM

MSG = [{"role": "user", "content": "describe"}]


def seeded(req: dict) -> str:
    return f"seed={req.get('seed')} n={req.get('n', 1)}"


def test_n_honoured_is_one_request(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(lambda r: [f"s{i}" for i in range(r.get("n", 1))], honour_n=True)
    c = client_for(srv)
    assert c.sample(MSG, n=3, temperature=1.0) == ["s0", "s1", "s2"]
    assert srv.request_count == 1 and c.honours_n is True


def test_n_ignored_gets_one_request_per_sample_with_distinct_seeds(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(seeded, honour_n=False)
    c = client_for(srv)
    out = c.sample(MSG, n=3, temperature=1.0, seed=10)
    assert srv.request_count == 3
    seeds = [r["seed"] for r in srv.requests]
    assert len(set(seeds)) == 3 and seeds[0] == 10
    assert c.honours_n is False and len(set(out)) == 3
    c.sample(MSG, n=2, temperature=1.0, seed=99)  # once known, no n>1 request is sent
    assert srv.request_count == 5 and "n" not in srv.requests[-1]


def test_retries_on_5xx_and_429_count_against_usage(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("fine")
    srv.fail_next(2, 500)
    srv.fail_next(1, 429, retry_after=0)
    c = client_for(srv)
    assert c.sample(MSG) == ["fine"]
    assert srv.request_count == 4
    assert c.usage.requests == 4 and c.usage.retries == 3


def test_retries_give_up_with_one_clear_line(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("fine")
    srv.fail_next(10, 503)
    c = client_for(srv, max_retries=2)
    with pytest.raises(LLMError) as e:
        c.sample(MSG)
    assert "503" in str(e.value) and srv.base_url not in str(e.value) and "\n" not in str(e.value)
    assert e.value.endpoint == srv.base_url  # beside the text, for the operator (analyzers/llm/errors.py)
    assert srv.request_count == 3


@pytest.mark.parametrize("kind", ["garbage", "empty"])
def test_an_answer_that_is_not_a_completion_is_retried_then_one_clear_line(
        scripted_llm: Callable[..., ScriptedLLM], kind: str) -> None:
    srv = scripted_llm("fine")
    srv.chaos(1.0, kinds=(kind,))  # a gateway's HTML page, or an empty 200
    c = client_for(srv, max_retries=2)
    with pytest.raises(LLMError) as e:
        c.sample(MSG)
    assert "not a chat completion" in str(e.value) and e.value.endpoint == srv.base_url
    assert "\n" not in str(e.value) and srv.request_count == 3 and c.usage.retries == 2
    srv.chaos(0.0)
    assert c.sample(MSG) == ["fine"]


def test_a_dropped_connection_gets_every_retry_unlike_a_refused_one(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("fine")
    srv.chaos(1.0, kinds=("hang",), hang_s=0.05)  # the connection is made, then closed unanswered
    c = client_for(srv, max_retries=3)
    with pytest.raises(LLMError):
        c.sample(MSG)
    assert srv.request_count == 4  # a refused connection stops after 2 (test_unreachable_endpoint_...)


def test_request_budget_counts_retries(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("x")
    srv.fail_next(2, 500)
    c = client_for(srv, max_requests=2)
    with pytest.raises(BudgetExceeded):
        c.sample(MSG)
    assert srv.request_count == 2


def test_token_budget(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("a b c d e f g h")
    c = client_for(srv, max_tokens_total=5)
    c.sample(MSG)
    with pytest.raises(BudgetExceeded):
        c.sample(MSG, seed=1)
    assert srv.request_count == 1


def test_cache_rerun_costs_nothing_and_reproduces(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(seeded, honour_n=False)
    first = client_for(srv, tmp_path).sample(MSG, n=3, temperature=1.0)
    assert srv.request_count == 3
    again = client_for(srv, tmp_path)
    assert again.sample(MSG, n=3, temperature=1.0) == first
    assert srv.request_count == 3 and again.usage.cache_hits == 3 and again.usage.requests == 0
    # a larger n reuses the cached samples and asks only for the new one
    assert again.sample(MSG, n=4, temperature=1.0)[:3] == first
    assert srv.request_count == 4


def test_unreachable_endpoint_names_url_and_model() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    c = LLMClient(LLMSettings(base_url=url, model="m1", cache_path=None, max_retries=1,
                              retry_wait_initial=0.01, retry_wait_max=0.02))
    with pytest.raises(LLMError) as e:
        c.sample(MSG)
    msg = str(e.value)
    assert url not in msg and "'m1'" in msg and "\n" not in msg and url in e.value.for_operator()


def test_wrong_model_name(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("x")
    c = LLMClient(LLMSettings(base_url=srv.base_url, model="nope", cache_path=None))
    with pytest.raises(LLMError, match="model 'nope' not found"):
        c.check()
    with pytest.raises(LLMError, match="model 'nope' not found"):
        c.sample(MSG)


def test_concurrency_is_bounded(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("x", delay_s=0.05)
    c = client_for(srv, max_concurrency=3)
    c.map(lambda i: c.sample(MSG, seed=i), range(12))
    assert srv.request_count == 12
    assert 1 < srv.max_in_flight <= 3


def test_heard_gets_each_request_s_answers_before_its_slot_is_free_and_the_cached_ones_first(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """What counts the answers (a format watch) sees them before a request waiting for the slot
    is sent: with one slot, the second request leaves only after the first's answers were heard."""
    srv = scripted_llm(lambda req: [f"answer {i} of {req['seed']}" for i in range(int(req.get("n", 1)))])
    c = client_for(srv, tmp_path, max_concurrency=1)
    heard: list[list[str]] = []
    done_at: list[float] = []

    def slow_ear(texts: list[str]) -> None:
        time.sleep(0.2)
        heard.append(texts)
        done_at.append(time.perf_counter())

    with ThreadPoolExecutor(max_workers=2) as ex:  # two samples at once, on the one slot
        answers = list(ex.map(lambda seed: c.sample(MSG, n=2, seed=seed, heard=slow_ear), (0, 1)))
    assert sorted(heard) == sorted(answers) and len(answers[0]) == 2
    arrived = sorted(at for _, at, _ in srv.served)
    assert len(arrived) == 2 and arrived[1] > min(done_at)
    again: list[list[str]] = []
    assert c.sample(MSG, n=2, seed=0, heard=again.append) == answers[0]
    assert again == [answers[0]] and srv.request_count == 2  # from the cache, heard all the same


def test_scoped_views_count_their_own_usage_within_one_budget_and_one_set_of_slots(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("a b", delay_s=0.05)
    run = client_for(srv, max_concurrency=2, max_requests=7)
    first, second = run.scoped(), run.scoped()
    with ThreadPoolExecutor(max_workers=2) as ex:  # both views at once
        jobs = [ex.submit(first.map, lambda i: first.sample(MSG, seed=i), range(3)),
                ex.submit(second.map, lambda i: second.sample(MSG, seed=10 + i), range(3))]
        assert [len(j.result()) for j in jobs] == [3, 3]
    assert (first.usage.requests, second.usage.requests, run.usage.requests) == (3, 3, 6)
    assert first.usage.tokens == second.usage.tokens == run.usage.tokens // 2 > 0
    assert 1 < srv.max_in_flight <= 2  # the views share the run's request slots
    first.sample(MSG, seed=99)
    with pytest.raises(BudgetExceeded):  # the run's budget, not the view's own count
        second.sample(MSG, seed=100)
    assert (first.usage.requests, second.usage.requests, run.usage.requests) == (4, 3, 7)


def test_clients_of_one_endpoint_share_one_http_client(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    # a worker makes a client per analysis; each new HTTP client cost ~50 ms of CPU
    a, b = scripted_llm("one"), scripted_llm("two")
    first, again, other = client_for(a), client_for(a), client_for(b)
    assert first._client is again._client
    assert first._client is not other._client
    assert first.sample([{"role": "user", "content": "hi"}]) == ["one"]
    assert again.sample([{"role": "user", "content": "hi again"}]) == ["one"]
    assert other.sample([{"role": "user", "content": "hi"}]) == ["two"]
    assert first.usage.requests == 1 and again.usage.requests == 1  # usage stays per client


def test_an_endpoints_requests_take_its_pools_in_turn(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    # one pool's work grows with the square of its connections (analyzers/llm/http.py)
    llm = client_for(scripted_llm("ok"))
    clients = llm._client.clients
    assert len(clients) == SHARDS and len({id(c._client) for c in clients}) == SHARDS  # a pool each
    for seed in range(2 * SHARDS):
        assert llm.sample([{"role": "user", "content": "hi"}], seed=seed) == ["ok"]
    assert [len(c._client._transport._pool.connections) for c in clients] == [1] * SHARDS  # type: ignore[attr-defined]


def failed(c: LLMClient) -> dict[str, int]:
    """The client's failed attempts, by reason, those at 0 left out."""
    return {reason: n for reason, n in c.usage.failures().items() if n}


def test_failed_attempts_are_counted_by_reason_retried_ones_included(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("fine")
    srv.fail_next(2, 500)
    srv.fail_next(1, 429, retry_after=0)
    run = client_for(srv)
    view = run.scoped()
    assert view.sample(MSG) == ["fine"]
    assert failed(view) == failed(run) == {"status_5xx": 2, "status_429": 1}
    assert Usage().failures() == dict.fromkeys(FAILURE_REASONS, 0)  # a field for every reason
    before = run.usage.copy()
    srv.fail_next(1, 400)  # a 4xx other than 429 is not retried
    with pytest.raises(LLMError, match="answered HTTP 400"):
        run.sample(MSG, seed=1)
    assert failed(run) == {"status_5xx": 2, "status_429": 1, "status_4xx": 1}
    assert run.usage.minus(before).failures()["status_4xx"] == 1 and "failed_status_4xx" not in run.usage.as_dict()


@pytest.mark.parametrize(("kind", "reason"), [("500", "status_5xx"), ("garbage", "invalid"), ("hang", "connection")])
def test_an_endpoint_failing_every_request_is_counted_once_per_attempt(
        scripted_llm: Callable[..., ScriptedLLM], kind: str, reason: str) -> None:
    srv = scripted_llm("fine")
    srv.chaos(1.0, kinds=(kind,), hang_s=0.05)  # a 500, a gateway's page, a connection closed unanswered
    c = client_for(srv, max_retries=2)
    with pytest.raises(LLMError):
        c.sample(MSG)
    assert srv.request_count == 3 and failed(c) == {reason: 3}


def test_timeouts_and_a_refused_connection_are_counted_as_such(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("fine")
    srv.chaos(1.0, kinds=("hang",), hang_s=2.0)  # no answer within the client's timeout
    slow = client_for(srv, max_retries=1, timeout=0.2)
    with pytest.raises(LLMError, match="timed out"):
        slow.sample(MSG)
    assert failed(slow) == {"timeout": 2}
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m1", cache_path=None,
                                 retry_wait_initial=0.01, retry_wait_max=0.02))
    with pytest.raises(LLMError, match="connection failed"):
        down.sample(MSG)
    assert failed(down) == {"connection": 2} and down.usage.requests == 2  # a refused one: 2 tries
