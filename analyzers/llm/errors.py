"""The LLM client's errors (analyzers/llm/client.py re-exports them). Their text never carries an
endpoint's credentials: every URL in it is redacted when the error is made (analyzers/urls.py),
so a check run, an output or a log line that shows the error shows `http://***@host/v1?key=***`."""

from __future__ import annotations

from analyzers.urls import redact_urls


class LLMError(RuntimeError):
    """An LLM failure the user can act on; str() is one clear line, its URLs redacted."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_urls(a) if isinstance(a, str) else a for a in args))


class BudgetExceeded(LLMError):
    """The run's request or token budget is spent."""


class Halted(LLMError):
    """A request not made: the view's `halt` condition said stop (analyzers/llm/format_watch.py)."""
