"""`rtcbot serve`'s gevent worker: gunicorn's, which at a stop (bot/app/serve_stop.py) closes the
connections kept alive between requests instead of waiting out their `keepalive`.

gunicorn's gevent worker stops by closing its listener and waiting until no connection is open,
for at most its graceful timeout (30 s). A connection that is kept alive after its last answer
waits for its next request under the `keepalive` timeout (10 s here): Prometheus' scrape
connection, or a reverse proxy's, held every stop for up to 10 s.

At a stop this worker closes each connection that waits for its next request and has received
nothing of it (neither read, `CountingSocket`, nor waiting in the kernel, FIONREAD): what
gunicorn does when `keepalive` runs out, done sooner. A request already in flight (its first
bytes received, its answer not yet sent) is answered, with `Connection: close`, as before. A
client that sends its next request on such a connection just as it is closed sees the
connection reset, as at the end of any keep-alive, and as it would see a refused connection a
moment later: the delivery fails and GitHub shows it for redelivery; nothing is recorded and
lost. (Bytes of a pipelined next request, read with the previous one, are not seen: clients do
not pipeline POSTs.) At a reload (SIGHUP) nothing changes: the old workers answer what comes on
their kept-alive connections while the new ones take the new connections.
"""

from __future__ import annotations

import fcntl
import struct
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import gevent
from gevent import socket as gsocket
from gunicorn.workers.ggevent import GeventWorker

from bot.app.serve_stop import STOPPING


class CountingSocket(gsocket.socket):  # type: ignore[misc]
    """gevent's socket, which remembers whether it received anything since `expect_next`."""

    __slots__ = ("received",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received = False

    def recv(self, *args: Any) -> bytes:
        data: bytes = super().recv(*args)
        self.received = self.received or bool(data)
        return data

    def expect_next(self) -> None:
        self.received = False

    def idle(self) -> bool:
        """Nothing received since `expect_next`, and nothing waiting to be read."""
        if self.received:
            return False
        try:
            waiting: int = struct.unpack("i", fcntl.ioctl(self.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
        except OSError:  # closed meanwhile
            return False
        return waiting == 0


class ServeWorker(GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker; at a stop, its idle kept-alive connections are closed at once,
    and it exits without the interpreter's teardown (`stopped`: bot/app/serve_stop.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stopped = False
        self._connection: dict[Any, CountingSocket] = {}  # greenlet → its connection
        self._waiting: dict[Any, gevent.Timeout] = {}  # greenlet → its wait for a next request

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        if type(client) is gsocket.socket:  # a TLS socket is left as it is, and never closed early
            client = CountingSocket(client.family, client.type, client.proto, fileno=client.detach())
        me = gevent.getcurrent()
        self._connection[me] = client
        try:
            super().handle(listener, client, addr)
        finally:
            self._connection.pop(me, None)

    @contextmanager
    def _wait_for_request(self) -> Iterator[None]:
        """gunicorn's keepalive timeout around reading a request's head, the wait remembered."""
        me = gevent.getcurrent()
        connection = self._connection.get(me)
        timeout = gevent.Timeout(self.cfg.keepalive, False)
        if connection is not None:
            connection.expect_next()
            self._waiting[me] = timeout
        try:
            with timeout:
                yield
        finally:
            self._waiting.pop(me, None)

    def timeout_ctx(self) -> Any:
        return self._wait_for_request()

    def handle_exit(self, sig: Any, frame: Any) -> None:
        super().handle_exit(sig, frame)
        if STOPPING:
            gevent.spawn(self.close_idle)  # out of the signal handler

    def close_idle(self) -> None:
        """End the wait of each connection that has received nothing of a next request, as its
        keepalive timeout would (gunicorn then closes it)."""
        loop = gevent.get_hub().loop
        for greenlet in list(self._waiting):
            loop.run_callback(self._end_if_idle, greenlet)

    def _end_if_idle(self, greenlet: Any) -> None:
        """In the hub, where no other greenlet runs between the check and the throw."""
        timeout, connection = self._waiting.get(greenlet), self._connection.get(greenlet)
        if timeout is not None and connection is not None and connection.idle():
            greenlet.throw(timeout)

    def init_process(self) -> None:
        super().init_process()  # returns once the worker's loop ended: everything it held answered
        self.stopped = True
