"""--plot on the evaluations: the chart builders and each `rtcbot eval ... --plot`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers.semgrep.scan import find_semgrep
from analyzers.synthesis_rtc.analyzer import load_humaneval
from bot.cli.commands.eval_autofix import command as autofix
from bot.cli.commands.eval_crscore import command as crscore
from bot.cli.commands.eval_editing_rtc import command as editing_rtc
from bot.cli.commands.eval_repair import command as repair
from bot.cli.commands.eval_synthesis_rtc import command as synthesis_rtc
from reporters.eval_plots import (
    autofix_chart,
    crscore_chart,
    qualify_chart,
    repair_chart,
    rtc_lift_chart,
)
from reporters.plots import save, spec
from tests.analyzers.autofix.test_analyzer import APP
from tests.analyzers.autofix.test_analyzer import responder as autofix_responder
from tests.analyzers.synthesis_rtc.test_analyzer import scripted_round_trip
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.support import DATA, require

DEV = DATA / "crscore-human" / "dev.jsonl"
QUIX = DATA / "repair" / "quixbugs-python-dev.jsonl"


def test_crscore_chart_states_the_correlation_and_names_its_axes(tmp_path: Path) -> None:
    chart = crscore_chart([0.1, 0.5, 0.9], [1.0, 3.0, 5.0], 0.5912, 0.4, "dev.jsonl")
    s = spec(chart)
    assert s["title"].startswith("Spearman ρ = 0.59, Kendall τ = 0.40")
    assert s["description"] == s["title"]
    assert s["encoding"]["x"]["title"] == "human relevance rating"
    out = save(chart, tmp_path / "c.svg")
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    assert root.tag.endswith("svg")
    assert "Spearman ρ = 0.59" in out.read_text(encoding="utf-8")
    png = save(chart, tmp_path / "c.png")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(DEV.exists(), f"{DEV} is missing")
    lines = DEV.read_text(encoding="utf-8").splitlines()[:40]
    out = tmp_path_factory.mktemp("cp") / "small.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.model
def test_eval_crscore_writes_an_svg_titled_with_spearman(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "out.svg"
    res = CliRunner().invoke(crscore, [str(small), "--json", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text(encoding="utf-8")
    ET.fromstring(text)
    assert "Spearman ρ = " in text and "CRScore vs human ratings on small.jsonl" in text


@pytest.mark.parametrize("bad", ["out.txt", "noext"])
def test_a_bad_plot_path_exits_2_before_any_work(tmp_path: Path, bad: str) -> None:
    res = CliRunner().invoke(crscore, ["crscore-dev", "--plot", str(tmp_path / bad)])
    assert res.exit_code == 2
    assert "--plot" in res.output and ".svg or .png" in res.output
    assert "Traceback" not in res.output


def test_an_unwritable_plot_folder_exits_2(tmp_path: Path) -> None:
    afile = tmp_path / "f"
    afile.write_text("x", encoding="utf-8")
    res = CliRunner().invoke(crscore, ["crscore-dev", "--plot", str(afile / "out.svg")])
    assert res.exit_code == 2
    assert "cannot write to the folder" in res.output


# -- repair, editing-rtc, synthesis-rtc, autofix -------------------------------------------

def svg_text(path: Path) -> str:
    """The file's text, once it parses as an SVG document."""
    text = path.read_text(encoding="utf-8")
    assert ET.fromstring(text).tag.endswith("svg")
    return text


