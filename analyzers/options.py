"""Per-analyzer options: what a repository's `.github/rtcbot.yml` may set under `options:`.

Repository config is data, never a program. Each analyzer declares one `AnalyzerOptions`
subclass: frozen, strict (no "3" for 3, no 1 for true), unknown keys refused, and every
count, token budget, hunk limit, timeout and memory size bounded by a documented maximum.
A value over its maximum is an error that names the maximum, never clamped silently.

Programs, rule files and models are the operator's (`analyzers.context.Tools`); a key that
names one (`OPERATOR_KEYS`) is refused with a message that says where the operator sets it.

`validate(cls, raw, analyzer, tools)` is the one entry point; it raises `OptionsError`,
whose `problems` are one line each, prefixed with the key path (`options.<analyzer>.<key>`).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

OptionsT = TypeVar("OptionsT", bound="AnalyzerOptions")

MAX_PROBLEMS = 20  # problems listed per analyzer; more are counted


class OptionsError(ValueError):
    """Invalid options for one analyzer: one line per problem, each with its key path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class AnalyzerOptions(BaseModel):
    """Base of every analyzer's options (the defaults are the service's)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # keys a repository must not set, with where the operator sets them instead
    OPERATOR_KEYS: ClassVar[Mapping[str, str]] = {}


def nearest(word: str, known: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the known name closest to a mistyped `word` (difflib's ratio at
    least 0.6), else ""."""
    match = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def _loc(err: Mapping[str, Any]) -> str:
    return ".".join(str(x) for x in err["loc"])


def _message(err: Mapping[str, Any]) -> str:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    got = err.get("input")
    if kind == "extra_forbidden":
        return "unknown option"
    if kind in ("less_than_equal", "less_than"):
        limit = ctx.get("le", ctx.get("lt"))
        return f"{got!r} is over the maximum of {limit}"
    if kind in ("greater_than_equal", "greater_than"):
        limit = ctx.get("ge", ctx.get("gt"))
        return f"{got!r} is under the minimum of {limit}"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    shown = repr(got)
    return f"{msg} (got {shown[:60]}{'…' if len(shown) > 60 else ''})"


def validate(cls: type[OptionsT], raw: Any, analyzer: str, tools: Any = None,
             prefix: str = "options") -> OptionsT:
    """`cls` from a repository's mapping of options for `analyzer`; `tools` (the operator's
    `Tools`) is the validation context, for allow-lists. Raises OptionsError."""
    where = f"{prefix}.{analyzer}"
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise OptionsError([f"{where}: must be a mapping of options (got {type(raw).__name__})"])
    problems: list[str] = []
    for key in raw:
        if not isinstance(key, str):
            problems.append(f"{where}.{key!r}: option names are strings")
        elif key in cls.OPERATOR_KEYS:
            problems.append(f"{where}.{key}: not a repository option: {cls.OPERATOR_KEYS[key]}")
    if problems:
        raise OptionsError(problems)
    try:
        return cls.model_validate(dict(raw), context={"tools": tools})
    except ValidationError as e:
        errors = e.errors()
        known = ", ".join(sorted(cls.model_fields))
        for err in errors[:MAX_PROBLEMS]:
            line = f"{where}.{_loc(err)}: {_message(err)}"
            if err["type"] == "extra_forbidden":
                line += f" of {analyzer}{nearest(str(err['loc'][-1]), cls.model_fields)} (known: {known})"
            problems.append(line)
        if len(errors) > MAX_PROBLEMS:
            problems.append(f"{where}: {len(errors) - MAX_PROBLEMS} more problems")
        raise OptionsError(problems) from None


def allowed(tools: Any, attr: str) -> tuple[str, ...]:
    """The operator's allow-list `attr` of `tools` (empty when there are no tools)."""
    return tuple(getattr(tools, attr, ()) or ())
