"""Fixtures for the reporters' tests: the fake GitHub (the scripted LLM is tests/conftest.py's)."""

from tests.fakes.github_server import fake_github  # noqa: F401  (fixture)
