"""How a command ends on settings a person must fix: one line per problem, exit 2."""

from __future__ import annotations

import sys
from typing import NoReturn

from bot.core.settings import SettingsError


def settings_exit(e: SettingsError) -> NoReturn:
    """Bad settings: one line per problem, naming its environment variable; exit 2."""
    from bot.core.logs import say_error

    for line in e.lines or [str(e)]:
        say_error(line)
    sys.exit(2)
