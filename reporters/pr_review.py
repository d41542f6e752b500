"""Committable suggestions and rtcbot's own review comments, as one pull request review.

A fix is *verified* when Semgrep's re-scan of the file with it applied is clean (AutoFix proposes no fix
otherwise) and Patched RTC passed (`rtc_pass` 1). Each becomes a review comment with a GitHub
`suggestion` block on the flagged lines — one line or several, always lines a hunk of the diff
shows on the head's side (GitHub refuses others; those stay in the check run). All of one
publish go in ONE review on the head SHA. The repository's `suggestions` (.github/rtcbot.yml)
chooses: `verified` (the default), `all` (unverified fixes too, marked so) or `off`.

Nothing is posted twice: every comment carries a marker made of the file, the rule and the
fix (the lines it replaces and its replacement, not their numbers), and a suggestion whose
marker is already among the pull request's review comments is not posted again — after a
re-run, or a push that moved or left its lines alone. A push that changed the flagged lines
gives another fix, hence a new suggestion; GitHub marks the old one outdated.

The findings of an analyzer that declares `posts_comments` (rtcbot's own review comments) go in
the same review as plain comments on their line, each with its scores and a marker made of the
file and the comment's text, so that a re-run or a push posts none of them twice. They are
posted whatever `suggestions` says (that setting is about fixes; the comments come only when
such an analyzer is on).

The words are the analyzers' own where they give them (analyzers/presentation.py: `in_review`
for the review's body, `fix_note` under a fix, `comment_note` under a comment), through the
registry; this module names no analyzer.

The caller hands in what it already read: the lines the diff shows (`Target.diff`, the one diff
filter: a comment goes only where it shows every line, in one hunk) and the pull request's
review comments (`Sinks.review_comments`, for the markers). The reporter posts through any
client with `create_review` and `wrote` (bot.github's).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from analyzers import registry
from analyzers.report import AnalyzerReport, Finding
from reporters import verdict
from reporters.base import Reporter, ReporterError, Sinks, Target, need
from reporters.diff_filter import DiffFilter
from reporters.untrusted import code, inert
from reporters.verdict import Gate

Mode = Literal["off", "verified", "all"]
MARKER = "<!-- rtcbot:suggestion:{key} -->"
MAX_COMMENT_BYTES = 60_000  # GitHub's review comment body limit is 65,536 characters


Comments = Callable[[], Sequence[Mapping[str, Any]]]  # the pull request's review comments, as GitHub lists them


class ReviewAPI(Protocol):
    def create_review(self, repo: str, number: int, body: dict[str, Any]) -> dict[str, Any]: ...

    def wrote(self, item: Mapping[str, Any]) -> bool: ...


@dataclass(frozen=True)
class Suggestion:
    finding: Finding
    key: str

    @property
    def is_comment(self) -> bool:
        """A review comment of an analyzer that posts them (no fix, no suggestion block)."""
        return self.finding.fix is None

    @property
    def path(self) -> str:
        f = self.finding
        return f.fix.path if f.fix is not None else str(f.path)

    @property
    def lines(self) -> tuple[int, int]:
        """The head's lines the comment sits on (first, last)."""
        f = self.finding
        if f.fix is not None:
            return f.fix.start_line, f.fix.end_line
        end = f.end_line or f.start_line or 0
        return f.start_line or end, end


def verified(f: Finding) -> bool:
    return f.fix is not None and f.scores.get("rtc_pass") == 1.0


def is_review_comment(f: Finding) -> bool:
    """A finding without a fix, on a line, of an analyzer whose findings are review comments
    (it declares `posts_comments`)."""
    return f.fix is None and bool(f.path) and bool(f.start_line) and registry.posts_comments(f.analyzer)


def key_of(f: Finding) -> str:
    """The fix's identity across re-runs and pushes: file, rule, the lines it replaces (its
    diff) and its replacement — not the line numbers, which a push above it moves. A review
    comment's: its file and its text."""
    if f.fix is None:
        parts = [str(f.path), f.analyzer, f.message]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]
    parts = [f.fix.path, f.rule_id or f.analyzer, f.fix.diff, f.fix.replacement]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def candidates(reports: Sequence[AnalyzerReport], mode: Mode = "verified") -> list[Suggestion]:
    """The fixes to suggest (as `mode` says) and the review comments to post, once each, in
    report order."""
    out: dict[str, Suggestion] = {}
    for report in reports:
        for f in report.findings:
            if f.fix is None:
                if not is_review_comment(f):
                    continue
            elif mode == "off" or (mode == "verified" and not verified(f)):
                continue
            key = key_of(f)
            out.setdefault(key, Suggestion(f, key))
    return list(out.values())


