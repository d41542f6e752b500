"""Fixtures shared by every test: scripted and embedded LLM servers, isolated caches."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest

from analyzers.llm.client import LLMClient, LLMSettings
from tests import hypothesis_profiles
from tests.fakes.llm_server import ScriptedLLM

# tests/markers.py: the markers that say what a slower test needs, checked; pytester for its test
pytest_plugins = ["tests.markers", "pytester"]
THREAD_POOLS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def share_the_cores(environ: MutableMapping[str, str], cores: int | None) -> str | None:
    """Under pytest-xdist, each worker's numerical thread pools (OpenBLAS under numpy, OpenMP under
    torch; the processes its tests start inherit them) get the worker's share of the cores, not
    every core: with `make test`'s two workers on two cores, a pool of two threads per worker
    spins at each barrier for a core its partner holds (tests/analyzers/crscore/test_bert.py:
    133 CPU-s with two threads, 74 with one). A variable already set is kept; llama.cpp's
    server is given its own (analyzers/llm/local.py). Must run before numpy or torch is imported."""
    workers = int(environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)  # set before xdist's workers load us
    if not workers:
        return None
    threads = str(max(1, (cores or 1) // workers))
    for name in THREAD_POOLS:
        environ.setdefault(name, threads)
    return threads


share_the_cores(os.environ, os.cpu_count())

# Hypothesis without its wall-clock checks (tests/hypothesis_profiles.py): loaded before any
# test module makes its @settings, which start from the loaded profile
hypothesis_profiles.load(os.environ)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C means what it means in a terminal. A shell that starts the suite in the
    background (`make test &`, nohup) hands it SIGINT ignored, every process a test starts
    would inherit that, and the tests that press Ctrl-C on a driver would wait on a process
    that never hears it. Python's own handler is not inherited across exec: children start
    with the default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own LLM cache directory (never the user's)."""
    monkeypatch.setenv("RTCBOT_CACHE_DIR", str(tmp_path_factory.mktemp("rtcbot-cache")))


@pytest.fixture
def scripted_llm() -> Iterator[Callable[..., ScriptedLLM]]:
    """A factory: `scripted_llm(responder, honour_n=True, delay_s=0.0)` → a started ScriptedLLM.

    `responder(request_json) -> str | list[str]`; see tests/fakes/llm_server.py. All servers
    made through the factory are stopped after the test.
    """
    servers: list[ScriptedLLM] = []

    def make(responder: Any = "ok", **kw: Any) -> ScriptedLLM:
        s = ScriptedLLM(responder, **kw).start()
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


def client_for(server: ScriptedLLM, tmp_path: Path | None = None, **kw: Any) -> LLMClient:
    """An LLMClient on a scripted server (own cache file under tmp_path, or no cache)."""
    settings = LLMSettings(
        base_url=server.base_url,
        model=server.model,
        cache_path=(tmp_path / "cache.sqlite3") if tmp_path else None,
        retry_wait_initial=0.01,
        retry_wait_max=0.05,
        **kw,
    )
    return LLMClient(settings)


@pytest.fixture(scope="session")
def embedded_llm(tmp_path_factory: pytest.TempPathFactory) -> LLMClient:
    """rtcbot's own client on the embedded llama.cpp server (SmolLM2-135M): the one that a
    command with no LLM endpoint gets (the same server, started once per process, and stopped
    at exit; the same request slots), with its own answer cache."""
    from analyzers.llm import local as local_llm
    from tests.support import require

    require(local_llm.available(), local_llm.unavailable_reason())
    return local_llm.client_from_settings(
        LLMSettings(cache_path=tmp_path_factory.mktemp("embedded-cache") / "cache.sqlite3"))
