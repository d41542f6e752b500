"""How the LLM client meets a failed request: which failures are tried again (`retryable`: 429,
5xx, timeouts, lost connections, a body that is not a chat completion), when it gives up and how
long it waits in between (`RetryPolicy`), the one line a failure becomes (`describe`), and the
kind of failure it is counted as (`failure_reason`: one of FAILURE_REASONS, a fixed set, so that
a count by reason, the App's /metrics among them, never carries an answer's words)."""

from __future__ import annotations

from dataclasses import dataclass

from tenacity import RetryCallState, wait_exponential_jitter

from analyzers.llm.completion import Malformed
from analyzers.llm.errors import LLMError
from analyzers.llm.transport import CONNECT_ERRORS

# why an HTTP attempt failed: refused, reset or dropped; no answer within the timeout; answered
# 429 (rate limited), another 4xx (a key refused, a model not found, a request refused), a 5xx;
# a 200 whose body is not a chat completion; anything else
FAILURE_REASONS = ("connection", "timeout", "status_429", "status_4xx", "status_5xx", "invalid", "other")


def failure_reason(exc: BaseException) -> str:
    """The kind of a failed attempt, one of FAILURE_REASONS."""
    import openai  # here, not at the top: see analyzers/llm/__init__.py
    if isinstance(exc, Malformed):
        return "invalid"
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return "status_429" if code == 429 else "status_5xx" if code >= 500 else \
            "status_4xx" if code >= 400 else "other"
    if isinstance(exc, openai.APITimeoutError):  # before its base class, APIConnectionError
        return "timeout"
    return "connection" if isinstance(exc, openai.APIConnectionError) else "other"


def retryable(exc: BaseException) -> bool:
    import openai  # here, not at the top: see analyzers/llm/__init__.py
    if isinstance(exc, Malformed):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError | openai.APITimeoutError)


@dataclass(frozen=True)
class RetryPolicy:
    """When the client tries a failed request again, and after how long (LLMSettings' numbers)."""

    max_retries: int
    wait_initial: float
    wait_max: float

    def stop(self, state: RetryCallState) -> bool:
        """Give up after max_retries; after 2 tries when nothing listens (no point waiting). A
        connection that was made and then dropped (a gateway restarting) gets every retry."""
        import openai  # here, not at the top: see analyzers/llm/__init__.py
        if state.attempt_number > self.max_retries:
            return True
        exc = state.outcome.exception() if state.outcome else None
        # httpx's or httpx2's ConnectError: the client runs on either (transport.py)
        refused = (isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)
                   and isinstance(exc.__cause__, CONNECT_ERRORS))
        return refused and state.attempt_number >= 2

    def wait(self, state: RetryCallState) -> float:
        """Exponential backoff with jitter, or the server's Retry-After when it says more."""
        import openai  # here, not at the top: see analyzers/llm/__init__.py
        backoff = wait_exponential_jitter(multiplier=self.wait_initial,
                                          max=self.wait_max)(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, openai.APIStatusError):
            try:
                after = float(exc.response.headers.get("retry-after", "0"))
            except ValueError:
                after = 0.0
            return max(backoff, min(after, 120.0))
        return backoff


def describe(exc: BaseException, base_url: str, model: str) -> LLMError:
    """The one line a failed request becomes, naming the model; the endpoint travels beside it
    (`LLMError.endpoint`: the operator's to read, never published)."""
    import openai  # here, not at the top: see analyzers/llm/__init__.py
    where = f"the LLM endpoint (model {model!r})"
    if isinstance(exc, openai.NotFoundError):
        return LLMError(f"model {model!r} not found at the LLM endpoint, "
                        "or the endpoint is not OpenAI-compatible", endpoint=base_url)
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return LLMError(f"{where} refused the API key ({exc.status_code})", endpoint=base_url)
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(f"{where} timed out", endpoint=base_url)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(f"cannot reach {where}: connection failed", endpoint=base_url)
    if isinstance(exc, openai.APIStatusError):
        return LLMError(f"{where} answered HTTP {exc.status_code}", endpoint=base_url)
    # the exception's own words may quote the URL: only its kind is said
    return LLMError(f"LLM request to {where} failed ({type(exc).__name__})", endpoint=base_url)
