"""`require_qualified: true`, one behaviour on every surface (the CLI, the Action, the App).

A repository's config may ask that model-based scores publish only from a model that `rtcbot
qualify` qualified for it. The record is read where each surface trusts it:

- `rtcbot review`: .rtcbot/qualification.json in the checkout (`refusal_from_file`);
- the Action: the same file at the pull request's *base* commit (`refusal_from_text` on its text
  from the contents API), never the pull request's own copy, which its author could write;
- the App: the `qualifications` table (bot/store/store.py), written by `rtcbot qualify --database`
  (`refusal_from_store`).

When the model is not qualified, the surface hands the analyzers `refusing_factory(reason)` (bot/core/llm.py):
EditingRTC, SynthesisRTC, CRScore's claims and AutoFix's fixes get no model, while Semgrep's
findings, the code smells and the execution findings still publish, and `reason` (which model
ran, that it is not qualified, how to qualify it) is a note on every check run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from analyzers.code.checkout_files import CheckoutFileError, MiB, read_text
from analyzers.llm.client import LLMSettings
from analyzers.qualify import RecordError, qualified_in

if TYPE_CHECKING:
    from bot.github import GitHub

RECORD_PATH = Path(".rtcbot") / "qualification.json"
MAX_RECORD_BYTES = MiB  # a record of a dozen models is a few KiB
HOW = "to qualify it, run `rtcbot qualify` (docs/qualify.md)"


def model_name(settings: LLMSettings) -> str:
    """The name of the model `settings` reach (the embedded model's alias when none is named)."""
    from analyzers.llm.local import ALIAS

    return settings.model or (ALIAS if not settings.base_url else "(the endpoint's default model)")


def not_qualified(model: str, repo: str, detail: str) -> str:
    """The note every check run / summary carries when `model` may not score `repo`."""
    return (f"this run's model {model!r} is not qualified for {repo} (require_qualified: true): "
            f"{detail}. Its model-based scores are not published; the findings that need no model "
            f"(Semgrep, code smells, test runs) are; {HOW}")


def refusal_from_text(model: str, text: str | None, where: str, repo: str = "this repository") -> str | None:
    """Why `model` may not score `repo` given a record's JSON `text` found at `where` (None:
    there is no record there); None when it may."""
    if text is None:
        return not_qualified(model, repo, f"no qualification record at {where}")
    try:
        ok = qualified_in(text, where)
    except RecordError as e:
        return not_qualified(model, repo, str(e))
    if model in ok:
        return None
    return not_qualified(model, repo, f"qualified in {where}: {', '.join(sorted(ok)) or 'none'}")


def refusal_from_file(model: str, checkout: Path | None) -> str | None:
    """`rtcbot review`: the record in the checkout (.rtcbot/qualification.json), read as every
    fixed-name file in a checkout is (analyzers/code/checkout_files.py: no link followed, a regular
    file of at most MAX_RECORD_BYTES)."""
    root = checkout or Path.cwd()
    try:
        text = read_text(root, RECORD_PATH.as_posix(), limit=MAX_RECORD_BYTES)
    except CheckoutFileError as e:
        return not_qualified(model, "this repository", str(e))
    return refusal_from_text(model, text, str(root / RECORD_PATH))


def refusal_from_commit(gh: GitHub, repo: str, sha: str, model: str) -> str | None:
    """The Action: the record at the base commit `sha`, read through the contents API as the
    config is; the pull request's own copy (in the checkout) never counts."""
    from bot.github import GitHubError

    where = f"{RECORD_PATH.as_posix()} at the base commit {sha[:12]}"
    try:
        text = gh.config_text(repo, RECORD_PATH.as_posix(), sha)
    except GitHubError as e:
        return not_qualified(model, repo, f"{where} could not be read ({e.status}: {e.message})")
    return refusal_from_text(model, text, where, repo)


class Record(Protocol):
    @property
    def qualified(self) -> bool: ...

    @property
    def figures(self) -> Any: ...


class Records(Protocol):
    def latest(self, repo: str, model: str) -> Record | None: ...


class Store(Protocol):
    """Where the App keeps qualification records (bot/store/qualifications.py)."""

    @property
    def qualifications(self) -> Records: ...


def refusal_from_store(store: Store, repo: str, model: str) -> str | None:
    """The App: the latest record of `model` on `repo` in its database."""
    row = store.qualifications.latest(repo, model)
    if row is None:
        return not_qualified(model, repo, "no qualification record in the App's database")
    if row.qualified:
        return None
    reasons = row.figures.get("reasons") if isinstance(row.figures, dict) else None
    why = "; ".join(str(r) for r in reasons) if isinstance(reasons, list) and reasons else "it did not qualify"
    return not_qualified(model, repo, f"its latest qualification failed ({why})")
