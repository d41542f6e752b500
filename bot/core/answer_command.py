"""The second use case: answer a command written on a pull request (`@rtcbot rerun`, the grammar
of bot/core/pr_commands.py), once for every surface. The App (bot/app/comment_commands.py) and
the Action (bot/action/comments.py) are adapters: each parses nothing and decides nothing, it
only implements the ports below over its own GitHub client, store or workflow run.

The rules, in order (each a short reply; nothing a comment says is run):

1. a command on a pull request that is not open gets `closed_reply`;
2. a malformed command gets why, and the help text (😕); `help` gets the help text;
3. `ignore` and `unignore` need write access (`Permissions`);
4. the pull request is read (`Conversation.pull`): when it is not open, `closed_reply`;
5. `dismissals` lists the dismissals (`DismissalsPort.listed`); `ignore`/`unignore` resolve what
   they name from what the surface shows (`FindingsAtHead`: the findings at the head, the
   thread's marker; pure, bot/core/verbs/dismiss.py), `ignore` checks the dismissal
   (bot/core/dismissals.py `problem`) and records it (`DismissalsPort.add`) or proposes it;
6. what spends — `rerun`, and `explain` where the surface keeps no findings and analyses again
   (`Ports.again`) — is the pull request author's, up to `Rules.author_budget` a
   day (`Ledger`: what was charged today; None: cannot be counted, refused), and anyone's with
   write access; the author is charged just before the work (`Ledger.charge`);
7. `rerun` needs the head; analyzers the repository turns off are said and not run
   (`Work.turned_off`); the rest is re-run (`Work.rerun`); `explain` finds the finding at the
   place among those kept (`FindingsAtHead`), or has the hunk analysed again (`Ports.again`).

Rules 1–4 and 6 are every command's; what each command reads and answers (5, 7) is its module's
in bot/core/verbs/, found by its verb in the table (bot/core/verbs/table.py). `respond` wraps it
as both surfaces do: 👀 on receipt, then the reply and the reaction. Pure: everything that reads
or writes goes through a port.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.core import pr_commands
from bot.core.verbs.base import (
    AnalyseAgain,
    Answer,
    Asked,
    Call,
    Conversation,
    DismissalsPort,
    FindingsAtHead,
    Help,
    Ledger,
    Malformed,
    Permissions,
    Ports,
    Rules,
    Work,
)
from bot.core.verbs.table import VERBS
from reporters.untrusted import inert

__all__ = ["AnalyseAgain", "Answer", "Asked", "Conversation", "DismissalsPort", "FindingsAtHead", "Ledger",
           "Permissions", "Ports", "Rules", "Work", "answer_command", "respond"]


def respond(asked: Asked, rules: Rules, ports: Ports) -> Answer:
    """👀 on receipt, the answer, then its reply and its reaction."""
    ports.conversation.react("eyes")
    answer = answer_command(asked, rules, ports)
    if answer.reply:
        ports.conversation.reply(answer.reply)
    if answer.reaction:
        ports.conversation.react(answer.reaction)
    return answer


def answer_command(asked: Asked, rules: Rules, ports: Ports) -> Answer:
    """The answer to one command (the module's rules, in their order)."""
    command = asked.command
    if asked.state != "open":
        return _closed(asked.state)
    if isinstance(command, Malformed):
        return Answer("malformed", f"rtcbot could not read that command: {inert(command.why)}.\n\n"
                      + pr_commands.help_text(rules.slug), "confused")
    verb = VERBS.get(command.verb)
    if isinstance(command, Help) or verb is None:
        return Answer("help", pr_commands.help_text(rules.slug))
    if verb.needs_write and not ports.permissions.can_write(asked.author):
        return Answer("refused: no write access", pr_commands.no_write_reply(verb.name))
    pull = ports.conversation.pull()
    if pull.get("state", "open") != "open":
        return _closed(str(pull.get("state")))
    head = str((pull.get("head") or {}).get("sha") or asked.head or "")
    charged: int | None = None
    if verb.spends(ports) and not ports.permissions.can_write(asked.author):
        refusal, charged = _refusal(asked, rules, ports, pull)
        if refusal:
            return Answer("refused", refusal)

    def charge() -> None:
        if charged is not None:
            ports.ledger.charge(asked, verb.name, head, charged + 1)

    return verb.answer(Call(asked, pull, head, ports, charge))


def _refusal(asked: Asked, rules: Rules, ports: Ports, pull: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """Why this person, without write access, may not spend now (None: they may), and their
    charged commands today."""
    if asked.author.lower() != str((pull.get("user") or {}).get("login") or "").lower():
        return pr_commands.spend_refused(explain=ports.again is not None), None
    charged = ports.ledger.charged_today(asked)
    if charged is None:
        return ports.ledger.uncountable, None
    if charged >= rules.author_budget:
        return pr_commands.author_budget_reply(rules.author_budget), charged
    return None, charged


def _closed(state: str) -> Answer:
    return Answer("closed", pr_commands.closed_reply(state))
