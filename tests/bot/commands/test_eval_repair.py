from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzers.llm import local as local_llm
from bot.entry import main
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import DATA, require

QUIX = DATA / "repair" / "quixbugs-python-dev.jsonl"
ROWS = [json.loads(line) for line in QUIX.read_text().splitlines() if line.strip()]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["eval", "repair", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.slow
def test_reference_programs_are_ac_on_every_case() -> None:
    code, out, err = run(str(QUIX), "--use-reference", "--json", "--k", "1,3")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert len(lines) == 1
    fig = json.loads(lines[0])
    # one program per task: pass@3 is undefined, so it is dropped and said so, not clamped to pass@1
    assert list(fig) == ["n_tasks", "samples", "pass@1", "tca@1", "dropped_k", "verdicts"]
    assert fig["samples"] == 1 and fig["dropped_k"] == [3]
    assert "not reported for k = 3: 1 sample(s) per task" in err
    n_cases = sum(len(r["tests"]) for r in ROWS)
    assert fig["n_tasks"] == len(ROWS) == 19
    assert fig["pass@1"] == fig["tca@1"] == 1.0
    assert fig["verdicts"]["AC"] == n_cases and sum(fig["verdicts"].values()) == n_cases


@pytest.mark.slow
def test_buggy_programs_fail_at_least_one_case_of_every_task() -> None:
    code, out, err = run(str(QUIX), "--use-buggy", "--timeout", "2")
    assert code == 0, err
    for row in ROWS:  # one table line per task, none of them all-correct
        line = next(ln for ln in out.splitlines() if row["id"][:12] in ln)
        assert "│       0 │" in line, line
    code, out, _ = run(str(QUIX), "--use-buggy", "--timeout", "2", "--json", "--k", "1")
    fig = json.loads(out)
    assert fig["pass@1"] == 0.0 and 0 < fig["tca@1"] < 1
    assert fig["verdicts"]["AC"] < sum(fig["verdicts"].values())


@pytest.mark.slow
def test_model_samples_through_a_scripted_endpoint(scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    rows = ROWS[:3]
    data = tmp_path / "three.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def fix(req: dict) -> list[str]:  # type: ignore[type-arg]
        row = next(r for r in rows if r["buggy"].rstrip() in last_user_text(req))
        good, bad = f"```python\n{row['reference']}\n```", f"```python\n{row['buggy']}\n```"
        return [good, bad, good]

    srv = scripted_llm(fix)
    code, out, err = run(str(data), "--samples", "3", "--k", "1,3", "--json", "--timeout", "2",
                         "--llm-base-url", srv.base_url, "--model", srv.model)
    assert code == 0, err
    fig = json.loads(out)
    assert srv.request_count == 3
    assert all(r["temperature"] > 0 and r["n"] == 3 for r in srv.requests)
    assert fig["n_tasks"] == 3 and fig["pass@1"] == pytest.approx(2 / 3) and fig["pass@3"] == 1.0
    # the same run as a table
    code, out, _ = run(str(data), "--samples", "3", "--k", "1,3", "--timeout", "2",
                       "--llm-base-url", srv.base_url, "--model", srv.model)
    assert code == 0 and "pass@3" in out and "overall: pass@1=0.667" in out
    assert srv.request_count == 3  # answers came from the LLM cache
    # without --k: the default ks that 3 samples can estimate (1 and 3, not 5 or 10)
    code, out, err = run(str(data), "--samples", "3", "--json", "--timeout", "2",
                         "--llm-base-url", srv.base_url, "--model", srv.model)
    assert code == 0 and [k for k in json.loads(out) if "@" in k] == ["pass@1", "pass@3", "tca@1", "tca@3"]
    assert "not reported" not in err


def test_a_table_of_one_sample_per_task_shows_no_pass_at_k_beyond_it() -> None:
    code, out, err = run(str(QUIX), "--use-reference", "--limit", "2", "--timeout", "5")  # default k 1,3,5,10
    assert code == 0, err
    assert "pass@1" in out and "pass@3" not in out and "pass@10" not in out and "TCA@1" in out
    assert "overall: pass@1=1.000, tca@1=1.000" in out
    assert "not reported for k = 3, 5, 10: 1 sample(s) per task" in err


def test_every_k_beyond_the_samples_is_a_usage_error() -> None:
    code, _, err = run(str(QUIX), "--samples", "2", "--k", "3,5", "--llm-base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and "every k exceeds --samples 2" in err and "Traceback" not in err


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "buggy": "print(1)", "tests": []}\n')
    code, _, err = run(str(bad), "--use-buggy")
    assert code == 1 and "x: no tests" in err and "Traceback" not in err
    code, _, err = run(str(QUIX), "--use-buggy", "--use-reference")
    assert code == 2 and "exclude each other" in err
    code, _, err = run(str(QUIX), "--use-buggy", "--k", "0")
    assert code == 2 and "--k" in err


@pytest.mark.model
@pytest.mark.slow
def test_embedded_model_run_prints_its_table() -> None:
    require(local_llm.available(), local_llm.unavailable_reason())
    # 1 task x 2 samples (up to 1,024 tokens each; the second reuses the prompt the first
    # evaluated): the scripted runs above cover tasks summed into the overall figures
    code, out, err = run(str(QUIX), "--samples", "2", "--limit", "1", "--k", "1,2", "--timeout", "2")
    assert code == 0, err
    assert ROWS[0]["id"] in out and "overall: pass@1=" in out and "tca@2=" in out
