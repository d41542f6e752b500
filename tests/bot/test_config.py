"""`.github/rtcbot.yml` and the operator's tools: typed options, key paths, the defaults on
an invalid file, the settings that only the operator chooses, and `rtcbot config validate`;
the one RepoConfig on every surface (fail_on with thresholds as its sugar, test_command, an
exact analyzers list) and the same error from the App, the Action and the CLI."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzers import registry
from analyzers.autofix.analyzer import Options as AutoFixOptions
from analyzers.context import AnalysisContext, Tools
from analyzers.crscore.analyzer import CRScoreOptions
from analyzers.editing_rtc.analyzer import EditingRTCConfig
from analyzers.options import OptionsError
from analyzers.synthesis_rtc.analyzer import SynthesisOptions
from bot.app.settings import load_settings
from bot.core.config import CONFIG_PATH, RepoConfig, effective, parse_config
from bot.core.context import app_runs_no_code
from bot.core.settings import SettingsError, load_tools
from bot.entry import main
from tests.bot.test_action import EVENT, pr_github, run_action  # noqa: F401  (fixture)
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import RoundTrips, ScriptedLLM, varied
from tests.support import require

SEMGREP = Path(sys.executable).parent / "semgrep"


def test_each_analyzer_declares_its_options() -> None:
    assert registry.options_type("editing_rtc") is EditingRTCConfig
    assert registry.options_type("autofix") is AutoFixOptions
    assert registry.options_type("crscore") is CRScoreOptions
    assert registry.options_type("synthesis-rtc") is SynthesisOptions


def test_valid_options_reach_the_analyzer_typed() -> None:
    loaded = parse_config("options:\n  editing-rtc: {n_forward: 2, forward_temperature: 0.5}\n"
                          "  synthesis_rtc: {test_timeout_s: 20}\n")
    assert loaded.error is None
    ctx = AnalysisContext(options=loaded.config.options)
    cfg = ctx.config("editing_rtc", EditingRTCConfig)
    assert (cfg.n_forward, cfg.forward_temperature, cfg.forward_max_tokens) == (2, 0.5, 256)
    synth = ctx.config("synthesis_rtc", SynthesisOptions)
    assert synth.test_timeout_s == 20.0 and synth.synthesis().n_forward == 3
    with pytest.raises(Exception, match="frozen"):
        cfg.n_forward = 5  # type: ignore[misc]


def test_problems_name_analyzer_and_key_path() -> None:
    loaded = parse_config("options:\n  editing_rtc: {n_forwards: 3}\n  autofix: {rtc: 'yes', context_lines: '5'}\n"
                          "thresholds: {editing_rtc: {rtc: high}}\n")
    assert loaded.error is not None and loaded.config == RepoConfig()  # the defaults apply
    joined = "\n".join(loaded.problems)
    assert "options.editing_rtc.n_forwards: unknown option of editing_rtc; did you mean 'n_forward'? (known: " in joined
    assert "options.autofix.rtc: Input should be a valid boolean" in joined  # strict: no 'yes'
    assert "options.autofix.context_lines: Input should be a valid integer" in joined
    assert "thresholds.editing_rtc.rtc:" in joined
    assert len(loaded.problems) == 4
    assert "unknown analyzer" in (parse_config("options: {nope: {a: 1}}").error or "")
    with pytest.raises(OptionsError, match=r"options\.editing_rtc\.seed"):
        registry.validate_options("editing_rtc", {"seed": -1})


def test_same_message_from_the_config_and_from_the_analysis() -> None:
    """The App's check run (parse_config) and a run handed raw options say the same thing."""
    text = "options: {autofix: {fix_tokens: 100000}}"
    problem = parse_config(text).problems[0]
    with pytest.raises(OptionsError) as e:
        AnalysisContext(options={"autofix": {"fix_tokens": 100000}}).config("autofix", AutoFixOptions)
    assert e.value.problems == [problem]


