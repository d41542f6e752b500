"""What the Action counts an author's `rerun` and `explain` by (RTCBOT_AUTHOR_RERUNS_PER_DAY):
rtcbot's own replies, never the author's comments. Before the pull request's author (without
write access) has the pull request analysed, rtcbot replies once, saying so, with a marker that
names the author's GitHub id; their day is the number of such replies rtcbot's token wrote on
the pull request in the last 24 hours. The author can edit or delete their own commands, not
rtcbot's replies; a marker written by anyone else counts for nothing (bot/github `TokenIdentity`).

The Action keeps no store: where GitHub does not say who its token is, no reply can be told for
rtcbot's own, and the author's command is refused (someone with write access may still ask).
"""

from __future__ import annotations

import re
import time

from bot.github import GitHub, token_identity

DAY_S = 24 * 3600.0
MARKER = "<!-- rtcbot:charged author:{author_id} -->"
_MARKER = re.compile(r"<!-- rtcbot:charged author:(\d+) -->")
UNCOUNTABLE = ("GitHub did not say who rtcbot's token is, so rtcbot cannot count today's re-runs of the pull "
               "request's author; someone with write access to this repository can ask instead.")


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def charged_today(gh: GitHub, repo: str, number: int, author_id: int, now: float | None = None) -> int | None:
    """How many of rtcbot's replies on pull request `number` over the last day charge the author
    `author_id`; None when GitHub does not say who this token is."""
    me = token_identity(gh)
    if me is None:
        return None
    since = iso((time.time() if now is None else now) - DAY_S)
    n = 0
    for c in gh.issue_comments(repo, number, since, limit=1000):
        if not me.wrote(c) or str(c.get("created_at") or "") < since:
            continue
        n += any(int(m) == author_id for m in _MARKER.findall(str(c.get("body") or "")))
    return n


def receipt(author_id: int, verb: str, n: int, budget: int, head: str) -> str:
    """rtcbot's reply before the author's command spends: the `n`th of their `budget` today."""
    return (f"rtcbot is running `{verb}` at the head `{head[:12]}` for this pull request's author: "
            f"{n} of the {budget} they may ask for in a day.\n\n" + MARKER.format(author_id=int(author_id)))
