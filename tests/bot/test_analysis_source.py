"""bot/app/analysis_source.py: what one analysis reads on the App — the pull request's inputs as
the PR reader read them (over real HTTP to the fake GitHub), the store's dismissals of its
repository (a real SQLite store)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bot.app.analysis_source import AnalysisSource
from bot.app.events import AnalyzeJob
from bot.app.pr_inputs import PRReader
from bot.core import review
from bot.core.context import Selection
from bot.core.dismissals import Dismissal
from bot.github import installation_client
from bot.store.store import Store
from tests.bot.app_support import make_settings
from tests.fakes.github_server import FakeGitHub, many_hunks_diff

AT = 1_700_000_000.0


def test_an_analysis_reads_its_prs_inputs_and_its_repositorys_dismissals(
        fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    gh = fake_github()
    pr = gh.add_pr(5, diff_text=many_hunks_diff("src/calc.py", hunks=2))
    settings = make_settings(tmp_path, gh)
    client = installation_client(settings, gh.installation_id)
    store = Store(f"sqlite:///{tmp_path / 'rtcbot.db'}")
    ours = Dismissal("editing_rtc", "rule", "src/*", "bob", AT, "")
    store.dismissals.add(gh.repository_id, gh.repo, ours)
    store.dismissals.add(None, "someone/else", Dismissal("crscore", "rule", None, "eve", AT, ""))
    job = AnalyzeJob(repo=gh.repo, installation_id=gh.installation_id, pr_number=5, head_sha=pr.head_sha,
                     analyzer="editing_rtc", repository_id=gh.repository_id, reason="pull_request.opened")
    reader = PRReader(settings, lambda comment: False)
    try:
        with ThreadPoolExecutor(max_workers=2) as io:
            inputs = reader.read(io, client, job)
            source = AnalysisSource(settings, store, reader, job, client, inputs)
            loaded = source.config()
            assert loaded is inputs.config and loaded.error is None  # no config: the defaults
            assert source.dismissals(loaded).dismissals == (ours,)  # the repository's only
            change = source.change(review.plan(loaded, Selection(names=["editing_rtc"]), llm=None))
        assert [f.path for f in change.changes.files] == ["src/calc.py"]
        assert sum(len(f.hunks) for f in change.changes.files) == 2
        assert change.unlisted is None  # every file listed
        assert callable(change.comments) and change.comments() == []  # read when an analyzer asks
    finally:
        client.close()
        store.close()