def test_effective_settings_fill_in_the_defaults() -> None:
    loaded = parse_config("analyzers: {autofix: false}\noptions: {crscore: {tau: 0.4}}\n")
    out = effective(loaded, registry.DEFAULT_ANALYZERS)
    assert out["analyzers"] == ["editing_rtc", "crscore"]
    assert out["options"]["crscore"]["tau"] == 0.4 and out["options"]["crscore"]["model"] == "all-MiniLM-L6-v2"
    assert out["options"]["editing_rtc"]["n_forward"] == 3
    assert set(out["options"]) == {"editing_rtc", "crscore"}  # of the analyzers that run, no other
    assert (out["suggestions"], out["feedback"], out["require_qualified"]) == ("verified", "on", False)
    with_tests = effective(parse_config("test_command: pytest -q\nsuggestions: all\n"), registry.DEFAULT_ANALYZERS)
    assert with_tests["analyzers"][-1] == "synthesis_rtc" and "synthesis_rtc" not in with_tests["app_analyzers"]
    assert "synthesis_rtc" in with_tests["options"] and with_tests["suggestions"] == "all"


def test_operator_tools_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RTCBOT_SEMGREP", "/opt/semgrep/bin/semgrep")
    monkeypatch.setenv("RTCBOT_SEMGREP_RULES", "/etc/rtcbot/a.yml, /etc/rtcbot/b.yml")
    monkeypatch.setenv("RTCBOT_EMBEDDING_MODELS", '["mixedbread-ai/mxbai-embed-large-v1"]')
    monkeypatch.setenv("RTCBOT_SANDBOX", "bwrap")
    tools = load_tools()
    assert tools == Tools(semgrep="/opt/semgrep/bin/semgrep", extra_rules=("/etc/rtcbot/a.yml", "/etc/rtcbot/b.yml"),
                          embedding_models=("mixedbread-ai/mxbai-embed-large-v1",), sandbox="bwrap")
    assert load_settings().tools() == tools  # the App's settings carry the same
    monkeypatch.setenv("RTCBOT_SANDBOX", "off")
    with pytest.raises(SettingsError, match="RTCBOT_SANDBOX"):
        load_tools()


def test_validate_command_prints_the_effective_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "rtcbot.yml").write_text("options: {editing_rtc: {n_forward: 2}}\n")
    result = CliRunner().invoke(main, ["config", "validate"])  # the default file
    assert result.exit_code == 0, result.output
    assert "valid" in result.output and "n_forward: 2" in result.output and "max_findings: 10" in result.output
    missing = CliRunner().invoke(main, ["config", "validate", "nope.yml"])
    assert missing.exit_code == 2 and missing.output.strip() == "nope.yml: no such file"


def test_validate_command_uses_the_operators_allow_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "rtcbot.yml"
    f.write_text("options: {crscore: {model: mixedbread-ai/mxbai-embed-large-v1}}\n")
    assert CliRunner().invoke(main, ["config", "validate", str(f)]).exit_code == 2
    monkeypatch.setenv("RTCBOT_EMBEDDING_MODELS", "mixedbread-ai/mxbai-embed-large-v1")
    assert CliRunner().invoke(main, ["config", "validate", str(f)]).exit_code == 0


