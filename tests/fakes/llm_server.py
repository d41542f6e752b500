"""A scripted OpenAI-compatible chat server on loopback, for tests and benchmarks.

It answers `POST /v1/chat/completions` and `GET /v1/models` over real HTTP, so the code
under test goes through the real `openai` client. It can:

- answer from a script: `responder(request_json) -> str | list[str]` (list: one text per
  choice), or a fixed text;
- honour `n` or ignore it (one choice per request, as llama.cpp and Ollama do);
- say why each answer ended: `finish_reason` ("stop", or "length" for an answer the server
  stopped at max_tokens), fixed or `finish_reason(request_json) -> str`;
- fail the next requests on demand (`fail_next(count, status, retry_after=None)`);
- fail at random (`chaos(rate, kinds=("500", "hang", "garbage", "empty"), seed=1, hang_s=2.0)`):
  a 500, a connection held `hang_s` then closed unanswered (a timed-out gateway), a 200 whose
  body is not JSON, a 200 with an empty body; `injected` counts them by kind;
- wait a fixed delay per request plus a delay per completion token (benchmarks);
- say that a share of each prompt came from a prefix cache (`cached_share`: the answer's
  `usage.prompt_tokens_details.cached_tokens`, as OpenAI and vLLM report it);
- count requests, tokens and record every request body, and when each was served
  (`served`: the request's index, its arrival and its answer, `time.perf_counter()` seconds).

    with ScriptedLLM(lambda req: "hello", honour_n=False) as llm:
        client = LLMClient(LLMSettings(base_url=llm.base_url, model=llm.model, cache_path=None))
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes import LoopbackServer

Responder = Callable[[dict[str, Any]], "str | list[str]"]


def last_user_text(request: dict[str, Any]) -> str:
    """The content of the last user message of a chat request."""
    msgs = [m for m in request.get("messages", []) if m.get("role") == "user"]
    return str(msgs[-1]["content"]) if msgs else ""


class ScriptedLLM(LoopbackServer):
    def __init__(
        self,
        responder: Responder | str = "ok",
        *,
        model: str = "scripted-model",
        honour_n: bool = True,
        delay_s: float = 0.0,
        per_token_s: float = 0.0,
        finish_reason: str | Callable[[dict[str, Any]], str] = "stop",
        cached_share: float | None = None,
    ) -> None:
        self.finish_reason = (lambda _r: finish_reason) if isinstance(finish_reason, str) else finish_reason
        self.responder: Responder = (lambda _r: responder) if isinstance(responder, str) else responder
        self.model = model
        self.honour_n = honour_n
        self.delay_s = delay_s
        self.per_token_s = per_token_s
        self.requests: list[dict[str, Any]] = []
        # where set, each answer says this share of its prompt tokens came from a prefix cache
        # (`usage.prompt_tokens_details.cached_tokens`, as OpenAI and vLLM answer)
        self.cached_share = cached_share
        self.cached_tokens = 0
        self.served: list[tuple[int, float, float]] = []  # (index in requests, arrived, answered)
        self.completion_tokens = 0
        self.prompt_tokens = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._failures: list[tuple[int, float | None]] = []
        self._chaos: tuple[float, tuple[str, ...], random.Random, float] | None = None
        self.injected: Counter[str] = Counter()  # random failures given, by kind
        self._lock = threading.Lock()

    # -- control -------------------------------------------------------------------------
    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.served.clear()
            self.completion_tokens = self.prompt_tokens = self.cached_tokens = 0
            self.max_in_flight = 0

    def fail_next(self, count: int, status: int = 500, retry_after: float | None = None) -> None:
        with self._lock:
            self._failures.extend([(status, retry_after)] * count)

    def chaos(self, rate: float, kinds: tuple[str, ...] = ("500", "hang", "garbage", "empty"), seed: int = 1,
              hang_s: float = 2.0) -> None:
        """Fail each request at probability `rate` in one of `kinds` (seeded); `rate=0` stops."""
        with self._lock:
            self._chaos = (rate, kinds, random.Random(seed), hang_s) if rate > 0 else None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ScriptedLLM:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                req = json.loads(raw or b"{}")
                owner._handle(self, req)

        return self._serve(Handler)

    # -- serving -------------------------------------------------------------------------
    def _handle(self, h: Any, req: dict[str, Any]) -> None:
        arrived = time.perf_counter()
        with self._lock:
            self.requests.append(req)
            index = len(self.requests) - 1
            failure = self._failures.pop(0) if self._failures else None
            kind = None
            if failure is None and self._chaos is not None and self._chaos[2].random() < self._chaos[0]:
                kind = self._chaos[2].choice(self._chaos[1])
                self.injected[kind] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        left = False

        def leave() -> None:
            # A request stops counting as in flight before its answer goes out: once the client
            # has read the answer it may send its next request, which must not find this one
            # still counted (that overlap is the fake's, not the client's).
            nonlocal left
            with self._lock:
                if not left:
                    left = True
                    self.in_flight -= 1
                    self.served.append((index, arrived, time.perf_counter()))

        try:
            if failure is not None:
                status, retry_after = failure
                headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
                leave()
                h._send(status, {"error": {"message": f"scripted failure {status}", "type": "scripted"}}, headers)
                return
            if kind is not None:
                self._misbehave(h, kind)
                return
            if req.get("model") != self.model:
                h._send(404, {"error": {"message": f"model {req.get('model')!r} not found", "code": "model_not_found"}})
                return
            n = int(req.get("n") or 1) if self.honour_n else 1
            answer = self.responder(req)
            finish = self.finish_reason(req)
            texts = answer if isinstance(answer, list) else [answer] * n
            texts = (texts * n)[:n] if texts else [""] * n
            completion = sum(max(1, len(t.split())) for t in texts)
            prompt = sum(len(str(m.get("content", "")).split()) for m in req.get("messages", []))
            wait = self.delay_s + self.per_token_s * completion
            if wait > 0:
                time.sleep(wait)
            usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                     "total_tokens": prompt + completion}
            if self.cached_share is not None:
                usage["prompt_tokens_details"] = {"cached_tokens": int(prompt * self.cached_share)}
            with self._lock:
                self.completion_tokens += completion
                self.prompt_tokens += prompt
                self.cached_tokens += int(prompt * (self.cached_share or 0))
            leave()
            h._send(200, {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": self.model,
                "choices": [
                    {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": finish}
                    for i, t in enumerate(texts)
                ],
                "usage": usage,
            })
        finally:
            leave()


    def _misbehave(self, h: Any, kind: str) -> None:
        if kind == "500":
            h._send(500, {"error": {"message": "injected failure", "type": "chaos"}})
            return
        if kind == "hang":
            time.sleep(self._chaos[3] if self._chaos else 2.0)
            h.close_connection = True  # closed without an answer
            return
        body = b"<html>502 Bad Gateway</html>" if kind == "garbage" else b""
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)


_BLOCK = re.compile(r"\[(old|new)\]\n(`{3,})[^\n]*\n(.*?)\n\2", re.S)  # a fenced [old] or [new] block of a prompt


def varied(req: dict[str, Any]) -> list[str]:
    """Distinct descriptions for every forward sample; a fixed fenced answer for regenerations,
    except the baseline's: for the uninformative "Edit." it gives the old code back, as a model
    that can edit code does. So it passes each hunk's own baseline: a run of one hunk is scored
    (not re-created), a run of several is inconclusive (it re-creates none of them).

    With it, EditingRTC makes its full count of requests per hunk (5 or 7)."""
    text = last_user_text(req)
    if "[edit description]" in text:
        if text.rstrip().endswith("[edit description] Edit."):
            old = dict((kind, body) for kind, _, body in _BLOCK.findall(text)).get("old", "")
            return [f"```\n{old}\n```"]
        return ["```\nnothing\n```"]
    return [f"description {req.get('seed')}-{i}" for i in range(int(req.get("n") or 1))]


class RoundTrips:
    """A model that round-trips well: it describes each hunk in words (never its code) and
    re-creates a hunk from its own description, and gives the code back unchanged for the
    uninformative "Edit." (it keeps the unchanged lines: it passes every baseline) — except for
    hunks of more than `long` added lines, which its descriptions do not carry (it gives the old
    code back). A description names its hunk by a digest of the new code, so the same hunk gets
    the same words on every server (the App and the Action compared byte for byte); its n
    descriptions differ in their wording, so a hunk costs the requests `varied`'s does."""

    def __init__(self, long: int = 12) -> None:
        self.long = long
        self.lock = threading.Lock()
        self.new: dict[str, str] = {}

    def __call__(self, req: dict[str, Any]) -> str | list[str]:
        text = last_user_text(req)
        blocks = {kind: body for kind, _, body in _BLOCK.findall(text)}
        n = int(req.get("n") or 1)
        old, new = blocks.get("old", ""), blocks.get("new", "")
        if "[edit description]" not in text:  # forward: describe, in words only
            key = hashlib.sha256(new.encode()).hexdigest()[:8]
            with self.lock:
                self.new[key] = new
            added = len(set(new.splitlines()) - set(old.splitlines()))
            return [f"Apply the edit named {key}, which changes {added} line{'s' if added != 1 else ''} "
                    f"of this code as the author intended (wording {i + 1})." for i in range(n)]
        m = re.search(r"named ([0-9a-f]{8})", text.rsplit("[edit description]", 1)[1])
        with self.lock:
            new = self.new.get(m.group(1), old) if m else old
        carried = len(set(new.splitlines()) - set(old.splitlines())) <= self.long
        return [f"```\n{new if carried else old}\n```\n[end]"] * n


def describes_only(description: str, code: str = "return 0") -> Responder:
    """A model that describes every hunk as `description`, regenerates `code` (re-creating no
    hunk) and answers a review prompt ("Line <n>: …") out of its format."""
    def answer(req: dict[str, Any]) -> list[str]:
        n, text = int(req.get("n") or 1), last_user_text(req)
        if "[edit description]" in text:
            return [f"```\n{code}\n```"] * n
        if "Line <" in text:
            return ["Looks fine to me."] * n
        return [description] * n

    return answer
