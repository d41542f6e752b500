"""Fixtures the security tests share with the App's tests: the backends (SQLite; PostgreSQL +
Redis) and the fake GitHub."""

from tests.bot.conftest import Backend, backend  # noqa: F401  (fixture)
from tests.fakes.github_server import fake_github  # noqa: F401  (fixture)
