from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from bot.cli import main
from bot.commands.eval_editing_rtc import edit_of
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.support import DATA

CLAIMS = DATA / "codereviewer" / "validation-500-gpt4-claims.jsonl"



def test_reads_both_formats() -> None:
    assert edit_of({"code_before_edit": "a", "code_after_edit": "b"}) == ("a", "b")
    row = json.loads(CLAIMS.open().readline())
    old, new = edit_of(row)  # type: ignore[misc]
    assert "logger.info" in old and "logger.debug" in new and "logger.info" not in new
    assert edit_of({"something": 1}) is None


def test_resumable_and_zero_requests_on_rerun(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(varied, honour_n=False)
    out = tmp_path / "res.jsonl"
    args = ["eval", "editing-rtc", str(CLAIMS), "--limit", "4", "--out", str(out),
            "--llm-base-url", srv.base_url, "--model", srv.model]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert srv.request_count == 4 * 7
    assert len(out.read_text().splitlines()) == 4
    assert "RTC-avg" in r.output and "cache hits" in r.output
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert srv.request_count == 4 * 7  # nothing new
    assert "4 item(s) reused" in r.output
    # a wider limit only does the new items
    r = CliRunner().invoke(main, [*args[:4], "6", *args[5:]])
    assert r.exit_code == 0 and srv.request_count == 6 * 7


def test_budget_stop_exits_3_and_keeps_results(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm(varied, honour_n=True)
    out = tmp_path / "res.jsonl"
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(CLAIMS), "--limit", "5", "--out", str(out),
                                  "--llm-base-url", srv.base_url, "--model", srv.model,
                                  "--max-requests", "11", "--concurrency", "1"])
    assert r.exit_code == 3
    assert srv.request_count == 11
    assert len(out.read_text().splitlines()) == 2


def test_bad_dataset(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"a": 1}\nnot json\n')
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(f)])
    assert r.exit_code == 1 and "not JSON" in r.output
    f.write_text('{"a": 1}\n')
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(f)])
    assert r.exit_code == 1 and "no usable items" in r.output
