"""The transport errors as types, whichever httpx package raises them."""

from __future__ import annotations

import importlib.util
import socket

import httpx
import pytest

from analyzers.llm.transport import CONNECT_ERRORS, TIMEOUTS, TRANSPORT_ERRORS


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_connection_is_a_connect_error_and_a_transport_error_not_a_timeout() -> None:
    with pytest.raises(httpx.HTTPError) as caught:
        httpx.get(f"http://127.0.0.1:{closed_port()}/v1/models", timeout=5)
    assert isinstance(caught.value, CONNECT_ERRORS)
    assert isinstance(caught.value, TRANSPORT_ERRORS)
    assert not isinstance(caught.value, TIMEOUTS)


@pytest.mark.skipif(importlib.util.find_spec("httpx2") is None, reason="httpx2 is not installed")
def test_httpx2s_classes_count_as_well() -> None:
    import httpx2

    assert httpx2.ConnectError in CONNECT_ERRORS and httpx2.ReadTimeout.__mro__[1] in TIMEOUTS
    assert isinstance(httpx2.ReadTimeout("slow"), TRANSPORT_ERRORS)
    assert not isinstance(httpx2.ReadTimeout("slow"), CONNECT_ERRORS)
