"""The GitHub Action: one pull request, analysed inline in a workflow step.

Steps (the app's steps 2–4, with no queue): read the event (GITHUB_EVENT_PATH) → the PR's
files from the REST API (GITHUB_API_URL, GITHUB_TOKEN) → ChangeSet → analyzers → one check
run per analyzer. A token that may not create check runs (403: pull requests from forks get a
read-only GITHUB_TOKEN) falls back to workflow-command annotations within GitHub's per-step
limits, and says so. Always: a Markdown report in GITHUB_STEP_SUMMARY, outputs in
GITHUB_OUTPUT, and an exit code that follows `fail-on`.

`fail-on` grammar (docs/action.md), parsed strictly:

    expr       := all ( ("||" | "or") all )*          fails when any `all` holds
    all        := comparison ( ("&&" | "and") comparison )*
    comparison := METRIC OP NUMBER                    e.g. editing_rtc.rtc<0.2
    METRIC     := ANALYZER "." NAME                   ANALYZER: a registered analyzer or "total"
    OP         := "<" | "<=" | ">" | ">=" | "==" | "!="

NAME is one of the analyzer's aggregate scores (rtc, lift, con, comp, rel, ...) or a count:
findings, failures, warnings, notices, fixes, skipped, errors. A metric a run does not
produce (no hunks, the analyzer not run) makes its comparison false, and the summary says so.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import httpx
import yaml

from analyzers import registry
from analyzers.context import AnalysisContext, ReviewComment
from analyzers.diff import DEFAULT_IGNORES, ChangeSet, parse_github_files
from analyzers.llm import LLMClient
from analyzers.pipeline import run_all
from analyzers.report import (
    AnalyzerReport,
    Finding,
    render_evidence_markdown,
    render_markdown_report,
)

# GitHub's documented limits
MAX_OUTPUT_CHARS = 65_535  # check-run summary and text
ANNOTATIONS_PER_REQUEST = 50
ANNOTATION_TITLE_CHARS = 255
ANNOTATION_MESSAGE_CHARS = 64_000
STEP_ANNOTATIONS_PER_LEVEL = 10  # workflow commands: 10 error, 10 warning, 10 notice per step
JOB_ANNOTATIONS = 50
STEP_SUMMARY_BYTES = 1024 * 1024
CHECK_NAME_PREFIX = "rtcbot / "
PR_EVENTS = ("pull_request", "pull_request_target")


class ActionError(Exception):
    """A problem the user can act on: one clear line, exit status 2."""


# ============================================================================ fail-on
class FailOnError(ActionError):
    pass


OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b, "<": lambda a, b: a < b, ">": lambda a, b: a > b,
}
COUNTS = ("findings", "failures", "warnings", "notices", "fixes", "skipped", "errors")
_TOKEN = re.compile(r"""\s*(?:
    (?P<and>&&|\band\b) | (?P<or>\|\||\bor\b) |
    (?P<cmp>(?P<metric>[A-Za-z][\w-]*\.[\w@.-]+)\s*(?P<op><=|>=|==|!=|<|>)\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))
    )\s*""", re.VERBOSE)


@dataclass(frozen=True)
class Comparison:
    analyzer: str  # registry name or "total"
    name: str
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.analyzer}.{self.name}{self.op}{self.value:g}"

    def holds(self, metrics: dict[str, dict[str, float]]) -> bool | None:
        """True/False, or None when the run has no such metric."""
        v = metrics.get(self.analyzer, {}).get(self.name)
        return None if v is None else OPS[self.op](v, self.value)


@dataclass(frozen=True)
class FailOn:
    any_of: tuple[tuple[Comparison, ...], ...] = ()
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.any_of)

    def comparisons(self) -> Iterator[Comparison]:
        for group in self.any_of:
            yield from group

    def evaluate(self, metrics: dict[str, dict[str, float]]) -> tuple[list[str], list[str]]:
        """(the groups that hold, as text; the comparisons whose metric is missing)."""
        matched, missing = [], []
        for group in self.any_of:
            results = [c.holds(metrics) for c in group]
            missing += [str(c) for c, r in zip(group, results, strict=True) if r is None]
            if all(r is True for r in results):
                matched.append(" && ".join(str(c) for c in group))
        return matched, list(dict.fromkeys(missing))


def parse_fail_on(text: str) -> FailOn:
    text = (text or "").strip()
    if not text:
        return FailOn()
    groups: list[list[Comparison]] = [[]]
    pos, expect_cmp = 0, True
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            what = "a comparison like editing_rtc.rtc<0.2" if expect_cmp else "'&&' or '||'"
            raise FailOnError(f"fail-on: expected {what} at column {pos + 1}: {text[pos:pos + 30]!r}")
        if m["cmp"]:
            if not expect_cmp:
                raise FailOnError(f"fail-on: missing '&&' or '||' before {m['cmp']!r} (column {m.start('cmp') + 1})")
            groups[-1].append(_comparison(m["metric"], m["op"], m["num"]))
            expect_cmp = False
        else:
            if expect_cmp:
                raise FailOnError(f"fail-on: '{(m['and'] or m['or'])}' at column {m.start() + 1} has no comparison before it")
            if m["or"]:
                groups.append([])
            expect_cmp = True
        pos = m.end()
    if expect_cmp:
        raise FailOnError(f"fail-on: {text!r} ends without a comparison")
    return FailOn(tuple(tuple(g) for g in groups), text)


def _comparison(metric: str, op: str, num: str) -> Comparison:
    analyzer, _, name = metric.partition(".")
    analyzer = registry.normalise(analyzer)
    if analyzer != "total" and analyzer not in registry.ANALYZERS:
        known = ", ".join([*registry.ANALYZERS, "total"])
        raise FailOnError(f"fail-on: unknown analyzer {analyzer!r} in {metric!r} (known: {known})")
    if analyzer == "total" and name not in COUNTS:
        raise FailOnError(f"fail-on: 'total' has only counts ({', '.join(COUNTS)}), not {name!r}")
    return Comparison(analyzer, name, op, float(num))


def metrics_of(reports: Sequence[AnalyzerReport]) -> dict[str, dict[str, float]]:
    """analyzer → its aggregate scores plus counts; "total" → the counts summed."""
    out: dict[str, dict[str, float]] = {}
    total = dict.fromkeys(COUNTS, 0.0)
    for r in reports:
        counts = {
            "findings": len(r.findings),
            "failures": sum(f.level == "failure" for f in r.findings),
            "warnings": sum(f.level == "warning" for f in r.findings),
            "notices": sum(f.level == "notice" for f in r.findings),
            "fixes": sum(f.fix is not None for f in r.findings),
            "skipped": len(r.skipped),
            "errors": 1 if r.error else 0,
        }
        out[r.analyzer] = {**{k: float(v) for k, v in r.scores.items()}, **{k: float(v) for k, v in counts.items()}}
        for k, v in counts.items():
            total[k] += v
    out["total"] = total
    return out


# ============================================================================ the event
@dataclass(frozen=True)
class PullRequest:
    owner: str
    repo: str
    number: int
    head_sha: str
    base_sha: str
    title: str = ""
    html_url: str = ""
    draft: bool = False
    fork: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"


def load_event(path: str | os.PathLike[str] | None, event_name: str | None) -> PullRequest:
    if not path:
        raise ActionError("GITHUB_EVENT_PATH is not set: run inside a GitHub workflow or pass --event")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ActionError(f"cannot read the event file {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ActionError(f"the event file {path} is not JSON ({e.msg})") from None
    if event_name and event_name not in PR_EVENTS:
        raise ActionError(f"rtcbot action runs on pull_request events, not {event_name!r}")
    pr = payload.get("pull_request") if isinstance(payload, dict) else None
    if not isinstance(pr, dict):
        raise ActionError(f"the event in {path} has no pull_request: run the action on pull_request")
    try:
        full = payload["repository"]["full_name"]
        owner, _, repo = full.partition("/")
        head_repo = (pr.get("head") or {}).get("repo") or {}
        return PullRequest(
            owner=owner, repo=repo, number=int(pr.get("number") or payload["number"]),
            head_sha=str(pr["head"]["sha"]), base_sha=str(pr["base"]["sha"]),
            title=str(pr.get("title") or ""), html_url=str(pr.get("html_url") or ""),
            draft=bool(pr.get("draft")), fork=head_repo.get("full_name", full) != full,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ActionError(f"the pull_request event in {path} lacks {e}") from None


# ============================================================================ REST
class GitHubHTTPError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"GitHub answered {status}: {message}")
        self.status = status
        self.message = message


class GitHubREST:
    """The few REST calls the Action makes, with the Actions token (httpx)."""

    def __init__(self, api_url: str, token: str, *, timeout: float = 30.0, max_wait_s: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.max_wait_s = max_wait_s
        self.http = httpx.Client(
            base_url=api_url.rstrip("/"), timeout=timeout, transport=transport,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "rtcbot-action"},
        )

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        for attempt in range(4):
            try:
                r = self.http.request(method, url, **kw)
            except httpx.HTTPError as e:
                if attempt == 3:
                    raise GitHubHTTPError(0, f"{method} {url}: {e}") from None
                time.sleep(2**attempt)
                continue
            wait = self._retry_after(r)
            if wait is None or attempt == 3:
                break
            time.sleep(wait)
        if r.status_code >= 400:
            try:
                msg = str(r.json().get("message") or r.text[:200])
            except ValueError:
                msg = r.text[:200]
            raise GitHubHTTPError(r.status_code, msg)
        return r

    def _retry_after(self, r: httpx.Response) -> float | None:
        """Seconds to wait before retrying (rate limits, 5xx), or None for no retry."""
        if r.status_code in (403, 429):
            if "retry-after" in r.headers:
                try:
                    return min(float(r.headers["retry-after"]), self.max_wait_s)
                except ValueError:
                    return None
            if r.headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in r.headers:
                return min(max(0.0, float(r.headers["x-ratelimit-reset"]) - time.time()) + 1, self.max_wait_s)
            return None
        return 1.0 if r.status_code in (502, 503, 504) else None

    def paginate(self, url: str) -> Iterator[dict[str, Any]]:
        next_url: str | None = url
        params: dict[str, Any] | None = {"per_page": 100}
        while next_url:
            r = self.request("GET", next_url, params=params)
            data = r.json()
            if not isinstance(data, list):
                raise GitHubHTTPError(r.status_code, f"expected a list from {next_url}")
            yield from data
            next_url = r.links.get("next", {}).get("url")
            params = None  # the next link carries them

    def pr_files(self, pr: PullRequest) -> list[dict[str, Any]]:
        return list(self.paginate(f"/repos/{pr.full_name}/pulls/{pr.number}/files"))

    def review_comments(self, pr: PullRequest) -> list[dict[str, Any]]:
        return list(self.paginate(f"/repos/{pr.full_name}/pulls/{pr.number}/comments"))

    def file_at(self, pr: PullRequest, path: str) -> str | None:
        try:
            r = self.request("GET", f"/repos/{pr.full_name}/contents/{path}", params={"ref": pr.head_sha},
                             headers={"Accept": "application/vnd.github.raw+json"})
        except GitHubHTTPError:
            return None
        return r.text

    def create_check_run(self, pr: PullRequest, name: str, **fields: Any) -> int:
        body = {"name": name, "head_sha": pr.head_sha, "external_id": str(pr.number), **fields}
        return int(self.request("POST", f"/repos/{pr.full_name}/check-runs", json=body).json()["id"])

    def update_check_run(self, pr: PullRequest, run_id: int, **fields: Any) -> None:
        self.request("PATCH", f"/repos/{pr.full_name}/check-runs/{run_id}", json=fields)


# ============================================================================ publishing (pure)
def cut(text: str, limit: int, note: str = "\n\n… (cut to fit GitHub's limit)") -> str:
    """`text` in at most `limit` characters, cut at a line end, with a note when cut."""
    if len(text) <= limit:
        return text
    room = limit - len(note)
    head = text[:room]
    nl = head.rfind("\n")
    return (head[:nl] if nl > room // 2 else head) + note


def check_name(title: str) -> str:
    return CHECK_NAME_PREFIX + title


def check_title(report: AnalyzerReport) -> str:
    if report.error:
        return f"{report.name} could not run"
    figures = ", ".join(f"{k} {v:.2f}" for k, v in list(report.scores.items())[:3])
    n = len(report.findings)
    return f"{n} item{'s' if n != 1 else ''}" + (f" · {figures}" if figures else "")


def annotation(f: Finding) -> dict[str, Any] | None:
    if not f.path or not f.start_line:
        return None
    end = f.end_line if f.end_line and f.end_line >= f.start_line else f.start_line
    message = f.message or f.title
    if f.fix is not None:
        message += "\n\nProposed fix:\n" + f.fix.replacement
    out: dict[str, Any] = {
        "path": f.path, "start_line": f.start_line, "end_line": end,
        "annotation_level": f.level, "title": f.title[:ANNOTATION_TITLE_CHARS],
        "message": cut(message, ANNOTATION_MESSAGE_CHARS),
    }
    if f.evidence:
        out["raw_details"] = cut(json.dumps(f.evidence, ensure_ascii=False, indent=1), ANNOTATION_MESSAGE_CHARS)
    return out


def check_output(report: AnalyzerReport) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The check run's output (title, summary, text) and all its annotations."""
    summary = cut(render_markdown_report(report), MAX_OUTPUT_CHARS)
    text = "\n".join(render_evidence_markdown(f) for f in report.findings[:100])
    output = {"title": check_title(report), "summary": summary}
    if text:
        output["text"] = cut(text, MAX_OUTPUT_CHARS)
    return output, [a for a in (annotation(f) for f in report.findings) if a is not None]


