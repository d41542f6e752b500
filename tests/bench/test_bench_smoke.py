"""Tiny versions of each benchmark: the machinery works (request counts, exactly-once counts,
the document's table). No timing is asserted here; speed is measured only in `make bench`."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from bench import PRS, bench_responder, cli_start, e2e_floor, incremental, run_all, semgrep_scope, webhook_load
from tests.support import require


def test_responder_answers_each_analyzer_in_its_shape() -> None:
    fwd = bench_responder({"n": 3, "seed": 7, "messages": [{"role": "user", "content": "[old]\nx\n[new]\ny"}]})
    assert isinstance(fwd, list) and len(set(fwd)) == 3
    fix = bench_responder({"messages": [
        {"role": "system", "content": "Task: fix a security finding. …"},
        {"role": "user", "content": "Flagged lines:\n```python\n    eval(x)\n```\n"}]})
    assert isinstance(fix, str) and "```\n    pass" in fix


@pytest.mark.slow  # the e2e bench on a real PR's hunks: ~10 s of CPU
def test_e2e_counts_five_requests_per_hunk_and_reports_ratios() -> None:
    diff = sorted(PRS.glob("more-itertools-*.diff"))[0]
    prs = e2e_floor.load_prs([diff], synthetic=False)
    results = e2e_floor.measure(prs, names=("editing_rtc",), delay_s=0.0)
    res = results[0]
    assert res.whole.requests == 5 * prs[0].code_hunks > 0
    assert res.concurrent is not None and res.concurrent.requests == res.whole.requests
    assert res.floor == 2 and set(res.walls) == {"editing_rtc"}
    rows = e2e_floor.rows_from(results)
    by = {r["figure"].split(" (")[0]: r for r in rows}
    assert by["EditingRTC requests per code hunk"]["met"] is True
    assert all(r["value"] for r in rows)


@pytest.mark.slow  # starts the bench's LLM process (a new Python)
def test_the_llm_process_serves_the_bench_responder_and_reports_its_requests() -> None:
    from analyzers.llm.client import LLMClient, LLMSettings
    from bench.llm_process import LLMProcess

    server = LLMProcess(0.0)
    try:
        llm = LLMClient(LLMSettings(base_url=server.base_url, model=server.model))
        before = time.perf_counter()
        got = llm.sample([{"role": "user", "content": "[old]\nx\n[new]\ny"}], n=2)
        assert len(got) == 2 and all(isinstance(t, str) and t for t in got)
        assert len(server.requests) == 1 and server.requests[0]["n"] == 2
        assert server.request_count == 1
        [(index, arrived, answered)] = server.served  # on the clock this process reads too
        assert index == 0 and before <= arrived <= answered <= time.perf_counter()
        server.reset()
        assert server.requests == [] and server.served == []
    finally:
        server.stop()
    assert server._proc.returncode == 0  # noqa: SLF001 - it ended when its stdin closed


@pytest.mark.slow  # Semgrep
def test_e2e_autofix_makes_its_three_sequential_requests_per_finding() -> None:
    from analyzers.semgrep.scan import find_semgrep

    require(find_semgrep(), "semgrep is not installed")
    pr = e2e_floor.load_prs([], synthetic=True)[0]
    res = e2e_floor.measure([pr], names=("autofix",), delay_s=0.0, concurrent=False)[0]
    report = res.whole.reports[0]
    assert report.error is None
    assert len(report.findings) == 2  # shell=True and eval() on added lines
    assert res.whole.requests == 3 * 2 and res.floor == 3
    assert report.scores["fixed"] == 2.0  # the scripted fix removes both calls


def test_incremental_pays_only_for_the_changed_hunk() -> None:
    m = incremental.measure(hunks=4, names=("editing_rtc",))
    assert m["hunks"] == 4
    assert m["first"] == 4 * 5
    assert m["one_hunk"] == 5
    assert m["rerun"] == 0
    assert 0 < m["push_same_lines"] <= m["one_hunk"]
    assert 0 < m["push_shifting"] <= m["one_hunk"]  # EditingRTC prompts carry no line numbers


@pytest.mark.slow  # three new Python processes, one of them the CLI's help
def test_cli_start_times_the_help_its_eager_peer_and_the_interpreter() -> None:
    times = cli_start.measure(runs=1)
    assert set(times) == {"help", "eager", "floor"} and all(t > 0 for t in times.values())


def test_cli_start_fails_on_a_command_that_does_not_start(monkeypatch: pytest.MonkeyPatch) -> None:
    # a run that did not work is an error, never a time
    monkeypatch.setitem(cli_start.COMMANDS, "floor", [sys.executable, "-I", "-c", "raise SystemExit(3)"])
    with pytest.raises(RuntimeError, match="floor exited 3"):
        cli_start.once("floor")


@pytest.mark.slow
def test_semgrep_scope_narrow_scan_finds_the_same_in_changed_files() -> None:
    from analyzers.semgrep.scan import find_semgrep

    require(find_semgrep(), "semgrep is not installed")
    m = semgrep_scope.measure(files=12, changed=3, repeats=1)
    assert m["changed"] == 3
    assert m["same_findings"] == 1.0
    assert m["narrow_findings"] == 4  # 3 added eval() calls + one shell=True in module 0
    assert m["whole_findings"] == 4 + 1  # + module 10's shell=True


@pytest.mark.slow
def test_webhook_load_sqlite_enqueues_each_delivery_exactly_once() -> None:
    require(shutil.which("rtcbot", path=str(Path(sys.executable).parent)), "rtcbot is not installed in the venv")
    o = webhook_load.measure("sqlite", rate=20, seconds=1)
    total = 20 + webhook_load.WARMUP
    assert o.load.statuses == {202: 20}
    assert o.load.redelivered == {200: 2}  # redeliveries are acknowledged, not enqueued
    c = o.counts
    assert (c.deliveries, c.jobs, c.queue_messages, c.distinct_job_ids) == (total,) * 4
    assert c.doubled == 0 and c.queued_not_in_jobs == 0 and c.jobs_per_delivery_max == 1
    rows = webhook_load.rows_for(o, 20, 1)
    assert rows[1]["met"] is True
    assert len(o.load.latencies) == len(o.load.lateness) == len(o.load.service) == 20
    assert all(lat >= svc for lat, svc in zip(o.load.latencies, o.load.service, strict=True))  # from the due time
    assert "generator late p99" in rows[0]["value"] and o.load.server_cpu_s > 0


@pytest.mark.slow
def test_webhook_load_with_a_new_connection_per_delivery() -> None:
    require(shutil.which("rtcbot", path=str(Path(sys.executable).parent)), "rtcbot is not installed in the venv")
    o = webhook_load.measure("sqlite", rate=20, seconds=1, connections="new")
    assert o.load.statuses == {202: 20} and o.load.connections == 20
    assert o.load.redelivered == {200: 2}
    assert o.counts.doubled == 0 and o.counts.distinct_job_ids == 20 + webhook_load.WARMUP


@pytest.mark.services
@pytest.mark.slow
def test_webhook_load_redis_enqueues_each_delivery_exactly_once() -> None:
    require(webhook_load.redis_ready(), "Redis does not answer on 127.0.0.1:6379")
    o = webhook_load.measure("redis", rate=20, seconds=1)
    c = o.counts
    total = 20 + webhook_load.WARMUP
    assert (c.jobs, c.queue_messages, c.distinct_job_ids, c.doubled) == (total, total, total, 0)


@pytest.mark.model
def test_run_all_writes_the_table_with_the_machine(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    assert run_all.main(["--only", "incremental", "--quick", "--output", str(out)]) == 0
    text = out.read_text()
    assert "| benchmark | figure | value | target | met? |" in text
    assert "| incremental | Incremental: requests after a push" in text
    for key in ("- date:", "- CPU:", "- cores:", "- memory:", "- Python:"):
        assert key in text


def test_run_all_turns_a_failing_benchmark_into_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(quick: bool) -> list[dict[str, object]]:
        raise ValueError("broken input")

    monkeypatch.setattr(incremental, "run", boom)
    (name, rows, _), = run_all.run_benchmarks(["incremental"], echo=False)
    assert name == "incremental" and rows[0]["met"] is False
    assert "ValueError: broken input" in rows[0]["value"]


def test_run_all_refuses_an_unknown_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        run_all.main(["--only", "nonsense"])
    assert e.value.code == 2
    assert "unknown benchmark 'nonsense'" in capsys.readouterr().err
