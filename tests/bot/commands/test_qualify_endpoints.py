"""Two endpoints serving one model name: the LLM cache keeps their answers apart (the endpoint
is in the key), so `rtcbot qualify URL#NAME URL#NAME` compares the two servers, not one
server's answers twice."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from analyzers.llm.cache import SqliteCache
from analyzers.llm.client import LLMClient, LLMSettings
from tests.bot.commands.test_qualify import qualify, recreator, repo  # noqa: F401  (fixture)
from tests.fakes.llm_server import ScriptedLLM


def test_two_endpoints_with_one_model_name_get_separate_cache_entries(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    first, second = scripted_llm("from the first", model="M"), scripted_llm("from the second", model="M")
    cache = SqliteCache(tmp_path / "cache.sqlite3")
    chat = [{"role": "user", "content": "the same request"}]
    answers = [LLMClient(LLMSettings(base_url=s.base_url, model="M"), cache).sample(chat) for s in (first, second)]
    assert answers == [["from the first"], ["from the second"]]
    assert first.request_count == second.request_count == 1
    # each endpoint's answer is kept: asked again, both come from the cache
    again = [LLMClient(LLMSettings(base_url=s.base_url, model="M"), cache) for s in (first, second)]
    assert [c.sample(chat) for c in again] == answers
    assert first.request_count == second.request_count == 1 and all(c.usage.cache_hits == 1 for c in again)


def test_qualify_compares_two_endpoints_serving_one_model_name(
        scripted_llm: Callable[..., ScriptedLLM], repo: Path, tmp_path: Path) -> None:  # noqa: F811
    good, noise = scripted_llm(recreator(), model="M"), scripted_llm("Edit.", model="M")
    r = qualify("--repo", str(repo), "--last", "20", "--max-hunks", "6", "--model", f"{good.base_url}#M",
                "--model", f"{noise.base_url}#M", "--output", str(tmp_path / "q.json"), "--json")
    assert r.exit_code == 0, r.output
    a, b = json.loads(r.stdout)["models"]
    assert (a["base_url"], b["base_url"]) == (good.base_url, noise.base_url)
    assert a["requests"] == good.request_count > 0 and b["requests"] == noise.request_count > 0
    assert b["cache_hits"] == 0  # none of the first endpoint's answers
    assert (a["rtc"], a["qualified"], b["rtc"], b["qualified"]) == (1.0, True, 0.0, False)
