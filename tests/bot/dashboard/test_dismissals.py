"""The dashboard's repository page lists the team's dismissals (bot/app/dashboard/data.py
`dismissals`): found by the repository's id, text escaped, none for a repository the user cannot
see."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from bot.app.runtime import Runtime
from bot.core.dismissals import Dismissal
from tests.bot.dashboard.support import repository_id, sign_in
from tests.bot.dashboard.test_views import OTHER, REPO, dashboard_app
from tests.fakes.github_server import FakeGitHub

AT = 1_795_651_200.0  # 2026-11-26 UTC


def test_the_repository_page_lists_its_dismissals(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app = dashboard_app(tmp_path, gh)
    rt: Runtime = app.extensions["rtcbot"]
    rt.store.dismissals.add(repository_id(REPO), REPO,
                            Dismissal("python.sqli", "rule", "tests/*", "alice", AT, "<b>constants</b> only"))
    rt.store.dismissals.add(repository_id(OTHER), OTHER, Dismissal("0123456789abcdef", "finding", None, "eve", AT, ""))
    c = app.test_client()
    sign_in(c, gh, f"/dashboard/{REPO}")
    page = c.get(f"/dashboard/{REPO}")
    assert page.status_code == 200
    assert 'id="dismissals"' in page.text
    assert "rule python.sqli" in page.text and "tests/*" in page.text and "@alice" in page.text
    assert "2026-11-26" in page.text
    assert "&lt;b&gt;constants&lt;/b&gt; only" in page.text and "<b>constants</b>" not in page.text
    assert "0123456789abcdef" not in page.text and "@eve" not in page.text  # another repository's
    rt.store.dismissals.remove(repository_id(REPO), REPO, "python.sqli")
    assert 'id="dismissals"' not in c.get(f"/dashboard/{REPO}").text
