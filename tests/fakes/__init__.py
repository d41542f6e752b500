"""Fakes of the services rtcbot talks to, each a real HTTP server on loopback."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

# How often an idle server looks for a stop request: `shutdown()` waits for that look, and
# socketserver's default of 0.5 s made every test that stops a fake wait ~0.5 s in its teardown.
STOP_POLL_S = 0.05


class _Server(ThreadingHTTPServer):
    # Connections that arrive together wait in the listen queue; socketserver's default of 5
    # dropped the rest, which TCP retransmitted ~0.2-1 s later (real servers queue hundreds).
    request_queue_size = 128
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that dropped its connection (one that timed out, a worker killed on purpose)
        # is no error of the fake: socketserver printed its traceback into the suite's output
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    """The life of a threaded HTTP server on 127.0.0.1 (a free port): `_serve(handler)` in
    `start()`, then `stop()` or a `with` block."""

    _server: ThreadingHTTPServer | None = None

    def start(self) -> Self:
        raise NotImplementedError

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> Self:
        # Answers go out at once: with Nagle's algorithm on, a kept-alive connection's answer
        # written in two pieces (headers, then body) waits ~40 ms for the client's delayed ACK,
        # which no real service adds to every request.
        handler.disable_nagle_algorithm = True
        self._server = _Server(("127.0.0.1", 0), handler)
        threading.Thread(target=self._server.serve_forever, args=(STOP_POLL_S,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
