"""One context builder for every surface: the App's jobs, the Action and `rtcbot review`.

Each surface reads its inputs its own way (the App and the Action through the GitHub REST API,
the CLI from a patch or a git range) and hands them here as plain data; this module decides
the rest the same way for all three:

- `select`: which analyzers run (the surface's defaults or an explicit list, the file's
  on/off, SynthesisRTC when a test command is set), the test command, the model, and the notes
  every check run / summary carries (an invalid file, a refused model, the App running no code);
- `changes_from_github` / `changes_from_diff`: the change, with the file's `ignore` globs;
- `comments_from_github`: review comments, the same rules on the App and the Action;
- `head_files`: the files at the head, from a checkout at the head or else the contents API;
- `build`: the AnalysisContext — review comments only when an analyzer that reads them runs
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
from analyzers.context import AnalysisContext, ReviewComment, Tools
from analyzers.diff import DEFAULT_IGNORES, ChangeSet, parse_diff, parse_github_files
from analyzers.llm import LLMClient
from bot.config import CONFIG_PATH, SYNTHESIS, LoadedConfig

EXECUTING_ANALYZERS = (SYNTHESIS,)  # run the repository's tests on the pull request's code


def app_runs_no_code(config_name: str = CONFIG_PATH) -> str:
    return (f"The GitHub App never runs a pull request's code: `test_command` in {config_name} "
            "is used by the Action and `rtcbot review` only, so SynthesisRTC does not run here.")


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
    then `no_code_note` ("": the App's words; None: no note) says so when a command is set."""
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


def changes_from_diff(data: bytes | str, loaded: LoadedConfig,
                      extra_ignores: Iterable[str] = ()) -> ChangeSet:
    """The change in a unified diff, minus ignored paths (DiffError when it is not a diff)."""
    return parse_diff(data, ignore=ignores(loaded, extra_ignores))


def comments_from_github(raw: Iterable[Mapping[str, Any]]) -> list[ReviewComment]:
    """Review comments from GitHub's pull-request comments. Outdated ones (no `line`: the line
    is no longer in the diff) and ones without a path or a text body are left out."""
    out = []
    for c in raw:
        line, path, body = c.get("line"), c.get("path"), c.get("body")
        if line is None or not path or not isinstance(body, str):
            continue
        user = c.get("user") or {}
        login = str(user.get("login") or "") if isinstance(user, dict) else ""
        out.append(ReviewComment(path=str(path), line=int(line), body=body, author=login,
                                 id=c.get("id")))
    return out


def git_head(workspace: Path) -> str | None:
    """The commit a checkout is at (read from .git, no git started), None when unknown."""
    git = workspace / ".git"
    try:
        ref = (git / "HEAD").read_text().strip()
        return (git / ref[5:]).read_text().strip() if ref.startswith("ref: ") else ref
    except (OSError, ValueError):
        return None


def head_files(checkout: Path | None,
               fallback: Callable[[str], str | None]) -> Callable[[str], str | None]:
    """The head's files: from `checkout` (a checkout at the head; None: none) for paths inside
    it, else from `fallback` (the contents API); each read once."""
    cache: dict[str, str | None] = {}
    root = checkout.resolve() if checkout is not None else None

    def load(path: str) -> str | None:
        if path not in cache:
            local = (root / path).resolve() if root is not None else None
            if root is not None and local is not None and local.is_relative_to(root) \
                    and local.is_file():
                cache[path] = local.read_text(encoding="utf-8", errors="replace")
            else:
                cache[path] = fallback(path)
        return cache[path]

    return load


def wants_comments(names: Iterable[str]) -> bool:
    """Whether any of these analyzers reads review comments."""
    return any(registry.reads_comments(n) for n in names)


Comments = Sequence[ReviewComment] | Callable[[], Sequence[ReviewComment]]


def build(loaded: LoadedConfig, selection: Selection, *, tools: Tools,
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
