"""analyzers.tools.readable: readiness at any descriptor number, where select() gives up at 1024."""

from __future__ import annotations

import fcntl
import os
import select
import socket

import pytest

from analyzers.tools.readable import readable

HIGH = 1500  # over FD_SETSIZE (1024): the numbers a long-lived process holding many files gets


def high_pipe() -> tuple[int, int]:
    """A pipe whose read end is numbered HIGH or more."""
    r, w = os.pipe()
    high = fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, HIGH)
    os.close(r)
    return high, w


def test_select_refuses_the_descriptor_that_readable_takes() -> None:
    r, w = high_pipe()
    try:
        assert r >= HIGH
        with pytest.raises(ValueError, match="out of range"):
            select.select([r], [], [], 0)
        assert readable(r, 0) is False
    finally:
        os.close(r)
        os.close(w)


def test_data_and_an_end_of_file_are_readable() -> None:
    r, w = high_pipe()
    try:
        assert not readable(r, 0.01)
        os.write(w, b"x")
        assert readable(r, 0) and readable(r, None)
        assert os.read(r, 1) == b"x" and not readable(r, 0)
        os.close(w)
        assert readable(r, None) and os.read(r, 1) == b""  # the writer gone: an end of file
    finally:
        os.close(r)


def test_a_hung_up_writer_and_a_socket_object_are_readable() -> None:
    a, b = socket.socketpair()
    with a, b:
        assert not readable(a, 0)
        b.sendall(b"ping")
        assert readable(a, 0)  # an object with fileno()
        a.recv(4)
        b.close()
        assert readable(a, 0) and a.recv(1) == b""  # the end of file


def test_a_negative_timeout_is_now() -> None:
    r, w = os.pipe()
    try:
        assert readable(r, -5) is False
    finally:
        os.close(r)
        os.close(w)
