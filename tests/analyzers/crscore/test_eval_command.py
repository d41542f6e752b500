"""`rtcbot eval crscore` on a slice of the real human-rating data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.commands.eval_crscore import command
from tests.support import DATA, require

DEV = DATA / "crscore-human" / "dev.jsonl"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(DEV.exists(), f"{DEV} is missing")
    lines = DEV.read_text(encoding="utf-8").splitlines()[:40]  # 4 diffs × 10 systems
    out = tmp_path_factory.mktemp("crs") / "small.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.model
def test_json_has_the_figures(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["n"] == 36 and out["tau"] is None and out["soft"] is True
    for dim in (out, out["con"], out["comp"]):
        assert -1 <= dim["spearman"] <= 1 and -1 <= dim["kendall"] <= 1
    assert out["spearman"] > 0.2  # the metric agrees with people even on 36 reviews


@pytest.mark.model
def test_hard_uses_the_shipped_tau_and_explicit_tau(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--hard", "--json"])
    assert json.loads(res.output.strip().splitlines()[-1])["tau"] == pytest.approx(0.3296)
    res = CliRunner().invoke(command, [str(small), "--tau", "0.4", "--json"])
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["tau"] == pytest.approx(0.4) and out["soft"] is False


@pytest.mark.model
def test_calibrate_prints_tau_by_the_recipe(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--calibrate"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    assert out["reference_reviews"] == 4
    assert 0.1 < out["tau"] < 0.7


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"review": "x"}\n', encoding="utf-8")
    res = CliRunner().invoke(command, [str(bad)])
    assert res.exit_code != 0
    assert "missing field" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(command, [str(bad), "--tau", "high"])
    assert res.exit_code != 0 and "expected 'auto' or a number" in res.output


@pytest.mark.slow
@pytest.mark.model
def test_cv_reports_each_held_out_fold_and_the_spread(small: Path) -> None:
    res = CliRunner().invoke(command, [str(small), "--cv", "2", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output.strip().splitlines()[-1])
    rho = out["folds"]["spearman"]
    assert out["cv"] == 2 and out["recipe"] == "rtcbot" and len(rho["folds"]) == 2 and len(out["fitted"]) == 2
    assert rho["min"] <= out["spearman"] == rho["mean"] <= rho["max"] and rho["sd"] >= 0
    assert all(f.startswith("floor ") for f in out["fitted"])  # each fold chose its floor and β
    whole = json.loads(CliRunner().invoke(command, [str(small), "--json"]).output.strip().splitlines()[-1])
    assert out["spearman"] != whole["spearman"]  # held-out folds, not the figure over all the rows
    paper = CliRunner().invoke(command, [str(small), "--cv", "2", "--recipe", "paper", "--json"])
    fitted = json.loads(paper.output.strip().splitlines()[-1])["fitted"]
    assert all(f.startswith("τ ") for f in fitted) and fitted[0] != fitted[1]  # τ calibrated per fold


@pytest.mark.model
def test_recipe_paper_is_the_papers_thresholded_table(small: Path) -> None:
    def run(*args: str) -> dict[str, object]:
        res = CliRunner().invoke(command, [str(small), "--json", *args])
        assert res.exit_code == 0, res.output
        return dict(json.loads(res.output.strip().splitlines()[-1]))

    paper, hard = run("--recipe", "paper"), run("--hard")
    assert paper == hard and paper["recipe"] == "paper" and paper["tau"] == pytest.approx(0.3296)
    ours, soft = run(), run("--recipe", "soft")
    assert ours["recipe"] == "rtcbot" and soft["recipe"] == "soft" and ours["spearman"] != soft["spearman"]


def test_contradictory_recipe_options_and_too_many_folds_are_one_clear_line(small: Path) -> None:
    for args, says in ((["--recipe", "paper", "--soft"], "contradict"),
                       (["--recipe", "soft", "--tau", "0.4"], "paper's recipe"),
                       (["--cv", "9"], "cannot make 9 folds of 4 diff(s)")):
        res = CliRunner().invoke(command, [str(small), *args])
        assert res.exit_code == 2 and says in res.output and "Traceback" not in res.output, res.output
