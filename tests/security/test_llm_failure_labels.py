"""An LLM endpoint's failures become /metrics labels (rtcbot_llm_request_failures_total{reason}):
whatever status, body or error an endpoint (or what answers in its place) sends, the label is
one of a fixed set — an allowlist, never a value of the answer — so no answer can add series
to the operator's Prometheus or write its words there."""

from __future__ import annotations

import httpx2 as httpx  # the HTTP package openai runs on (its types)
import openai
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzers.llm.completion import Malformed
from analyzers.llm.retry import FAILURE_REASONS, failure_reason
from bot.app.vitals import llm_failures
from tests import hypothesis_profiles

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


@settings(max_examples=hypothesis_profiles.examples(200), deadline=None)
@given(st.integers(100, 999), st.text(max_size=200))
def test_any_status_and_body_is_one_of_the_known_reasons(status: int, body: str) -> None:
    response = httpx.Response(status, request=REQUEST, text=body)
    error = openai.APIStatusError(body, response=response, body=body)
    reason = failure_reason(error)
    assert reason in FAILURE_REASONS


def test_other_errors_are_known_reasons_too() -> None:
    for error in (openai.APIConnectionError(request=REQUEST), openai.APITimeoutError(request=REQUEST),
                  Malformed("<script>@alice</script>"), ValueError("status_999 {evil}"), KeyboardInterrupt()):
        assert failure_reason(error) in FAILURE_REASONS


def test_a_stored_reason_outside_the_set_is_exported_as_other() -> None:
    """A row written by another rtcbot (or by hand) cannot name a new series."""
    family = llm_failures([("timeout", 2), ('x"} 1\nrtcbot_up{a="', 5), ("status_5xx", 1)])
    labels = {s.labels["reason"]: s.value for s in family.samples}
    assert set(labels) == set(FAILURE_REASONS)
    assert labels["other"] == 5 and labels["timeout"] == 2 and labels["status_5xx"] == 1
