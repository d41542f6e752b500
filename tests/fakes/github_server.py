"""A fake GitHub REST server on loopback, for the App's and the Action's tests.

It speaks real HTTP and checks what GitHub checks:

- App JWTs (RS256 with the App's key, `iss` = the App id, `iat` in the past, `exp` at most
  10 minutes after `iat`) on `POST /app/installations/{id}/access_tokens`, which issues
  installation tokens (counted; they expire after `token_ttl_s`);
- installation tokens on every repository call (401 without one, 404 for another repository);
- check runs: 422 for more than 50 annotations in one request, a `summary` or `text` over
  65,535 UTF-8 bytes (GitHub counts bytes, and answers with its error object: "summary exceeds
  a maximum bytesize of 65535"), an annotation `message` or `raw_details` over 64 KB, a title
  over 255 (bytes here, the stricter reading of GitHub's "characters"), a missing field, a bad
  level or conclusion, more than 3 actions; annotations accumulate over updates as on GitHub;
- pagination of PR files (at most 100 per page, `Link` headers), the contents API;
- failures on demand: `fail_next(count, status=403, retry_after=1)` answers like a
  secondary rate limit (`retry_after=None`: one without `Retry-After`), `fail_next(count,
  status=403, reset_in=2)` like the primary limit (`x-ratelimit-remaining: 0`, a reset 2 s on);
- failures at random: `chaos(rate, statuses=(500, 502, 429, 403), seed=1, match=None)` answers
  each request (whose "METHOD path" contains `match`) with one of `statuses` at probability
  `rate` (403 and 429 as a secondary limit with `Retry-After: 1`, 422 as a validation
  failure); `injected` counts them by status;
- the contents API's raw media type (`Accept: application/vnd.github.raw+json`); its JSON form
  answers a file over `max_json_bytes` (1 MB) with `encoding: none` and no content, and both
  answer one over `max_raw_bytes` (100 MB) with 403 `too_large`, as GitHub does; a huge file is
  a `Padded` one, made up as it goes out (never held whole);
- every answer's bytes the server wrote (`requests[i].sent`: a client that hangs up stops it);
- the conversation (tests/fakes/github_conversation.py): comments in it, replies in a review
  thread, reactions on both, each user's permission on the repository (`permissions`);
- every request's headers, recorded (`requests[i].headers`, lower-case names);
- a workflow's `GITHUB_TOKEN` (`grant_token`) for the Action, read-only on demand
  (`read_only_checks`: check-run creation answers 403 as for a fork's pull request);
- GitHub's published OpenAPI description (tests/contract/openapi.py): every request is checked
  against its operation (path, path parameters, query, JSON body); a body the description
  rejects answers 422 as on GitHub, an operation it lacks 404, and each such request is a
  `violations` entry. The `fake_github` fixture (and a `with` block) fails the test when there
  are any, unless the fake was made with `expect_violations=True` (tests of bad requests).
  Answers are built on the description's own examples, so they carry every described field.

A pull request is built from a unified diff (`add_pr(diff_text=…)`, e.g. one of
`tests/fixtures/prs/*.diff`), split into GitHub's per-file patches.

    def test_x(fake_github):
        gh = fake_github()
        pr = gh.add_pr(1, diff_text=Path("x.diff").read_text())
        settings = ServiceSettings(app_id=gh.app_id, private_key=gh.private_key_pem,
                                   github_api_url=gh.base_url, ...)
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import itertools
import json
import random
import re
import secrets
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlparse

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from unidiff.patch import PatchSet

from tests.contract.openapi import Violation, description
from tests.fakes import LoopbackServer
from tests.fakes.github_conversation import Conversation
from tests.fakes.github_conversation import user_id as user_id  # re-exported: the fake's user ids
from tests.fakes.github_hooks import HookDeliveries

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WEBHOOKS = FIXTURES / "github" / "webhooks"
PRS = FIXTURES / "prs"

MAX_OUTPUT = 65_535  # bytes of output.summary / output.text
MAX_ANNOTATION_DETAILS = 64 * 1024  # bytes of an annotation's message / raw_details
LEVELS = ("notice", "warning", "failure")
CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")

_KEY_LOCK = threading.Lock()
_KEY: rsa.RSAPrivateKey | None = None


def app_key() -> rsa.RSAPrivateKey:
    """One RSA key per test process (generating one takes a moment)."""
    global _KEY
    with _KEY_LOCK:
        if _KEY is None:
            _KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return _KEY


def sign(body: bytes, secret: str) -> str:
    """The X-Hub-Signature-256 header GitHub would send."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def files_from_diff(diff_text: str) -> list[dict[str, Any]]:
    """A unified diff → the PR files API's entries (per-file `patch` without file headers)."""
    out = []
    for pf in PatchSet(diff_text):
        src = pf.source_file[2:] if pf.source_file.startswith("a/") else pf.source_file
        path = pf.path
        if pf.is_added_file:
            status = "added"
        elif pf.is_removed_file:
            status = "removed"
        elif src not in ("/dev/null", path) and not pf.is_removed_file:
            status = "renamed"
        else:
            status = "modified"
        entry: dict[str, Any] = {
            "sha": hashlib.sha1(str(pf).encode()).hexdigest(),
            "filename": path,
            "status": status,
            "additions": pf.added,
            "deletions": pf.removed,
            "changes": pf.added + pf.removed,
        }
        if status == "renamed":
            entry["previous_filename"] = src
        if not pf.is_binary_file and len(pf):
            entry["patch"] = "".join(str(h) for h in pf).rstrip("\n")
        out.append(entry)
    return out


def many_hunks_diff(path: str = "src/many.py", hunks: int = 60) -> str:
    """A diff of one Python file with `hunks` separate one-line edits (for > 50 annotations)."""
    lines = [f"--- a/{path}", f"+++ b/{path}"]
    for i in range(hunks):
        start = 1 + i * 10
        lines += [f"@@ -{start},3 +{start},3 @@", f" def f{i}(x):", f"-    return x + {i}",
                  f"+    return x * {i}", "     # end"]
    return "\n".join(lines) + "\n"


