"""Fixtures the security tests share with the App's tests: the backends (SQLite; PostgreSQL +
Redis), the App end to end on them, and the fake GitHub."""

from tests.bot.conftest import Backend, apps, backend  # noqa: F401  (fixture)
from tests.fakes.github_server import fake_github  # noqa: F401  (fixture)
