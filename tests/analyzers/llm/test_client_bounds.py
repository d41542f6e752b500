"""Bounded model output (analyzers/llm/answer.py): a server that ignores max_tokens and answers
8 MB gets its answer read up to a byte cap, cut, stored and cached within the cap, and the
finding says so — from the cache too, so that a cached cut reads like a fresh one. An answer
the server stopped at max_tokens (finish_reason "length") is counted as such, from the cache too."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from analyzers.code.diff import parse_diff
from analyzers.context import AnalysisContext
from analyzers.llm.answer import CUT_MARK, LIMIT_MARK, answer_cap, body_cap, cut, mark, read_bounded, uncut, unmark
from analyzers.pipeline import run_one
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text

EIGHT_MB = 8 * 1024 * 1024
DIFF = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n \n"


class LazyBody:
    """A response body of `size` bytes made as it is read, counting what was read."""

    def __init__(self, size: int, chunk: int = 64 * 1024) -> None:
        self.size, self.chunk, self.read, self.closed = size, chunk, 0, False

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        while self.read < self.size and not self.closed:
            n = min(chunk_size or self.chunk, self.size - self.read)
            self.read += n
            yield b"x" * n

    def close(self) -> None:
        self.closed = True


def test_the_body_is_read_up_to_its_cap_never_whole() -> None:
    body = LazyBody(EIGHT_MB)
    cap = body_cap(256, 1)
    data, truncated = read_bounded(body, cap)
    assert truncated and len(data) == cap and body.closed
    assert body.read <= cap + 64 * 1024 < EIGHT_MB // 20  # one chunk past the cap at most
    small = LazyBody(1000)
    assert read_bounded(small, cap) == (b"x" * 1000, False) and small.closed


def test_a_cut_is_at_a_character_within_the_cap_and_says_so() -> None:
    text = "é" * 5000  # 10,000 bytes
    short = cut(text, 4096)
    assert len(short.encode()) <= 4096 and short.endswith(CUT_MARK)
    assert uncut(short) == (short[: -len(CUT_MARK)], True) and set(uncut(short)[0]) == {"é"}
    assert cut("fits", 4096) == "fits" and uncut("fits") == ("fits", False)
    assert cut("fits", 4096, ended=False) == "fits" + CUT_MARK  # stopped where its body was cut


def cached_values(path: Path) -> list[str]:
    with sqlite3.connect(path) as c:
        return [row[0] for row in c.execute("SELECT value FROM llm_cache WHERE key NOT LIKE '%:bill'")]


def test_an_8_mb_answer_is_cut_stored_and_cached_within_the_cap(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("y" * EIGHT_MB)
    llm = client_for(srv, tmp_path)
    [text] = llm.sample([{"role": "user", "content": "hi"}], max_tokens=256)
    cap = answer_cap(256)
    assert set(text) == {"y"} and len(text) <= cap
    assert (llm.usage.samples, llm.usage.cut, llm.usage.requests) == (1, 1, 1)
    assert llm.usage.completion_tokens >= 256  # a cut body's usage never came: max_tokens charged
    [stored] = cached_values(tmp_path / "cache.sqlite3")
    assert len(stored.encode()) <= cap and stored.endswith(CUT_MARK)
    again = client_for(srv, tmp_path)  # the next run: from the cache, and still cut
    assert again.sample([{"role": "user", "content": "hi"}], max_tokens=256) == [text]
    assert (again.usage.requests, again.usage.cache_hits, again.usage.cut, again.usage.samples) == (0, 1, 1, 1)


def test_a_body_cut_in_its_first_answer_gives_every_sample_cut_in_one_request(
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm("z" * EIGHT_MB, honour_n=True)
    llm = client_for(srv)
    texts = llm.sample([{"role": "user", "content": "hi"}], n=3, max_tokens=256)
    assert srv.request_count == 1 and (llm.usage.samples, llm.usage.cut) == (3, 3)
    assert set(texts[0]) == {"z"} and texts[1:] == ["", ""]  # the answers the body never reached


def test_an_answer_stopped_at_max_tokens_says_so_from_the_cache_too(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("```python\nx = 1\n", finish_reason="length")
    llm = client_for(srv, tmp_path)
    assert llm.sample([{"role": "user", "content": "hi"}], n=2, max_tokens=8) == ["```python\nx = 1\n"] * 2
    assert (llm.usage.samples, llm.usage.at_limit, llm.usage.cut) == (2, 2, 0)
    assert cached_values(tmp_path / "cache.sqlite3") == ["```python\nx = 1\n" + LIMIT_MARK] * 2
    again = client_for(srv, tmp_path)  # the next run: from the cache, and still stopped
    assert again.sample([{"role": "user", "content": "hi"}], n=2, max_tokens=8) == ["```python\nx = 1\n"] * 2
    assert (again.usage.requests, again.usage.at_limit, again.usage.cut) == (0, 2, 0)
    srv.finish_reason = lambda req: "stop"
    done = client_for(srv)
    done.sample([{"role": "user", "content": "hi"}], max_tokens=8)
    assert (done.usage.samples, done.usage.at_limit) == (1, 0)


def test_a_stopped_answer_is_marked_within_its_cap() -> None:
    assert unmark(mark("fits", 4096, at_limit=True)) == ("fits", False, True)
    big = mark("v" * 5000, 4096, at_limit=True)  # over the cap too: cut, and the cut says enough
    assert len(big.encode()) <= 4096 and unmark(big)[1:] == (True, False)
    near = mark("v" * (4096 - 10), 4096, at_limit=True)  # fits, but not with its mark: cut
    assert len(near.encode()) <= 4096 and near.endswith(CUT_MARK)
    assert unmark(mark("fits", 4096)) == ("fits", False, False)


def test_answers_within_max_tokens_come_whole(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    answer = "w" * (answer_cap(256) - 1)
    llm = client_for(scripted_llm(answer))
    assert llm.sample([{"role": "user", "content": "hi"}], n=2, max_tokens=256) == [answer, answer]
    assert (llm.usage.samples, llm.usage.cut) == (2, 0)


def flooding(req: dict[str, Any]) -> str:
    """8 MB descriptions (a server that ignores max_tokens); a fenced answer to regenerate."""
    if "[edit description]" not in last_user_text(req):
        return "q" * EIGHT_MB
    return "```\n    return x + 2\n```\n[end]"


def test_the_finding_says_its_answers_were_cut_and_stays_small(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(flooding)
    ctx = AnalysisContext(llm_factory=lambda: client_for(srv))
    report = run_one("editing_rtc", parse_diff(DIFF), ctx)
    [finding] = report.findings
    assert finding.evidence["answers_cut"] == 3  # the three forward samples
    assert "3 of the model's answers went past max_tokens and were cut" in finding.message
    assert any("went past max_tokens" in n for n in report.notes)
    assert all(len(d.encode()) <= answer_cap(256) for d in finding.evidence["descriptions"])
    assert len(json.dumps(finding.to_dict())) < 64 * 1024  # 3 × 8 MB of descriptions before the cap
    assert report.usage["cut"] == 3