def batches(items: Sequence[dict[str, Any]], size: int = ANNOTATIONS_PER_REQUEST) -> list[list[dict[str, Any]]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)] or [[]]


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


WORKFLOW_LEVEL = {"notice": "notice", "warning": "warning", "failure": "error"}
_SEVERITY = {"failure": 0, "warning": 1, "notice": 2}


def _priority(f: Finding) -> tuple[int, float]:
    """Most severe first; within a level, the lowest first score first."""
    first = next(iter(f.scores.values()), 0.0)
    return _SEVERITY.get(f.level, 3), first


def workflow_commands(reports: Sequence[AnalyzerReport]) -> tuple[list[str], int, int]:
    """`::warning file=…,line=…::msg` lines within the per-step limits: (lines, shown, left out)."""
    per_level: dict[str, int] = {}
    lines: list[str] = []
    located = [(r, f) for r in reports for f in r.findings if f.path and f.start_line]
    located.sort(key=lambda rf: _priority(rf[1]))
    for report, f in located:
        level = WORKFLOW_LEVEL.get(f.level, "notice")
        if per_level.get(level, 0) >= STEP_ANNOTATIONS_PER_LEVEL or len(lines) >= JOB_ANNOTATIONS:
            continue
        per_level[level] = per_level.get(level, 0) + 1
        assert f.path is not None and f.start_line is not None
        end = f.end_line if f.end_line and f.end_line >= f.start_line else f.start_line
        props = (f"file={_escape_property(f.path)},line={f.start_line},endLine={end},"
                 f"title={_escape_property(cut(f'{report.name}: {f.title}', 200, '…'))}")
        lines.append(f"::{level} {props}::{_escape_data(cut(f.message or f.title, 4000, '…'))}")
    return lines, len(lines), len(located) - len(lines)


