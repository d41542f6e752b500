"""The fakes' loopback server (tests/fakes/__init__.py)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable

import pytest

from tests.fakes.llm_server import ScriptedLLM


def test_a_client_that_drops_its_connection_prints_no_traceback(
        scripted_llm: Callable[..., ScriptedLLM], capfd: pytest.CaptureFixture[str]) -> None:
    server = scripted_llm("fine")
    host, port = server.base_url.split("//")[1].split("/")[0].split(":")
    idle = threading.active_count()
    for _ in range(3):  # connected, then reset (SO_LINGER 0) before a request line
        with socket.create_connection((host, int(port))) as conn:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    deadline = time.monotonic() + 30
    while threading.active_count() > idle and time.monotonic() < deadline:
        time.sleep(0.01)  # until the handler threads have met the reset and ended
    assert threading.active_count() <= idle
    assert "Traceback" not in capfd.readouterr().err
    assert server.request_count == 0
