"""No cache oracle in public output, end to end through the App: signed deliveries over real
HTTP → the queue → jobs → check runs on the fake GitHub, answers from the scripted LLM server.

The attack: within one installation a fork's author sends a hunk they guess is in one of the
installation's private repositories. Its answers are then served from the installation's LLM
cache; a check run that said how many requests were sent (0 on a right guess) or how many
tokens, or that dropped a note when no request went out, would confirm the guess. The check
run of a re-submitted hunk must read byte for byte like the check run of the same hunk sent to
an installation that has never seen it, apart from ids and times.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.app.jobs import Runtime
from bot.app.web import create_app
from bot.github import installation_client
from tests.bot.app_support import deliver, drain, make_settings, serve
from tests.bot.conftest import Backend
from tests.fakes.github_server import FakeGitHub, many_hunks_diff
from tests.fakes.llm_server import ScriptedLLM, varied

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


@pytest.fixture
def runtime(tmp_path: Path, backend: Backend,
            scripted_llm: Callable[..., ScriptedLLM]) -> Iterator[Callable[..., tuple[Runtime, str, ScriptedLLM]]]:
    """`runtime(*fakes, **settings)`: one App (Runtime and webhook server) for the installations
    of the given fake GitHubs, on the scripted LLM."""
    made: list[tuple[Runtime, Any]] = []

    def make(*fakes: FakeGitHub, **kw: Any) -> tuple[Runtime, str, ScriptedLLM]:
        llm = scripted_llm(varied)
        settings = make_settings(tmp_path, fakes[0], llm, database_url=backend.database_url,
                                 redis_url=backend.redis_url, **kw)
        per_installation = {g.installation_id: make_settings(tmp_path, g, llm, **kw) for g in fakes}
        rt = Runtime(settings, github=lambda inst: installation_client(per_installation[inst], inst))
        ctx = serve(create_app(settings, runtime=rt))
        made.append((rt, ctx))
        return rt, ctx.__enter__(), llm

    yield make
    for rt, ctx in made:
        ctx.__exit__(None, None, None)
        rt.store.close()


def opened(url: str, rt: Runtime, gh: FakeGitHub, number: int) -> None:
    r = deliver(url, "pull_request", gh.pr_event("opened", number))
    assert r.status_code == 202, r.text
    drain(rt, limit=1000)


def test_a_fork_that_resubmits_a_private_hunk_reads_what_a_new_hunk_reads(
        runtime: Callable[..., tuple[Runtime, str, ScriptedLLM]], fake_github: Callable[..., FakeGitHub]) -> None:
    private_hunk = many_hunks_diff("src/secret.py", hunks=2)
    # one installation: its private repository's pull request, then a fork's re-submission
    fork_head = "f0" * 20
    known = fake_github(installation_id=303, repo="acme/app")
    known.add_pr(1, diff_text=private_hunk, head_sha="a1" * 20)
    resubmitted = known.add_pr(2, diff_text=private_hunk, head_repo="stranger/app", head_sha=fork_head)
    # another installation, one repository of the same name: the fork's pull request is new there
    fresh = fake_github(installation_id=404, repo="acme/app")
    new = fresh.add_pr(2, diff_text=private_hunk, head_repo="stranger/app", head_sha=fork_head)
    rt, url, llm = runtime(known, fresh, llm_max_requests=1000)

    opened(url, rt, known, 1)
    private_cost = llm.request_count
    assert private_cost > 0
    opened(url, rt, known, 2)
    assert llm.request_count == private_cost  # a right guess: every answer from the cache
    opened(url, rt, fresh, 2)
    assert llm.request_count == 2 * private_cost  # a new hunk: every answer asked

    hit, miss = public_text(known, resubmitted.head_sha), public_text(fresh, new.head_sha)
    assert hit == miss
    # what the check run does say of the work: the same samples either way
    assert "LLM work: " in hit and " samples" in hit
    for oracle in ("requests", "tokens", "cache"):
        assert oracle not in hit.lower()