def review_comment_body(s: Suggestion) -> str:
    f = s.finding
    note, about = registry.comment_note(f) or (f"rtcbot {registry.title(f.analyzer)}", [])
    if about:  # texts a model wrote
        note += " · about: " + inert("; ".join(m[:120] for m in about[:2]))
    marker = MARKER.format(key=s.key)
    text = inert(f.message, block=True)  # a model's comment: literal text, it speaks for no one
    room = MAX_COMMENT_BYTES - len(marker.encode()) - len(note.encode()) - 16
    if len(text.encode()) > room:
        text = text.encode()[:room].decode(errors="ignore") + " …"
    return f"{text}\n\n<sub>{note}</sub>\n{marker}"


def comment_body(s: Suggestion) -> str:
    if s.is_comment:
        return review_comment_body(s)
    f, fix = s.finding, s.finding.fix
    assert fix is not None
    rule = f" ({code(f.rule_id)})" if f.rule_id else ""
    title = inert(f.title)
    proof = registry.fix_note(f) or ("Verified by its analyzer's checks." if verified(f)
                                      else "Not verified: read it closely before you commit it.")
    body = "\n\n".join(x for x in (f"**{title}**{rule}", inert(f.message, block=True), fix.suggestion, proof) if x)
    marker = MARKER.format(key=s.key)
    room = MAX_COMMENT_BYTES - len(marker.encode()) - 1
    if len(body.encode()) > room:  # a suggestion cut short would commit broken code: none then
        body = f"**{title}**{rule}\n\nThe proposed fix is too long for a review comment; see the check run."
    return f"{body}\n{marker}"


def comment_of(s: Suggestion) -> dict[str, Any]:
    start, end = s.lines
    c: dict[str, Any] = {"path": s.path, "line": end, "side": "RIGHT", "body": comment_body(s)}
    if start < end:
        c.update(start_line=start, start_side="RIGHT")
    return c


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _said(name: str, fixes: int, comments: int, first: bool) -> str:
    """One analyzer's sentence in the review's body: its own words, else generic ones."""
    words = registry.in_review(name, fixes + comments, first)
    if words is not None:
        return words
    what = " and ".join(([_plural(fixes, "fix", "fixes") + " you can commit"] if fixes else [])
                        + ([_plural(comments, "review comment", "review comments")] if comments else []))
    return f"rtcbot {registry.title(name)}: {what}." if first else f"And {what} by rtcbot {registry.title(name)}."


def review_body(posted: Sequence[Suggestion], outside: Sequence[Suggestion] = (),
                reports: Sequence[AnalyzerReport] = ()) -> str:
    """The review's body: the verdict (reporters/verdict.py) of `reports`, then per analyzer
    (those with fixes first) what it carries of it, then how many more touch lines the diff
    does not show, when fixes are posted."""
    counts: dict[str, list[int]] = {}
    for s in sorted(posted, key=lambda s: s.is_comment):
        counts.setdefault(s.finding.analyzer, [0, 0])[s.is_comment] += 1
    text = " ".join(_said(name, fixes, comments, i == 0) for i, (name, (fixes, comments)) in enumerate(counts.items()))
    if outside and any(not s.is_comment for s in posted):
        runs = list(dict.fromkeys(registry.title(s.finding.analyzer) for s in outside))
        text += (f" {len(outside)} more touch lines this pull request does not change, so GitHub cannot take "
                 f"them as suggestions: they are in the {' and '.join(runs)} check run{'s' if len(runs) > 1 else ''}.")
    return f"{verdict.markdown(reports)}\n\n{text}" if reports else text


def by_a_bot(comment: Mapping[str, Any]) -> bool:
    user = comment.get("user")
    return isinstance(user, Mapping) and user.get("type") == "Bot"


