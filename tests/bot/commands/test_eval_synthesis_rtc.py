from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import CliRunner

from analyzers.llm import local as local_llm
from analyzers.synthesis_rtc.analyzer import load_humaneval
from bot.entry import main
from tests.analyzers.synthesis_rtc.test_analyzer import scripted_round_trip
from tests.fakes.llm_server import ScriptedLLM
from tests.support import require


def test_table_and_json_with_a_scripted_model(scripted_llm: Callable[..., ScriptedLLM]) -> None:
    srv = scripted_llm(scripted_round_trip(load_humaneval(limit=2)))
    base = ["eval", "synthesis-rtc", "--humaneval", "--limit", "2", "--timeout", "5",
            "--llm-base-url", srv.base_url, "--model", srv.model]
    r = CliRunner().invoke(main, [*base, "--json"])
    assert r.exit_code == 0, r.stderr
    fig = json.loads(r.stdout)
    assert fig == {"n_problems": 2, "pass@1": 1.0, "rtc_pass": 0.5, "rtc@3": 0.5, "baseline": 0.0, "lift": 0.5,
                   "leak_rate": 0.0}
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0
    assert "HumanEval/0" in r.stdout and "HumanEval/1" in r.stdout and "RTC_pass" in r.stdout
    assert "all (2)" in r.stdout
    assert "leak rate (descriptions carrying the code, counted as failed round trips): 0.000 of 6" in r.stdout


def test_needs_a_benchmark() -> None:
    r = CliRunner().invoke(main, ["eval", "synthesis-rtc"])
    assert r.exit_code == 2 and "--humaneval" in r.stderr


@pytest.mark.model
@pytest.mark.slow
def test_embedded_model_runs_to_the_end() -> None:
    require(local_llm.available(), local_llm.unavailable_reason())
    # one problem (3 descriptions, their regenerations, the baseline's and a plain sample: at
    # most 8 requests); the scripted run above covers problems summed into the overall row
    r = CliRunner().invoke(main, ["eval", "synthesis-rtc", "--humaneval", "--limit", "1", "--timeout", "5"])
    assert r.exit_code == 0, r.stderr
    assert "HumanEval/0" in r.stdout and "all (1)" in r.stdout and "requests=" in r.stdout
