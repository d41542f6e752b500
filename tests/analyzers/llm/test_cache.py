"""The answers' cache: a request's key, and answers kept across runs in one private file."""

from __future__ import annotations

from pathlib import Path

from analyzers.llm.cache import SqliteCache, request_key

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
