"""Every command of the grammar, by its verb: a new command is one module in this package and
one line here (its help line, parsing, rules and answer come from its `Verb`)."""

from __future__ import annotations

from bot.core.verbs import dismiss, dismissals, explain, rerun
from bot.core.verbs.base import Verb

VERBS: dict[str, Verb] = {
    "rerun": rerun.VERB,
    "explain": explain.VERB,
    "ignore": dismiss.IGNORE,
    "unignore": dismiss.UNIGNORE,
    "dismissals": dismissals.VERB,
}