def plan(target: Target, suggestions: Sequence[Suggestion], diff: DiffFilter,
         existing: Sequence[Mapping[str, Any]],
         wrote: Callable[[Mapping[str, Any]], bool] = by_a_bot,
         reports: Sequence[AnalyzerReport] = ()) -> tuple[dict[str, Any] | None, int, int]:
    """(the review request body, or None when there is nothing new; suggestions left out as
    already posted; suggestions left out as outside the diff: `diff` must show every line of
    one, in one hunk). Only the markers in comments rtcbot wrote (`wrote`: the client's; by
    default any bot's) count as posted: a person or another bot could paste a marker into
    theirs to hide a suggestion."""
    posted = "\n".join(str(c.get("body") or "") for c in existing if wrote(c))
    new: list[Suggestion] = []
    outside: list[Suggestion] = []
    old = 0
    for s in suggestions:
        start, end = s.lines
        if MARKER.format(key=s.key) in posted:
            old += 1
        elif not diff.shows(s.path, start, end):
            outside.append(s)
        else:
            new.append(s)
    if not new:
        return None, old, len(outside)
    body = {"commit_id": target.head_sha, "event": "COMMENT", "body": review_body(new, outside, reports),
            "comments": [comment_of(s) for s in new]}
    return body, old, len(outside)


NOTHING_TO_POST = ("nothing to post: no verified fix and no review comment to suggest, "
                   "so the pull request would get no review")


def render_review(reports: list[AnalyzerReport], gate: Gate | None = None) -> str:
    """The review request body the reporter would post for `reports` (verified fixes), as
    JSON, for a dry run (`rtcbot review --format github-review`): no head SHA, and no check
    that the lines are in a pull request's diff (GitHub refuses comments on lines outside it).
    With nothing to suggest, no event and a `note` saying that nothing would be posted."""
    suggestions = candidates(reports)
    if not suggestions:  # the reporter posts no review: the dry run says so, not an empty body
        note = f"{verdict.markdown(reports, gate)}\n\n{NOTHING_TO_POST}".strip()  # the verdict first, still
        return json.dumps({"event": None, "body": "", "comments": [], "note": note}, indent=2, ensure_ascii=False)
    body = f"{verdict.markdown(reports, gate)}\n\n{review_body(suggestions)}".strip()
    return json.dumps({"event": "COMMENT", "body": body,
                       "comments": [comment_of(s) for s in suggestions]}, indent=2, ensure_ascii=False)


class PullRequestReviewReporter(Reporter):
    """Posts the verified fixes and the review comments of the reports it is given as one
    review when flushed; the number of comments posted."""

    name = "pr-review"

    def __init__(self, client: ReviewAPI, *, mode: Mode = "verified", comments: Comments | None = None) -> None:
        self.client, self.mode, self.comments = client, mode, comments
        self.target = Target()
        self.reports: list[AnalyzerReport] = []
        self.sent: dict[str, Any] | None = None  # the last review request body
        self.posted: list[Suggestion] = []  # what that review suggested

    @classmethod
    def from_sinks(cls, sinks: Sinks) -> PullRequestReviewReporter:
        mode = sinks.suggestions
        if mode not in ("off", "verified", "all"):
            raise ReporterError(f"suggestions: {mode!r} is not one of off, verified, all")
        return cls(need(sinks.github, cls.name, "a GitHub client (the App, or the Action's token)"),
                   mode=mode, comments=sinks.review_comments)  # type: ignore[arg-type]

    def start(self, target: Target, analyzers: Mapping[str, str]) -> None:
        self.target, self.reports = target, []

    def publish(self, report: AnalyzerReport) -> None:
        self.reports.append(report)

    def flush(self) -> int:
        suggestions = candidates(self.reports, self.mode)
        t = self.target
        if not suggestions or not t.repo or t.number is None:
            return 0
        diff = need(t.diff, self.name, "the lines the pull request's diff shows (Target.diff)")
        existing = need(self.comments, self.name, "the pull request's review comments (Sinks.review_comments)")()
        body, _, _ = plan(t, suggestions, diff, existing, self.client.wrote, self.reports)
        if body is None:
            return 0
        self.client.create_review(t.repo, t.number, body)
        self.sent = body
        posted = {c["body"] for c in body["comments"]}
        self.posted = [s for s in suggestions if comment_body(s) in posted]
        return len(body["comments"])

    def published(self) -> list[dict[str, Any]]:
        """What the last review suggested, for the record of what people took (bot/app/feedback.py):
        its committable suggestions (plain review comments suggest no lines)."""
        out = []
        for s in self.posted:
            f, fix = s.finding, s.finding.fix
            if fix is None:
                continue
            rtc = f.scores.get("rtc_pass")
            out.append({"analyzer": f.analyzer, "kind": "suggestion", "key": s.key, "path": fix.path,
                        "start_line": fix.start_line, "end_line": fix.end_line, "replacement": fix.replacement,
                        "rtc": None if rtc is None else ("pass" if rtc == 1.0 else "fail")})
        return out
