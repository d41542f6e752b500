"""`rtcbot eval …` and other sub-commands, one module each.

Each module defines `command` (a click.Command) and `GROUP` ("eval" or "root"); `bot.cli`
finds them all, so a new command is one new module here.
"""
