"""One context builder for every surface: the App's jobs, the Action and `rtcbot review`.

Each surface reads its inputs its own way (the App and the Action through the GitHub REST API,
the CLI from a patch or a git range) and hands them here as plain data; this module decides
the rest the same way for all three:

- `select`: which analyzers run (the surface's defaults or an explicit list, the file's
  on/off, those a test command turns on when one is set), the test command, the model, and the notes
  every check run / summary carries (an invalid file, a refused model, the App running no code);
- `changes_from_github` / `changes_from_diff`: the change, with the file's `ignore` globs;
- `comments_from_github`: review comments, the same rules on the App and the Action;
- `head_files`: the files at the head, from a checkout at the head or else the contents API,
  none larger than the limit of a file analysed (analyzers/context.py `head_file_limit`);
- `analysis_context`: the AnalysisContext — review comments only when an analyzer that reads them runs
  (`reads_comments` on the analyzer, not a name hard-coded here), the files at the head, the
  per-analyzer options, the test command, the operator's tools.

Pure but for the callables it is given (`comments`, `file_loader`), which it calls lazily,
and for `git_head` / `head_files`, which read a checkout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzers import registry
from analyzers.code.diff import DEFAULT_IGNORES, ChangeSet, parse_diff, parse_github_files
from analyzers.context import AnalysisContext, HeadFileTooLarge, ReviewComment, Side, Tools, capped, read_inside
from analyzers.llm.client import LLMClient
from analyzers.report import Skipped
from bot.core.config import CONFIG_PATH, LoadedConfig
from bot.core.feedback import MARKER_RE


def test_command_titles() -> str:
    """The analyzers a test command turns on, by title ("SynthesisRTC"; "A and B")."""
    return " and ".join(registry.title(n) for n in registry.turned_on_by_test_command()) or "no analyzer"


def app_runs_no_code(config_name: str = CONFIG_PATH) -> str:
    return (f"The GitHub App never runs a pull request's code: `test_command` in {config_name} "
            f"is used by the Action and `rtcbot review` only, so {test_command_titles()} does not run here.")


@dataclass(frozen=True)
class Selection:
    """What a run does, decided from the repository's file and the surface's settings."""

    names: list[str]
    test_command: str | None = None
    model: str | None = None  # None: the surface's default model
    notes: list[str] = field(default_factory=list)  # for every check run / summary, one line each


def select(loaded: LoadedConfig, *, defaults: Sequence[str], explicit: Sequence[str] | None = None,
           test_command: str | None = None, runs_code: bool = True, no_code_note: str | None = "",
           allowed_models: Sequence[str] = (), config_name: str = CONFIG_PATH) -> Selection:
    """The analyzers, test command, model and notes of a run.

    `explicit`: an operator's exact list (the Action's `analyzers` input, `--analyzers`),
    which wins over the file; `test_command`: the operator's (input or flag), which wins over
    the file's; `runs_code`: False on the App, which never runs a pull request's code, and
    then `no_code_note` ("": the App's words; None: no note) says so when a command is set.
    `require_qualified` is each surface's to check, where it trusts the record (bot/core/qualification.py)."""
    notes = [loaded.message] if loaded.message else []
    cfg = loaded.config
    command = (test_command or cfg.test_command) if runs_code else None
    if not runs_code and (test_command or cfg.test_command) and no_code_note is not None:
        notes.append(no_code_note or app_runs_no_code(config_name))
    if explicit is not None:
        names = [registry.normalise(n) for n in explicit]
    else:
        names = loaded.enabled(defaults, command)
    model, model_note = loaded.model(allowed_models)
    if model_note:
        notes.append(model_note.replace(CONFIG_PATH, config_name))
    return Selection(names, command, model, notes)


def ignores(loaded: LoadedConfig, extra: Iterable[str] = ()) -> tuple[str, ...]:
    return (*DEFAULT_IGNORES, *loaded.config.ignore, *extra)


def changes_from_github(files: Sequence[Mapping[str, Any]], loaded: LoadedConfig) -> ChangeSet:
    """The change in GitHub's pull-request files (their `patch`es), minus ignored paths."""
    return parse_github_files(files, ignore=ignores(loaded))


MAX_LISTED_FILES = 3000  # GitHub's "list pull request files" stops here
UNLISTED_ITEM = "files GitHub did not list"  # the Skipped item that stands for them


@dataclass(frozen=True)
class Unlisted:
    """The files of a pull request that GitHub's list left out: what every check run says
    (`note`), and one "failed" item in every report (`item`), so that a gate on findings or
    scores cannot pass over files no analyzer saw (bot/core/gate.py)."""

    note: str
    item: Skipped


def unlisted_files(listed: int, changed_files: Callable[[], int | None]) -> Unlisted | None:
    """The files GitHub's list of a pull request's files left out when it stopped at its 3,000
    (None when the list is whole: GitHub lists every file of a smaller one). `changed_files`:
    the pull request's own count (`changed_files` of GET /pulls/{n}), asked only for a full
    list; when it cannot be read (None, or an error, said in the note), the files after the
    3,000 count as unanalysed all the same: the gate fails closed."""
    if listed < MAX_LISTED_FILES:
        return None
    try:
        total = changed_files()
    except Exception as e:  # the count is for the words only: the gate fails closed without it
        total, why = None, f" (its file count could not be read: {e})"
    else:
        why = ""
    if total is not None and total <= listed:
        return None
    if total is None:
        return Unlisted(
            f"GitHub lists at most {MAX_LISTED_FILES:,} files of a pull request and listed {listed:,} "
            f"here: any files after those were not analysed{why}.",
            Skipped(UNLISTED_ITEM, f"any files after the {listed:,} GitHub listed; how many could not be read{why}"))
    missing = total - listed
    return Unlisted(
        f"This pull request changes {total:,} files, but GitHub lists at most {MAX_LISTED_FILES:,}: "
        f"{missing:,} files were not analysed.",
        Skipped(UNLISTED_ITEM, f"{missing:,} of the pull request's {total:,} changed files: GitHub lists at most "
                               f"{MAX_LISTED_FILES:,}", count=missing))


def changes_from_diff(data: bytes | str, loaded: LoadedConfig,
                      extra_ignores: Iterable[str] = ()) -> ChangeSet:
    """The change in a unified diff, minus ignored paths (DiffError when it is not a diff)."""
    return parse_diff(data, ignore=ignores(loaded, extra_ignores))


Wrote = Callable[[Mapping[str, Any]], bool]  # whether rtcbot wrote a comment GitHub lists


def marked_by(wrote: Wrote | None) -> Wrote:
    """rtcbot's own comments where it posts as an identity others share (the Action's token:
    `github-actions[bot]` is every workflow's; the login the CLI is told): those `wrote` made
    that carry rtcbot's suggestion marker. A marker in anyone else's comment counts for
    nothing, and with no identity (`wrote` None) no comment is rtcbot's."""

    def ours(comment: Mapping[str, Any]) -> bool:
        body = comment.get("body")
        return wrote is not None and isinstance(body, str) and MARKER_RE.search(body) is not None \
            and wrote(comment)

    return ours


def comments_from_github(raw: Iterable[Mapping[str, Any]], ours: Wrote | None = None) -> list[ReviewComment]:
    """Review comments from GitHub's pull-request comments, for the App and the Action alike.
    `ours(comment)`: whether rtcbot wrote it (the App: its bot; the Action: its marker in the
    token's comments, `marked_by`): such comments are kept, marked `ours`, and never scored.

    Each keeps its side: `line` on `side` "LEFT" is a line of the base file (a removed line),
    on "RIGHT" one of the head; a multi-line comment keeps `start_line` / `start_side`; a
    comment on the file (`subject_type: file`) is about the whole file (line 0). An outdated
    comment (`line` null: its lines changed since) keeps its `original_line` but is marked
    `outdated` and placed nowhere: that number is a line of the commit it was written on, not
    of this diff. Ones without a path or a text body are left out."""
    out = []
    for c in raw:
        path, body = c.get("path"), c.get("body")
        if not path or not isinstance(body, str):
            continue
        user = c.get("user") or {}
        login = str(user.get("login") or "") if isinstance(user, dict) else ""
        whole_file = c.get("subject_type") == "file"
        line, outdated = _int(c.get("line")), False
        if whole_file:
            line = 0
        elif line is None:
            line, outdated = _int(c.get("original_line")) or 0, True
        start = _int(c.get("start_line") if not outdated else c.get("original_start_line"))
        out.append(ReviewComment(path=str(path), line=line, body=body, author=login, id=c.get("id"),
                                 side=_side(c.get("side")),
                                 start_line=None if whole_file else start,
                                 start_side=_side(c.get("start_side") or c.get("side"))
                                 if start is not None else None,
                                 outdated=outdated, ours=bool(ours and ours(c))))
    return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _side(value: Any) -> Side:
    return "LEFT" if value == "LEFT" else "RIGHT"


def git_head(workspace: Path) -> str | None:
    """The commit a checkout is at (read from .git, no git started), None when unknown."""
    git = workspace / ".git"
    try:
        ref = (git / "HEAD").read_text().strip()
        return (git / ref[5:]).read_text().strip() if ref.startswith("ref: ") else ref
    except (OSError, ValueError):
        return None


def head_files(checkout: Path | None, fallback: Callable[[str], str | None], *,
               limit: int) -> Callable[[str], str | None]:
    """The head's files: from `checkout` (a checkout at the head; None: none) for paths inside
    it, else from `fallback` (the contents API); each read once. One over `limit` bytes raises
    HeadFileTooLarge, each time it is asked for (a checkout's is never read past the limit)."""
    cache: dict[str, str | None | HeadFileTooLarge] = {}

    def load(path: str) -> str | None:
        if path not in cache:
            try:
                local = read_inside(checkout, path, limit) if checkout is not None else None
                cache[path] = local if local is not None else capped(fallback(path), limit)
            except HeadFileTooLarge as e:
                cache[path] = e
        got = cache[path]
        if isinstance(got, HeadFileTooLarge):
            raise HeadFileTooLarge(got.size, got.limit)
        return got

    return load


def wants_comments(names: Iterable[str]) -> bool:
    """Whether any of these analyzers reads review comments."""
    return any(registry.reads_comments(n) for n in names)


Comments = Sequence[ReviewComment] | Callable[[], Sequence[ReviewComment]]


def analysis_context(loaded: LoadedConfig, selection: Selection, *, tools: Tools,
                     llm_factory: Callable[[], LLMClient] | None, comments: Comments = (),
                     file_loader: Callable[[str], str | None] | None = None,
                     repo_path: Path | None = None) -> AnalysisContext:
    """The AnalysisContext of a run. `comments` (a list, or a callable that fetches them) is
    read only when an analyzer of `selection` reads comments."""
    got: list[ReviewComment] = []
    if wants_comments(selection.names):
        got = list(comments() if callable(comments) else comments)
    return AnalysisContext(llm_factory=llm_factory, comments=got, repo_path=repo_path,
                           file_loader=file_loader, options=dict(loaded.config.options),
                           test_command=selection.test_command, tools=tools)
