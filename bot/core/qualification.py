"""`require_qualified: true`, one behaviour on every surface (the CLI, the Action, the App).

A repository's config may ask that model-based scores publish only from a model that `rtcbot
qualify` qualified for it. The record is read where each surface trusts it:

- `rtcbot review`: .rtcbot/qualification.json in the checkout (`refusal_from_file`);
- the Action: the same file at the pull request's *base* commit (`refusal_from_text` on its text
  from the contents API), never the pull request's own copy, which its author could write;
- the App: the `qualifications` table (bot/store/store.py), written by `rtcbot qualify --database`
  (`refusal_from_store`).

Each reading is a `Standing`: whether a record exists there, and why the model is not qualified
in it ("" when it is). When the model is not qualified, under `require_qualified: true` the
surface hands the analyzers `refusing_factory(reason)` (bot/core/llm.py): EditingRTC,
SynthesisRTC, CRScore's claims and AutoFix's fixes get no model, while Semgrep's findings, the
code smells and the execution findings still publish, and `reason` (which model ran, that it is
not qualified, how to qualify it) is a note on every check run. Without it, a record that exists
and does not qualify the model makes the model's scores inconclusive (analyzers/report.py
`Inconclusive.UNQUALIFIED`: no advice to the author, and a gate over them fails closed unless
`gate_inconclusive: ignore`), with `Standing.unqualified` (the same words) as the note; no record
at all changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
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


def unqualified(model: str, repo: str, detail: str) -> str:
    """The note when a record exists and does not qualify `model`, without `require_qualified`."""
    return (f"this run's model {model!r} is not qualified for {repo}: {detail}. Its model-based scores "
            f"are inconclusive (the evidence is the model's, not the change's); {HOW}")


@dataclass(frozen=True)
class Standing:
    """What a surface's qualification record says of the model that runs: whether a record
    exists (`recorded`; an unreadable one counts), and why the model is not qualified in it
    (`detail`, "" when it is)."""

    model: str
    repo: str
    recorded: bool
    detail: str = ""

    def refusal(self) -> str | None:
        """Under `require_qualified: true`: why the model is refused (None: it is qualified)."""
        return not_qualified(self.model, self.repo, self.detail) if self.detail else None

    def unqualified(self) -> str | None:
        """Without it: why the model's scores are inconclusive (None: it is qualified, or no
        record says anything of it)."""
        return unqualified(self.model, self.repo, self.detail) if self.detail and self.recorded else None


def standing_from_text(model: str, text: str | None, where: str, repo: str = "this repository") -> Standing:
    """The standing of `model` on `repo` given a record's JSON `text` found at `where` (None:
    there is no record there)."""
    if text is None:
        return Standing(model, repo, False, f"no qualification record at {where}")
    try:
        ok = qualified_in(text, where)
    except RecordError as e:
        return Standing(model, repo, True, str(e))
    if model in ok:
        return Standing(model, repo, True)
    return Standing(model, repo, True, f"qualified in {where}: {', '.join(sorted(ok)) or 'none'}")


def refusal_from_text(model: str, text: str | None, where: str, repo: str = "this repository") -> str | None:
    """Why `model` may not score `repo` under `require_qualified: true` (None: it may)."""
    return standing_from_text(model, text, where, repo).refusal()


def standing_from_file(model: str, checkout: Path | None) -> Standing:
    """`rtcbot review`: the record in the checkout (.rtcbot/qualification.json), read as every
    fixed-name file in a checkout is (analyzers/code/checkout_files.py: no link followed, a regular
    file of at most MAX_RECORD_BYTES)."""
    root = checkout or Path.cwd()
    try:
        text = read_text(root, RECORD_PATH.as_posix(), limit=MAX_RECORD_BYTES)
    except CheckoutFileError as e:
        return Standing(model, "this repository", True, str(e))
    return standing_from_text(model, text, str(root / RECORD_PATH))


def refusal_from_file(model: str, checkout: Path | None) -> str | None:
    return standing_from_file(model, checkout).refusal()


def standing_from_commit(gh: GitHub, repo: str, sha: str, model: str) -> Standing:
    """The Action: the record at the base commit `sha`, read through the contents API as the
    config is; the pull request's own copy (in the checkout) never counts."""
    from bot.github import GitHubError

    where = f"{RECORD_PATH.as_posix()} at the base commit {sha[:12]}"
    try:
        text = gh.config_text(repo, RECORD_PATH.as_posix(), sha)
    except GitHubError as e:
        return Standing(model, repo, True, f"{where} could not be read ({e.status}: {e.message})")
    return standing_from_text(model, text, where, repo)


class Record(Protocol):
    @property
    def qualified(self) -> bool: ...

    @property
    def figures(self) -> Any: ...


class Records(Protocol):
    def latest(self, repo: str, model: str) -> Record | None: ...

    def recorded(self, repo: str) -> bool: ...


class Store(Protocol):
    """Where the App keeps qualification records (bot/store/qualifications.py)."""

    @property
    def qualifications(self) -> Records: ...


def standing_from_store(store: Store, repo: str, model: str) -> Standing:
    """The App: the latest record of `model` on `repo` in its database (a record exists when
    any model was qualified, or failed to, for `repo`)."""
    row = store.qualifications.latest(repo, model)
    if row is None:
        return Standing(model, repo, store.qualifications.recorded(repo),
                        "no qualification record of it in the App's database")
    if row.qualified:
        return Standing(model, repo, True)
    reasons = row.figures.get("reasons") if isinstance(row.figures, dict) else None
    why = "; ".join(str(r) for r in reasons) if isinstance(reasons, list) and reasons else "it did not qualify"
    return Standing(model, repo, True, f"its latest qualification failed ({why})")


def refusal_from_store(store: Store, repo: str, model: str) -> str | None:
    return standing_from_store(store, repo, model).refusal()
