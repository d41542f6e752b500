"""A chat completion's body read by hand: choices in index order, usage, malformed bodies."""

from __future__ import annotations

import pytest

from analyzers.llm.completion import Completion, Malformed, completion_from


def test_a_completion_is_read_in_choice_order_with_its_usage() -> None:
    got = completion_from({
        "choices": [{"index": 1, "message": {"content": "second"}},
                    {"index": 0, "message": {"content": "first"}},
                    {"index": 2, "message": {"content": None}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7}})
    assert got == Completion(["first", "second", ""], 12, 7)


@pytest.mark.parametrize("usage", [None, "12", {"prompt_tokens": -3, "completion_tokens": True},
                                   {"prompt_tokens": "12"}])
def test_a_usage_that_is_not_counts_reads_as_none(usage: object) -> None:
    got = completion_from({"choices": [{"message": {"content": "x"}}], "usage": usage})
    assert got == Completion(["x"], 0, 0)


@pytest.mark.parametrize("body", [None, [], "ok", {}, {"choices": []}, {"choices": "x"},
                                  {"choices": [None]}, {"choices": [{"message": "hi"}]},
                                  {"choices": [{"message": {"content": 3}}]}])
def test_a_body_that_is_not_a_completion_is_malformed(body: object) -> None:
    with pytest.raises(Malformed):
        completion_from(body)