def step_summary(pr: PullRequest, reports: Sequence[AnalyzerReport], *, mode_note: str,
                 fail_on: FailOn, matched: Sequence[str], missing: Sequence[str],
                 notes: Sequence[str] = ()) -> str:
    lines = [f"# rtcbot: {pr.full_name}#{pr.number}", ""]
    if pr.title:
        lines += [f"**{pr.title}** · head `{pr.head_sha[:12]}`", ""]
    lines += [mode_note, ""]
    if fail_on:
        verdict = ("**failed**: " + "; ".join(f"`{m}`" for m in matched)) if matched else "passed"
        lines += [f"fail-on `{fail_on.text}`: {verdict}", ""]
        if missing:
            lines += ["Not measured in this run (those comparisons count as false): "
                      + ", ".join(f"`{m}`" for m in missing), ""]
    lines += [f"> {n}" for n in notes] + ([""] if notes else [])
    body = "\n".join(render_markdown_report(r, max_items=50) for r in reports)
    text = "\n".join(lines) + "\n" + body
    # the limit is in bytes; cut by characters with room for multi-byte text
    while len(text.encode("utf-8")) > STEP_SUMMARY_BYTES:
        text = cut(text, int(len(text) * 0.9))
    return text


def output_values(reports: Sequence[AnalyzerReport], *, conclusion: str, annotations_mode: str,
                  sarif_file: str) -> dict[str, str]:
    out = {
        "conclusion": conclusion,
        "findings": str(sum(len(r.findings) for r in reports)),
        "annotations": annotations_mode,
        "scores": json.dumps({r.analyzer: r.scores for r in reports}, sort_keys=True),
        "sarif-file": sarif_file,
    }
    for r in reports:
        slug = r.analyzer.replace("_", "-")
        out[f"{slug}-findings"] = str(len(r.findings))
        for k, v in r.scores.items():
            out[f"{slug}-{re.sub(r'[^A-Za-z0-9]+', '-', k).strip('-')}"] = f"{v:.6g}"
    return out


