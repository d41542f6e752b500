"""Settings from the environment, and what is wrong with them in plain words: one line per
problem naming its environment variable (`SettingsError`), every problem of a run together
(`load`: a wrong value takes its default while the rest is checked).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import AliasChoices, ValidationError
from pydantic_settings import BaseSettings

SettingsT = TypeVar("SettingsT", bound=BaseSettings)


class SettingsError(ValueError):
    """Service settings missing or wrong: one clear line per problem, each naming its
    environment variable (`lines`)."""

    def __init__(self, *lines: str) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def split_list(v: Any) -> Any:
    """A list setting from the environment: a JSON list, or comma-separated."""
    if isinstance(v, str):
        if v.strip().startswith("["):
            try:
                return json.loads(v)
            except json.JSONDecodeError:
                raise ValueError("must be a JSON list or comma-separated names") from None
        return [x.strip() for x in v.split(",") if x.strip()]
    return v


def env_name(model: type[BaseSettings], field: str) -> str:
    """The environment variable a settings field is read from (its first alias, else
    RTCBOT_<FIELD>)."""
    info = model.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    if isinstance(alias, str):
        return alias
    return "RTCBOT_" + field.upper()


_PLAIN_WORDS = {
    "int_parsing": "must be an integer", "int_type": "must be an integer", "int_from_float": "must be an integer",
    "float_parsing": "must be a number", "float_type": "must be a number",
    "bool_parsing": "must be true or false", "bool_type": "must be true or false",
    "json_invalid": "must be valid JSON", "list_type": "must be a list",
}


def _words(err: Any) -> str:
    ctx = err.get("ctx") or {}
    kind = err["type"]
    if kind in _PLAIN_WORDS:
        return _PLAIN_WORDS[kind]
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("more than", "gt"),
              "less_than_equal": ("at most", "le"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, key = bounds[kind]
        limit = ctx.get(key)
        return f"must be {words} {limit:g}" if isinstance(limit, (int, float)) else f"must be {words} {limit}"
    if kind == "literal_error":
        return f"must be {ctx.get('expected')}"
    if kind == "value_error":
        return str(ctx.get("error") or err["msg"])
    return str(err["msg"])


def set_name(model: type[BaseSettings], name: str) -> str:
    """Of a field read from several variables (DATABASE_URL or RTCBOT_DATABASE_URL), the one
    that is set: the one whose value is wrong."""
    env = {k.upper() for k in os.environ}
    for info in model.model_fields.values():
        alias = info.validation_alias
        if isinstance(alias, AliasChoices) and name in alias.choices:
            return next((str(c) for c in alias.choices if str(c).upper() in env), name)
    return name


def error_lines(e: ValidationError, model: type[BaseSettings]) -> list[str]:
    """One line per error: `ENV_VAR: what is wrong` (never the field name or pydantic's dump)."""
    out = []
    for err in e.errors():
        loc = [str(x) for x in err["loc"]]
        first = loc[0] if loc else ""
        name = set_name(model, env_name(model, first) if first in model.model_fields else first)
        where = f"{name}[{']['.join(loc[1:])}]" if len(loc) > 1 else name
        words = _words(err)
        out.append(f"{where}: {words.removeprefix(where + ': ')}")
    return list(dict.fromkeys(out))


def field_of(model: type[BaseSettings], loc: str) -> str | None:
    """The field an error's location names: the field itself, or one of its variables."""
    if loc in model.model_fields:
        return loc
    for name, info in model.model_fields.items():
        alias = info.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if isinstance(alias, str) else []
        if loc.upper() in (str(c).upper() for c in choices):
            return name
    return None


def load(model: type[SettingsT], overrides: Mapping[str, Any]) -> tuple[SettingsT | None, list[str]]:
    """`model` from the environment, and every problem with it, one line each: a field whose
    value is wrong takes its default, so what else is wrong (a missing App id, a bad database
    URL) is found in the same run and reported together."""
    try:
        return model(**overrides), []
    except ValidationError as e:
        problems = error_lines(e, model)
        bad = {field_of(model, str(err["loc"][0])) for err in e.errors() if err["loc"]}
        fallback = {f: model.model_fields[f].get_default(call_default_factory=True) for f in bad if f}
        try:
            return model(**{**overrides, **fallback}), problems
        except ValidationError:
            return None, problems
