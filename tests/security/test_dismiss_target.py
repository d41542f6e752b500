"""Dismissals say what they dismiss (issue #38, item 4), on the App through the fake GitHub.

Attack covered: `@rtcbot ignore this` in a thread on one of rtcbot's findings resolved the
thread's marker, and when the marker matched nothing — the pull request's author had changed
those lines — fell back to whatever finding now sat at the thread's original line, answering
only 👍. The author moves the dangerous call (`run_user()`'s) under the thread that was about
the harmless one (`cleanup()`'s), and a maintainer's one-click confirmation dismisses it. Now
`ignore this` resolves only through the thread's own marker: a marker that matches no finding
dismisses nothing and the reply says so in words. A dismissal that is made names the rule, the
path, the line and the fingerprint it dismissed; the twin stays a finding, and the gate fails on
it at the next push. An old-style fingerprint is refused, naming the findings it meant. The
Action's `ignore` (an entry to commit) names the finding of its check runs that the entry covers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from analyzers.report import Finding
from bot.core.feedback import keys_in
from reporters.pr_review import key_of
from tests.bot.app_support import App
from tests.bot.test_action_comments import _github as action_github
from tests.bot.test_action_comments import command as action_command
from tests.bot.test_action_comments import replies as action_replies
from tests.bot.test_jobs import finished
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import ScriptedLLM, varied
from tests.security.markdown_audit import audit
from tests.security.test_fail_closed import pr_files
from tests.security.test_fingerprints import CLEANUP, RUN_USER, TWINS, old_style
from tests.security.test_semgrep_gates import _semgrep
from tests.security.test_untrusted_text import HOST

pytestmark = pytest.mark.slow
AUTOFIX = "rtcbot / AutoFix"
RULE = "python-shell-injection"
MAINTAINER = "carol"


def _opened(w: App, number: int, text: str) -> tuple[dict[str, Any], list[Finding]]:
    """Pull request `number` adding app.py with `text`, analysed: its AutoFix check run and the
    findings the App stored."""
    pr = w.gh.add_pr(number, files=pr_files(("app.py", text)))
    w.gh.set_file("app.py", text, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("opened", number))
    w.run()
    run = finished(w, AUTOFIX, sha=pr.head_sha)
    row = w.rt.store.checks.get(w.gh.repo, AUTOFIX, pr.head_sha)
    assert row is not None
    return run, sorted((Finding.from_dict(dict(f.data)) for f in w.rt.store.checks.findings(row.id)),
                       key=lambda f: f.start_line or 0)


def _pushed(w: App, number: int, text: str) -> dict[str, Any]:
    pr = w.gh.push(number, files=pr_files(("app.py", text)))
    w.gh.set_file("app.py", text, ref=pr.head_sha)
    w.deliver("pull_request", w.gh.pr_event("synchronize", number))
    w.run()
    return finished(w, AUTOFIX, sha=pr.head_sha)


# the fix uses shlex, which the files import: AutoFix refuses a fix that leaves a name undefined
FIXED = "```python\n    subprocess.call(shlex.split(cmd))\n```"


def fixer(req: dict[str, Any]) -> str | list[str]:
    """A model whose fix passes the re-scan and Patched RTC, so the App posts it as a suggestion
    (a review thread marked with the finding's key)."""
    system = str(req["messages"][0]["content"])
    if system.startswith("Task: describe"):
        return "Split the command into a list and call it without a shell."
    if system.startswith("Task: apply") or "Semgrep rule" in str(req["messages"][-1]["content"]):
        return FIXED
    return varied(req)


def _thread(w: App, number: int, line: int) -> dict[str, Any]:
    """rtcbot's suggestion at app.py:`line` (a thread's first comment, with its marker)."""
    return next(c for c in w.gh.pulls[number].comments if c["user"]["login"] == "rtcbot[bot]"
                and c.get("line") == line and keys_in([c["body"]]))


def _in_thread(w: App, number: int, top: dict[str, Any], command: str) -> list[str]:
    """The maintainer's `command` in the thread of `top`; what the App answers there."""
    said = w.gh.reply_in_thread(number, top, command, user=MAINTAINER)
    w.deliver("pull_request_review_comment", w.gh.review_comment_event(number, said))
    w.run()
    return [c["body"] for c in w.gh.pulls[number].comments
            if c["user"]["login"] == "rtcbot[bot]" and c.get("in_reply_to_id") == top["id"]]


@pytest.fixture
def app(apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> App:
    """The App with AutoFix and `fail_on: autofix.findings>0`, a model whose fixes verify, and a
    maintainer (write access)."""
    _semgrep()
    w = apps(fake_github(), responder=fixer, analyzers=["autofix"])
    w.gh.set_file(".github/rtcbot.yml", 'fail_on: "autofix.findings>0"\n')
    w.gh.permissions[MAINTAINER] = "write"
    return w


def test_ignore_this_on_a_thread_whose_marker_matches_nothing_dismisses_nothing_and_says_so(app: App) -> None:
    w = app
    # rtcbot's suggestion on cleanup()'s call; the author then puts run_user()'s call at that line
    _opened(w, 41, f"import shlex\nimport subprocess\n\n{CLEANUP}")
    top = _thread(w, 41, 6)
    run = _pushed(w, 41, f"import shlex\nimport subprocess\n\n{RUN_USER}")
    assert [a["start_line"] for a in run["annotations"]] == [6] and run["conclusion"] == "failure"
    answers = _in_thread(w, 41, top, "@rtcbot ignore this because Won't fix: constant command")
    assert w.rt.store.dismissals.listed(w.gh.repository_id, w.gh.repo) == []  # nothing dismissed ...
    [answer] = answers
    assert "nothing is dismissed" in answer  # ... and the reply says so, in words
    assert answer.startswith("The finding this thread was opened on is not among rtcbot's findings at the head")


def test_ignore_this_dismisses_the_threads_own_finding_names_it_and_the_twin_still_fails_the_gate(app: App) -> None:
    w = app
    run, (cleanup, run_user) = _opened(w, 43, TWINS)
    assert [a["start_line"] for a in run["annotations"]] == [6, 11] and run["conclusion"] == "failure"
    top = _thread(w, 43, 6)
    assert keys_in([top["body"]]) == [key_of(cleanup)] != [key_of(run_user)]
    [answer] = _in_thread(w, 43, top, "@rtcbot ignore this because the command is a constant")
    fp = cleanup.fingerprint()
    [d] = w.rt.store.dismissals.listed(w.gh.repository_id, w.gh.repo)
    assert (d.target, d.kind) == (fp, "finding") and fp != run_user.fingerprint()
    assert answer.startswith(f"Dismissed: the finding with fingerprint `{fp}`.")
    assert f"- `{RULE}` at `app.py:6` in `function cleanup`, fingerprint `{fp}`" in answer  # rule, path, line, fp
    assert "Reason: the command is a constant" in answer
    assert audit(answer, HOST).clean

    again = _pushed(w, 43, TWINS + '\n\ndef again(request):\n    subprocess.call(request.form["cmd"], shell=True)\n')
    assert [a["start_line"] for a in again["annotations"]] == [11, 15]  # the twin, and a copy added later
    assert again["conclusion"] == "failure"
    assert "app.py:6" in again["output"]["summary"] and f"fingerprint {fp}" in again["output"]["summary"]


def test_an_old_fingerprint_is_refused_with_the_findings_it_meant(app: App) -> None:
    w = app
    _, (cleanup, run_user) = _opened(w, 44, TWINS)
    old = old_style(cleanup)
    assert old == old_style(run_user)
    w.say(f"@rtcbot ignore {old}", number=44, user=MAINTAINER)
    assert w.rt.store.dismissals.listed(w.gh.repository_id, w.gh.repo) == []
    reply = w.replies()[-1]
    assert reply.startswith(f"`{old}` is the fingerprint of no finding at the head")
    assert f"`app.py:6` in `function cleanup`, fingerprint `{cleanup.fingerprint()}`" in reply
    assert f"`app.py:11` in `function run_user`, fingerprint `{run_user.fingerprint()}`" in reply
    assert "nothing is dismissed" in reply and "old-style fingerprint (content only)" in reply
    # by its own fingerprint, the one meant: named in the reply
    w.say(f"@rtcbot ignore {run_user.fingerprint()} because reviewed", number=44, user=MAINTAINER)
    named = f"- `{RULE}` at `app.py:11` in `function run_user`, fingerprint `{run_user.fingerprint()}`"
    assert named in w.replies()[-1]


def test_the_actions_ignore_names_the_finding_its_entry_dismisses(
        fake_github: Callable[..., FakeGitHub], scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path) -> None:
    """The Action's `ignore <fingerprint>` answers with the entry to commit, and says which finding
    of its check runs at the head that entry dismisses: rule (the annotation's title), path, line."""
    gh, llm = action_github(fake_github), scripted_llm(varied)
    proc, _ = action_command(gh, llm, tmp_path, "@rtcbot rerun editing-rtc")  # the author: check runs published
    assert proc.returncode == 0, proc.stderr[-3000:]
    [ann] = next(r for r in gh.check_runs.values() if r["name"] == "rtcbot / EditingRTC")["annotations"]
    fp = ann["message"].rsplit("fingerprint ", 1)[1]
    gh.permissions[MAINTAINER] = "write"
    proc, _ = action_command(gh, llm, tmp_path, f"@rtcbot ignore {fp} because noise", user=MAINTAINER)
    assert proc.returncode == 0, proc.stderr[-3000:]
    reply = action_replies(gh)[-1]
    assert f"It dismisses the finding with fingerprint `{fp}`." in reply
    assert f"- `{ann['title']}` at `{ann['path']}:{ann['start_line']}`" in reply and f"fingerprint `{fp}`" in reply
    assert audit(reply, HOST).clean
