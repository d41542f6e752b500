"""The latency-injecting LLM server in a process of its own, as a real LLM server is.

In the bench's own process the fake server's per-request work (parsing each request,
choosing an answer, writing it back) competes with the App's threads for the same
interpreter lock on a 2-core machine, so it would be measured as the App's overhead. A real
deployment talks to llama.cpp or a hosted API in another process. `LLMProcess` starts
`bench.e2e_floor.latency_server` in a child process and offers what the benchmarks read of
it: `base_url`, `model`, `requests` and `served` (the server's log, copied from the child on
each read; `served` in `time.perf_counter()` seconds, a clock every process on the machine
shares), `request_count`, `reset()` and `stop()`."""


from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, Protocol

from bench import ROOT


class LatencyServer(Protocol):
    """What the benchmarks read of a latency server, in this process (ScriptedLLM) or not."""

    @property
    def base_url(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def requests(self) -> list[dict[str, Any]]: ...

    @property
    def served(self) -> list[tuple[int, float, float]]: ...

    @property
    def request_count(self) -> int: ...

    def reset(self) -> None: ...

    def stop(self) -> None: ...


class LLMProcess:
    """`latency_server(delay_s)` running in a child process (`python -m bench.llm_process`),
    driven by one command a line on its stdin, each answered by one JSON line."""

    def __init__(self, delay_s: float) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "bench.llm_process", str(delay_s)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        self.base_url, self.model = self._ask("address")

    def _ask(self, command: str) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the LLM server process ended (exit {self._proc.poll()})")
        return json.loads(line)

    @property
    def requests(self) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = self._ask("requests")
        return got

    @property
    def served(self) -> list[tuple[int, float, float]]:
        """(index in requests, arrived, answered) of each request answered, as ScriptedLLM's."""
        return [(int(i), float(a), float(b)) for i, a, b in self._ask("served")]

    @property
    def request_count(self) -> int:
        return int(self._ask("count"))

    def reset(self) -> None:
        self._ask("reset")

    def stop(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def main(delay_s: float) -> None:
    from bench.e2e_floor import latency_server

    server = latency_server(delay_s)
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "address":
                answer: Any = [server.base_url, server.model]
            elif command == "requests":
                with server._lock:  # noqa: SLF001
                    answer = list(server.requests)
            elif command == "served":
                with server._lock:  # noqa: SLF001
                    answer = list(server.served)
            elif command == "count":
                answer = server.request_count
            elif command == "reset":
                server.reset()
                answer = None
            else:
                answer = {"error": f"unknown command {command!r}"}
            print(json.dumps(answer), flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main(float(sys.argv[1]))
