"""`rtcbot review --format json` carries each analyzer's bill: requests, prompt and completion
tokens, equal to the scripted endpoint's own counts on a fresh run, and the very same when the
LLM cache answers every request (no cache oracle); the endpoint's cached prompt tokens, actual
requests and cache hits never in it (docs/cost.md, docs/security.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.entry import main
from tests.fakes.llm_server import ScriptedLLM, last_user_text

DIFF = ("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n \n"
        "@@ -10,2 +10,2 @@ def g():\n-    pass\n+    return None\n     # end\n")
COMMENTS = [{"path": "m.py", "line": 2, "body": "Use a constant here. It reads better."}]


def answer(req: dict[str, object]) -> str | list[str]:
    text = last_user_text(req)  # type: ignore[arg-type]
    if "[edit description]" in text:
        return "```python\ndef f(x):\n    return x + 2\n```\n[end]"
    return [f"Add two instead of one ({i})." for i in range(int(req.get("n") or 1))]  # type: ignore[call-overload]


def review(srv: ScriptedLLM, diff: Path) -> dict[str, dict[str, int]]:
    r = CliRunner().invoke(main, ["review", str(diff), "--format", "json", "--analyzers", "editing-rtc",
                                  "--llm-base-url", srv.base_url, "--model", srv.model])
    assert r.exit_code == 0, r.output
    return {rep["name"]: rep["usage"] for rep in json.loads(r.output)["reports"]}


def test_json_bill_is_the_endpoint_s_count_and_reads_alike_from_the_cache(
        scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RTCBOT_CACHE_DIR", str(tmp_path / "cache"))
    srv = scripted_llm(answer, honour_n=True, cached_share=0.25)
    diff = tmp_path / "p.diff"
    diff.write_text(DIFF)
    fresh = review(srv, diff)["editing_rtc"]
    assert fresh == {"samples": 2 * 7, "requests": srv.request_count, "prompt_tokens": srv.prompt_tokens,
                     "completion_tokens": srv.completion_tokens}
    assert srv.request_count == 2 * 5 and srv.cached_tokens > 0  # the endpoint's cache: not shown
    sent = srv.request_count
    again = review(srv, diff)["editing_rtc"]
    assert srv.request_count == sent  # every answer from rtcbot's cache…
    assert again == fresh  # …and the same figures
