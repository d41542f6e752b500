"""The recipe for a new command (docs/architecture.md): one module — here this test's `PingVerb` —
and one line in bot/core/verbs/table.py (here `monkeypatch.setitem`). Nothing else is touched,
and both surfaces answer it through the one use case (bot/core/answer_command.py): the App from
a signed delivery through its queue, the Action from the `issue_comment` event; the help text
lists it; its rules (write access) are the core's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core import pr_commands
from bot.core.verbs.base import Answer, Call, Command, Malformed, Ports
from bot.core.verbs.table import VERBS
from tests.bot.app_support import App
from tests.bot.test_command_parity import _fake, on_the_action, on_the_app
from tests.fakes.github_server import FakeGitHub


@dataclass(frozen=True)
class Ping:
    verb = "ping"


@dataclass(frozen=True)
class PingVerb:
    """A toy command: `@rtcbot ping` answers with the head it would analyse."""

    name = "ping"
    needs_write: bool = False
    spending: bool = False  # it spends, as `rerun` does: the author's, up to the daily budget

    def usage(self, at: str) -> str:
        return f"`{at} ping`: rtcbot answers with the head it sees"

    def parse(self, rest: str) -> Command:
        return Ping() if not rest else Malformed("ping takes nothing after it")

    def spends(self, ports: Ports) -> bool:
        return self.spending

    def answer(self, call: Call) -> Answer:
        call.charge()  # nothing recorded where it does not spend
        return Answer("pong", f"pong: the head is `{call.head[:7]}`")


@pytest.fixture
def ping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(VERBS, "ping", PingVerb())  # the table's one line


def test_without_its_line_the_command_is_unknown() -> None:
    assert "ping" not in VERBS
    assert pr_commands.parse("ping") == Malformed("unknown command 'ping'")


def test_one_module_and_one_line_make_a_command_both_surfaces_answer(
        ping: None, apps: Callable[..., App], fake_github: Callable[..., FakeGitHub], tmp_path: Path) -> None:
    assert "`@rtcbot ping`: rtcbot answers with the head it sees" in pr_commands.help_text("rtcbot")
    assert pr_commands.parse("ping now") == Malformed("ping takes nothing after it")
    app = apps(_fake(fake_github, "Codertocat", "read", "open"), author_reruns_per_day=0, permission_cache_s=0.0)
    on_app = on_the_app(app, "@rtcbot ping", "Codertocat")
    head = app.gh.pulls[1].head_sha
    assert on_app == ("pong", [f"pong: the head is `{head[:7]}`"], ["eyes"])
    on_action = on_the_action(_fake(fake_github, "Codertocat", "read", "open"), tmp_path, "@rtcbot ping", "Codertocat")
    assert on_action[0] == "pong" and on_action[1][0].startswith("pong: the head is `")


def test_the_core_applies_a_new_commands_rules(
        monkeypatch: pytest.MonkeyPatch, apps: Callable[..., App], fake_github: Callable[..., FakeGitHub],
        tmp_path: Path) -> None:
    monkeypatch.setitem(VERBS, "ping", PingVerb(needs_write=True))
    on_action = on_the_action(_fake(fake_github, "mallory", "triage", "open"), tmp_path, "@rtcbot ping", "mallory")
    assert on_action[:2] == ("refused: no write access",
                             ["Only people with write access to this repository can use `ping`."])


def test_a_new_verb_that_spends_is_charged_on_the_app_through_the_one_ledger(
        monkeypatch: pytest.MonkeyPatch, apps: Callable[..., App], fake_github: Callable[..., FakeGitHub]) -> None:
    """The App counts what its commands spent as a fact on their jobs, whatever the verb (it
    once counted only the jobs whose result read "rerun: queued"): the author's second spending
    command of the day, past a budget of one, is refused."""
    monkeypatch.setitem(VERBS, "ping", PingVerb(spending=True))
    app = apps(_fake(fake_github, "Codertocat", "read", "open"), author_reruns_per_day=1, permission_cache_s=0.0)
    assert on_the_app(app, "@rtcbot ping", "Codertocat")[0] == "pong"
    refused = on_the_app(app, "@rtcbot ping", "Codertocat")
    assert refused[0] == "refused" and refused[1][-1] == pr_commands.author_budget_reply(1)
