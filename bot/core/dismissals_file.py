"""`.github/rtcbot-dismissals.yml`: the dismissals a team commits, for the surfaces with no
store (the Action reads it at the pull request's BASE commit, like `.github/rtcbot.yml`, so a
pull request cannot dismiss its own findings; `rtcbot review --dismissals FILE`). Pure: text in,
`Dismissal`s or one clear message out.

    dismissals:
      - rule: python.lang.security.audit.formatted-sql-query   # a rule id or an analyzer
        paths: "tests/*"                                        # optional: a glob
        by: alice                                               # a GitHub login
        date: 2026-11-26
        reason: the query is built from constants               # optional
      - finding: 3f2a9c0d1e4b5a67                               # one finding's fingerprint
        by: bob
        date: 2026-11-20

The file is read as the config is (bot/core/config.py `load_yaml`: at most 64 KiB, no anchors or
aliases, no duplicate keys); each entry is checked against the dismissal's bounds
(bot/core/dismissals.py `problem`). An invalid file dismisses nothing, and every output says
what is wrong with it, with the entry's number.
"""

from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.core.config import ConfigError, load_yaml
from bot.core.dismissals import Dismissal, problem

DISMISSALS_PATH = ".github/rtcbot-dismissals.yml"
MAX_ENTRIES = 500
MAX_PROBLEMS = 10


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    rule: str | None = None
    finding: str | None = None
    paths: str | None = None
    by: str
    day: dt.date = Field(alias="date")
    reason: str = ""

    @model_validator(mode="after")
    def _one_target(self) -> _Entry:
        if (self.rule is None) == (self.finding is None):
            raise ValueError("name exactly one of `rule` (a rule id or an analyzer) and `finding` (a fingerprint)")
        return self

    def dismissal(self) -> Dismissal:
        at = float(calendar.timegm(self.day.timetuple()))
        if self.finding is not None:
            return Dismissal(self.finding, "finding", self.paths, self.by, at, self.reason)
        return Dismissal(str(self.rule), "rule", self.paths, self.by, at, self.reason)


@dataclass(frozen=True)
class LoadedDismissals:
    """The file's dismissals, or none and why (`error`, one line, each problem with its place)."""

    dismissals: tuple[Dismissal, ...] = ()
    error: str | None = None
    problems: list[str] = field(default_factory=list)


def _problems(data: Any) -> tuple[list[Dismissal], list[str]]:
    if not isinstance(data, dict) or set(data) != {"dismissals"} or not isinstance(data["dismissals"], list):
        return [], ["the file must be a mapping with one key, `dismissals`, a list of entries"]
    entries = data["dismissals"]
    if len(entries) > MAX_ENTRIES:
        return [], [f"at most {MAX_ENTRIES} entries ({len(entries)} given)"]
    out: list[Dismissal] = []
    problems: list[str] = []
    for i, raw in enumerate(entries, 1):
        try:
            d = _Entry.model_validate(raw, strict=False).dismissal()
        except ValidationError as e:
            for err in e.errors():
                loc = ".".join(str(x) for x in err["loc"])
                problems.append(f"entry {i}{'.' + loc if loc else ''}: {str(err['msg']).removeprefix('Value error, ')}")
            continue
        if (why := problem(d)) is not None:
            problems.append(f"entry {i}: {why}")
            continue
        out.append(d)
    return out, problems


def parse_dismissals(text: str | bytes | None, name: str = DISMISSALS_PATH) -> LoadedDismissals:
    """The dismissals in `text` (None or empty: none)."""
    if text is None or not text.strip():
        return LoadedDismissals()
    try:
        data = load_yaml(text, name)
    except ConfigError as e:
        return LoadedDismissals(error=f"{e}; no dismissal applies", problems=[str(e)])
    dismissals, problems = _problems(data)
    if problems:
        more = f"; and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        return LoadedDismissals(error=f"{name} is invalid: " + "; ".join(problems[:MAX_PROBLEMS]) + more
                                + "; no dismissal applies", problems=problems)
    return LoadedDismissals(tuple(dismissals))


def entry_yaml(d: Dismissal) -> str:
    """The file's text with `d` as its one entry (what `parse_dismissals` reads back as `d`, its
    time as that UTC day): what the Action's `ignore` answers with, to commit."""
    entry: dict[str, Any] = {d.kind: d.target}
    if d.path_glob:
        entry["paths"] = d.path_glob
    entry["by"] = d.by
    entry["date"] = dt.datetime.fromtimestamp(d.at, dt.UTC).date()
    if d.reason:
        entry["reason"] = d.reason
    return str(yaml.safe_dump({"dismissals": [entry]}, sort_keys=False, allow_unicode=True, width=10_000))
