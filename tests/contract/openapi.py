"""GitHub's REST contract, from its published OpenAPI description (the operations rtcbot uses:
tests/fixtures/github/openapi/): which operation a request is, and what the description says
is wrong with the request (path parameters, query, JSON body) or with an answer.

    api = description()
    api.request_problems("PATCH", "/repos/o/r/check-runs/7", {"status": "done"})
    # ["body/status: 'done' is not one of ['queued', 'in_progress', 'completed', ...]"]

The description is OpenAPI 3.0 (JSON Schema draft 4 with `nullable`); its schemas are checked
with `jsonschema`'s draft 4 validator once `nullable: true` is spelled as a `null` type, and
`date-time` strings as RFC 3339 times.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from jsonschema import Draft4Validator, FormatChecker

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "openapi" / "api.github.com.subset.json"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_MESSAGE = 300
MAX_PROBLEMS = 20  # listed for one request

FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    """RFC 3339: a full date and time with an offset (`Z` or ±hh:mm)."""
    if not isinstance(value, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", value, re.IGNORECASE):
        raise ValueError(f"{value!r} is not an RFC 3339 date-time")
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))  # a real date and time
    return True


@dataclass(frozen=True)
class Violation:
    """A request the description rejects, as sent."""

    method: str
    path: str  # with its query
    problems: tuple[str, ...]
    body: Any = None

    def __str__(self) -> str:
        body = "" if self.body is None else f"\n    body: {json.dumps(self.body)[:500]}"
        return f"{self.method} {self.path}:\n    " + "\n    ".join(self.problems) + body


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    template: str  # "/repos/{owner}/{repo}/check-runs"
    operation_id: str
    pattern: re.Pattern[str]
    parameters: tuple[Mapping[str, Any], ...]
    request_body: Mapping[str, Any] | None
    responses: Mapping[str, Any]
    validators: dict[str, Draft4Validator] = field(default_factory=dict, compare=False, repr=False)


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0's `nullable: true` as JSON Schema: `null` among the types (and the enum)."""
    if isinstance(node, list):
        return [_nullable(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*types, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        if "$ref" in out or "allOf" in out or "oneOf" in out or "anyOf" in out:
            rest = {k: v for k, v in out.items() if k not in ("description", "title")}
            out = {"anyOf": [{"type": "null"}, rest]}
    return out


def _pattern(template: str, parameters: list[Mapping[str, Any]]) -> re.Pattern[str]:
    multi = {p["name"] for p in parameters if p.get("in") == "path" and p.get("x-multi-segment")}
    regex = ""
    for part in re.split(r"(\{[^}]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            regex += f"(?P<{name}>.+)" if name in multi else f"(?P<{name}>[^/]+)"
        else:
            regex += re.escape(part)
    return re.compile(regex)


def _coerce(value: str, schema: Mapping[str, Any]) -> Any:
    """A query or path value (text) as the type its schema names, where it reads as one."""
    kind = schema.get("type")
    if kind == "integer" and re.fullmatch(r"-?\d+", value):
        return int(value)
    if kind == "number":
        try:
            return float(value)
        except ValueError:
            return value
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


def _message(error: Any) -> str:
    """jsonschema's message, or for one that quotes a long value, the rule it broke."""
    if len(error.message) <= MAX_MESSAGE:
        return str(error.message)
    rule = json.dumps(error.validator_value) if error.validator not in ("anyOf", "oneOf", "allOf") else "its schemas"
    return f"breaks {error.validator} ({rule})"[:MAX_MESSAGE]


def _where(error: Any, root: str) -> str:
    return "/".join([root, *(str(p) for p in error.absolute_path)])


class Description:
    """The operations of an OpenAPI description and the checks of requests and answers."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = _nullable(dict(spec))
        self.version = str(spec.get("info", {}).get("x-rtcbot-source", {}).get("version", ""))
        self.operations: list[Operation] = []
        for template, item in self.spec["paths"].items():
            shared = [self.resolve(p) for p in item.get("parameters", [])]
            for method in METHODS:
                op = item.get(method)
                if op is None:
                    continue
                own = [self.resolve(p) for p in op.get("parameters", [])]
                names = {(p["name"], p["in"]) for p in own}
                params = [*own, *(p for p in shared if (p["name"], p["in"]) not in names)]
                body = self.resolve(op["requestBody"]) if "requestBody" in op else None
                self.operations.append(Operation(method.upper(), template, op.get("operationId", ""),
                                                 _pattern(template, params), tuple(params), body,
                                                 op.get("responses", {})))

    def resolve(self, node: Any) -> Any:
        """A `$ref` object followed to what it names (others as they are)."""
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            target: Any = self.spec
            for part in node["$ref"].removeprefix("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def example(self, name: str) -> Any:
        """A copy of the description's example `components/examples/<name>`."""
        return copy.deepcopy(self.spec["components"]["examples"][name]["value"])

    def _validator(self, op: Operation, key: str, schema: Mapping[str, Any]) -> Draft4Validator:
        v = op.validators.get(key)
        if v is None:
            root = {"allOf": [schema], "components": self.spec["components"]}  # "#/components/…" resolve
            v = op.validators[key] = Draft4Validator(root, format_checker=FORMATS)
        return v

    def _errors(self, op: Operation, key: str, schema: Mapping[str, Any], value: Any, root: str) -> list[str]:
        errors = sorted(self._validator(op, key, schema).iter_errors(value), key=lambda e: list(e.absolute_path))
        said = [f"{_where(e, root)}: {_message(e)}" for e in errors]
        return said if len(said) <= MAX_PROBLEMS else [*said[:MAX_PROBLEMS], f"… and {len(said) - MAX_PROBLEMS} more"]

    # -- requests ---------------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        """The operation a request is (path without its query; parameters still encoded)."""
        for op in self.operations:
            m = op.pattern.fullmatch(path)
            if op.method == method.upper() and m:
                return op, {k: unquote(v) for k, v in m.groupdict().items()}
        return None

    def request_problems(self, method: str, target: str, body: Any = None) -> list[str]:
        """What the description rejects in a request (`target`: path and query as sent;
        `body`: the parsed JSON body, None without one). [] for a valid one."""
        url = urlsplit(target)
        found = self.match(method, url.path)
        if found is None:
            return [f"{method.upper()} {url.path} is no operation of GitHub's REST API description"]
        op, path_values = found
        problems: list[str] = []
        query = parse_qsl(url.query, keep_blank_values=True)
        described = {(p["name"], p["in"]): p for p in op.parameters}
        for name, _ in query:
            if (name, "query") not in described:
                problems.append(f"query: {name!r} is not a parameter of {op.operation_id}")
        given = {"path": path_values, "query": dict(query)}
        for (name, where), p in described.items():
            values = given.get(where)
            if values is None:
                continue  # headers and cookies are not checked
            if name not in values:
                if p.get("required"):
                    problems.append(f"{where}: {name!r} is required by {op.operation_id}")
                continue
            schema = p.get("schema", {})
            problems += self._errors(op, f"{where}:{name}", schema, _coerce(values[name], schema), f"{where}/{name}")
        problems += self._body_problems(op, body)
        return problems

    def _body_problems(self, op: Operation, body: Any) -> list[str]:
        if isinstance(body, dict) and "__invalid__" in body:
            return ["body: not JSON"]
        if op.request_body is None:
            return [] if body is None else [f"body: {op.operation_id} takes no body"]
        if body is None:
            return [f"body: {op.operation_id} requires a JSON body"] if op.request_body.get("required") else []
        media = op.request_body.get("content", {}).get("application/json")
        if media is None:
            return [f"body: {op.operation_id} takes no JSON body"]
        return self._errors(op, "body", self.resolve(media.get("schema", {})), body, "body")

    # -- answers ----------------------------------------------------------------------------
    def _described(self, method: str, path: str, status: int) -> tuple[Any, Any] | None:
        """(schema, first example) of an operation's JSON answer with `status`, where described."""
        found = self.match(method, urlsplit(path).path)
        if found is None:
            return None
        response = found[0].responses.get(str(status))
        media = (self.resolve(response).get("content") or {}).get("application/json") if response else None
        if not media:
            return None
        examples = list((media.get("examples") or {}).values())
        example = self.resolve(examples[0]).get("value") if examples else None
        return self.resolve(media.get("schema", {})), example

    def complete(self, method: str, path: str, status: int, data: Any) -> Any:
        """`data` with every property the described answer requires and `data` lacks taken from
        the description's example of that answer (as deep as the schema goes)."""
        described = self._described(method, path, status)
        if described is None or described[1] is None:
            return data
        return self._fill(data, described[1], described[0])

    def _fill(self, data: Any, example: Any, schema: Any) -> Any:
        schema = self.resolve(schema)
        branches = [self.resolve(s) for s in schema.get("allOf", [])]
        for key in ("anyOf", "oneOf"):  # the branch of data's JSON type (a nullable's object)
            for s in (self.resolve(s) for s in schema.get(key, [])):
                kinds = s.get("type", "object" if "properties" in s else None)
                kinds = kinds if isinstance(kinds, list) else [kinds]
                if ("object" in kinds and isinstance(data, dict)) or ("array" in kinds and isinstance(data, list)):
                    branches.append(s)
                    break
        if isinstance(data, list) and isinstance(example, list) and example and "items" in schema:
            return [self._fill(item, example[0], schema["items"]) for item in data]
        if not (isinstance(data, dict) and isinstance(example, dict)):
            return data
        out = dict(data)
        for part in [schema, *branches]:
            for key in part.get("required", []):
                if key not in out and key in example:
                    out[key] = copy.deepcopy(example[key])
            for key, sub in (part.get("properties") or {}).items():
                if key in out and key in example:
                    out[key] = self._fill(out[key], example[key], sub)
        return out

    def response_problems(self, method: str, path: str, status: int, content_type: str, body: Any) -> list[str]:
        """What the description rejects in an answer: a status it does not list, or a JSON body
        against the schema of that status and media type. Other media types are not checked."""
        found = self.match(method, urlsplit(path).path)
        if found is None:
            return [f"{method.upper()} {path} is no operation of GitHub's REST API description"]
        op, _ = found
        response = op.responses.get(str(status)) or op.responses.get("default")
        if response is None:
            return [f"status {status} is not an answer {op.operation_id} describes"]
        content = self.resolve(response).get("content") or {}
        media = content_type.split(";", 1)[0].strip().lower()
        if media not in content:
            if media == "application/json" and content:
                return [f"{op.operation_id} {status} describes {sorted(content)}, not {media}"]
            return []
        schema = self.resolve(content[media].get("schema", {}))
        return self._errors(op, f"response:{status}:{media}", schema, body, "response")


@functools.cache
def description(path: Path = SPEC) -> Description:
    """The vendored description (one per process)."""
    return Description(json.loads(path.read_text(encoding="utf-8")))