Answer = tuple[int, Any, dict[str, str], int | None]  # status, JSON (or Raw), headers, installation


class Raw(str):
    """A body served as is (the contents API's raw media type), not as JSON."""


@dataclass(frozen=True)
class Padded:
    """A file of `size` bytes (`line` over and over, the last one cut), made up as it is served:
    a file of up to GitHub's 100 MB without holding it in memory."""

    size: int
    line: bytes = b"x = 0  # padding\n"

    def chunks(self, block: int = 64 * 1024) -> Iterator[bytes]:
        run = self.line * (block // len(self.line) + 1)
        for start in range(0, self.size, block):
            yield run[:min(block, self.size - start)]

    def text(self) -> str:
        return b"".join(self.chunks()).decode()


@dataclass
class Request:
    method: str
    path: str
    status: int
    at: float
    installation: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    target: str = ""  # the path with its query, as sent
    response: Any = None  # the JSON (or Raw, or Padded) answer
    sent: int | None = None  # the answer's body bytes the server wrote (None: still going out)


def diff_lines(patch: str) -> dict[str, set[int]]:
    """The lines a patch's hunks show: {"RIGHT": head line numbers, "LEFT": base line numbers}."""
    out: dict[str, set[int]] = {"RIGHT": set(), "LEFT": set()}
    old = new = 0
    for line in patch.splitlines():
        m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
        if m:
            old, new = int(m.group(1)), int(m.group(2))
        elif line.startswith("+"):
            out["RIGHT"].add(new)
            new += 1
        elif line.startswith("-"):
            out["LEFT"].add(old)
            old += 1
        elif not line.startswith("\\"):
            out["RIGHT"].add(new)
            out["LEFT"].add(old)
            old, new = old + 1, new + 1
    return out


@dataclass
class PullRequest:
    number: int
    head_sha: str
    files: list[dict[str, Any]]
    draft: bool = False
    state: str = "open"
    comments: list[dict[str, Any]] = field(default_factory=list)
    head_repo: str | None = None  # a fork's full name
    author: str = "Codertocat"  # its user's login (GitHub's example payloads' user), id `user_id(author)`


class FakeGitHub(Conversation, HookDeliveries, LoopbackServer):
    def __init__(self, *, app_id: int = 4242, installation_id: int = 77, repo: str = "octo-org/widgets",
                 default_branch: str = "main", token_ttl_s: float = 3600.0,
                 expect_violations: bool = False) -> None:
        self.app_id = app_id
        self.installation_id = installation_id
        self.repo = repo
        self.repository_id = 300_000 + zlib.crc32(f"{installation_id}:{repo}".encode()) % 100_000  # GitHub's id
        self.default_branch = default_branch
        self.token_ttl_s = token_ttl_s
        self.key = app_key()
        # the public keys GitHub checks an App's JWT with: an App may hold several private keys
        # at once (a rotation adds the new one, then deletes the old one: `app_keys`)
        self.app_keys: list[rsa.RSAPublicKey] = [self.key.public_key()]
        self.pulls: dict[int, PullRequest] = {}
        self.contents: dict[tuple[str, str], str | Padded] = {}  # (ref, path) → text
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.reviews: list[dict[str, Any]] = []  # pull request reviews posted, in order
        self.reactions: dict[int, list[dict[str, Any]]] = {}  # review comment id → its reactions
        self.tokens: dict[str, tuple[int, float]] = {}
        self.token_requests = 0
        self.jwt_claims: list[dict[str, Any]] = []
        self.requests: list[Request] = []
        self.rejections: list[tuple[int, str]] = []  # (status, message) of 4xx answers given
        self.read_only_checks = False  # a token that may not write check runs (fork PRs)
        # the login every token of the fake acts as: its reviews, replies and reactions, and
        # GraphQL's `viewer` (the Action's GITHUB_TOKEN is github-actions[bot] on GitHub)
        self.bot = "rtcbot[bot]"
        self.contract = description()  # GitHub's OpenAPI description (the operations rtcbot uses)
        self.violations: list[Violation] = []  # requests the description rejects
        self.expect_violations = expect_violations  # a test that sends bad requests on purpose
        self.max_json_bytes = 1024 * 1024  # the contents API's JSON form: larger, no content
        self.max_raw_bytes = 100 * 1024 * 1024  # larger: 403 too_large, whatever the media type
        self._failures: list[tuple[int, float | None, str | None, float | None]] = []
        self._chaos: list[tuple[float, tuple[int, ...], str | None, random.Random]] = []
        self.injected: Counter[int] = Counter()  # random failures given, by status
        self._ids = itertools.count(1000)
        self._lock = threading.RLock()
        # the dashboard's "Sign in with GitHub" (the App's OAuth web flow, bot/app/dashboard/oauth.py):
        # /login/oauth/authorize sends the browser straight back with a code for `user`, and
        # user-to-server tokens reach `user_installations` (installation id → repositories)
        self.oauth_client_id = "Iv1.fake0a1b2c3d4e5f"
        self.oauth_client_secret = "fake-oauth-client-secret-0123456789"
        self.user = "octocat"
        self.user_installations: dict[int, list[str]] = {installation_id: [repo]}
        # more installations of the App on this one server (`install`): installation id → its
        # repository, and the PRs opened in each (PR numbers are the server's, shared by all)
        self.installations: dict[int, str] = {installation_id: repo}
        self.pr_installation: dict[int, int] = {}
        self.oauth_codes: dict[str, tuple[str, str]] = {}  # code → (redirect_uri, login)
        self.user_tokens: dict[str, str] = {}  # user-to-server token → login
        self._init_conversation()  # comments in the conversation, replies, reactions, permissions
        self._init_hooks()  # the App's webhook: deliveries sent, listed and redelivered

    # -- setup ------------------------------------------------------------------------------
    @property
    def private_key_pem(self) -> str:
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()).decode()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def install(self, installation_id: int, repo: str) -> None:
        """Another installation of the App, on `repo`: its tokens reach that repository alone,
        and the PRs added with `installation=` are its (their webhooks name it)."""
        with self._lock:
            self.installations[installation_id] = repo

    def add_pr(self, number: int, *, diff_text: str | None = None, fixture: str | None = None,
               files: list[dict[str, Any]] | None = None, head_sha: str | None = None,
               draft: bool = False, head_repo: str | None = None, author: str = "Codertocat",
               installation: int | None = None) -> PullRequest:
        if fixture is not None:
            diff_text = (PRS / fixture).read_text(encoding="utf-8")
        if files is None:
            files = files_from_diff(diff_text or "")
        sha = head_sha or hashlib.sha1(json.dumps(files, sort_keys=True).encode()).hexdigest()
        pr = PullRequest(number, sha, files, draft=draft, head_repo=head_repo, author=author)
        with self._lock:
            self.pulls[number] = pr
            if installation is not None:
                self.pr_installation[number] = installation
        return pr

    def push(self, number: int, *, diff_text: str | None = None, files: list[dict[str, Any]] | None = None,
             head_sha: str | None = None) -> PullRequest:
        """A new head for an existing PR (a `synchronize`)."""
        old = self.pulls[number]
        new_files = files if files is not None else files_from_diff(diff_text) if diff_text else old.files
        sha = head_sha or hashlib.sha1((old.head_sha + json.dumps(new_files, sort_keys=True)).encode()).hexdigest()
        with self._lock:
            old.files, old.head_sha = new_files, sha
        return old

    def set_file(self, path: str, text: str | Padded, ref: str | None = None) -> None:
        with self._lock:
            self.contents[(ref or self.default_branch, path)] = text

    def add_comment(self, number: int, path: str, line: int | None, body: str, user: str = "alice",
                    user_type: str = "User", *, side: str = "RIGHT", start_line: int | None = None,
                    start_side: str | None = None, original_line: int | None = None,
                    subject_type: str = "line") -> dict[str, Any]:
        """A review comment as GitHub lists it: `line` on `side` (LEFT: the base file's numbers),
        a range from `start_line` on `start_side`; outdated: `line=None` with `original_line`."""
        pr = self.pulls[number]
        cid = next(self._ids)
        c = {"id": cid, "path": path, "line": line, "original_line": line if original_line is None else original_line,
             "side": side, "start_line": start_line, "original_start_line": start_line,
             "start_side": start_side if start_side or start_line is None else side, "subject_type": subject_type,
             "position": None if line is None else 1, "body": body,
             "commit_id": pr.head_sha, "user": {"login": user, "id": user_id(user), "type": user_type},
             "url": f"{self.base_url}/repos/{self.repo}/pulls/comments/{cid}"}
        with self._lock:
            pr.comments.append(c)
        return c

    def react(self, comment_id: int, login: str, content: str = "+1", user_type: str = "User") -> dict[str, Any]:
        """`login` reacts to review comment `comment_id` (GitHub keeps one reaction of a kind
        per person and comment; the fake keeps every call, as a test of counting needs)."""
        rid = next(self._ids)
        r = {"id": rid, "node_id": f"REA_{rid}", "content": content, "created_at": _iso(time.time()),
             "user": {"login": login, "id": user_id(login), "type": user_type}}
        with self._lock:
            self.reactions.setdefault(comment_id, []).append(r)
        return r

    def grant_token(self, token: str) -> None:
        """Accept `token` for this repository without expiry, like a workflow's GITHUB_TOKEN."""
        with self._lock:
            self.tokens[token] = (self.installation_id, float("inf"))

    def fail_next(self, count: int, status: int = 403, retry_after: float | None = 1,
                  match: str | None = None, reset_in: float | None = None) -> None:
        """Answer the next `count` requests (whose "METHOD path" contains `match`) with `status`;
        `reset_in`: as the primary rate limit, which resets that many seconds from now."""
        with self._lock:
            self._failures.extend([(status, retry_after, match, reset_in)] * count)

    def chaos(self, rate: float, statuses: tuple[int, ...] = (500, 502, 429, 403), seed: int = 1,
              match: str | None = None) -> None:
        """Answer each request (whose "METHOD path" contains `match`) with one of `statuses`
        at probability `rate`, from a seeded generator; `rate=0` ends every rule."""
        with self._lock:
            if rate <= 0:
                self._chaos.clear()
            else:
                self._chaos.append((rate, statuses, match, random.Random(seed)))

    def check_contract(self) -> None:
        """AssertionError naming every request the description rejected (none expected)."""
        with self._lock:
            found = list(self.violations)
        if found and not self.expect_violations:
            raise AssertionError(f"the bot sent {len(found)} request(s) GitHub's OpenAPI description "
                                 f"(@octokit/openapi {self.contract.version}) rejects:\n"
                                 + "\n".join(str(v) for v in found))

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        if exc[0] is None:  # a failing test's own error comes first
            self.check_contract()

    # -- webhook payloads -------------------------------------------------------------------
    def _fixture(self, event: str, name: str) -> dict[str, Any]:
        return dict(json.loads((WEBHOOKS / event / name).read_text(encoding="utf-8")))

    def _patch_common(self, p: dict[str, Any], installation: int | None = None) -> dict[str, Any]:
        inst = installation or self.installation_id
        name = self.installations[inst]
        repo = p.setdefault("repository", {})
        repo["full_name"] = name
        repo["id"] = self.repository_id if inst == self.installation_id else \
            300_000 + zlib.crc32(f"{inst}:{name}".encode()) % 100_000
        repo["name"] = name.split("/")[1]
        repo["default_branch"] = self.default_branch
        p["installation"] = {"id": inst, "node_id": "x"}
        return p

    def _patch_pr(self, pr_json: dict[str, Any], pr: PullRequest) -> None:
        pr_json["number"] = pr.number
        pr_json["state"] = pr.state
        pr_json["draft"] = pr.draft
        pr_json["changed_files"] = len(pr.files)  # all of them, however many the files list shows
        pr_json["user"] = {**(pr_json.get("user") or {}), "login": pr.author, "id": user_id(pr.author)}
        pr_json.setdefault("head", {})["sha"] = pr.head_sha
        repo = self.installations[self.pr_installation.get(pr.number, self.installation_id)]
        pr_json["head"].setdefault("repo", {})["full_name"] = pr.head_repo or repo
        pr_json.setdefault("base", {}).setdefault("repo", {})["full_name"] = repo

    def pr_event(self, action: str, number: int) -> dict[str, Any]:
        """A `pull_request` payload from GitHub's example, pointed at this server's PR."""
        name = {"opened": "opened.payload.json", "synchronize": "synchronize.payload.json",
                "reopened": "reopened.payload.json", "ready_for_review": "ready_for_review.payload.json"}.get(
            action, "opened.payload.json")
        p = self._patch_common(self._fixture("pull_request", name), self.pr_installation.get(number))
        p["action"] = action
        p["number"] = number
        self._patch_pr(p["pull_request"], self.pulls[number])
        return p

    def review_comment_event(self, number: int, comment: dict[str, Any], action: str = "created") -> dict[str, Any]:
        p = self._patch_common(self._fixture("pull_request_review_comment", "created.payload.json"))
        p["action"] = action
        p["comment"] = {**p.get("comment", {}), **comment}
        self._patch_pr(p["pull_request"], self.pulls[number])
        return p

    def check_run_event(self, check_run_id: int, action: str = "rerequested") -> dict[str, Any]:
        name = "requested_action.payload.json" if action == "requested_action" else "rerequested.payload.json"
        p = self._patch_common(self._fixture("check_run", name))
        p["action"] = action
        run = self.check_runs[check_run_id]
        p["check_run"] = {**p.get("check_run", {}), **{k: run[k] for k in
                                                       ("id", "name", "head_sha", "external_id", "status",
                                                        "conclusion")},
                          "pull_requests": []}
        if action == "requested_action":
            p["requested_action"] = {"identifier": "rerun"}
        return p

    # -- queries for tests ------------------------------------------------------------------
    def runs(self, name: str | None = None, head_sha: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [copy.deepcopy(r) for r in self.check_runs.values()
                    if (name is None or r["name"] == name) and (head_sha is None or r["head_sha"] == head_sha)]

    def writes(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.method in ("POST", "PATCH") and "/check-runs" in r.path]

    def wait_for(self, cond: Callable[[], Any], timeout: float = 60.0, interval: float = 0.1) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = cond()
            if value:
                return value
            time.sleep(interval)
        raise AssertionError(f"condition not met within {timeout} s")

    # -- server -----------------------------------------------------------------------------
    def start(self) -> FakeGitHub:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    return {"__invalid__": raw.decode(errors="replace")}

            def _handle(self, method: str) -> None:
                body = self._body() if method in ("POST", "PATCH", "PUT") else None
                status, data, headers, inst = owner._dispatch(method, self.path, dict(self.headers), body)
                if status < 300 and not isinstance(data, Raw | Padded):  # every field the description requires
                    data = owner.contract.complete(method, self.path, status, data)
                raw = data.encode() if isinstance(data, Raw) else b"" if isinstance(data, Padded) \
                    else json.dumps(data).encode()
                seen = Request(method, urlparse(self.path).path, status, time.time(), inst, body,
                               {k.lower(): v for k, v in self.headers.items()}, self.path, data)
                with owner._lock:  # recorded before the answer goes out: a test reads it at once
                    owner.requests.append(seen)
                self.send_response(status)
                sent = {"Content-Type": "text/plain; charset=utf-8" if isinstance(data, Raw | Padded)
                        else "application/json; charset=utf-8",
                        "Content-Length": str(data.size if isinstance(data, Padded) else len(raw)),
                        "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4999",
                        "X-RateLimit-Reset": str(int(time.time()) + 3600)}
                sent.update(headers)  # a rate limit's own values replace the defaults
                for k, v in sent.items():
                    self.send_header(k, v)
                self.end_headers()
                self._write(seen, data.chunks() if isinstance(data, Padded) else iter((raw,)))

            def _write(self, seen: Request, body: Iterator[bytes]) -> None:
                """The answer's body, counted as it goes out, until the client hangs up."""
                written = 0
                try:
                    for chunk in body:
                        self.wfile.write(chunk)
                        written += len(chunk)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True
                finally:
                    with owner._lock:
                        seen.sent = written

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return self._serve(Handler)

    # -- routing ----------------------------------------------------------------------------

    def _error(self, status: int, message: str, errors: list[Any] | None = None,
               headers: dict[str, str] | None = None, inst: int | None = None) -> Answer:
        said = [e["message"] if isinstance(e, dict) else str(e) for e in errors or []]
        with self._lock:
            self.rejections.append((status, message + (": " + "; ".join(said) if said else "")))
        data: dict[str, Any] = {"message": message, "documentation_url": "https://docs.github.com/rest"}
        if errors:
            data["errors"] = errors
        return status, data, headers or {}, inst

    def _invalid(self, problems: list[str]) -> Answer:
        """GitHub's answer to a request its OpenAPI description rejects."""
        return self._error(422, "Invalid request.\n\n" + "\n".join(problems))

    def _app_json(self) -> dict[str, Any]:
        app = self.contract.example("integration")
        app.update(id=self.app_id, slug="rtcbot", name="rtcbot", html_url="https://github.com/apps/rtcbot")
        return dict(app)

    def _dispatch(self, method: str, raw_path: str, headers: dict[str, str], body: Any) -> Answer:
        url = urlparse(raw_path)
        path = unquote(url.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if path.startswith("/login/oauth/"):
            # GitHub's OAuth web flow is not part of the REST description: no contract check
            return self._oauth(method, path, query, body)
        graphql = path == "/graphql"  # GraphQL is no part of the REST description: no contract check
        problems = [] if graphql else self.contract.request_problems(method, raw_path, body)
        if problems:
            with self._lock:
                self.violations.append(Violation(method, raw_path, tuple(problems), body))
        with self._lock:
            for i, (status, retry_after, match, reset_in) in enumerate(self._failures):
                if match is None or match in f"{method} {path}":
                    del self._failures[i]
                    extra = {"Retry-After": str(int(retry_after))} if retry_after is not None else {}
                    msg = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
                           if status in (403, 429) else "Not Found" if status == 404 else "Server Error")
                    if reset_in is not None:
                        extra.update({"X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
                                      "X-RateLimit-Reset": str(int(time.time() + reset_in))})
                        msg = f"API rate limit exceeded for installation ID {self.installation_id}."
                    return self._error(status, msg, headers=extra)
            for rate, statuses, match, rng in self._chaos:
                if (match is None or match in f"{method} {path}") and rng.random() < rate:
                    status = rng.choice(statuses)
                    self.injected[status] += 1
                    if status == 422:
                        return self._error(422, "Validation Failed", ["injected by chaos()"])
                    return self._error(status, "You have exceeded a secondary rate limit." if status in (403, 429)
                                       else "Server Error",
                                       headers={"Retry-After": "1"} if status in (403, 429) else {})
        auth = headers.get("Authorization") or headers.get("authorization") or ""
        if graphql:
            return self._graphql(method, auth, body)
        m = re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)
        if m and method == "POST":
            return self._issue_token(auth, int(m.group(1)), problems)
        if path.startswith("/app"):
            ok, why = self._check_jwt(auth)
            if not ok:
                return self._error(401, why)
            routes = [("GET", r"/app", lambda **_: (200, self._app_json(), {}, None)), *self.hook_routes()]
            for verb, pattern, fn in routes:
                mm = re.fullmatch(pattern, path)
                if verb == method and mm:
                    if problems:
                        return self._invalid(problems)
                    return fn(*mm.groups(), query=query, body=body)  # type: ignore[no-any-return]
            return self._error(404, "Not Found")
        if path == "/user" or path.startswith("/user/"):
            return self._user_api(method, path, query, auth, problems)
        inst = self._check_token(auth)
        if inst is None:
            return self._error(401, "Bad credentials")
        prefix = f"/repos/{self.installations.get(inst, '')}"  # an installation reaches its repository alone
        if not path.startswith(prefix + "/") or inst not in self.installations:
            return self._error(404, "Not Found", inst=inst)
        rest = path[len(prefix):]
        handlers: list[tuple[str, str, Callable[..., Answer]]] = [
            ("GET", r"/pulls/(\d+)", self._get_pull),
            ("GET", r"/pulls/(\d+)/files", self._get_files),
            ("GET", r"/pulls/(\d+)/comments", self._get_comments),
            ("GET", r"/pulls/comments/(\d+)/reactions", self._get_reactions),
            ("POST", r"/pulls/(\d+)/reviews", self._create_review),
            ("GET", r"/contents/(.+)", self._get_contents),
            ("GET", r"/commits/([0-9a-f]+)/check-runs", self._list_runs),
            ("POST", r"/check-runs", self._create_run),
            ("PATCH", r"/check-runs/(\d+)", self._update_run),
            ("GET", r"/check-runs/(\d+)", self._get_run),
            ("GET", r"/check-runs/(\d+)/annotations", self._get_annotations),
            *self.conversation_routes(),
        ]
        for verb, pattern, fn in handlers:
            mm = re.fullmatch(pattern, rest)
            if verb == method and mm:
                if problems:  # GitHub checks a request against its description before it acts
                    return (*self._invalid(problems)[:3], inst)
                status, data, hdrs, _ = fn(*mm.groups(), query=query, body=body, headers=headers)
                return status, data, hdrs, inst
        return self._error(404, "Not Found", inst=inst)

    # -- auth -------------------------------------------------------------------------------
    def _check_jwt(self, auth: str) -> tuple[bool, str]:
        if not auth.startswith("Bearer "):
            return False, "A JSON web token could not be decoded"
        token = auth[len("Bearer "):]
        claims: dict[str, Any] | None = None
        for key in list(self.app_keys):
            try:
                claims = jwt.decode(token, key, algorithms=["RS256"],
                                    options={"require": ["iat", "exp", "iss"], "verify_iat": False})
                break
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as e:
                return False, f"A JSON web token could not be decoded ({e})"
        if claims is None:
            return False, "A JSON web token could not be decoded (no key of the App signed it)"
        now = time.time()
        with self._lock:
            self.jwt_claims.append(claims)
        if str(claims["iss"]) != str(self.app_id):
            return False, "'Issuer' claim ('iss') must be the App id"
        if claims["iat"] > now + 1:
            return False, "'Issued at' claim ('iat') must be an Integer representing a time in the past"
        if claims["exp"] - claims["iat"] > 660 or claims["exp"] > now + 600:
            return False, "'Expiration time' claim ('exp') is too far in the future"
        return True, ""

    def _issue_token(self, auth: str, installation_id: int, problems: list[str]) -> Answer:
        ok, why = self._check_jwt(auth)
        if not ok:
            return self._error(401, why)
        if installation_id not in self.installations:
            return self._error(404, "Not Found")
        if problems:
            return self._invalid(problems)
        token = "ghs_" + secrets.token_hex(18)
        expires = time.time() + self.token_ttl_s
        with self._lock:
            self.tokens[token] = (installation_id, expires)
            self.token_requests += 1
        answer = self.contract.example("installation-token")
        answer.pop("repositories", None)  # an installation on all its repositories lists none
        answer.update(token=token, expires_at=_iso(expires), repository_selection="all",
                      permissions={"checks": "write", "pull_requests": "read", "contents": "read",
                                   "metadata": "read"})
        return 201, answer, {}, None

    def _check_token(self, auth: str) -> int | None:
        parts = auth.split(" ", 1)
        if len(parts) != 2 or parts[0].lower() not in ("token", "bearer"):
            return None
        with self._lock:
            entry = self.tokens.get(parts[1])
        if entry is None or entry[1] < time.time():
            return None
        return entry[0]

    def _graphql(self, method: str, auth: str, body: Any) -> Answer:
        """`POST /graphql`: the one query rtcbot asks, who the token is (`viewer { login }`)."""
        inst = self._check_token(auth)
        if inst is None:
            return self._error(401, "Bad credentials")
        query = body.get("query") if isinstance(body, dict) else None
        if method != "POST" or not isinstance(query, str) or "viewer" not in query:
            return 200, {"errors": [{"message": "the fake answers `viewer { login }` only"}]}, {}, inst
        return 200, {"data": {"viewer": {"login": self.bot}}}, {}, inst

    # -- sign in with GitHub (OAuth web flow, user-to-server tokens) -------------------------
    def _oauth(self, method: str, path: str, query: dict[str, str], body: Any) -> Answer:
        if method == "GET" and path == "/login/oauth/authorize":
            if query.get("client_id") != self.oauth_client_id or not query.get("redirect_uri"):
                return self._error(404, "Not Found")
            code = secrets.token_hex(10)
            with self._lock:
                self.oauth_codes[code] = (query["redirect_uri"], self.user)
            back = query["redirect_uri"]
            back += ("&" if "?" in back else "?") + urlencode({"code": code, "state": query.get("state", "")})
            return 302, Raw(""), {"Location": back}, None
        if method == "POST" and path == "/login/oauth/access_token":
            form = dict(query)
            if isinstance(body, dict) and "__invalid__" in body:  # form-encoded, as clients send it
                form.update({k: v[-1] for k, v in parse_qs(body["__invalid__"]).items()})
            elif isinstance(body, dict):
                form.update({k: str(v) for k, v in body.items()})
            if form.get("client_id") != self.oauth_client_id or form.get("client_secret") != self.oauth_client_secret:
                return 200, {"error": "incorrect_client_credentials",
                             "error_description": "The client_id and/or client_secret passed are incorrect."}, {}, None
            with self._lock:
                grant = self.oauth_codes.pop(form.get("code", ""), None)
            if grant is None or ("redirect_uri" in form and form["redirect_uri"] != grant[0]):
                return 200, {"error": "bad_verification_code",
                             "error_description": "The code passed is incorrect or expired."}, {}, None
            token = "ghu_" + secrets.token_hex(18)
            with self._lock:
                self.user_tokens[token] = grant[1]
            return 200, {"access_token": token, "token_type": "bearer", "scope": ""}, {}, None
        return self._error(404, "Not Found")

    def _user_api(self, method: str, path: str, query: dict[str, str], auth: str, problems: list[str]) -> Answer:
        parts = auth.split(" ", 1)
        with self._lock:
            login = self.user_tokens.get(parts[1]) if len(parts) == 2 else None
        if login is None:
            return self._error(401, "Bad credentials")
        if method != "GET":
            return self._error(404, "Not Found")
        if problems:
            return self._invalid(problems)
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))

        def paged(key: str, items: list[dict[str, Any]]) -> Answer:
            chunk = items[(page - 1) * per_page: page * per_page]
            links = []
            if page * per_page < len(items):
                links.append(f'<{self.base_url}{path}?per_page={per_page}&page={page + 1}>; rel="next"')
            return 200, {"total_count": len(items), key: chunk}, ({"Link": ", ".join(links)} if links else {}), None

        if path == "/user":
            return 200, {"login": login, "id": 583231, "type": "User"}, {}, None
        if path == "/user/installations":
            return paged("installations", [
                {"id": i, "app_id": self.app_id, "app_slug": "rtcbot", "target_type": "Organization",
                 "account": {"login": (names[0] if names else "octo-org").split("/")[0]}}
                for i, names in sorted(self.user_installations.items())])
        m = re.fullmatch(r"/user/installations/(\d+)/repositories", path)
        if m and int(m.group(1)) in self.user_installations:
            names = self.user_installations[int(m.group(1))]
            return paged("repositories", [
                {"id": 10_000 + n, "name": full.split("/")[1], "full_name": full, "private": True,
                 "owner": {"login": full.split("/")[0]}} for n, full in enumerate(names)])
        return self._error(404, "Not Found")

    # -- reads ------------------------------------------------------------------------------
    def _pr(self, number: str) -> PullRequest | None:
        return self.pulls.get(int(number))

    def _pr_json(self, pr: PullRequest) -> dict[str, Any]:
        url = f"{self.base_url}/repos/{self.repo}/pulls/{pr.number}"
        return {"url": url, "id": pr.number + 900000, "number": pr.number, "state": pr.state, "draft": pr.draft,
                "title": f"PR {pr.number}", "changed_files": len(pr.files),
                "user": {"login": pr.author, "id": user_id(pr.author), "type": "User"},
                "head": {"sha": pr.head_sha, "ref": "feature", "repo": {"full_name": pr.head_repo or self.repo}},
                "base": {"sha": "0" * 40, "ref": self.default_branch, "repo": {"full_name": self.repo}}}

    def _get_pull(self, number: str, **_: Any) -> Answer:
        pr = self._pr(number)
        return (200, self._pr_json(pr), {}, None) if pr else self._error(404, "Not Found")

    def _page(self, items: list[Any], query: dict[str, str], path: str) -> Answer:
        per_page = max(1, min(100, int(query.get("per_page", 30))))
        page = max(1, int(query.get("page", 1)))
        chunk = items[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        base = f"{self.base_url}/repos/{self.repo}{path}?per_page={per_page}"
        if page < last:
            links.append(f'<{base}&page={page + 1}>; rel="next"')
            links.append(f'<{base}&page={last}>; rel="last"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {}), None

    def _get_files(self, number: str, query: dict[str, str], **_: Any) -> Answer:
        pr = self._pr(number)
        if pr is None:
            return self._error(404, "Not Found")
        return self._page(pr.files[:3000], query, f"/pulls/{number}/files")

    def _get_comments(self, number: str, query: dict[str, str], **_: Any) -> Answer:
        pr = self._pr(number)
        if pr is None:
            return self._error(404, "Not Found")
        return self._page(pr.comments, query, f"/pulls/{number}/comments")

    def _get_reactions(self, comment_id: str, query: dict[str, str], **_: Any) -> Answer:
        cid = int(comment_id)
        if not any(c["id"] == cid for pr in self.pulls.values() for c in pr.comments):
            return self._error(404, "Not Found")
        with self._lock:
            listed = [r for r in self.reactions.get(cid, []) if query.get("content") in (None, r["content"])]
        return self._page(listed, query, f"/pulls/comments/{cid}/reactions")

    def _create_review(self, number: str, body: Any, **_: Any) -> Answer:
        """POST /pulls/{n}/reviews: one review, its comments each on lines a hunk of the diff
        shows (RIGHT: the head's numbers, LEFT: the base's); 422 like GitHub otherwise."""
        pr = self._pr(number)
        if pr is None:
            return self._error(404, "Not Found")
        if not isinstance(body, dict) or body.get("event", "COMMENT") not in ("COMMENT", "APPROVE", "REQUEST_CHANGES"):
            return self._error(422, "Validation Failed", [{"message": "event is invalid"}])
        shown = {f["filename"]: diff_lines(f.get("patch") or "") for f in pr.files}
        made = []
        for c in body.get("comments") or []:
            side = c.get("side", "RIGHT")
            lines = shown.get(c.get("path", ""), {}).get(side, set())
            first = c.get("start_line", c.get("line"))
            if not isinstance(c.get("line"), int) or not isinstance(first, int) or first > c["line"] \
                    or any(n not in lines for n in range(first, c["line"] + 1)):
                return self._error(422, "Unprocessable Entity",
                                   [{"message": "Line could not be resolved", "resource": "PullRequestReviewComment"}])
            made.append(c)
        with self._lock:
            rid = next(self._ids)
            review = {"id": rid, "body": body.get("body", ""), "commit_id": body.get("commit_id", pr.head_sha),
                      "state": "COMMENTED", "user": {"login": self.bot, "type": "Bot"}, "comments": made}
            self.reviews.append(review)
        for c in made:
            added = self.add_comment(pr.number, c["path"], c["line"], c["body"], user=self.bot, user_type="Bot")
            added.update({k: c[k] for k in ("side", "start_line", "start_side") if k in c},
                         pull_request_review_id=rid, commit_id=review["commit_id"])
        return 200, {k: v for k, v in review.items() if k != "comments"}, {}, None

    def _get_contents(self, path: str, query: dict[str, str], headers: dict[str, str], **_: Any) -> Answer:
        ref = query.get("ref", self.default_branch)
        text = self.contents.get((ref, path))
        if text is None:
            return self._error(404, "Not Found")
        accept = {k.lower(): v for k, v in headers.items()}.get("accept", "")
        size = text.size if isinstance(text, Padded) else len(text.encode())
        if size > self.max_raw_bytes:
            status, data, hdrs, inst = self._error(403, "This API returns blobs up to 100 MB in size. The requested "
                                                   "blob is too large to fetch via the API.")
            data["errors"] = [{"resource": "Blob", "field": "data", "code": "too_large"}]
            return status, data, hdrs, inst
        if "application/vnd.github.raw" in accept:
            return 200, text if isinstance(text, Padded) else Raw(text), {}, None
        inline = size <= self.max_json_bytes  # 1-100 MB: described, but `encoding: none`, no content
        content = "" if not inline else text.text() if isinstance(text, Padded) else text
        return 200, {"type": "file", "encoding": "base64" if inline else "none", "path": path,
                     "name": path.rsplit("/", 1)[-1], "size": size,
                     "content": base64.b64encode(content.encode()).decode()}, {}, None

    # -- check runs -------------------------------------------------------------------------
    def _run_json(self, run: dict[str, Any]) -> dict[str, Any]:
        unset = {k: None for k in ("details_url", "started_at", "completed_at")}
        out = {**unset, **{k: v for k, v in run.items() if k not in ("annotations", "updates")}}
        out["output"] = {"title": None, "summary": None, "text": None, **run.get("output", {}),
                         "annotations_count": len(run["annotations"]), "annotations_url": f"{run['url']}/annotations"}
        return out

    def _list_runs(self, sha: str, query: dict[str, str], **_: Any) -> Answer:
        with self._lock:
            runs = [r for r in self.check_runs.values() if r["head_sha"] == sha
                    and ("check_name" not in query or r["name"] == query["check_name"])]
            if query.get("filter", "latest") == "latest":
                latest: dict[str, dict[str, Any]] = {}
                for r in runs:
                    latest[r["name"]] = r  # ids grow: the last one wins
                runs = list(latest.values())
            data = [self._run_json(r) for r in sorted(runs, key=lambda r: -r["id"])]
        return 200, {"total_count": len(data), "check_runs": data}, {}, None

    def _get_run(self, run_id: str, **_: Any) -> Answer:
        run = self.check_runs.get(int(run_id))
        return (200, self._run_json(run), {}, None) if run else self._error(404, "Not Found")

    def _get_annotations(self, run_id: str, query: dict[str, str], **_: Any) -> Answer:
        run = self.check_runs.get(int(run_id))
        if run is None:
            return self._error(404, "Not Found")
        blob = f"https://github.com/{self.repo}/blob/{run['head_sha']}/"
        listed = [{"start_column": None, "end_column": None, "title": None, "raw_details": None,
                   "blob_href": blob + a["path"], **a} for a in run["annotations"]]
        return self._page(listed, query, f"/check-runs/{run_id}/annotations")

    def _validate(self, body: Any, creating: bool) -> list[Any]:
        errs: list[Any] = []
        if not isinstance(body, dict):
            return ["Problems parsing JSON"]
        if creating:
            for k in ("name", "head_sha"):
                if not body.get(k):
                    errs.append(f"{k} is missing")
        status = body.get("status")
        if status is not None and status not in STATUSES:
            errs.append(f"status {status!r} is not a valid status")
        conclusion = body.get("conclusion")
        if conclusion is not None and conclusion not in CONCLUSIONS:
            errs.append(f"conclusion {conclusion!r} is not valid")
        if status == "completed" and conclusion is None:
            errs.append("conclusion is required when status is completed")
        actions = body.get("actions")
        if actions is not None:
            if len(actions) > 3:
                errs.append("no more than 3 actions")
            for a in actions:
                if (len(a.get("label", "")) > 20 or len(a.get("description", "")) > 40
                        or len(a.get("identifier", "")) > 20):
                    errs.append("action label ≤ 20, description ≤ 40, identifier ≤ 20 characters")
        out = body.get("output")
        if out is not None:
            if not isinstance(out, dict) or not out.get("title") or "summary" not in out:
                errs.append("output needs a title and a summary")
                return errs
            for k in ("summary", "text"):
                if _size(out.get(k)) > MAX_OUTPUT:  # GitHub's own error object
                    errs.append({"resource": "CheckRun", "code": "custom", "field": k,
                                 "message": f"{k} exceeds a maximum bytesize of {MAX_OUTPUT}"})
            anns = out.get("annotations") or []
            if len(anns) > 50:
                errs.append("Only 50 annotations are allowed per request")
            for a in anns:
                missing = [k for k in ("path", "start_line", "end_line", "annotation_level", "message")
                           if a.get(k) in (None, "")]
                if missing:
                    errs.append(f"annotation is missing {', '.join(missing)}")
                elif a["annotation_level"] not in LEVELS:
                    errs.append(f"annotation_level {a['annotation_level']!r} is not valid")
                elif a["end_line"] < a["start_line"]:
                    errs.append("annotation end_line is before start_line")
                if _size(a.get("title")) > 255:
                    errs.append("annotation title is too long (maximum is 255 characters)")
                for k in ("message", "raw_details"):
                    if _size(a.get(k)) > MAX_ANNOTATION_DETAILS:
                        errs.append(f"annotation {k} exceeds a maximum bytesize of {MAX_ANNOTATION_DETAILS}")
                if ("start_column" in a or "end_column" in a) and a.get("start_line") != a.get("end_line"):
                    errs.append("columns only for single-line annotations")
        return errs

    def _apply(self, run: dict[str, Any], body: dict[str, Any]) -> None:
        for k in ("name", "status", "conclusion", "external_id", "details_url", "started_at", "completed_at",
                  "actions"):
            if k in body:
                run[k] = body[k]
        if body.get("conclusion") is not None:
            run["status"] = "completed"
            run.setdefault("completed_at", _iso(time.time()))
        out = body.get("output")
        if out:
            anns = out.get("annotations") or []
            run["annotations"].extend(copy.deepcopy(anns))
            run["output"] = {k: out.get(k) for k in ("title", "summary", "text")}
        run["updates"].append(copy.deepcopy(body))

    def _create_run(self, query: dict[str, str], body: Any, **_: Any) -> Answer:
        if self.read_only_checks:
            return self._error(403, "Resource not accessible by integration")
        errs = self._validate(body, creating=True)
        if errs:
            return self._error(422, "Validation Failed", errs)
        with self._lock:
            rid = next(self._ids)
            run: dict[str, Any] = {
                "id": rid, "url": f"{self.base_url}/repos/{self.repo}/check-runs/{rid}",
                "name": body["name"], "head_sha": body["head_sha"], "status": "queued", "conclusion": None,
                "external_id": "", "app": {"id": self.app_id, "slug": "rtcbot"}, "pull_requests": [],
                "output": {}, "annotations": [], "updates": [],
            }
            self._apply(run, body)
            self.check_runs[rid] = run
            return 201, self._run_json(run), {}, None

    def _update_run(self, run_id: str, query: dict[str, str], body: Any, **_: Any) -> Answer:
        errs = self._validate(body, creating=False)
        if errs:
            return self._error(422, "Validation Failed", errs)
        with self._lock:
            run = self.check_runs.get(int(run_id))
            if run is None:
                return self._error(404, "Not Found")
            self._apply(run, body)
            return 200, self._run_json(run), {}, None


def _size(text: Any) -> int:
    """A field's size as GitHub counts it: UTF-8 bytes."""
    return len(str(text or "").encode("utf-8"))


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def fake_github() -> Iterator[Callable[..., FakeGitHub]]:
    """A factory: `fake_github(**kw)` → a started FakeGitHub (stopped after the test). The
    contract gate: the test fails (at teardown) when the bot sent any request GitHub's OpenAPI
    description rejects, unless that fake was made with `expect_violations=True`."""
    servers: list[FakeGitHub] = []

    def make(**kw: Any) -> FakeGitHub:
        s = FakeGitHub(**kw).start()
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()
    for s in servers:
        s.check_contract()
