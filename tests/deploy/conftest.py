"""Fixtures of the deployment tests."""

from tests.fakes.github_server import fake_github  # noqa: F401  (a fixture: tests/deploy/test_restore.py)
