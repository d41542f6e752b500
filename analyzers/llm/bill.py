"""What a sample cost at the endpoint when it was asked: its bill, kept beside its answer.

A request that returns k samples costs one request, its prompt tokens and its completion
tokens; each sample carries a share (the first: the request and the prompt; the completion
tokens split evenly, the remainder to the first), so that the samples' bills add up to what
the endpoint counted. The bill is cached with the answer (`<key>:<index>:bill`), so a sample
served from the cache reports what it cost when it was asked: the figures every public output
shows (reporters/readable.py) are then the same whether rtcbot's cache answered or not, and
tell a stranger nothing about what this installation has asked before (docs/security.md).
What was actually spent (requests sent, tokens, the endpoint's cached prompt tokens) is
counted apart, in `Usage`, for the operator's own views.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Bill:
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def shares(self, k: int) -> list[Bill]:
        """This request's bill as k samples' shares that add up to it."""
        k = max(1, k)
        each, rest = divmod(self.completion_tokens, k)
        first = Bill(self.requests, self.prompt_tokens, each + rest)
        return [first, *[Bill(0, 0, each) for _ in range(k - 1)]]

    def to_json(self) -> str:
        return json.dumps([self.requests, self.prompt_tokens, self.completion_tokens])

    @staticmethod
    def from_json(text: str | None) -> Bill | None:
        """The bill cached beside an answer; None when there is none or it is not one."""
        try:
            values = json.loads(text) if text is not None else None
        except ValueError:
            return None
        if (not isinstance(values, list) or len(values) != 3
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values)):
            return None
        return Bill(*values)


def total(bills: list[Bill]) -> Bill:
    return Bill(sum(b.requests for b in bills), sum(b.prompt_tokens for b in bills),
                sum(b.completion_tokens for b in bills))
