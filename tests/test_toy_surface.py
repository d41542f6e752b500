"""The recipe for a new surface (docs/architecture.md): read a change your own way, `plan`, `run`,
publish the Result your own way and turn it into your status — the review itself is the core's
(bot/core/review.py), the same on the CLI, the Action and the App.

The toy surface below takes a patch and a config as text and "publishes" the JSON format into a
list; it runs the toy analyzer of tests/test_plugins.py (registered for the test only), and the
core gives it the config's gate, the repository's dismissals and the exit status with nothing of
its own."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from analyzers import registry
from analyzers.code.diff import parse_diff
from analyzers.context import Tools
from bot.core import review
from bot.core.config import parse_config
from bot.core.context import select
from bot.core.dismissals import Dismissal
from reporters.base import render
from tests.test_plugins import PATCH


def toy_surface(patch: str, config: str, published: list[str], dismissals: tuple[Dismissal, ...] = ()) -> int:
    """A whole surface: its reading, the core's plan and run, its publishing and its status."""
    loaded = parse_config(config)
    selection = select(loaded, defaults=["toy"])
    plan = review.plan(loaded, selection, llm=None, dismissals=dismissals)
    result = review.run(plan, review.Change(parse_diff(patch)), tools=Tools())
    published.append(render(result.reports, "json"))
    return result.exit_code()


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(registry.ANALYZERS, "toy", "tests.test_plugins:ToyAnalyzer")  # one line
    yield


@pytest.mark.usefixtures("toy")
def test_the_toy_surface_gets_the_review_the_gate_and_its_status_from_the_core() -> None:
    published: list[str] = []
    assert toy_surface(PATCH, "", published) == 0
    assert toy_surface(PATCH, 'fail_on: "toy.toys>1"\n', published) == review.EXIT_GATE
    [first, second] = [json.loads(p) for p in published]
    assert [f["start_line"] for r in first["reports"] for f in r["findings"]] == [2, 3]
    assert first["reports"][0]["scores"]["toys"] == second["reports"][0]["scores"]["toys"] == 2.0


@pytest.mark.usefixtures("toy")
def test_the_toy_surface_is_given_the_teams_dismissals() -> None:
    published: list[str] = []
    ignored = Dismissal(target="toy", kind="rule", path_glob=None, by="maintainer", at=0.0, reason="a toy")
    assert toy_surface(PATCH, 'fail_on: "toy.findings>0"\n', published, (ignored,)) == 0
    [report] = json.loads(published[0])["reports"]
    assert report["findings"] == []
