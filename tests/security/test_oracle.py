"""No cache oracle in public output, end to end through the App: signed deliveries over real
HTTP → the queue → jobs → check runs on the fake GitHub, answers from the scripted LLM server.

The attack: within one installation a fork's author sends a hunk they guess is in one of the
installation's private repositories. Its answers are then served from the installation's LLM
cache; a check run that said how many requests were sent (0 on a right guess) or how many
tokens, or that dropped a note when no request went out, would confirm the guess. What it says
of the cost is the samples' bill (analyzers/llm/bill.py): what they cost when first asked, cached
with them, so the same figures either way. The check
run of a re-submitted hunk must read byte for byte like the check run of the same hunk sent to
an installation that has never seen it, apart from ids and times.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.bot.app_support import App, deliver
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

EDITING = "rtcbot / EditingRTC"
VARYING = ("started_at", "completed_at")  # times; ids are in the URLs, never in the bodies


def public_text(gh: FakeGitHub, head_sha: str) -> str:
    """Every check-run body rtcbot wrote for `head_sha`, without its times, as one JSON text."""
    ids = {r["id"] for r in gh.runs(EDITING, head_sha)}
    bodies = [w.body for w in gh.writes()
              if isinstance(w.body, dict) and (w.body.get("head_sha") == head_sha
                                               or any(w.path.endswith(f"/check-runs/{i}") for i in ids))]
    assert bodies, "no check run written"
    return json.dumps([{k: v for k, v in b.items() if k not in VARYING} for b in bodies], sort_keys=True)


def opened(a: App, gh: FakeGitHub, number: int) -> None:
    r = deliver(a.url, "pull_request", gh.pr_event("opened", number))
    assert r.status_code == 202, r.text
    a.run()


def test_a_fork_that_resubmits_a_private_hunk_reads_what_a_new_hunk_reads(
        apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    private_hunk = many_hunks_diff("src/secret.py", hunks=2)
    # one installation: its private repository's pull request, then a fork's re-submission
    fork_head = "f0" * 20
    known = fake_github(installation_id=303, repo="acme/app")
    known.add_pr(1, diff_text=private_hunk, head_sha="a1" * 20)
    resubmitted = known.add_pr(2, diff_text=private_hunk, head_repo="stranger/app", head_sha=fork_head)
    # another installation, one repository of the same name: the fork's pull request is new there
    fresh = fake_github(installation_id=404, repo="acme/app")
    new = fresh.add_pr(2, diff_text=private_hunk, head_repo="stranger/app", head_sha=fork_head)
    a = apps(known, fresh, llm_max_requests=1000)

    opened(a, known, 1)
    private_cost = a.llm.request_count
    assert private_cost > 0
    opened(a, known, 2)
    assert a.llm.request_count == private_cost  # a right guess: every answer from the cache
    opened(a, fresh, 2)
    assert a.llm.request_count == 2 * private_cost  # a new hunk: every answer asked

    hit, miss = public_text(known, resubmitted.head_sha), public_text(fresh, new.head_sha)
    assert hit == miss
    # what the check run does say of the work: the same samples, and the same bill, either way
    assert "LLM work: " in hit and " samples (" in hit and " prompt and " in hit
    assert "cache" not in hit.lower()
