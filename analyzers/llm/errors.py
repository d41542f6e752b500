"""The LLM client's errors (analyzers/llm/client.py re-exports them). Their text never carries an
endpoint's credentials: every URL in it is redacted when the error is made (analyzers/urls.py),
so a check run, an output or a log line that shows the error shows `http://***@host/v1?key=***`.

Nor does their text name the operator's endpoint: str() (what a check run, a step summary, a
pull request review or an output shows) says "the LLM endpoint" and names the model; the
endpoint itself, redacted, travels beside it (`endpoint`) for what only the operator reads —
the service's log and the command line's one-line error (`for_operator`)."""

from __future__ import annotations

from analyzers.urls import redact_url, redact_urls


class LLMError(RuntimeError):
    """An LLM failure the user can act on; str() is one clear line, its URLs redacted, naming
    no endpoint; `endpoint`: the endpoint it concerns, redacted (None when it names none)."""

    def __init__(self, *args: object, endpoint: str | None = None) -> None:
        super().__init__(*(redact_urls(a) if isinstance(a, str) else a for a in args))
        self.endpoint = redact_url(endpoint) if endpoint else None

    def for_operator(self) -> str:
        """The line with its endpoint named (redacted): for the operator's eyes only."""
        return f"{self} [endpoint {self.endpoint}]" if self.endpoint else str(self)


class BudgetExceeded(LLMError):
    """The run's request or token budget is spent."""


class Halted(LLMError):
    """A request not made: the view's `halt` condition said stop (analyzers/llm/format_watch.py)."""
