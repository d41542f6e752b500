"""The answers' cache: a request's key, and answers kept across runs in one private file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from analyzers.llm.cache import SqliteCache, endpoint_identity, file_identity, request_key
from analyzers.llm.client import LLMClient, LLMSettings
from tests.fakes.llm_server import ScriptedLLM, varied

MSG = [{"role": "user", "content": "describe"}]


def test_the_key_names_the_endpoint_the_request_and_the_seed() -> None:
    key = request_key("http://a/v1", "m", MSG, 0.0, 256, None, 0)
    assert key == request_key("http://a/v1/", "m", MSG, 0.0, 256, [], 0)  # a trailing slash is one endpoint
    others = [request_key("http://b/v1", "m", MSG, 0.0, 256, None, 0),
              request_key("http://a/v1", "n", MSG, 0.0, 256, None, 0),
              request_key("http://a/v1", "m", MSG, 0.5, 256, None, 0),
              request_key("http://a/v1", "m", MSG, 0.0, 128, None, 0),
              request_key("http://a/v1", "m", MSG, 0.0, 256, ["\n"], 0),
              request_key("http://a/v1", "m", MSG, 0.0, 256, None, 1)]
    assert len({key, *others}) == 7


def test_answers_are_kept_across_runs_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "llm.sqlite3"
    SqliteCache(path).put("k:0", "answer")
    again = SqliteCache(path)
    assert again.get("k:0") == "answer" and again.get("k:1") is None
    assert path.stat().st_mode & 0o777 == 0o600


def test_an_answer_is_committed_without_waiting_for_the_disk(tmp_path: Path) -> None:
    """WAL with synchronous=NORMAL, as the store's database: a commit is not an fsync (a
    request's answers and their bills are 2n commits), and a crash loses at most the last
    answers, never the file."""
    cache = SqliteCache(tmp_path / "llm.sqlite3")
    cache.put("k:0", "answer")
    conn = cache._conn()  # the connection the put used (one a thread)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL (FULL is 2)


def test_an_endpoint_is_known_by_its_normalised_url() -> None:
    assert endpoint_identity("HTTP://LocalHost:80/v1/") == "http://localhost/v1"
    assert endpoint_identity("https://api.example.com:443/v1") == "https://api.example.com/v1"
    distinct = {endpoint_identity(u) for u in (
        "http://localhost/v1", "http://localhost:8080/v1", "https://localhost/v1", "http://localhost/v2",
        "http://other/v1", "http://[::1]:8080/v1", "http://tenant@localhost/v1")}
    assert len(distinct) == 7  # another port, scheme, path, host or user is another endpoint


def test_a_model_file_is_known_by_its_name_and_content(tmp_path: Path) -> None:
    a, b, c = tmp_path / "m.gguf", tmp_path / "copy" / "m.gguf", tmp_path / "n.gguf"
    b.parent.mkdir()
    a.write_bytes(b"weights")
    b.write_bytes(b"weights")
    c.write_bytes(b"weights")
    assert file_identity(a) == file_identity(b) and file_identity(a).startswith("embedded:m.gguf:")
    assert file_identity(c) != file_identity(a)
    a.write_bytes(b"other weights")
    assert file_identity(a) != file_identity(b)


def test_a_model_keyed_by_its_identity_is_answered_from_the_cache_on_another_port(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The embedded server listens on a new port each run: keyed by the model file, the second
    run's answers come from the cache, and its server is asked nothing."""
    first, second = scripted_llm(varied), scripted_llm(varied)
    assert first.base_url != second.base_url
    cache = tmp_path / "cache.sqlite3"

    def run(srv: ScriptedLLM, identity: str | None) -> list[str]:
        client = LLMClient(LLMSettings(base_url=srv.base_url, model=srv.model, cache_path=cache,
                                       cache_identity=identity))
        return client.sample(MSG, n=3, temperature=1.0, max_tokens=32)

    answers = run(first, "embedded:m.gguf:abc")
    assert first.request_count >= 1
    assert run(second, "embedded:m.gguf:abc") == answers and second.request_count == 0
    run(second, "embedded:m.gguf:def")  # another model file: asked again
    assert second.request_count >= 1


def test_two_remote_endpoints_never_share_answers(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """Tenants' endpoints stay apart: the same request to another endpoint is asked there."""
    first, second = scripted_llm(varied), scripted_llm(varied)
    cache = tmp_path / "cache.sqlite3"
    for srv in (first, second):
        LLMClient(LLMSettings(base_url=srv.base_url, model=srv.model, cache_path=cache)).sample(
            MSG, n=2, temperature=1.0, max_tokens=32)
    assert first.request_count >= 1 and second.request_count >= 1
    again = LLMClient(LLMSettings(base_url=first.base_url + "/", model=first.model, cache_path=cache))
    before = first.request_count
    again.sample(MSG, n=2, temperature=1.0, max_tokens=32)
    assert first.request_count == before  # the same endpoint, written another way: from the cache
