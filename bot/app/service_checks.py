"""What stops a service from starting (`rtcbot serve`, `rtcbot worker`): the settings a
surface needs, the App's private key, the dashboard's three settings, the database and Redis
URLs; one line per problem naming its variable, all of them checked before a start.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from analyzers.urls import redact_url
from bot.app.settings import ServiceSettings
from bot.core.settings import variable_problems
from bot.core.settings_env import SettingsError, load, set_name


def private_key_problem(pem: str) -> str | None:
    """Why `pem` is not a usable GitHub App key (a PEM RSA private key), or None."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        key = load_pem_private_key(pem.encode("utf-8", errors="replace"), password=None)
    except TypeError:
        return "the private key is encrypted; GitHub App keys are not (use the .pem GitHub gave you)"
    except (ValueError, UnsupportedAlgorithm):
        return "not a PEM RSA private key (expected the .pem file GitHub gave you)"
    if not isinstance(key, RSAPrivateKey):
        return (f"a {type(key).__name__.removeprefix('_').replace('PrivateKey', '')} key, "
                "not RSA (GitHub App keys are RSA)")
    return None


DASHBOARD_SETTINGS = ("RTCBOT_OAUTH_CLIENT_ID", "RTCBOT_OAUTH_CLIENT_SECRET", "RTCBOT_SESSION_SECRET")


def dashboard_unset(settings: ServiceSettings) -> list[str]:
    """The dashboard's settings that are not set (all of them: the dashboard is off)."""
    values = (settings.oauth_client_id, settings.oauth_client_secret, settings.session_secret)
    return [name for name, v in zip(DASHBOARD_SETTINGS, values, strict=True) if not v]


def dashboard_problems(settings: ServiceSettings) -> list[str]:
    """/dashboard is on with all three of its settings and off with none: some of them set is a
    mistake, never a dashboard silently off. Its URLs must be http(s) addresses."""
    unset = dashboard_unset(settings)
    problems = []
    if 0 < len(unset) < len(DASHBOARD_SETTINGS):
        given = [n for n in DASHBOARD_SETTINGS if n not in unset]
        problems += [f"{n}: not set, while {', '.join(given)} is: the dashboard needs all of "
                     f"{', '.join(DASHBOARD_SETTINGS)} (docs/dashboard.md)" for n in unset]
    for name, url in (("RTCBOT_GITHUB_URL", settings.github_url), ("RTCBOT_PUBLIC_URL", settings.public_url)):
        if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname):
            problems.append(f"{name}: must be an http(s) address such as https://github.com, "
                            f"not {redact_url(url)[:80]!r}")
    return problems


def check_service(settings: ServiceSettings, *, webhooks: bool = False, app: bool = False) -> list[str]:
    """What stops a service from starting, one line per problem naming its variable:
    `webhooks` (rtcbot serve) needs the webhook secret, `app` (rtcbot worker) the App's id and
    private key; a private key that is set is parsed either way."""
    problems: list[str] = []
    if webhooks and not settings.webhook_secret:
        problems.append("RTCBOT_WEBHOOK_SECRET: not set (the secret you gave GitHub when registering "
                        "the app; unsigned deliveries are never accepted)")
    if app and not settings.app_id:
        problems.append("RTCBOT_APP_ID: not set (the GitHub App's id)")
    problems += dashboard_problems(settings)
    if settings.stale_after_s <= settings.heartbeat_s:
        problems.append(f"RTCBOT_STALE_AFTER_S: must be more than RTCBOT_HEARTBEAT_S ({settings.heartbeat_s:g}): "
                        "a job that marks itself alive less often would be taken for dead")
    if settings.worker_stale_s <= settings.heartbeat_s:
        problems.append(f"RTCBOT_WORKER_STALE_S: must be more than RTCBOT_HEARTBEAT_S ({settings.heartbeat_s:g}): "
                        "a worker that beats less often would be taken for dead")
    problems += database_problems(settings)
    if settings.redis_url and urlsplit(settings.redis_url).scheme not in REDIS_SCHEMES:
        problems.append(f"{set_name(ServiceSettings, 'REDIS_URL')}: not a Redis URL "
                        "(e.g. redis://redis.internal:6379/0; rediss:// or unix:// too)")
    source = ("RTCBOT_PRIVATE_KEY" if settings.private_key
              else "RTCBOT_PRIVATE_KEY_PATH" if settings.private_key_path else None)
    if source is None:
        if app:
            problems.append("RTCBOT_PRIVATE_KEY: not set (the App's private key; or RTCBOT_PRIVATE_KEY_PATH, its file)")
        return problems
    try:
        pem = settings.private_key_pem()
    except SettingsError as e:
        problems.append(f"{source}: {str(e).removeprefix('cannot read RTCBOT_PRIVATE_KEY_PATH ')}")
        return problems
    why = private_key_problem(pem)
    if why:
        problems.append(f"{source}: {why}")
    return problems


def service_settings(*, webhooks: bool = False, app: bool = False) -> ServiceSettings:
    """The settings `rtcbot serve` (webhooks) and `rtcbot worker` (app) start with, all of them
    checked first (SettingsError: every problem, one line each)."""
    settings, problems = load(ServiceSettings, {})
    problems = variable_problems() + problems
    if settings is not None:  # a wrong value took its default: not said twice ("not set")
        said = {line.split(":", 1)[0] for line in problems}
        problems += [p for p in check_service(settings, webhooks=webhooks, app=app) if p.split(":", 1)[0] not in said]
    if problems or settings is None:
        raise SettingsError(*problems)
    return settings


# -- the database ----------------------------------------------------------------------------
REDIS_SCHEMES = ("redis", "rediss", "unix")


def _database_variable() -> str:
    return set_name(ServiceSettings, "DATABASE_URL")


def database_problems(settings: ServiceSettings) -> list[str]:
    """What is wrong with DATABASE_URL that shows without connecting: not a URL, a database rtcbot
    does not store in, a driver that is not installed (bot/store/db.py `url_problem`); one line
    naming the variable."""
    if not settings.database_url:
        return []
    from bot.store.db import url_problem

    problem = url_problem(settings.database())
    return [] if problem is None else [f"{_database_variable()}: {problem}"]


def database_place(settings: ServiceSettings) -> str:
    """The database in words, naming its setting (and never a password)."""
    if not settings.database_url:
        return f"the SQLite database in RTCBOT_DATA_DIR={settings.data_dir}"
    from bot.store.db import safe_url

    return f"the database at {_database_variable()}={safe_url(settings.database())}"


def start_problem(e: BaseException, settings: ServiceSettings) -> str:
    """One line for what stopped a service at start: the database, naming its variable and the
    server's own reason (never SQLAlchemy's three lines); else the error's first line."""
    from bot.store.db import error_reason, safe_url

    reason = error_reason(e)
    if reason is not None:
        return f"{_database_variable()}: cannot use the database at {safe_url(settings.database())}: {reason}"
    text = str(e).strip().splitlines()
    return f"cannot start: {type(e).__name__}: {text[0]}" if text else f"cannot start: {type(e).__name__}"
