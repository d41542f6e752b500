"""The dashboard in a real browser: Playwright drives Debian's Chromium (Playwright's own browser
download is not reachable here) against the App on a loopback port, signed in through the fake
GitHub, over a store of 30 analysed pull requests. Screenshots go to $RTCBOT_TEST_ARTIFACTS
(default .artifacts/ at the repository root)."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from bot.app.jobs import Runtime
from bot.app.web import create_app
from tests.bot.dashboard.support import dashboard_settings, seed
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
def running_app(tmp_path: Path, gh: FakeGitHub) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = create_app(dashboard_settings(tmp_path, gh, public_url=base))
    rt: Runtime = app.extensions["rtcbot"]
    seed(rt.store, REPO, prs=30)
    seed(rt.store, OTHER, prs=4)
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
