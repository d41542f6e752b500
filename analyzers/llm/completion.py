"""A chat completion's parsed JSON body → what rtcbot reads of it (`Completion`): each choice's
text in index order, the token usage (with the prompt tokens the endpoint's cache served, where
it says: `usage.prompt_tokens_details.cached_tokens`), which texts the server stopped at max_tokens. A body that
is not a chat completion (a gateway's HTML page, an empty body) raises `Malformed`, which the
client retries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Malformed(Exception):
    """A 200 whose body is not a chat completion (a gateway's HTML page, an empty body)."""


@dataclass(frozen=True)
class Completion:
    """What rtcbot reads of a chat completion: each choice's text in index order, and usage;
    `at_limit`: the positions of the texts the server stopped at max_tokens."""

    texts: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    at_limit: frozenset[int] = frozenset()
    cached_tokens: int = 0  # of the prompt tokens, those the endpoint's prefix cache served


def _count_of(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def completion_from(data: object) -> Completion:
    """The chat completion in a parsed JSON body (raises Malformed when it is not one). Read
    by hand rather than through openai's typed models: building those costs a quarter of a
    request's CPU, for three fields."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise Malformed("no choices in the answer")
    indexed: list[tuple[int, str, bool]] = []  # (index, text, stopped at max_tokens)
    for position, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, str | None):
            raise Malformed(f"choice {position} has no message text")
        index = choice.get("index")
        indexed.append((index if isinstance(index, int) else position, content or "",
                        choice.get("finish_reason") == "length"))
    usage = data.get("usage") if isinstance(data, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    ordered = sorted(indexed, key=lambda x: x[0])
    details = usage.get("prompt_tokens_details")  # OpenAI's, vLLM's: {"cached_tokens": …}
    return Completion([t for _, t, _ in ordered], _count_of(usage, "prompt_tokens"),
                      _count_of(usage, "completion_tokens"), frozenset(i for i, c in enumerate(ordered) if c[2]),
                      _count_of(details, "cached_tokens") if isinstance(details, dict) else 0)
