"""The HTTP side of the LLM client: the `openai.OpenAI` clients of an endpoint, shared in the
process and handed out in turn (`shared_openai`).

One client per endpoint was one pool of kept-alive connections behind one lock, and httpx's
pool (httpcore 1.0) rechecks every connection it holds, and counts them again for each idle
one, on every request it starts and every answer it closes: work that grows with the square
of the connections, under that lock. A wide pull request has ~120 requests in flight at
once, and its request threads queued on that lock (a sampled timeline of the worst wide PR:
the most common place of a request thread that was not waiting for its answer). So an
endpoint gets SHARDS clients, each with a pool of its own, and each request takes the next:
a pool then holds an eighth of the connections, and its work is a 64th.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import ssl
import threading
from typing import TYPE_CHECKING

import certifi

if TYPE_CHECKING:
    import openai

SHARDS = 8  # clients (connection pools) per endpoint
KEPT = 32  # endpoints kept; the least recently used beyond are let go (closed once unused)


def preload() -> None:
    """Import `openai` now (0.4 s of CPU; the client's modules import it where they use it:
    analyzers/llm/__init__.py), so that a long-lived process (the worker) pays it at its start,
    not in its first job."""
    importlib.import_module("openai")


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The one SSL context of the process's LLM clients (certifi's CAs): its making is most of a
    client's cost (~45 ms of CPU), and a made context is only read, by any client and thread."""
    return ssl.create_default_context(cafile=certifi.where())


class ClientSet:
    """An endpoint's clients, which share the process's SSL context (`tls_context`).
    Thread-safe, as each client is."""

    def __init__(self, base_url: str, api_key: str, timeout: float, shards: int = SHARDS) -> None:
        import openai  # here, not at the top: see analyzers/llm/__init__.py
        context = tls_context()
        self.clients = tuple(
            openai.OpenAI(base_url=base_url, api_key=api_key,
                          max_retries=0,  # retries are ours, so that the budget counts them
                          timeout=timeout, http_client=openai.DefaultHttpxClient(verify=context))
            for _ in range(max(1, shards)))
        self._turn = itertools.count()

    def next(self) -> openai.OpenAI:
        """The client whose turn it is (round robin)."""
        return self.clients[next(self._turn) % len(self.clients)]


_SETS: dict[tuple[str, str, float], ClientSet] = {}
_LOCK = threading.Lock()


def shared_openai(base_url: str, api_key: str, timeout: float) -> ClientSet:
    """One ClientSet per endpoint, key and timeout in the process: a worker starts an LLM
    client per analysis, and they share its clients and their kept-alive connections."""
    key = (base_url, api_key, float(timeout))
    with _LOCK:
        found = _SETS.pop(key, None) or ClientSet(base_url, api_key, timeout)
        _SETS[key] = found  # most recently used last
        while len(_SETS) > KEPT:
            _SETS.pop(next(iter(_SETS)))
        return found
