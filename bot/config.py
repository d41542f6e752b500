"""Per-repository configuration: `.github/rtcbot.yml`, read from the default branch.

    analyzers:            # on / off per analyzer (unlisted: the service default)
      editing_rtc: true
      autofix: false
    thresholds:           # conclusion `failure` when an overall score falls below
      editing_rtc: {rtc: 0.2}
    ignore: ["docs/*", "*.generated.ts"]
    drafts: false         # analyse draft pull requests
    model: gpt-4o-mini    # only a model the installation allows (RTCBOT_ALLOWED_MODELS)
    options:              # passed to the analyzer (see each analyzer's docs)
      editing_rtc: {n_forward: 3}

An invalid file never stops the analysis: the defaults apply and every check run says what
is wrong with the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from analyzers import registry

CONFIG_PATH = ".github/rtcbot.yml"


class RepoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    analyzers: dict[str, bool] = Field(default_factory=dict)
    thresholds: dict[str, dict[str, float]] = Field(default_factory=dict)
    ignore: list[str] = Field(default_factory=list)
    drafts: bool | None = None
    model: str | None = None
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("analyzers", "thresholds", "options")
    @classmethod
    def _known(cls, v: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in v.items():
            key = registry.normalise(name)
            if key not in registry.ANALYZERS:
                known = ", ".join(registry.ANALYZERS)
                raise ValueError(f"unknown analyzer {name!r} (known: {known})")
            out[key] = value
        return out


@dataclass
class LoadedConfig:
    config: RepoConfig = field(default_factory=RepoConfig)
    error: str | None = None  # why the file was not used

    def enabled(self, defaults: Sequence[str]) -> list[str]:
        names = [registry.normalise(n) for n in defaults]
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


def _describe(e: ValidationError) -> str:
    parts = []
    for err in e.errors()[:5]:
        loc = ".".join(str(x) for x in err["loc"]) or "(top level)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def parse_config(text: str | None) -> LoadedConfig:
    """The configuration in `text` (None: no file), or the defaults with the reason."""
    if text is None or not text.strip():
        return LoadedConfig()
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        return LoadedConfig(error=f"{CONFIG_PATH} is not valid YAML{where}")
    if data is None:
        return LoadedConfig()
    if not isinstance(data, dict):
        return LoadedConfig(error=f"{CONFIG_PATH} must be a mapping of settings")
    try:
        return LoadedConfig(RepoConfig.model_validate(data))
    except ValidationError as e:
        return LoadedConfig(error=f"{CONFIG_PATH} is invalid: {_describe(e)}")
