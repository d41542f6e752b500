"""Issue 27's first "Done when": a model whose every answer is hostile (mentions, hidden links,
images, HTML, fences, `</details>`), a hostile commenter, a hostile file name and a hostile
pull-request title go through the App, the Action and the CLI; every body published, parsed
with a CommonMark parser, has no live mention, no link to the planted host behind other text,
no image and no raw HTML but rtcbot's own. Plain-text fields (titles, annotation messages, SARIF `text`) carry
no mention.

The dashboard (HTML, Jinja's autoescape) shows a hostile path and finding title as text.

The review analyzer is in every run: its comment (the hostile answer) is kept by CRScore, as the
claims it is scored against are hostile too, and goes out in a PR review with its CRScore.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

from bot.app.runtime import Runtime
from bot.app.web import create_app
from bot.entry import main
from bot.store.schema import CheckRunRow, FindingRow
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.bot.dashboard.support import EDITING_RTC, dashboard_settings, repository_id, sign_in
from tests.bot.test_action import EVENT, TOKEN, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, last_user_text
from tests.security.markdown_audit import MENTION, Audit, audit, bodies_of
from tests.security.test_untrusted_text import HOST, HOSTILE, HOSTILE_LINES

PATH = "calc/mean.py"
HOSTILE_PATH = "calc/@octo-org/admins/[docs](https:/evil.example)<img>`x`.py"  # a name the PR chose
HUNK = ("@@ -1,3 +1,4 @@\n def mean(values):\n-    total = 0\n"
        "+    total = sum(values)\n+    return total / len(values)\n \n")
DIFF = "".join(f"--- a/{p}\n+++ b/{p}\n{HUNK}" for p in (PATH, HOSTILE_PATH))
ADDED = 2  # a line the hunk adds: where the comments sit
COMMENT = f"{HOSTILE}\n\n{HOSTILE_LINES}"  # the hostile commenter's review comment
TITLE = "Fix @octo-org/security-team ![t](https://evil.example/t.png) <img src=x> </details>"
REVIEW = f"{HOSTILE} Guard the empty list."  # the review analyzer's candidate, one line
CLAIMS = (f"Summary of changes:\n1. {REVIEW}\n2. {' '.join(HOSTILE_LINES.splitlines())}.\n\n"
          f"Implications:\n1. {REVIEW}\n")
ANALYZERS = ["editing_rtc", "crscore", "review"]


def hostile(req: dict[str, Any]) -> str | list[str]:
    """Every answer hostile, in the shape each prompt asks for."""
    text, n = last_user_text(req), int(req.get("n") or 1)
    if "Write ONE review comment" in text:  # the review analyzer: "Line <n>: <comment>"
        return [f"Line {ADDED}: {REVIEW}"] * n
    if "Summary of changes" in text:  # CRScore's claims
        return [CLAIMS] * n
    return [f"{HOSTILE}\n```\n{HOSTILE_LINES}\n```\n{HOSTILE_LINES}"] * n  # descriptions, regenerations


class Published:
    """What one surface published: Markdown bodies and plain-text fields."""

    def __init__(self) -> None:
        self.markdown: list[tuple[str, str]] = []  # (where, body)
        self.plain: list[tuple[str, str]] = []

    def check_runs(self, gh: FakeGitHub) -> None:
        for r in gh.writes():
            out = (r.body or {}).get("output") or {}
            self.plain += [("check-run title", str(out.get("title", "")))]
            self.markdown += [(f"check-run {k}", str(out[k])) for k in ("summary", "text") if k in out]
            for a in out.get("annotations") or []:
                self.plain += [(f"annotation {k}", str(a[k])) for k in ("title", "message", "raw_details") if k in a]

    def reviews(self, gh: FakeGitHub) -> None:
        for review in gh.reviews:
            self.markdown += [("review body", str(review["body"]))]
            self.markdown += [("review comment", str(c["body"])) for c in review["comments"]]

    def sarif(self, log: dict[str, Any]) -> None:
        for run in log["runs"]:
            for res in run.get("results", []):
                self.markdown.append(("sarif markdown", res["message"]["markdown"]))
                self.plain.append(("sarif text", res["message"]["text"]))
            notes = [n for inv in run.get("invocations", []) for n in inv.get("toolExecutionNotifications", [])]
            self.plain += [("sarif notification", s) for n in notes for s in bodies_of(n.get("message"))]

    def verdict(self) -> tuple[Audit, list[str]]:
        """What every body can do, together, and where (the bodies that are not inert)."""
        found, where = Audit(), []
        for name, body in self.markdown:
            one = audit(body, HOST)
            found.add(one)
            where += [f"{name}: {one}\n{body[:3000]}"] if not one.clean else []
        for name, text in self.plain:
            live = [m.group() for m in MENTION.finditer(text)]
            found.mentions += live
            where += [f"{name}: {live}\n{text[:3000]}"] if live else []
        return found, where

    def assert_inert(self, *, review_comments: int = 1) -> None:
        found, where = self.verdict()
        assert found.clean, "\n\n".join(where)
        everything = "\n".join(b for _, b in self.markdown + self.plain)
        # the hostile text did reach the outputs, defused: the test looked at something
        assert "@\u2060octo-org/security-team" in everything and HOST in everything
        assert "&lt;/details>" in everything and "\\[the docs\\]" in everything
        assert "octo-org/admins/" in everything  # the hostile file name, shown
        kept = [b for w, b in self.markdown if w == "review comment" and "rtcbot review · CRScore Rel" in b]
        assert len(kept) >= review_comments, [w for w, _ in self.markdown]


@pytest.fixture
def llm(scripted_llm: Callable[..., ScriptedLLM]) -> Iterator[ScriptedLLM]:
    yield scripted_llm(hostile)


def _pull_request(gh: FakeGitHub, number: int, head_sha: str | None = None) -> None:
    gh.add_pr(number, diff_text=DIFF, head_sha=head_sha)
    gh.add_comment(number, PATH, ADDED, COMMENT, user="mallory")


@pytest.mark.slow
@pytest.mark.model  # CRScore's embeddings
def test_the_app_publishes_hostile_text_inert(tmp_path: Path, fake_github: Callable[..., FakeGitHub],
                                              llm: ScriptedLLM) -> None:
    gh = fake_github()
    _pull_request(gh, 5)
    settings = make_settings(tmp_path, gh, llm, analyzers=ANALYZERS, reporters=["pr-review"])
    rt = Runtime(settings)
    try:
        with serve(create_app(settings, runtime=rt)) as url:
            event = gh.pr_event("opened", 5)
            event["pull_request"]["title"] = TITLE
            assert deliver(url, "pull_request", event).status_code in (200, 202)
            drain(rt)
    finally:
        rt.store.close()
    assert {r["name"] for r in gh.runs()} == {"rtcbot / EditingRTC", "rtcbot / CRScore", "rtcbot / Review"}
    assert all(r["status"] == "completed" for r in gh.runs())
    seen = Published()
    seen.check_runs(gh)
    seen.reviews(gh)
    seen.assert_inert()


@pytest.mark.slow
@pytest.mark.model  # CRScore's embeddings
def test_the_action_publishes_hostile_text_inert(tmp_path: Path, fake_github: Callable[..., FakeGitHub],
                                                 llm: ScriptedLLM) -> None:
    payload = json.loads(EVENT.read_text(encoding="utf-8"))
    payload["pull_request"]["title"] = TITLE
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    gh = fake_github(repo=payload["repository"]["full_name"])
    gh.grant_token(TOKEN)
    _pull_request(gh, payload["pull_request"]["number"], payload["pull_request"]["head"]["sha"])
    proc = run_action(gh, llm, tmp_path, event=event, analyzers="editing-rtc,crscore,review",
                      sarif_file="out/rtcbot.sarif", reporters="pr-review")
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = Published()
    seen.check_runs(gh)
    seen.reviews(gh)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "Fix @\u2060octo-org/security-team" in summary  # the title, shown and defused
    seen.markdown.append(("step summary", summary))
    seen.sarif(json.loads((tmp_path / "workspace" / "out" / "rtcbot.sarif").read_text(encoding="utf-8")))
    seen.assert_inert()


@pytest.mark.slow
@pytest.mark.model  # CRScore's embeddings
def test_the_cli_prints_hostile_text_inert(tmp_path: Path, llm: ScriptedLLM) -> None:
    patch = tmp_path / "change.diff"
    patch.write_text(DIFF, encoding="utf-8")
    comments = tmp_path / "comments.json"
    comments.write_text(json.dumps([{"path": PATH, "line": ADDED, "body": COMMENT, "author": "mallory"}]))
    seen = Published()
    for fmt in ("markdown", "github-review", "sarif"):
        res = CliRunner().invoke(main, ["review", str(patch), "--comments", str(comments), "--analyzers",
                                        "editing-rtc,crscore,review", "--format", fmt,
                                        "--llm-base-url", llm.base_url, "--model", llm.model])
        assert res.exit_code == 0, res.output[-3000:]
        out = res.stdout
        if fmt == "markdown":
            seen.markdown.append(("--format markdown", out))
        elif fmt == "github-review":
            review = json.loads(out)
            seen.markdown += [("review body", review["body"])]
            seen.markdown += [("review comment", c["body"]) for c in review["comments"]]
        else:
            seen.sarif(json.loads(out))
    assert "· kept 1 ·" in seen.markdown[0][1]  # the filtered reviewer's comment was kept
    seen.assert_inert()


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


@pytest.mark.slow  # the dashboard on a seeded store, per path: seconds of CPU
@pytest.mark.parametrize("hostile_path", [f"src/{HOSTILE[:200]}.py", "src/<img src=https://evil.example/x.png>.py"])
def test_the_dashboard_shows_a_hostile_path_and_title_as_text(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub], hostile_path: str) -> None:
    gh = fake_github()
    app = create_app(dashboard_settings(tmp_path, gh))
    rt: Runtime = app.extensions["rtcbot"]
    rid = repository_id(gh.repo)  # the dashboard serves rows by GitHub's ids
    rt.store.repositories.seen(rid, gh.installation_id, gh.repo, at=0.0)
    with rt.store.db.session() as s:
        run = CheckRunRow(repository_id=rid, installation_id=gh.installation_id, repo=gh.repo, name=EDITING_RTC,
                          head_sha="a" * 40, github_id=5001, pr_number=1,
                          status="completed", conclusion="neutral", scores={"rtc": 0.0, "lift": 0.0, "hunks": 1.0})
        s.add(run)
        s.flush()
        s.add(FindingRow(check_run_id=run.id, analyzer="editing_rtc", path=hostile_path, start_line=1, end_line=2,
                         key="h", scores={"rtc": 0.0, "lift": 0.0}, data={"title": HOSTILE}))
    c = app.test_client()
    sign_in(c, gh, f"/dashboard/{gh.repo}")
    page = c.get(f"/dashboard/{gh.repo}")
    assert page.status_code == 200
    assert "&lt;img src=" in page.text  # the path is on the page, as text
    parsed = _Tags()
    parsed.feed(page.text)
    assert [t for t, _ in parsed.tags if t in ("img", "script", "details", "iframe")] == []
    hosts = {urlsplit(str(a.get("href"))).netloc for t, a in parsed.tags if t == "a"}
    assert HOST not in hosts and not any(HOST in h for h in hosts)