def test_repair_chart_stacks_verdicts_per_task_beside_the_pass_at_k_curve(tmp_path: Path) -> None:
    chart = repair_chart([("gcd", {"AC": 4, "WA": 2, "TLE": 0}), ("lis", {"AC": 0, "WA": 3, "RE": 3})],
                         {3: 0.75, 1: 0.5}, "3 fix(es) per task from m on q.jsonl")
    s = spec(chart)
    assert s["title"] == "pass@1 = 0.50, pass@3 = 0.75: 3 fix(es) per task from m on q.jsonl (2 tasks)"
    assert s["description"] == s["title"]
    bars, curve = s["hconcat"]
    assert bars["encoding"]["y"]["title"] == "task" and bars["encoding"]["x"]["title"].startswith("test runs")
    assert bars["data"]["values"] == [  # zero counts left out, in the histogram's verdict order
        {"task": "gcd", "verdict": "AC", "runs": 4, "rank": 0}, {"task": "gcd", "verdict": "WA", "runs": 2, "rank": 1},
        {"task": "lis", "verdict": "WA", "runs": 3, "rank": 1}, {"task": "lis", "verdict": "RE", "runs": 3, "rank": 3}]
    assert bars["encoding"]["color"]["scale"]["domain"] == ["AC", "WA", "TLE", "RE"]
    assert curve["encoding"]["y"]["title"] == "pass@k" and curve["encoding"]["x"]["title"].startswith("k ")
    assert curve["data"]["values"] == [{"k": 1, "pass_at_k": 0.5}, {"k": 3, "pass_at_k": 0.75}]
    assert "pass@1 = 0.50, pass@3 = 0.75" in svg_text(save(chart, tmp_path / "r.svg"))


def test_repair_chart_without_an_estimable_k_is_the_bars_alone() -> None:
    s = spec(repair_chart([("gcd", {"AC": 1})], {}, "reference programs of q.jsonl"))
    assert s["title"] == "pass@k not estimable: reference programs of q.jsonl (1 task)"
    assert "hconcat" not in s and s["mark"]["type"] == "bar"


def test_rtc_lift_chart_places_items_against_the_diagonal_and_spreads_the_lift(tmp_path: Path) -> None:
    chart = rtc_lift_chart([("a", 1.0, 0.0), ("b", 0.5, 0.5), ("c", 0.0, 1 / 3)], "HumanEval with m",
                           "RTC_pass", "problem")
    s = spec(chart)
    assert s["title"] == "lift = +0.22 (RTC_pass 0.50 vs baseline 0.28) on HumanEval with m (3 problems)"
    assert s["description"] == s["title"]
    scatter, spread = s["hconcat"]
    diagonal, points = scatter["layer"]
    assert points["encoding"]["x"]["title"].startswith("baseline")
    assert points["encoding"]["y"]["title"] == "RTC_pass (round trip)"
    assert points["encoding"]["size"]["aggregate"] == "count"
    assert [(r["item"], r["side"]) for r in points["data"]["values"]] == [
        ("a", "RTC above baseline"), ("b", "equal"), ("c", "baseline above RTC")]
    assert points["data"]["values"][2]["lift"] == pytest.approx(-1 / 3)
    assert diagonal["data"]["values"][-1] == {"baseline": 1.0, "rtc": 1.0}
    assert spread["encoding"]["x"]["title"].startswith("lift per item") and spread["encoding"]["x"]["bin"]
    assert "lift = +0.22" in svg_text(save(chart, tmp_path / "l.svg"))
    assert spec(rtc_lift_chart([], "x.jsonl with m"))["title"] == "lift = n/a on x.jsonl with m (0 items)"


