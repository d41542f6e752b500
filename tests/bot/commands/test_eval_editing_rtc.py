from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bot.cli.commands.eval_editing_rtc import edit_of
from bot.entry import main
from tests.fakes.llm_server import ScriptedLLM, last_user_text, varied
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
    assert "leak rate (descriptions carrying the code)" in r.output and "0.000 of 12" in r.output
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


def test_descriptions_that_quote_the_new_code_are_counted_and_fail(scripted_llm: Callable[..., ScriptedLLM],
                                                                   tmp_path: Path) -> None:
    new = "total = compute_total(items, tax_rate)\n"
    data = tmp_path / "edits.jsonl"
    data.write_text(json.dumps({"id": 0, "code_before_edit": "total = 0\n", "code_after_edit": new}) + "\n")

    def copier(req: dict[str, Any]) -> str | list[str]:  # quotes the new line; re-creates from it
        if "[edit description]" in last_user_text(req):
            return f"```\n{new}```\n[end]"
        return [f"Write {new.strip()} ({i})" for i in range(int(req.get("n") or 1))]

    srv = scripted_llm(copier)
    out = tmp_path / "res.jsonl"
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(data), "--out", str(out),
                                  "--llm-base-url", srv.base_url, "--model", srv.model])
    assert r.exit_code == 0, r.output
    assert "1.000 of 3" in r.output
    (rec,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert rec["scores"]["rtc"] == 0.0 and rec["scores"]["leaks"] == 3.0
    assert rec["leaks"] == ["description quotes the new code: its line 1, verbatim"] * 3
    assert rec["regenerated"] == [new] * 3  # right every time: only the check failed them


def test_bad_dataset(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"a": 1}\nnot json\n')
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(f)])
    assert r.exit_code == 1 and "not JSON" in r.output
    f.write_text('{"a": 1}\n')
    r = CliRunner().invoke(main, ["eval", "editing-rtc", str(f)])
    assert r.exit_code == 1 and "no usable items" in r.output
