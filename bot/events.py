"""Webhook payload → zero or more jobs. Pure: no I/O, unit-tested on GitHub's example payloads.

Job kinds (each a plain dict, stored as JSON in the jobs table):

- `pr`: a pull request head to analyse; the worker reads the repository's configuration and
  fans it out into one `analyze` job per enabled analyzer and runs them at once (drafts stop
  there unless enabled).
- `analyze`: one analyzer on one head SHA: one check run "rtcbot / <title>".
- `installation`: remember an installation (created, deleted, suspended, …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CHECK_PREFIX = "rtcbot / "
RERUN_ACTION = "rerun"

PR_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review"})
COMMENT_ACTIONS = frozenset({"created", "edited"})

Job = dict[str, Any]


@dataclass
class Routed:
    jobs: list[Job] = field(default_factory=list)
    note: str = ""


def check_name(title: str) -> str:
    return f"{CHECK_PREFIX}{title}"


def external_id(pr_number: int | None, analyzer: str) -> str:
    """What a check run carries so that a re-run knows its PR even when `pull_requests` is
    empty (fork PRs): "<pr number>:<analyzer>"."""
    return f"{pr_number or ''}:{analyzer}"


def parse_external_id(value: str | None) -> tuple[int | None, str | None]:
    if not value or ":" not in value:
        return None, None
    pr, _, analyzer = value.partition(":")
    return (int(pr) if pr.isdigit() else None), (analyzer or None)


def _base(payload: Mapping[str, Any]) -> dict[str, Any]:
    repo = payload.get("repository") or {}
    inst = payload.get("installation") or {}
    return {
        "repo": repo.get("full_name", ""),
        "default_branch": repo.get("default_branch") or "main",
        "installation_id": inst.get("id"),
    }


def _pr_fields(pr: Mapping[str, Any]) -> dict[str, Any]:
    head = pr.get("head") or {}
    base = pr.get("base") or {}
    head_repo = (head.get("repo") or {}).get("full_name")
    base_repo = (base.get("repo") or {}).get("full_name")
    return {
        "pr_number": pr.get("number"),
        "head_sha": head.get("sha"),
        "draft": bool(pr.get("draft")),
        "fork": bool(head_repo and base_repo and head_repo != base_repo),
    }


def route(event: str, payload: Mapping[str, Any], *,
          comment_analyzers: Sequence[str] = ("crscore",),
          titles: Mapping[str, str] | None = None) -> Routed:
    """The jobs one delivery asks for. `titles` maps check titles ("EditingRTC") to analyzer
    names, for check runs whose external_id does not say (created before it did)."""
    action = payload.get("action")
    if event == "ping":
        return Routed(note="pong")
    if not isinstance(payload.get("repository"), Mapping) and not event.startswith("installation"):
        return Routed(note=f"{event}: no repository in the payload")
    base = _base(payload)

    if event == "pull_request":
        if action not in PR_ACTIONS:
            return Routed(note=f"pull_request.{action}: nothing to do")
        pr = payload.get("pull_request") or {}
        if pr.get("state", "open") != "open":
            return Routed(note=f"pull_request #{pr.get('number')} is {pr.get('state')}")
        return Routed([{**base, "kind": "pr", **_pr_fields(pr), "action": action}])

    if event in ("pull_request_review_comment", "pull_request_review"):
        wanted = COMMENT_ACTIONS if event == "pull_request_review_comment" else {"submitted"}
        if action not in wanted:
            return Routed(note=f"{event}.{action}: nothing to do")
        pr = payload.get("pull_request") or {}
        if pr.get("state", "open") != "open":
            return Routed(note=f"pull_request #{pr.get('number')} is {pr.get('state')}")
        fields = _pr_fields(pr)
        return Routed([{**base, "kind": "analyze", **fields, "analyzer": name, "force": True,
                        "reason": event} for name in comment_analyzers])

    if event == "check_run":
        run = payload.get("check_run") or {}
        if action == "requested_action":
            ident = (payload.get("requested_action") or {}).get("identifier")
            if ident != RERUN_ACTION:
                return Routed(note=f"check_run.requested_action {ident!r}: not ours")
        elif action != "rerequested":
            return Routed(note=f"check_run.{action}: nothing to do")
        pr_number, analyzer = parse_external_id(run.get("external_id"))
        if analyzer is None:
            name = str(run.get("name") or "")
            title = name[len(CHECK_PREFIX):] if name.startswith(CHECK_PREFIX) else None
            analyzer = (titles or {}).get(title or "")
            if analyzer is None:
                return Routed(note=f"check run {name!r} is not one of ours")
        if pr_number is None:
            prs = run.get("pull_requests") or []
            pr_number = prs[0].get("number") if prs else None
        if pr_number is None:
            return Routed(note="check run without a pull request (no external_id, no pull_requests)")
        return Routed([{**base, "kind": "analyze", "pr_number": pr_number, "head_sha": run.get("head_sha"),
                        "analyzer": analyzer, "force": True, "reason": f"check_run.{action}"}])

    if event == "check_suite":
        if action != "rerequested":
            return Routed(note=f"check_suite.{action}: nothing to do")
        suite = payload.get("check_suite") or {}
        prs = suite.get("pull_requests") or []
        if not prs:
            return Routed(note="check suite without a pull request")
        return Routed([{**base, "kind": "pr", "pr_number": p.get("number"), "head_sha": suite.get("head_sha"),
                        "draft": False, "fork": False, "action": "rerequested", "force": True} for p in prs])

    if event in ("installation", "installation_repositories"):
        inst = payload.get("installation") or {}
        account = (inst.get("account") or {}).get("login", "")
        active = not (event == "installation" and action in ("deleted", "suspend"))
        return Routed([{"kind": "installation", "repo": "", "installation_id": inst.get("id"),
                        "account": account, "active": active, "action": action}])

    return Routed(note=f"event {event!r} is not handled")