def test_autofix_chart_bars_fix_rate_per_rtc_outcome_with_wilson_intervals(tmp_path: Path) -> None:
    chart = autofix_chart([("all findings", 1, 5, (0.0362, 0.6245)), ("RTC pass", 1, 2, (0.0945, 0.9055)),
                           ("RTC fail", 0, 0, None)], "AutoFix + Patched RTC with m")
    s = spec(chart)
    assert s["title"] == "Fix % = 20.0 (RTC pass 50.0, RTC fail n/a): AutoFix + Patched RTC with m (5 findings)"
    assert s["description"] == s["title"]
    bars, whiskers = s["layer"]
    assert bars["encoding"]["y"]["title"].startswith("Fix %") and whiskers["mark"]["type"] == "errorbar"
    assert bars["data"]["values"] == [  # a group without fixes has no bar
        {"group": "all findings (1/5)", "fix_pct": 20.0, "low": pytest.approx(3.62), "high": pytest.approx(62.45)},
        {"group": "RTC pass (1/2)", "fix_pct": 50.0, "low": pytest.approx(9.45), "high": pytest.approx(90.55)}]
    assert "Fix % = 20.0" in svg_text(save(chart, tmp_path / "a.svg"))
    alone = spec(autofix_chart([("all findings", 0, 3, (0.0, 0.5615))], "AutoFix with m, Patched RTC not run"))
    assert alone["title"] == "Fix % = 0.0: AutoFix with m, Patched RTC not run (3 findings)"
    none = autofix_chart([("all findings", 0, 0, None)], "AutoFix with m, Patched RTC not run")
    assert spec(none)["title"] == "Fix % = n/a: AutoFix with m, Patched RTC not run (0 findings)"
    svg_text(save(none, tmp_path / "none.svg"))  # no bars, still a picture


