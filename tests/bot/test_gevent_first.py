"""`rtcbot serve` on gevent: patched before anything is imported, and psycopg's blocking C wait
kept (bot/shell/gevent_first.py). Each case runs in a fresh interpreter: the patch is for life."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bot.shell.gevent_first import PSYCOPG_WAIT

PROBE = ("import sys; from bot.shell.gevent_first import patch_for_serve; "
         "patched = patch_for_serve(sys.argv[1:]); import psycopg.waiting as w; "
         "print(patched, w.wait.__name__)")


def probe(*args: str, wait: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != PSYCOPG_WAIT}
    if wait is not None:
        env[PSYCOPG_WAIT] = wait
    out = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize(("args", "seen"), [
    (["serve"], "True wait_c"),                              # patched, and still the C wait
    (["serve", "--worker-class", "gthread"], "False wait_c"),  # not patched: psycopg's own choice
    (["review"], "False wait_c"),
])
def test_serve_on_gevent_is_patched_and_keeps_psycopgs_c_wait(args: list[str], seen: str) -> None:
    assert probe(*args) == seen


def test_without_the_setting_gevents_patch_would_give_the_hubs_wait() -> None:
    # what the setting prevents: psycopg imported after the patch chooses the cooperative poll
    code = "from gevent import monkey; monkey.patch_all(); import psycopg.waiting as w; print(w.wait.__name__)"
    env = {k: v for k, v in os.environ.items() if k != PSYCOPG_WAIT}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    assert out.stdout.strip() == "wait_poll"


def test_an_operators_choice_of_wait_wins() -> None:
    assert probe("serve", wait="wait_poll") == "True wait_poll"