def write_outputs(path: Path, values: dict[str, str]) -> None:
    """Append `name=value` (or the heredoc form for multi-line values) to GITHUB_OUTPUT."""
    with path.open("a", encoding="utf-8") as fh:
        for k, v in values.items():
            if "\n" in v:
                delim = f"rtcbot_{uuid.uuid4().hex}"
                fh.write(f"{k}<<{delim}\n{v}\n{delim}\n")
            else:
                fh.write(f"{k}={v}\n")


# ============================================================================ configuration
@dataclass
class RepoSettings:
    """The subset of `.github/rtcbot.yml` the Action reads: analyzers, ignore, fail_on."""

    analyzers: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    fail_on: str | None = None
    problem: str | None = None  # why the file was not used


def load_repo_settings(path: Path) -> RepoSettings:
    if not path.is_file():
        return RepoSettings()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        return RepoSettings(problem=f"{path}: not readable YAML ({str(e).splitlines()[0]}); the defaults apply")
    if not isinstance(data, dict):
        return RepoSettings(problem=f"{path}: expected a mapping; the defaults apply")
    out = RepoSettings()
    problems: list[str] = []
    raw = data.get("analyzers")
    if raw is not None:
        spec = ",".join(raw) if isinstance(raw, list) else raw if isinstance(raw, str) else None
        if isinstance(raw, dict):  # {name: true/false}
            spec = ",".join(k for k, on in raw.items() if on is True or (isinstance(on, dict) and on.get("enabled", True)))
        try:
            out.analyzers = registry.parse_names(spec) if spec is not None else None
            if spec is None:
                problems.append("'analyzers' must be a list, a comma-separated string or a mapping")
        except registry.UnknownAnalyzer as e:
            problems.append(f"analyzers: {e}")
    ignore = data.get("ignore", [])
    if isinstance(ignore, list) and all(isinstance(g, str) for g in ignore):
        out.ignore = ignore
    else:
        problems.append("'ignore' must be a list of globs")
    fail_on = data.get("fail_on", data.get("fail-on"))
    if fail_on is not None:
        if isinstance(fail_on, str):
            out.fail_on = fail_on
        else:
            problems.append("'fail_on' must be a string expression")
    if problems:
        out.problem = f"{path}: " + "; ".join(problems) + " (those settings use the defaults)"
    return out


