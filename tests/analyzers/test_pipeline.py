"""pipeline.run_all: the analyzers at once, each report with its own usage, in the order asked."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from analyzers import pipeline, registry
from analyzers.code.diff import ChangeSet, parse_diff
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.info import AnalyzerInfo
from analyzers.report import AnalyzerReport
from tests.conftest import client_for
from tests.fakes.llm_server import ScriptedLLM, last_user_text

DIFF = (
    "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n def f(x):\n-    return x+1\n+    return x + 2\n \n"
    "@@ -10,2 +10,2 @@ def g():\n-    pass\n+    return None\n     # end\n"
)
CLAIMS = "1. The function now adds two.\n\nImplications:\n1. Callers get a larger result.\n"


def responder(req: dict[str, Any]) -> str | list[str]:
    text = last_user_text(req)
    if "Summary of changes" in text:
        return CLAIMS
    if "[edit description]" in text:
        return "```\nnothing\n```\n[end]"
    return [f"edit {req.get('seed')}-{i}" for i in range(int(req.get("n") or 1))]


def context(srv: ScriptedLLM, **kw: Any) -> AnalysisContext:
    return AnalysisContext(llm_factory=lambda: client_for(srv, **kw),
                           comments=[ReviewComment("m.py", 2, "Why two? Please add a test.")])


@pytest.mark.model
def test_reports_come_in_order_each_with_its_own_usage(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(responder, delay_s=0.05)
    changes = parse_diff(DIFF)
    ctx = context(srv)
    reports = pipeline.run_all(["crscore", "editing_rtc"], changes, ctx)
    assert [r.name for r in reports] == ["crscore", "editing_rtc"]
    assert all(r.error is None for r in reports)
    crscore, rtc = reports
    assert rtc.usage["requests"] == 5 * 2  # two hunks, 5 requests each, none of CRScore's
    assert crscore.usage["requests"] == 1  # one claims request for the one commented hunk
    assert ctx.llm.usage.requests == srv.request_count == 11
    # the same findings as one analyzer after the other
    alone = [pipeline.run_one(n, changes, context(srv)) for n in ("crscore", "editing_rtc")]
    assert [[(f.key, f.scores) for f in r.findings] for r in reports] == \
        [[(f.key, f.scores) for f in r.findings] for r in alone]


@pytest.mark.model
def test_the_run_budget_is_shared(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(responder)
    ctx = context(srv, max_requests=4)
    reports = pipeline.run_all(["editing_rtc", "crscore"], parse_diff(DIFF), ctx)
    assert srv.request_count == ctx.llm.usage.requests <= 4
    assert sum(r.usage["requests"] for r in reports) == srv.request_count


class Waits(AnalyzerInfo):
    """An analyzer that finishes only when its partner has started: they must run at once."""

    name = "waits"
    title = "Waits"
    barrier = threading.Barrier(2, timeout=20)

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        self.barrier.wait()
        return AnalyzerReport(self.name, self.title, notes=[threading.current_thread().name])


class Fails(AnalyzerInfo):
    name = "fails"
    title = "Fails"

    def run(self, changes: ChangeSet, ctx: AnalysisContext) -> AnalyzerReport:
        raise ValueError("a bug")


def test_analyzers_run_at_once_and_a_failure_stays_in_its_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.ANALYZERS, "waits", f"{__name__}:Waits")
    monkeypatch.setitem(registry.ANALYZERS, "fails", f"{__name__}:Fails")
    reports = pipeline.run_all(["waits", "fails", "waits"], parse_diff(DIFF), AnalysisContext())
    assert [r.name for r in reports] == ["waits", "fails", "waits"]
    assert reports[1].error == "internal error: ValueError: a bug"
    assert reports[0].error is None and reports[2].error is None
    assert reports[0].notes != reports[2].notes  # two threads


def test_no_llm_is_started_for_analyzers_that_need_none() -> None:
    made: list[int] = []

    def factory() -> Any:
        made.append(1)
        raise AssertionError("no analyzer here needs the LLM")

    ctx = AnalysisContext(llm_factory=factory)
    reports = pipeline.run_all(["crscore", "editing_rtc"], parse_diff("--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-a\n+b\n"),
                               ctx)
    assert [r.error for r in reports] == [None, None] and made == [] and not ctx.has_llm


def test_files_at_head_load_at_once_bounded_and_in_order() -> None:
    lock, now, most = threading.Lock(), [0], [0]

    def load(path: str) -> str | None:
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        time.sleep(0.02)
        with lock:
            now[0] -= 1
        return None if path.endswith("9") else path.upper()

    paths = [f"f{i}" for i in range(20)] + ["f0"]
    texts = pipeline.files_at_head(AnalysisContext(file_loader=load), paths)
    assert list(texts) == paths[:20]
    assert texts["f3"] == "F3" and texts["f9"] is None and texts["f19"] is None
    assert 1 < most[0] <= pipeline.FILE_LOADS
