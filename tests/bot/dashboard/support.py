"""The dashboard's test data and set-up: a store filled with analysed pull requests (real rows,
written through the store's own tables), the App signed in through the fake GitHub."""

from __future__ import annotations

import random
import time
import zlib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from flask.testing import FlaskClient

from bot.app.settings import ServiceSettings
from bot.github.transport import tls_context
from bot.store.schema import CheckRunRow, FindingRow, JobRow, PublishedRow
from bot.store.store import Store
from tests.bot.app_support import make_settings
from tests.fakes.github_server import FakeGitHub

DAY = 86400.0
EDITING_RTC, CRSCORE, AUTOFIX = "rtcbot / EditingRTC", "rtcbot / CRScore", "rtcbot / AutoFix"  # the check runs
SESSION_SECRET = "s3cr3t-" + "x" * 40


def dashboard_settings(tmp_path: Path, gh: FakeGitHub, public_url: str = "http://127.0.0.1:5000",
                       **kw: Any) -> ServiceSettings:
    return make_settings(tmp_path, gh, oauth_client_id=gh.oauth_client_id,
                         oauth_client_secret=gh.oauth_client_secret, session_secret=SESSION_SECRET,
                         github_url=gh.base_url, public_url=public_url, **kw)


def repository_id(repo: str) -> int:
    """The GitHub id the tests give `repo` unless they say otherwise."""
    return 100_000 + zlib.crc32(repo.encode())


def seed(store: Store, repo: str, prs: int = 30, *, now: float | None = None, seed_: int = 7,
         repository: int | None = None, installation: int = 77) -> None:
    """`prs` analysed pull requests of `repo` (GitHub's ids: `repository`, else
    `repository_id(repo)`, under `installation`), one every ~2.3 days back from `now` (about ten
    weeks): EditingRTC with 2-4 scored hunks each, CRScore with 1-3 scored review comments,
    AutoFix on every third with a published suggestion (every other one applied), and the
    jobs' LLM usage. The repository is recorded as the App sees it from a delivery."""
    rng = random.Random(seed_)
    now = time.time() if now is None else now
    rid = repository_id(repo) if repository is None else repository
    ids = {"repository_id": rid, "installation_id": installation}
    store.repositories.seen(rid, installation, repo, at=0.0)
    with store.db.session() as s:
        for i in range(1, prs + 1):
            at = now - (prs - i) * 2.3 * DAY - 3600
            sha = f"{i:040x}"
            hunks = []
            for _ in range(rng.randint(2, 4)):
                rtc = rng.choice([0.0, 1 / 3, 2 / 3, 1.0])
                base = rng.choice([0.0, 0.0, 1 / 3])
                hunks.append({"rtc": rtc, "lift": rtc - base, "rtc_at_3": min(1.0, rtc + 1 / 3)})
            rtc = sum(x["rtc"] for x in hunks) / len(hunks)
            lift = sum(x["lift"] for x in hunks) / len(hunks)
            run = CheckRunRow(**ids, repo=repo, name=EDITING_RTC, head_sha=sha, github_id=5000 + i, pr_number=i,
                              status="completed", conclusion="success",
                              scores={"rtc": rtc, "lift": lift, "hunks": float(len(hunks))}, updated_at=at)
            s.add(run)
            s.flush()
            for h, sc in enumerate(hunks):
                s.add(FindingRow(check_run_id=run.id, analyzer="editing_rtc", path=f"src/mod_{i % 5}.py",
                                 start_line=10 * h + 1, end_line=10 * h + 4, key=f"h{h}", scores=sc,
                                 data={"title": f"def f{h}"}))
            cr = CheckRunRow(**ids, repo=repo, name=CRSCORE, head_sha=sha, github_id=6000 + i, pr_number=i,
                             status="completed", conclusion="neutral", scores={}, updated_at=at + 60)
            s.add(cr)
            s.flush()
            for c in range(rng.randint(1, 3)):
                con, comp = rng.random(), rng.random()
                s.add(FindingRow(check_run_id=cr.id, analyzer="crscore", path=f"src/mod_{i % 5}.py", start_line=3,
                                 end_line=3, key=f"c{c}", comment_id=str(100 * i + c),
                                 scores={"con": con, "comp": comp, "rel": 2 * con * comp / (con + comp or 1)},
                                 data={"title": f"comment by alice: nit {c}"}))
            requests = len(hunks) * 5 + 4
            if i % 3 == 0:
                s.add(CheckRunRow(**ids, repo=repo, name=AUTOFIX, head_sha=sha, github_id=7000 + i, pr_number=i,
                                  status="completed", conclusion="neutral", updated_at=at + 120,
                                  scores={"findings": 2.0, "fixes_proposed": 2.0, "fixed": float(rng.randint(0, 2))}))
                s.add(PublishedRow(**ids, repo=repo, pr_number=i, head_sha=sha, analyzer="autofix",
                                   kind="suggestion", key=f"k{i}", path="src/db.py", start_line=4, end_line=4,
                                   replacement="x = 1\n", rtc="pass", created_at=at + 130,
                                   applied_at=at + DAY if i % 2 == 0 else None))
                requests += 6
            s.add(JobRow(**ids, kind="analyze", repo=repo, pr_number=i, head_sha=sha, analyzer="editing_rtc", spec={},
                         status="done", created_at=at - 30, updated_at=at, llm_requests=requests,
                         llm_tokens=requests * 410, llm_prompt_tokens=requests * 360,
                         llm_completion_tokens=requests * 50, llm_cached_tokens=requests * 200))


def seed_names(store: Store, repos: list[str], *, now: float | None = None, installation: int = 99) -> None:
    """One completed EditingRTC check run for each of `repos` (under `installation`: the tests'
    second one): enough for sign-in to count them as repositories with data, and for each page
    to draw."""
    at = time.time() - 3600 if now is None else now
    for repo in repos:
        store.repositories.seen(repository_id(repo), installation, repo, at=0.0)
    with store.db.session() as s:
        for n, repo in enumerate(repos):
            s.add(CheckRunRow(repository_id=repository_id(repo), installation_id=installation, repo=repo,
                              name=EDITING_RTC, head_sha=f"{n:040x}", github_id=90_000 + n, pr_number=1,
                              status="completed", conclusion="success", updated_at=at,
                              scores={"rtc": 2 / 3, "lift": 1 / 3, "hunks": 3.0}))


def sign_in(client: FlaskClient, gh: FakeGitHub, next_path: str = "/dashboard") -> Any:
    """Sign in through the fake GitHub with Flask's test client; the callback's answer."""
    start = client.get(f"/login?next={next_path}")
    assert start.status_code == 302, start.data
    authorize = start.headers["Location"]
    assert authorize.startswith(gh.base_url + "/login/oauth/authorize?")
    back = httpx.get(authorize, follow_redirects=False, timeout=10, verify=tls_context())
    assert back.status_code == 302
    target = urlsplit(back.headers["location"])
    return client.get(f"{target.path}?{target.query}")
