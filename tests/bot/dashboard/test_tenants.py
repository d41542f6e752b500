"""The dashboard reads a repository by GitHub's ids, never by its name (docs/dashboard.md,
"Repositories by GitHub's ids"): through Flask's test client and the fake GitHub (real HTTP),
a renamed repository's page under its new name, a new installation's repository under an old
name empty, a removed one gone."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from flask import Flask

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.dashboard.support import dashboard_settings, repository_id, seed, sign_in
from tests.fakes.github_server import FakeGitHub

REPO = "octo-org/widgets"
RENAMED = "octo-org/gizmos"
CHARTS = r'<svg role="img" aria-label="[^"]+"'


def dashboard_app(tmp_path: Path, gh: FakeGitHub) -> tuple[Flask, Runtime]:
    app = create_app(dashboard_settings(tmp_path, gh))
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=6, installation=gh.installation_id)
    return app, rt


def test_a_renamed_repository_shows_its_data_under_the_new_name(tmp_path: Path,
                                                                 fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app, rt = dashboard_app(tmp_path, gh)
    c = app.test_client()
    sign_in(c, gh)
    assert len(re.findall(CHARTS, c.get(f"/dashboard/{REPO}").text)) == 5
    rt.store.repositories.seen(repository_id(REPO), gh.installation_id, RENAMED, at=time.time())  # renamed
    old = c.get(f"/dashboard/{REPO}")
    assert old.status_code == 404 and "<svg" not in old.text  # the session's name is gone
    assert f'href="/dashboard/{REPO}"' not in c.get("/dashboard").text
    gh.user_installations[gh.installation_id] = [RENAMED]  # what GitHub lists now
    c = app.test_client()
    sign_in(c, gh)
    page = c.get(f"/dashboard/{RENAMED}")
    assert page.status_code == 200 and len(re.findall(CHARTS, page.text)) == 5
    assert f"/{RENAMED}/pull/" in page.text and f"/{REPO}/pull/" not in page.text


def test_a_new_installations_repository_under_an_old_name_shows_nothing(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """The name's first repository is gone; another installation's repository takes it. Its
    users see none of the first one's data: no page, and after its first analysis only its own."""
    gh = fake_github()
    app, rt = dashboard_app(tmp_path, gh)
    gh.user_installations = {99: [REPO]}  # the user now reaches a repository of that name through 99
    rt.store.repositories.seen(7_000_001, 99, REPO, at=time.time())  # the new repository's first delivery
    c = app.test_client()
    sign_in(c, gh)
    with c.session_transaction() as s:
        assert s["repos"] == {}  # nothing of the new one yet, nothing of the old
    assert c.get(f"/dashboard/{REPO}").status_code == 404
    seed(rt.store, REPO, prs=1, repository=7_000_001, installation=99)  # its own first analysis
    c = app.test_client()
    sign_in(c, gh)
    page = c.get(f"/dashboard/{REPO}")
    assert page.status_code == 200 and f"/{REPO}/pull/1" in page.text
    assert not re.search(rf"/{REPO}/pull/[2-6]\b", page.text)  # none of the first one's pull requests


def test_a_removed_repository_shows_nothing(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    app, rt = dashboard_app(tmp_path, gh)
    c = app.test_client()
    sign_in(c, gh)
    assert c.get(f"/dashboard/{REPO}").status_code == 200
    rt.store.repositories.removed(repository_id(REPO), gh.installation_id, REPO, at=time.time())
    assert c.get(f"/dashboard/{REPO}").status_code == 404  # at once, the session notwithstanding
    assert f'href="/dashboard/{REPO}"' not in c.get("/dashboard").text
    c = app.test_client()
    sign_in(c, gh)
    with c.session_transaction() as s:
        assert s["repos"] == {}