# ============================================================================ the run
@dataclass
class ActionSettings:
    event_path: str | None
    event_name: str | None
    api_url: str
    token: str | None
    workspace: Path
    llm_factory: Callable[[], LLMClient]
    analyzers: str = ""
    config: str = ".github/rtcbot.yml"
    fail_on: str = ""
    sarif_file: str = ""
    test_command: str = ""
    step_summary_path: str | None = None
    output_path: str | None = None


@dataclass
class ActionResult:
    exit_code: int
    reports: list[AnalyzerReport]
    mode: str  # "check-runs" | "workflow-commands"
    matched: list[str]
    check_runs: dict[str, int] = field(default_factory=dict)


def _comments(rest: GitHubREST, pr: PullRequest) -> list[ReviewComment]:
    out = []
    for c in rest.review_comments(pr):
        line = c.get("line") or c.get("original_line") or 0
        if not c.get("path") or not isinstance(c.get("body"), str):
            continue
        out.append(ReviewComment(path=str(c["path"]), line=int(line), body=c["body"],
                                 author=str((c.get("user") or {}).get("login") or ""), id=c.get("id")))
    return out


def _file_loader(rest: GitHubREST, pr: PullRequest, workspace: Path) -> Callable[[str], str | None]:
    """The head's files: from the workspace when it is checked out at the head, else the API."""
    head_checked_out = _git_head(workspace) == pr.head_sha
    cache: dict[str, str | None] = {}

    def load(path: str) -> str | None:
        if path not in cache:
            local = (workspace / path).resolve()
            if head_checked_out and local.is_relative_to(workspace.resolve()) and local.is_file():
                cache[path] = local.read_text(encoding="utf-8", errors="replace")
            else:
                cache[path] = rest.file_at(pr, path)
        return cache[path]

    return load