def test_review_takes_the_operators_semgrep(tmp_path: Path) -> None:
    """`rtcbot review --semgrep PROGRAM`: the person at the terminal is the operator."""
    require(SEMGREP.exists(), "semgrep is not installed beside this Python")
    log = tmp_path / "runs.log"
    wrapper = tmp_path / "my-semgrep"
    wrapper.write_text(f"#!{sys.executable}\nimport os, sys\nopen({str(log)!r}, 'a').write('ran\\n')\n"
                       f"os.execv({str(SEMGREP)!r}, [{str(SEMGREP)!r}] + sys.argv[1:])\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    patch = tmp_path / "p.diff"
    patch.write_text("--- /dev/null\n+++ b/a.py\n@@ -0,0 +1 @@\n+y = 1\n")
    result = CliRunner().invoke(main, ["review", str(patch), "--analyzers", "autofix",
                                       "--semgrep", str(wrapper), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert log.read_text() == "ran\n"


# -- one config on every surface (issue #13) ---------------------------------------------------
ONE_CONFIG = """\
analyzers: {autofix: false}
fail_on: "editing_rtc.rtc<0.2 || total.errors>0"
thresholds:
  crscore: {rel: 0.3}
ignore: ["docs/*"]
drafts: true
test_command: python -m pytest -q
options:
  editing_rtc: {n_forward: 2}
"""
INVALID = "fail_onn: total.findings>0\noptions:\n  editing_rtc: {n_forward: three}\n"


def test_validate_accepts_fail_on_thresholds_options_and_test_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "rtcbot.yml").write_text(ONE_CONFIG)
    result = CliRunner().invoke(main, ["config", "validate"])
    assert result.exit_code == 0, result.output
    settings = yaml.safe_load(result.stdout)
    # a test command turns SynthesisRTC on; the file turned AutoFix off
    assert settings["analyzers"] == ["editing_rtc", "crscore", "synthesis_rtc"]
    assert settings["gate"] == "editing_rtc.rtc<0.2 || total.errors>0 || crscore.rel<0.3"
    assert settings["test_command"] == "python -m pytest -q" and settings["ignore"] == ["docs/*"]
    assert settings["options"]["editing_rtc"]["n_forward"] == 2
    # the Action's spelling of the same keys is the same setting
    dashed = tmp_path / "dashed.yml"
    dashed.write_text('fail-on: "autofix.findings>0"\ntest-command: make test\n')
    ok = CliRunner().invoke(main, ["config", "validate", str(dashed)])
    assert ok.exit_code == 0, ok.output
    assert yaml.safe_load(ok.stdout)["gate"] == "autofix.findings>0"


@pytest.mark.parametrize(("text", "problem"), [
    ("fail_onn: total.findings>0\n", "fail_onn: unknown setting; did you mean 'fail_on'?"),
    ("options: {editing_rtc: {n_forward: three}}\n",
     "options.editing_rtc.n_forward: Input should be a valid integer"),
    ("options: {crscore: {tau: [1]}}\n", "options.crscore.tau: Input should be a valid number"),
    ('fail_on: "editing_rtc.rtc <"\n', "fail_on: expected a comparison like editing_rtc.rtc<0.2 at column 1"),
    ('fail_on: "nosuch.rtc<1"\n', "fail_on: unknown analyzer 'nosuch'"),
    ("test_command: [make, test]\n", "test_command: Input should be a valid string"),
    ("analyzers: [editing-rtc, nosuch]\n", "analyzers: unknown analyzer 'nosuch'"),
    # a typo gets the nearest name (difflib), at the top level, in an analyzer's name and in its options
    ("threshold: {editing_rtc: {rtc: 0.2}}\n", "threshold: unknown setting; did you mean 'thresholds'?"),
    ("require-qualifed: true\n", "require-qualifed: unknown setting; did you mean 'require-qualified'?"),
    ("analyzers: {editng-rtc: true}\n", "analyzers: unknown analyzer 'editng-rtc'; did you mean 'editing_rtc'?"),
    ("options: {editing_rtc: {n_forwrd: 2}}\n",
     "options.editing_rtc.n_forwrd: unknown option of editing_rtc; did you mean 'n_forward'? (known: "),
    ("colour: blue\n", "colour: unknown setting"),
])
def test_validate_rejects_with_the_key_path(tmp_path: Path, text: str, problem: str) -> None:
    f = tmp_path / "rtcbot.yml"
    f.write_text(text)
    result = CliRunner().invoke(main, ["config", "validate", str(f)])
    assert result.exit_code == 2, result.output
    assert f"{f}: {problem}" in result.stderr.splitlines()[0] and result.stdout == ""


@pytest.mark.parametrize(("text", "feedback", "suggestions"), [
    ("feedback: on\nsuggestions: off\n", "on", "off"),  # YAML 1.1 reads both as booleans
    ("feedback: off\nsuggestions: all\n", "off", "all"),
    ("feedback: true\nsuggestions: false\n", "on", "off"),
    ("feedback: no\nsuggestions: yes\n", "off", "verified"),  # `on` for a mode: its default
    ('feedback: "OFF"\nsuggestions: "On"\n', "off", "verified"),  # quoted words mean the same
    ("suggestions: verified\n", "on", "verified"),
])
def test_on_off_and_yaml_booleans_mean_the_same(text: str, feedback: str, suggestions: str) -> None:
    loaded = parse_config(text)
    assert loaded.error is None, loaded.error
    assert (loaded.config.feedback, loaded.config.suggestions) == (feedback, suggestions)
    drafts = parse_config("drafts: on\nrequire_qualified: off\nanalyzers: {autofix: off, review: on}\n")
    assert drafts.error is None and drafts.config.drafts is True and drafts.config.require_qualified is False
    assert drafts.config.analyzers == {"autofix": False, "review": True}


@pytest.mark.parametrize(("text", "problem"), [
    ("feedback: 1\n", "feedback: Input should be 'on' or 'off'"),
    ("suggestions: sometimes\n", "suggestions: Input should be 'off', 'verified' or 'all'"),
    ("feedback: maybe\n", "feedback: Input should be 'on' or 'off'"),
])
def test_other_words_for_on_off_are_errors(text: str, problem: str) -> None:
    assert parse_config(text).problems == [problem]


def test_thresholds_are_sugar_for_fail_on() -> None:
    from analyzers.report import AnalyzerReport
    from bot.core.gate import judge, parse_fail_on

    sugar = parse_config("thresholds: {editing_rtc: {rtc: 0.5}}\n").config.gate()
    spelled = parse_config('fail_on: "editing_rtc.rtc<0.5"\n').config.gate()
    assert sugar.text == spelled.text == str(parse_fail_on("editing_rtc.rtc<0.5").any_of[0][0])
    for rtc, conclusion in ((0.1, "failure"), (0.9, "neutral")):
        report = AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": rtc})
        a, b = judge(sugar, [report]), judge(spelled, [report])
        assert a.matched == b.matched and a.conclusion_of("editing_rtc") == conclusion
        assert b.conclusion_of("editing_rtc") == conclusion and a.conclusion_of("crscore") == "neutral"
    (crossed,) = judge(sugar, [AnalyzerReport("editing_rtc", "EditingRTC", scores={"rtc": 0.1})]).crossed(
        "editing_rtc")
    assert crossed == "rtc 0.10 is below the threshold 0.50 (editing_rtc.rtc<0.5)"


def test_an_analyzers_list_names_exactly_what_runs() -> None:
    exact = parse_config("analyzers: [crscore]\ntest_command: make test\n")
    assert exact.error is None and exact.enabled(registry.DEFAULT_ANALYZERS, "make test") == ["crscore"]
    toggles = parse_config("analyzers: {synthesis_rtc: false}\n")
    assert toggles.enabled(registry.DEFAULT_ANALYZERS, "make test") == list(registry.DEFAULT_ANALYZERS)
    assert parse_config("").enabled(["editing_rtc"], "make test") == ["editing_rtc", "synthesis_rtc"]


def test_analyzers_that_read_comments_get_them() -> None:
    """No analyzer name is hard-coded: the builder asks each analyzer whether it reads them."""
    from analyzers.context import ReviewComment
    from bot.core.context import analysis_context, select

    assert registry.comment_readers() == ["crscore"]
    fetched: list[int] = []

    def fetch() -> list[ReviewComment]:
        fetched.append(1)
        return [ReviewComment("a.py", 1, "why?")]

    loaded = parse_config("")
    ctx = analysis_context(loaded, select(loaded, defaults=["editing_rtc"]), tools=Tools(), llm_factory=None,
                           comments=fetch)
    assert ctx.comments == [] and fetched == []  # nobody reads them: not even fetched
    ctx = analysis_context(loaded, select(loaded, defaults=["editing_rtc", "crscore"]), tools=Tools(), llm_factory=None,
                comments=fetch)
    assert [c.body for c in ctx.comments] == ["why?"] and fetched == [1]


def _app_check_run(tmp_path: Path, gh: FakeGitHub, llm: ScriptedLLM, config: str) -> dict[str, Any]:
    """The App on `config` (default branch): a pull request opened, its jobs run; the
    completed EditingRTC check run."""
    from bot.app.runtime import Runtime
    from bot.app.web import create_app
    from tests.bot.app_support import deliver, drain, make_settings, serve

    gh.set_file(CONFIG_PATH, config)
    settings = make_settings(tmp_path / "app", gh, llm)
    rt = Runtime(settings)
    try:
        with serve(create_app(settings, runtime=rt)) as url:
            pr = gh.add_pr(7, fixture="more-itertools-d992be0de9.diff")
            assert deliver(url, "pull_request", gh.pr_event("opened", 7)).status_code in (200, 202)
            drain(rt)
    finally:
        rt.store.close()
    (run,) = [r for r in gh.runs("rtcbot / EditingRTC", pr.head_sha) if r["status"] == "completed"]
    return run


@pytest.mark.slow
def test_the_same_error_on_every_surface(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_github: Callable[..., FakeGitHub],
        pr_github: Callable[..., FakeGitHub],  # noqa: F811
        scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """One invalid `.github/rtcbot.yml`: the App's check run, the Action's log, summary and
    check run, `rtcbot review --config` and `rtcbot config validate` say the same thing."""
    message = parse_config(INVALID).error
    assert message is not None and message.startswith(f"{CONFIG_PATH} is invalid: ")
    assert "options.editing_rtc.n_forward" in message and "fail_onn" in message
    llm = scripted_llm(varied)

    app = _app_check_run(tmp_path, fake_github(), llm, INVALID)
    assert f"{message}; the defaults apply" in app["output"]["summary"]

    gh = pr_github()
    base = json.loads(EVENT.read_text(encoding="utf-8"))["pull_request"]["base"]["sha"]
    gh.set_file(CONFIG_PATH, INVALID, ref=base)
    proc = run_action(gh, llm, tmp_path, analyzers="editing-rtc")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"rtcbot: {message}; the defaults apply" in proc.stderr.splitlines()
    assert f"{message}; the defaults apply" in (tmp_path / "summary.md").read_text()
    (run,) = gh.check_runs.values()
    assert f"{message}; the defaults apply" in run["output"]["summary"]

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".github").mkdir()
    (tmp_path / CONFIG_PATH).write_text(INVALID)
    (tmp_path / "p.diff").write_text("--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
    review = CliRunner().invoke(main, ["review", "p.diff", "--config", CONFIG_PATH])
    assert review.exit_code == 2 and review.stderr == f"Error: {message}\n" and review.stdout == ""
    validate = CliRunner().invoke(main, ["config", "validate"])
    assert validate.exit_code == 2
    assert validate.stderr.splitlines()[:2] == [f"{CONFIG_PATH}: {p}" for p in parse_config(INVALID).problems]


@pytest.mark.slow
def test_the_app_gates_on_fail_on_and_runs_no_test_command(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM]) -> None:
    """The App reads `fail_on` (it refused the key before) and never runs a test command: the
    check run says so."""
    run = _app_check_run(tmp_path, fake_github(), scripted_llm(RoundTrips()),  # conclusive hunks: findings
                         'fail_on: "editing_rtc.findings>0"\ntest_command: touch MARKER\n')
    assert run["conclusion"] == "failure"
    summary = run["output"]["summary"]
    assert "editing_rtc.findings>0" in summary
    assert app_runs_no_code() in summary
    assert not (tmp_path / "MARKER").exists()


def test_select_leaves_require_qualified_to_the_surfaces() -> None:
    """Every surface reads the qualification record now (bot/core/qualification.py): `select` adds
    no "not read here" note."""
    from bot.core.context import select

    loaded = parse_config("require_qualified: true\n", Tools())
    assert loaded.config.require_qualified
    assert not any("require_qualified" in n for n in select(loaded, defaults=["editing_rtc"], runs_code=False).notes)


def test_a_top_level_key_that_starts_like_options_is_still_named_beside_an_options_problem() -> None:
    """The options problems the registry names are not repeated from the schema's; that is told
    by the problem's location, so a typo such as `options_x` beside them is still said."""
    from bot.core.config import validate_data

    loaded = validate_data({"options": {"editing_rtc": {"n_forward": "three"}}, "optionsx": 1})
    assert loaded.error is not None
    assert any(p.startswith("optionsx: unknown setting") for p in loaded.problems), loaded.problems
    assert sum(p.startswith("options.editing_rtc.n_forward") for p in loaded.problems) == 1, loaded.problems


def test_a_problem_is_said_after_the_files_name_even_when_its_key_is_that_name(tmp_path: Path) -> None:
    """Whether a problem names the file itself is a fact of the config (it could not be read),
    not found again in its first words: a key spelled as the file's path is a key's problem."""
    f = tmp_path / "rtcbot.yml"
    f.write_text(f'"{f}": 1\n')
    result = CliRunner().invoke(main, ["config", "validate", str(f)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0].startswith(f"{f}: {f}: unknown setting"), result.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("a: [1\n")
    said = CliRunner().invoke(main, ["config", "validate", str(bad)]).stderr.splitlines()[0]
    assert said.startswith(f"{bad} is not valid YAML"), said
