"""The dashboard in a real browser: Playwright drives Debian's Chromium (Playwright's own browser
download is not reachable here) against the App on a loopback port, signed in through the fake
GitHub, over a store of 30 analysed pull requests, and a user with 300 and 1,000 repositories
(the session is held on the server: the cookie is an id whatever the user's reach). Screenshots
go to $RTCBOT_TEST_ARTIFACTS (default .artifacts/ at the repository root)."""

from __future__ import annotations

import os
import random
import shutil
import string
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from bot.app.runtime import Runtime
from bot.app.web import create_app
from tests.bot.dashboard.support import dashboard_settings, seed, seed_names
from tests.fakes.github_server import FakeGitHub
from tests.reliability.services import free_port
from tests.support import ROOT, require

REPO = "octo-org/widgets"
OTHER = "octo-org/secret"
CHARTS = ("rtc-per-pr", "rtc-per-week", "crscore", "autofix", "llm")
WIDTHS = {1280: 900, 390: 844}  # a laptop, a phone
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def chromium() -> str | None:
    found = os.environ.get("RTCBOT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    return found if found and Path(found).exists() else None


def artifacts() -> Path:
    out = Path(os.environ.get("RTCBOT_TEST_ARTIFACTS") or ROOT / ".artifacts")
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextmanager
def running_app(tmp_path: Path, gh: FakeGitHub, more: Sequence[str] = ()) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = create_app(dashboard_settings(tmp_path, gh, public_url=base))
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=30)
    seed(rt.store, OTHER, prs=4)
    seed_names(rt.store, list(more))
    server = make_server("127.0.0.1", port, app, threaded=True)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    try:
        yield base
    finally:
        server.shutdown()


def test_the_repository_page_in_chromium(tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    exe = chromium()
    require(exe, "Chromium is not installed (Debian: apt-get install chromium; `make setup` does it as root)")
    from playwright.sync_api import sync_playwright

    gh = fake_github()
    out = artifacts()
    problems: list[str] = []
    with running_app(tmp_path, gh) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": WIDTHS[1280]})

            def console(msg: Any) -> None:
                if msg.type == "error":
                    problems.append(f"console: {msg.text}")

            page.on("console", console)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            # anonymous: sent to sign in, through the fake GitHub and back to the page asked for
            resp = page.goto(f"{base}/dashboard/{REPO}")
            assert resp is not None and resp.status == 200
            assert page.url == f"{base}/dashboard/{REPO}"
            assert REPO in page.locator("h1").inner_text()
            assert [r.path for r in gh.requests][:2] == ["/login/oauth/authorize", "/login/oauth/access_token"]
            for width, height in WIDTHS.items():
                page.set_viewport_size({"width": width, "height": height})
                page.reload()
                for key in CHARTS:
                    chart = page.locator(f"#chart-{key} svg[role=img]")
                    assert chart.count() == 1, f"{key} at {width}px"
                    assert (chart.get_attribute("aria-label") or "").strip(), key
                    box = chart.bounding_box()
                    assert box is not None and box["width"] > 200 and box["height"] > 100, (key, width, box)
                    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (key, width, box)
                    assert chart.locator("path, rect, line").count() > 10, key  # marks were drawn
                overflow = page.evaluate("document.documentElement.scrollWidth")
                assert overflow <= width, f"the page is {overflow}px wide at {width}px"
                page.screenshot(path=str(out / f"dashboard-{width}.png"), full_page=True)
            # dark mode: the page's colours change, the charts stay
            page.emulate_media(color_scheme="dark")
            dark_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
            assert dark_bg == "rgb(13, 17, 23)"
            label = page.locator("#chart-llm svg text").first
            assert label.evaluate("e => getComputedStyle(e).fill") == "rgb(230, 237, 243)"  # light text
            page.screenshot(path=str(out / "dashboard-390-dark.png"), full_page=True)
            # another repository, in the store but not the user's: 404, no data
            resp = page.goto(f"{base}/dashboard/{OTHER}")
            assert resp is not None and resp.status == 404
            assert page.locator("svg").count() == 0
        finally:
            browser.close()
    console_404 = [m for m in problems if "404" in m]  # the 404 asked for above, as Chromium logs it
    assert [m for m in problems if m not in console_404] == []
    assert len(console_404) <= 1
    for width in WIDTHS:
        assert (out / f"dashboard-{width}.png").stat().st_size > 10_000


def word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 10)))


def test_a_user_with_300_or_1000_repositories_signs_in_and_out_in_chromium(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    """These 300 names made a 4.6 KB signed cookie (1,000: 14.9 KB), over the 4 KB browsers keep
    (the sign-in looped); held on the server, the cookie is a 43-character id for 300 or 1,000,
    every one of them is listed and opens, and signing out ends the session: the old cookie gets
    the sign-in page."""
    exe = chromium()
    require(exe, "Chromium is not installed (Debian: apt-get install chromium; `make setup` does it as root)")
    from playwright.sync_api import sync_playwright

    gh = fake_github()
    rng = random.Random(29)  # names as varied as real ones (a signed cookie compressed "r0001"...)
    names = list(dict.fromkeys(f"octo-org/{word(rng)}-{word(rng)}" for _ in range(1100)))[:1000]
    with running_app(tmp_path, gh, names) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for n in (300, 1000):
                gh.user_installations[99] = names[:n]  # a second installation reaching n repositories
                context = browser.new_context()
                page = context.new_page()
                resp = page.goto(f"{base}/dashboard")  # anonymous: through the fake GitHub and back
                assert resp is not None and resp.status == 200 and page.url == f"{base}/dashboard", n
                assert page.locator("ul.repos a").count() == n + 1  # and the fake GitHub's own repository
                [cookie] = [c for c in context.cookies() if c["name"] == "rtcbot_session"]
                assert len(cookie["value"]) == 43 and cookie["httpOnly"] and cookie["sameSite"] == "Lax", cookie
                resp = page.goto(f"{base}/dashboard/{max(names[:n])}")  # the last of them
                assert resp is not None and resp.status == 200, n
                assert page.locator("svg[role=img]").count() > 0
                page.get_by_role("button", name="Sign out").click()
                page.wait_for_load_state()
                assert "You are signed out" in page.locator("main").inner_text()
                assert not [c for c in context.cookies() if c["name"] == "rtcbot_session"]
                replay = p.request.new_context(extra_http_headers={"Cookie": f"rtcbot_session={cookie['value']}"})
                r = replay.get(f"{base}/dashboard", max_redirects=0)
                assert r.status == 302 and r.headers["location"].startswith("/login"), (n, r.status)
                replay.dispose()
                context.close()
        finally:
            browser.close()