def _git_head(workspace: Path) -> str | None:
    head = workspace / ".git" / "HEAD"
    try:
        ref = head.read_text().strip()
    except OSError:
        return None
    if ref.startswith("ref: "):
        try:
            return (workspace / ".git" / ref[5:]).read_text().strip()
        except OSError:
            return None
    return ref


def _abandon(rest: GitHubREST, pr: PullRequest, check_runs: dict[str, int], why: str) -> None:
    """Complete check runs left in progress when the run cannot finish (best effort)."""
    for run_id in check_runs.values():
        try:
            rest.update_check_run(pr, run_id, status="completed", conclusion="neutral", output={
                "title": "rtcbot could not finish", "summary": cut(f"The run stopped: {why}", MAX_OUTPUT_CHARS)})
        except GitHubHTTPError:
            pass


def run_action(s: ActionSettings, *, log: IO[str] | None = None, stdout: IO[str] | None = None) -> ActionResult:
    log = log or sys.stderr
    stdout = stdout or sys.stdout

    def say(msg: str) -> None:
        print(msg, file=log, flush=True)

    pr = load_event(s.event_path, s.event_name)
    if not s.token:
        raise ActionError("GITHUB_TOKEN is not set: pass `github-token` (default: the workflow's token)")
    if s.test_command and s.event_name == "pull_request_target":
        raise ActionError("test-command runs the pull request's code; refusing on pull_request_target")
    notes: list[str] = []
    repo = load_repo_settings(s.workspace / s.config) if s.config else RepoSettings()
    if repo.problem:
        notes.append(repo.problem)
        say(f"rtcbot: {repo.problem}")
    try:
        names = registry.parse_names(s.analyzers) if s.analyzers.strip() else (
            repo.analyzers or list(registry.DEFAULT_ANALYZERS))
    except registry.UnknownAnalyzer as e:
        raise ActionError(f"analyzers: {e}") from None
    fail_on = parse_fail_on(s.fail_on if s.fail_on.strip() else (repo.fail_on or ""))
    titles = {n: registry.get(n).title for n in names}

    rest = GitHubREST(s.api_url, s.token)
    try:
        # check runs first, in progress, so the PR shows that rtcbot is at work
        mode = "check-runs"
        check_runs: dict[str, int] = {}
        for n in names:
            try:
                check_runs[n] = rest.create_check_run(pr, check_name(titles[n]), status="in_progress")
            except GitHubHTTPError as e:
                if e.status not in (403, 404):
                    raise
                mode = "workflow-commands"
                why = ("this pull request comes from a fork, whose GITHUB_TOKEN is read-only" if pr.fork
                       else "give the workflow `permissions: checks: write`")
                say(f"rtcbot: this token cannot create check runs ({e.status}: {e.message}); {why}. "
                    f"Falling back to workflow-command annotations (at most {STEP_ANNOTATIONS_PER_LEVEL} "
                    "per level) and the step summary.")
                break
        say(f"rtcbot: {pr.full_name}#{pr.number} at {pr.head_sha[:12]}: {', '.join(names)}")
        try:
            files = rest.pr_files(pr)
            changes: ChangeSet = parse_github_files(files, ignore=(*DEFAULT_IGNORES, *repo.ignore))
            comments = _comments(rest, pr) if "crscore" in names else []
            ctx = AnalysisContext(llm_factory=s.llm_factory, comments=comments,
                                  file_loader=_file_loader(rest, pr, s.workspace),
                                  test_command=s.test_command or None)
            reports = run_all(names, changes, ctx)
        except BaseException as e:
            _abandon(rest, pr, check_runs, f"{type(e).__name__}: {e}")
            raise
        metrics = metrics_of(reports)
        matched, missing = fail_on.evaluate(metrics)
        failed_analyzers = {c.analyzer for g in fail_on.any_of if " && ".join(map(str, g)) in matched for c in g}
        conclusion = "failure" if matched else ("success" if fail_on else "neutral")

        if mode == "check-runs":
            for r in reports:
                run_id = check_runs.get(r.analyzer)
                if run_id is None:
                    continue
                output, annotations = check_output(r)
                concl = "failure" if (r.analyzer in failed_analyzers or "total" in failed_analyzers) else "neutral"
                for i, batch in enumerate(batches(annotations)):
                    fields: dict[str, Any] = {"output": {**output, "annotations": batch}}
                    if i == 0:
                        fields.update(status="completed", conclusion=concl)
                    rest.update_check_run(pr, run_id, **fields)
            mode_note = (f"Posted {len(check_runs)} check run(s): "
                         + ", ".join(check_name(titles[n]) for n in names) + ".")
        else:
            lines, shown, left = workflow_commands(reports)
            for line in lines:
                print(line, file=stdout, flush=True)
            why = ("a pull request from a fork gets a read-only token" if pr.fork
                   else "the workflow needs `permissions: checks: write`")
            mode_note = (f"**This token cannot create check runs** ({why}), so the findings are "
                         f"workflow-command annotations: {shown} shown"
                         + (f", {left} more only in this summary (GitHub shows at most "
                            f"{STEP_ANNOTATIONS_PER_LEVEL} per level and step)." if left else "."))
            say("rtcbot: " + mode_note.replace("**", ""))

        sarif_written = ""
        if s.sarif_file:
            from analyzers.sarif import render_sarif

            target = (s.workspace / s.sarif_file) if not Path(s.sarif_file).is_absolute() else Path(s.sarif_file)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(render_sarif(reports), encoding="utf-8")
            sarif_written = str(target)
            say(f"rtcbot: SARIF written to {target}")

        summary = step_summary(pr, reports, mode_note=mode_note, fail_on=fail_on, matched=matched,
                               missing=missing, notes=notes)
        if s.step_summary_path:
            with open(s.step_summary_path, "a", encoding="utf-8") as fh:
                fh.write(summary + "\n")
        else:
            print(summary, file=stdout)
        if s.output_path:
            write_outputs(Path(s.output_path), output_values(
                reports, conclusion=conclusion, annotations_mode=mode, sarif_file=sarif_written))
        if missing:
            say("rtcbot: fail-on: not measured in this run: " + ", ".join(missing))
        exit_code = 0
        if matched:
            say("rtcbot: fail-on matched: " + "; ".join(matched))
            exit_code = 1
        elif reports and all(r.error for r in reports):
            for err in dict.fromkeys(r.error for r in reports if r.error):
                say(f"rtcbot: error: {err}")
            exit_code = 1
        return ActionResult(exit_code, reports, mode, matched, check_runs)
    finally:
        rest.close()

