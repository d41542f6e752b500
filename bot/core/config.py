"""Per-repository configuration, the one `RepoConfig`: `.github/rtcbot.yml`, read by the App
from the default branch, by the Action at the pull request's base commit, and by
`rtcbot review --config FILE` / `rtcbot config validate [FILE]` from a file.

    analyzers:            # on / off per analyzer (unlisted: the surface's default);
      editing_rtc: true   #   a list (`[crscore, autofix]`) names exactly the ones to run
      autofix: false
    fail_on: "editing_rtc.rtc<0.2 || autofix.findings>0"   # the gate (bot/core/gate.py)
    thresholds:           # sugar for the gate: `editing_rtc.rtc<0.2`
      editing_rtc: {rtc: 0.2}
    test_command: pytest -q   # SynthesisRTC's oracle: run by the Action and `rtcbot review`
                              # (in the sandbox), never by the App
    ignore: ["docs/*", "*.generated.ts"]
    drafts: false         # analyse draft pull requests
    model: gpt-4o-mini    # only a model the installation allows (RTCBOT_ALLOWED_MODELS)
    options:              # each analyzer's typed, bounded Options (analyzers/options.py)
      editing_rtc: {n_forward: 3}
    suggestions: verified # off | verified | all (`off`/false: off; `on`/true: verified)
    feedback: on          # on | off
    dismissals: on        # on | off: hide what the team dismissed (@rtcbot ignore; the Action
                          #   and the CLI: .github/rtcbot-dismissals.yml)
    gate_dismissed: false # whether a dismissed finding still counts toward `fail_on`
    gate_inconclusive: fail # fail | ignore: a gate over inconclusive items (docs/reports.md)

On/off settings take YAML's booleans and the words alike (`on`, `off`, `yes`, `no`, `true`,
`false`, quoted or not, in any case): YAML 1.1 reads unquoted `on`/`off` as booleans, and a
sample that says `feedback: on` must mean what it says.

The file is data, never a program: it is at most `MAX_CONFIG_BYTES`, YAML anchors and aliases
are refused (no alias bombs), nesting is at most `MAX_DEPTH` deep, duplicate keys are errors,
and every loader error (RecursionError included) is one line with its line number. Options
are validated against the analyzer's Options type: an unknown key, a wrong type, a value over
its maximum, or a key that names a program, a rule file or a model the operator does not
allow is an error with its key path (`options.autofix.semgrep: ...`).

An invalid file never stops the analysis: the defaults apply and every check run says what
is wrong with the file, in the same words on every surface (`LoadedConfig.message`): the App's
check runs, the Action's log and summary, `rtcbot review --config` (which refuses the file) and
`rtcbot config validate` (each problem on its own line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from analyzers import registry
from analyzers.context import Tools
from analyzers.options import nearest
from bot.core.config_file import CONFIG_PATH as CONFIG_PATH  # the file read safely: config_file.py
from bot.core.config_file import MAX_CONFIG_BYTES as MAX_CONFIG_BYTES
from bot.core.config_file import ConfigError as ConfigError
from bot.core.config_file import load_yaml as load_yaml
from bot.core.config_file import read_file as read_file
from bot.core.gate import FailOn, FailOnError, from_thresholds, parse_fail_on

MAX_PROBLEMS = 20  # problems listed; more are counted
MAX_EXPRESSION_CHARS = 2000  # fail_on
MAX_COMMAND_CHARS = 1000  # test_command


ON_WORDS = frozenset({"on", "true", "yes"})
OFF_WORDS = frozenset({"off", "false", "no"})


def on_off(value: Any, *, on: str = "on", off: str = "off") -> Any:
    """An on/off setting as people write it: YAML's booleans (`on`, `off`, `yes`, `no`,
    `true`, `false` unquoted) and the same words quoted, in any case, become `on` / `off`
    (the field's own words for them); anything else is left for the field to judge."""
    if isinstance(value, bool):
        return on if value else off
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ON_WORDS:
            return on
        if word in OFF_WORDS:
            return off
    return value


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    analyzers: dict[str, bool] = Field(default_factory=dict)
    fail_on: str | None = Field(default=None, max_length=MAX_EXPRESSION_CHARS,
                                validation_alias=AliasChoices("fail_on", "fail-on"))
    thresholds: dict[str, dict[str, float]] = Field(default_factory=dict)
    ignore: list[str] = Field(default_factory=list)
    drafts: bool | None = None
    model: str | None = None
    test_command: str | None = Field(default=None, min_length=1, max_length=MAX_COMMAND_CHARS,
                                     validation_alias=AliasChoices("test_command", "test-command"))
    # validated per analyzer by parse_config (registry.validate_options), kept as given
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # AutoFix's fixes as committable suggestions (the pr-review reporter): only those verified
    # by a clean Semgrep re-scan and Patched RTC, every proposed fix, or none
    # (`off`, `no` and false are "off"; `on` and true are "verified", the default)
    suggestions: Literal["off", "verified", "all"] = "verified"
    # whether the App records what became of its suggestions (applied, resolved, reactions):
    # on | off, YAML's true | false (and yes | no) alike
    feedback: Literal["on", "off"] = "on"
    # model-based scores only from a model that `rtcbot qualify` qualified (.rtcbot/qualification.json)
    require_qualified: bool = Field(default=False,
                                    validation_alias=AliasChoices("require_qualified", "require-qualified"))
    # the findings and rules the team dismissed (bot/core/dismissals.py) are hidden: each is one
    # line of the summary, never an annotation or a suggestion; `off` shows them as any other
    dismissals: Literal["on", "off"] = "on"
    # a dismissed finding still counts toward the gate (`fail_on`'s counts) when true
    gate_dismissed: bool = Field(default=False, validation_alias=AliasChoices("gate_dismissed", "gate-dismissed"))
    # a gate over an analyzer with inconclusive items: `fail` (it cannot pass, and says why) or
    # `ignore` (it reads the conclusive items only)
    gate_inconclusive: Literal["fail", "ignore"] = "fail"

    @field_validator("suggestions", "feedback", "dismissals", mode="before")
    @classmethod
    def _on_off(cls, v: Any, info: ValidationInfo) -> Any:
        """YAML 1.1 reads `on`, `off`, `yes`, `no` as booleans: each means what its word says,
        quoted or not (`feedback: on`, `suggestions: off`)."""
        return on_off(v, on="verified" if info.field_name == "suggestions" else "on")

    @field_validator("analyzers", mode="before")
    @classmethod
    def _exact_list(cls, v: Any) -> Any:
        """A list (or a comma-separated string) names exactly the analyzers to run."""
        if isinstance(v, str):
            v = [n for n in v.split(",") if n.strip()]
        if isinstance(v, list) and all(isinstance(n, str) for n in v):
            try:
                names = registry.parse_names(",".join(v))
            except registry.UnknownAnalyzer as e:
                raise ValueError(str(e)) from None
            return {n: n in names for n in registry.ANALYZERS}
        return v

    @field_validator("analyzers", "thresholds", "options")
    @classmethod
    def _known(cls, v: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in v.items():
            key = registry.normalise(name)
            if key not in registry.ANALYZERS:
                known = ", ".join(registry.ANALYZERS)
                raise ValueError(f"unknown analyzer {name!r}{nearest(key, registry.ANALYZERS)} (known: {known})")
            out[key] = value
        return out

    @field_validator("fail_on")
    @classmethod
    def _gate(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                parse_fail_on(v)
            except FailOnError as e:
                raise ValueError(str(e).removeprefix("fail-on: ")) from None
        return v

    @field_validator("test_command")
    @classmethod
    def _command(cls, v: str | None) -> str | None:
        if v is not None and ("\x00" in v or not v.strip()):
            raise ValueError("must be a non-empty shell command without NUL characters")
        return v

    def gate(self, fail_on: FailOn | None = None) -> FailOn:
        """The one gate: the file's `fail_on` (or `fail_on`, an operator's gate that replaces
        it: the Action's `fail-on` input), with `thresholds` as further alternatives."""
        base = fail_on if fail_on is not None else parse_fail_on(self.fail_on or "")
        return base | from_thresholds(self.thresholds)


@dataclass
class LoadedConfig:
    config: RepoConfig = field(default_factory=RepoConfig)
    error: str | None = None  # why the file was not used (one line)
    problems: list[str] = field(default_factory=list)  # each with its key path
    named: bool = False  # the problems name the file themselves (it could not be read as settings)

    @property
    def message(self) -> str | None:
        """What every surface says about an invalid file (one line), None when it is valid."""
        return None if self.error is None else f"{self.error}; the defaults apply"

    def enabled(self, defaults: Sequence[str], test_command: str | None = None) -> list[str]:
        """The analyzers to run: `defaults` with the file's on/off; those a test command turns
        on too when one is set (registry.turned_on_by_test_command), unless the file turns them off."""
        names = [registry.normalise(n) for n in defaults]
        for name in registry.turned_on_by_test_command() if test_command else ():
            if name not in names and self.config.analyzers.get(name) is not False:
                names.append(name)
        for name, on in self.config.analyzers.items():
            if on and name not in names:
                names.append(name)
            if not on and name in names:
                names.remove(name)
        return names

    def drafts(self, service_default: bool) -> bool:
        return self.config.drafts if self.config.drafts is not None else service_default

    def model(self, allowed: Sequence[str]) -> tuple[str | None, str | None]:
        """(model to use or None for the service's, a note when the asked model is refused)."""
        m = self.config.model
        if m is None:
            return None, None
        if m in allowed:
            return m, None
        return None, f"`model: {m}` in {CONFIG_PATH} is not allowed by this installation; the default model was used"


# -- validation ---------------------------------------------------------------------------
def settings_names() -> list[str]:
    """Every name a repository's config may give a setting (its aliases too)."""
    return [str(c) for n, f in RepoConfig.model_fields.items()
            for c in (f.validation_alias.choices if isinstance(f.validation_alias, AliasChoices) else [n])]


def _describe(e: ValidationError, *, but: str | None = None) -> list[str]:
    """Each problem in words, `loc: msg`; none under the top-level key `but`."""
    out = []
    for err in e.errors():
        if but is not None and err["loc"][:1] == (but,):
            continue
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden" and len(err["loc"]) == 1:  # a top-level key: a typo, most often
            msg = f"unknown setting{nearest(str(err['loc'][0]), settings_names())}"
        out.append(f"{loc}: {msg}")
    return out


def _loaded_error(problems: list[str], name: str) -> LoadedConfig:
    shown = problems[:MAX_PROBLEMS]
    more = f"; and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
    return LoadedConfig(error=f"{name} is invalid: " + "; ".join(shown) + more,
                        problems=problems)


def validate_data(data: Any, tools: Tools | None = None, name: str = CONFIG_PATH) -> LoadedConfig:
    """The configuration in already-loaded data (None: empty), or the defaults with every
    problem. `tools` holds the operator's allow-lists."""
    if data is None:
        return LoadedConfig()
    if not isinstance(data, dict):
        problem = f"{name} must be a mapping of settings"
        return LoadedConfig(error=problem, problems=[problem], named=True)
    problems: list[str] = []
    options = data.get("options")
    if isinstance(options, dict):
        _, problems = registry.validate_all(options, tools)
    try:
        config = RepoConfig.model_validate(data)
    except ValidationError as e:
        # an options problem the registry already named precisely is not repeated
        problems += _describe(e, but="options" if problems else None)
        return _loaded_error(problems, name)
    if problems:
        return _loaded_error(problems, name)
    return LoadedConfig(config)


def parse_config(text: str | bytes | None, tools: Tools | None = None,
                 name: str = CONFIG_PATH) -> LoadedConfig:
    """The configuration in `text` (None: no file), or the defaults with the reason. `tools`:
    the operator's allow-lists; `name`: the file's name in messages."""
    if text is None or not text.strip():
        return LoadedConfig()
    try:
        data = load_yaml(text, name)
    except ConfigError as e:
        return LoadedConfig(error=str(e), problems=[str(e)], named=True)  # ConfigError names the file
    return validate_data(data, tools, name)


def effective(loaded: LoadedConfig, default_analyzers: Sequence[str],
              tools: Tools | None = None) -> dict[str, Any]:
    """The settings a run uses with this file: the analyzers that run (on the Action and the
    command line; `app_analyzers`: on the App, which never runs a pull request's code, so never
    SynthesisRTC for a test command), the options of those analyzers with the defaults filled
    in, and the App's suggestions, feedback and require_qualified (what `rtcbot config validate`
    prints)."""
    cfg = loaded.config
    runs = loaded.enabled(default_analyzers, cfg.test_command)
    on_app = loaded.enabled(default_analyzers, None)
    options: dict[str, Any] = {}
    for name in registry.ANALYZERS:
        if name in runs or name in on_app:
            options[name] = registry.validate_options(name, cfg.options.get(name, {}), tools).model_dump(mode="json")
    return {
        "analyzers": runs,
        "app_analyzers": on_app,
        "fail_on": cfg.fail_on,
        "thresholds": cfg.thresholds,
        "gate": cfg.gate().text or None,  # fail_on and thresholds as one expression
        "ignore": cfg.ignore,
        "drafts": cfg.drafts,
        "model": cfg.model,
        "test_command": cfg.test_command,
        "options": options,
        "dismissals": cfg.dismissals,
        "gate_dismissed": cfg.gate_dismissed,
        "gate_inconclusive": cfg.gate_inconclusive,
        "suggestions": cfg.suggestions,
        "feedback": cfg.feedback,
        "require_qualified": cfg.require_qualified,
    }
