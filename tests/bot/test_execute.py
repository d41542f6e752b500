"""bot/core/review.py `execute`: one review over a Source and its outputs' one lifecycle, the
fallback output on a refused start (bot/core/outputs.py), and a Result's end in a surface's words.

The review is real: the toy analyzer of tests/test_plugins.py (registered for the test only) on
its patch; the outputs are small recorders of what the lifecycle asked of them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

from analyzers import registry
from analyzers.code.diff import parse_diff
from analyzers.context import Tools
from bot.core import review
from bot.core.config import LoadedConfig, parse_config
from bot.core.context import Selection, select
from bot.core.outputs import Fallback
from bot.core.review import Ending
from bot.github import GitHubError
from reporters.base import Target
from tests.test_plugins import PATCH


class Recorder(review.Output):
    """What the lifecycle asked of one output, in order."""

    def __init__(self, calls: list[str], name: str, refuse: int | None = None) -> None:
        self.calls, self.name, self.refuse = calls, name, refuse

    def start(self, target: Target, titles: Mapping[str, str]) -> None:
        if self.refuse is not None:
            raise GitHubError(self.refuse, "Resource not accessible by integration")
        self.calls.append(f"{self.name}.start {sorted(titles.values())}")

    def publish(self, result: review.Result, target: Target) -> None:
        shown = target.diff.spans("toy.py") if target.diff is not None else ()
        self.calls.append(f"{self.name}.publish {[len(r.findings) for r in result.reports]} {list(shown)}")

    def finish(self) -> None:
        self.calls.append(f"{self.name}.finish")

    def abandon(self, why: str) -> None:
        self.calls.append(f"{self.name}.abandon {why}")


def source(config: str = "", fail: BaseException | None = None) -> review.Read:
    change = review.Change(parse_diff(PATCH))
    if fail is None:
        return review.Read(parse_config(config), change)
    raised: BaseException = fail

    class Failing(review.Read):
        def change(self, p: review.Plan) -> review.Change:
            raise raised

    return Failing(parse_config(config), change)


def settings() -> review.Settings:
    def choose(loaded: LoadedConfig) -> Selection:
        return select(loaded, defaults=["toy"])

    return review.Settings(Tools(), choose, lambda model: None)


@pytest.fixture(autouse=True)
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(registry.ANALYZERS, "toy", "tests.test_plugins:ToyAnalyzer")
    yield


def test_execute_starts_every_output_then_publishes_the_judged_result_then_finishes() -> None:
    calls: list[str] = []
    result = review.execute(source(), [Recorder(calls, "a"), Recorder(calls, "b")], settings())
    assert [r.name for r in result.reports] == ["toy"] and result.diff is not None
    spans = list(result.diff.spans("toy.py"))
    assert calls == ["a.start ['Toy']", "b.start ['Toy']", f"a.publish [2] {spans}", f"b.publish [2] {spans}",
                     "a.finish", "b.finish"]


def test_execute_abandons_every_started_output_saying_why_and_raises() -> None:
    calls: list[str] = []
    with pytest.raises(OSError, match="the disk is gone"):
        review.execute(source(fail=OSError("the disk is gone")), [Recorder(calls, "a")], settings())
    assert calls == ["a.start ['Toy']", "a.abandon The run stopped: OSError: the disk is gone"]


def test_a_withdrawn_review_leaves_its_outputs_as_they_are() -> None:
    calls: list[str] = []
    with pytest.raises(review.Withdrawn):
        review.execute(source(fail=review.Withdrawn("superseded")), [Recorder(calls, "a")], settings())
    assert calls == ["a.start ['Toy']"]


def test_fallback_swaps_to_its_spare_when_github_refuses_the_start() -> None:
    calls: list[str] = []
    refused: list[int] = []
    out = Fallback(Recorder(calls, "checks", refuse=403), Recorder(calls, "commands"),
                   lambda e: refused.append(e.status))
    review.execute(source(), [out], settings())
    assert out.swapped and refused == [403]
    assert calls[0] == "checks.abandon this token cannot create every check run"  # what it had opened
    assert calls[1] == "commands.start ['Toy']" and calls[-1] == "commands.finish"


def test_fallback_lets_any_other_refusal_stop_the_review() -> None:
    calls: list[str] = []
    out = Fallback(Recorder(calls, "checks", refuse=500), Recorder(calls, "commands"), lambda e: None)
    with pytest.raises(GitHubError):
        review.execute(source(), [out], settings())
    assert not out.swapped and calls == []


def test_a_results_end_is_said_in_the_surfaces_words_with_its_exit_status() -> None:
    words = {e: f"{e.value}: {{}}" for e in Ending}
    said: list[str] = []
    result = review.execute(source('fail_on: "toy.toys>1"\n'), [], settings())
    assert result.end(words, said.append) == review.EXIT_GATE
    assert said == ["matched: toy.toys>1"]
    said.clear()
    assert review.execute(source(), [], settings()).end(words, said.append) == 0 and said == []
