"""GitHub's refusals as one error: `GitHubError`, with GitHub's own message and machine-readable
reasons read from its answer (or status 0 when GitHub could not be reached)."""

from __future__ import annotations

import httpx


class GitHubError(RuntimeError):
    """GitHub refused a request (after the retries the policy allows), or could not be reached
    (status 0). One line: "GitHub answered 404: Not Found"."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        method: str = "",
        path: str = "",
        codes: tuple[str, ...] = (),
    ) -> None:
        text = (
            f"GitHub answered {status}: {message}"
            if status
            else f"could not reach GitHub ({method} {path}): {message}"
        )
        super().__init__(text)
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.codes = codes  # the `errors[].code`s of GitHub's answer ("too_large", ...)


def refusal_message(r: httpx.Response) -> str:
    """GitHub's `message` of a refusal, else the start of its body, else the status' reason."""
    try:
        data = r.json()
    except ValueError:
        return r.text[:200] or r.reason_phrase
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:500]
    return r.text[:200] or r.reason_phrase


def refusal_codes(r: httpx.Response) -> tuple[str, ...]:
    """The `code`s of a refusal's `errors` list (GitHub's machine-readable reasons)."""
    try:
        errors = r.json().get("errors")
    except (ValueError, AttributeError):
        return ()
    if not isinstance(errors, list):
        return ()
    return tuple(str(e["code"]) for e in errors if isinstance(e, dict) and e.get("code"))
