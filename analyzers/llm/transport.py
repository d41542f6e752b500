"""The transport errors of the HTTP package the openai client runs on, as types: httpx's, and
httpx2's where it is installed (openai's newer releases run on it; the two name their classes
alike but share none). Code that decides on a transport error tests these, never a class name."""

from __future__ import annotations

import importlib
from types import ModuleType

import httpx


def _packages() -> list[ModuleType]:
    found = [httpx]
    try:
        found.append(importlib.import_module("httpx2"))
    except ImportError:
        pass
    return found


def _classes(name: str) -> tuple[type[BaseException], ...]:
    return tuple(getattr(package, name) for package in _packages())


CONNECT_ERRORS = _classes("ConnectError")  # refused or unreachable: nothing was sent
TIMEOUTS = _classes("TimeoutException")
TRANSPORT_ERRORS = _classes("TransportError")  # the connection failed, a timeout included