def test_eval_repair_writes_an_svg_titled_with_pass_at_1(tmp_path: Path) -> None:
    out = tmp_path / "repair.svg"
    res = CliRunner().invoke(repair, [str(QUIX), "--use-reference", "--limit", "2", "--timeout", "5",
                                      "--json", "--plot", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["pass@1"] == 1.0  # --json still prints its line
    text = svg_text(out)
    assert "pass@1 = 1.00: reference programs of quixbugs-python-dev.jsonl (2 tasks)" in text


EDITS = {  # old → new; the scripted model re-creates only the first from its descriptions
    "def f(x):\n    return x+1\n": "def f(x):\n    return x + 2\n",
    "def g():\n    pass\n": "def g():\n    return None\n",
}


def editing_oracle(req: dict[str, Any]) -> str | list[str]:
    text = last_user_text(req)
    old = next(o for o in EDITS if o in text)
    if "[edit description]" not in text:
        word = "GOOD" if old == next(iter(EDITS)) else "VAGUE"
        return [f"{word} {req.get('seed')}-{i}: change it." for i in range(req.get("n", 1))]
    if "GOOD" in text.rsplit("[edit description]", 1)[1]:
        return f"```python\n{EDITS[old]}```\n[end]"
    return f"```python\n{old}```\n[end]"


def test_eval_editing_rtc_writes_an_svg_titled_with_the_lift(scripted_llm: Callable[..., ScriptedLLM],
                                                              tmp_path: Path) -> None:
    data = tmp_path / "edits.jsonl"
    data.write_text("".join(json.dumps({"id": i, "code_before_edit": o, "code_after_edit": n}) + "\n"
                            for i, (o, n) in enumerate(EDITS.items())), encoding="utf-8")
    srv = scripted_llm(editing_oracle)
    out = tmp_path / "e.svg"
    res = CliRunner().invoke(editing_rtc, [str(data), "--out", str(tmp_path / "res.jsonl"), "--plot", str(out),
                                           "--llm-base-url", srv.base_url, "--model", srv.model, "--no-cache"])
    assert res.exit_code == 0, res.output
    assert "lift = +0.50 (RTC 0.50 vs baseline 0.00) on edits.jsonl with scripted-model (2 items)" in svg_text(out)


def test_eval_synthesis_rtc_writes_an_svg_titled_with_the_lift(scripted_llm: Callable[..., ScriptedLLM],
                                                                tmp_path: Path) -> None:
    srv = scripted_llm(scripted_round_trip(load_humaneval(limit=2)))
    base = ["--humaneval", "--limit", "2", "--timeout", "5", "--llm-base-url", srv.base_url, "--model", srv.model]
    res = CliRunner().invoke(synthesis_rtc, [*base, "--json", "--plot", str(tmp_path / "s.png")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["lift"] == 0.5
    assert (tmp_path / "s.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    res = CliRunner().invoke(synthesis_rtc, [*base, "--plot", str(tmp_path / "s.svg")])  # the table, cached
    assert res.exit_code == 0, res.output
    assert ("lift = +0.50 (RTC_pass 0.50 vs baseline 0.00) on HumanEval with scripted-model (2 problems)"
            in svg_text(tmp_path / "s.svg"))


@pytest.mark.slow
def test_eval_autofix_writes_an_svg_of_fix_rates_by_rtc(scripted_llm: Callable[..., ScriptedLLM],
                                                        tmp_path: Path) -> None:
    require(find_semgrep(), "semgrep is not installed")
    progs = tmp_path / "progs"
    progs.mkdir()
    (progs / "calc.py").write_text(APP, encoding="utf-8")
    srv = scripted_llm(autofix_responder)
    out = tmp_path / "a.svg"
    res = CliRunner().invoke(autofix, [str(progs), "--json", "--plot", str(out), "--llm-base-url", srv.base_url,
                                       "--model", srv.model, "--no-cache"])
    assert res.exit_code == 0, res.output
    fig = json.loads(res.stdout)["figures"]
    assert (fig["fix_pct"], fig["fix_pct_rtc_pass"], fig["fix_pct_rtc_fail"]) == (20.0, 50.0, 0.0)
    text = svg_text(out)
    assert ("Fix % = 20.0 (RTC pass 50.0, RTC fail 0.0): AutoFix + Patched RTC with scripted-model (5 findings)"
            in text)
    assert "RTC pass (1/2)" in text and "RTC fail (0/2)" in text


COMMANDS = {"repair": (repair, [str(QUIX), "--use-reference"]), "editing-rtc": (editing_rtc, [str(DEV)]),
            "synthesis-rtc": (synthesis_rtc, ["--humaneval"]), "autofix": (autofix, [str(QUIX)])}


@pytest.mark.parametrize("name", COMMANDS)
def test_each_evaluation_checks_the_plot_path_before_any_work(
        name: str, scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    srv = scripted_llm("unused")
    cmd, args = COMMANDS[name]
    afile = tmp_path / "f"
    afile.write_text("x", encoding="utf-8")
    for bad, says in ((tmp_path / "out.txt", ".svg or .png"), (afile / "out.svg", "cannot write to the folder")):
        res = CliRunner().invoke(cmd, [*args, "--plot", str(bad), "--llm-base-url", srv.base_url,
                                       "--model", srv.model, "--no-cache"])
        assert res.exit_code == 2, res.output
        assert "--plot" in res.output and says in res.output and "Traceback" not in res.output
    assert srv.request_count == 0


def test_qualify_chart_shows_each_models_lift_interval_and_the_threshold(tmp_path: Path) -> None:
    chart = qualify_chart([("A", 0.6, 0.4, 0.8, True), ("B", 0.0, -0.1, 0.1, False)], 0.0, "octo/widgets", 40)
    s = spec(chart)
    assert s["title"] == "qualified: A: lift per model on octo/widgets (40 hunks)" == s["description"]
    whiskers, points, rule = s["layer"]
    rows = points["data"]["values"]
    assert [(r["model"], r["low"], r["high"], r["verdict"]) for r in rows] == [
        ("A", 0.4, 0.8, "qualified"), ("B", -0.1, 0.1, "not qualified")]
    assert rule["data"]["values"] == [{"threshold": 0.0}]
    assert whiskers["encoding"]["x2"]["field"] == "high"
    none = spec(qualify_chart([("B", 0.0, -0.1, 0.1, False)], 0.05, "r", 1))
    assert none["title"] == "no model qualifies: lift per model on r (1 hunk)"
    out = save(chart, tmp_path / "q.svg")
    assert ET.fromstring(out.read_text(encoding="utf-8")).tag.endswith("svg")
