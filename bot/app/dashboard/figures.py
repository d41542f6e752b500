"""The dashboard's figures: plain rows from the store in, plain numbers out (pure; no Flask,
no database, no charts). bot/app/dashboard/data.py reads the rows; charts.py draws the charts.

What each analyzer shows is its own (its `dashboard`, analyzers/presentation.py): this module
hands every analyzer that draws one its check runs, their findings and its published
suggestions, and adds what is no analyzer's (pull requests, LLM use). It names no analyzer.

Weeks are ISO weeks (UTC), labelled by their Monday ("2026-11-23"). A pull request counts once
per check: the check run of its newest head."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from analyzers import registry
from analyzers.presentation import DashboardData, Item, Panel, Run, Suggestion, week
from reporters.check_run import check_name_of

__all__ = ["Figures", "Item", "Job", "Run", "Section", "Suggestion", "figures", "item_checks", "week"]


@dataclass(frozen=True)
class Job:
    pr_number: int | None
    llm_requests: int
    llm_tokens: int
    created_at: float
    prompt_tokens: int = 0  # the tokens split (0: a job recorded before the split)
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the endpoint's prefix cache served


@dataclass(frozen=True)
class Section:
    """One analyzer's part of the page."""

    name: str
    title: str
    panel: Panel


@dataclass
class Figures:
    repo: str
    sections: list[Section] = field(default_factory=list)
    llm: list[dict[str, Any]] = field(default_factory=list)  # week, requests, tokens
    totals: dict[str, Any] = field(default_factory=dict)  # prs, llm_requests, llm_tokens, llm_*_tokens

    @property
    def empty(self) -> bool:
        return all(s.panel.empty for s in self.sections) and not self.llm


def item_checks() -> tuple[str, ...]:
    """The check runs whose findings the page reads: those of every analyzer that draws."""
    return tuple(check for name, _, _ in registry.dashboards() if (check := check_name_of(name)) is not None)


def latest_per_pr(runs: Iterable[Run], name: str) -> list[Run]:
    """Of the check runs called `name`, each pull request's newest, by PR number."""
    best: dict[int, Run] = {}
    for r in runs:
        if r.name != name or r.pr_number is None:
            continue
        if r.pr_number not in best or r.updated_at > best[r.pr_number].updated_at:
            best[r.pr_number] = r
    return [best[k] for k in sorted(best)]


def llm(jobs: Sequence[Job]) -> list[dict[str, Any]]:
    weeks: dict[str, list[int]] = {}
    for j in jobs:
        acc = weeks.setdefault(week(j.created_at), [0, 0])
        acc[0] += j.llm_requests
        acc[1] += j.llm_tokens
    return [{"week": w, "requests": r, "tokens": t} for w, (r, t) in sorted(weeks.items())]


def run_url(github_url: str, repo: str, github_id: int | None) -> str | None:
    return f"{github_url.rstrip('/')}/{repo}/runs/{github_id}" if github_id else None


def line_url(github_url: str, repo: str, head_sha: str, path: str | None, start: int | None,
             end: int | None) -> str | None:
    if not path:
        return None
    anchor = f"#L{start}" + (f"-L{end}" if end and start and end != start else "") if start else ""
    return f"{github_url.rstrip('/')}/{repo}/blob/{quote(head_sha, safe='')}/{quote(path)}{anchor}"


@dataclass(frozen=True)
class GitHubLinks:
    """The links an analyzer's panel makes, on the App's GitHub (analyzers/presentation.py `Links`)."""

    github_url: str
    repo: str

    def run(self, run: Run) -> str | None:
        return run_url(self.github_url, self.repo, run.github_id)

    def pull(self, number: int | None) -> str | None:
        return f"{self.github_url.rstrip('/')}/{self.repo}/pull/{number}" if number else None

    def lines(self, run: Run, path: str | None, start: int | None, end: int | None) -> str | None:
        return line_url(self.github_url, self.repo, run.head_sha, path, start, end)


def figures(repo: str, runs: Sequence[Run], items: Sequence[Item], jobs: Sequence[Job],
            suggestions: Sequence[Suggestion], github_url: str) -> Figures:
    """Every figure of one repository's page: each drawing analyzer's panel, in registry order,
    then the pull requests and the LLM use."""
    links = GitHubLinks(github_url, repo)
    sections = []
    for name, title, draw in registry.dashboards():
        own = latest_per_pr(runs, check_name_of(name) or "")
        ids = {r.id for r in own}
        data = DashboardData(repo, own, [it for it in items if it.run_id in ids],
                             [s for s in suggestions if s.analyzer == name], links)
        sections.append(Section(name, title, draw(data)))
    return Figures(repo=repo, sections=sections, llm=llm(jobs), totals={
        "prs": len({r.pr_number for r in runs if r.pr_number is not None}),
        "llm_requests": sum(j.llm_requests for j in jobs),
        "llm_tokens": sum(j.llm_tokens for j in jobs),
        "llm_prompt_tokens": sum(j.prompt_tokens for j in jobs),
        "llm_completion_tokens": sum(j.completion_tokens for j in jobs),
        "llm_cached_tokens": sum(j.cached_tokens for j in jobs),
    })
