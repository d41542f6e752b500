"""Commands people write to rtcbot on a pull request, addressed to the App by its bot name
(`@<slug> rerun`, in the conversation or in a review thread). Pure: a comment's text in, a
typed command out; shared by the App (bot/app/comment_commands.py) and the Action.

    @rtcbot help                                   the commands, in one short reply
    @rtcbot rerun [analyzer …]                     the head again (every analysis, or those named)
    @rtcbot explain [path:line]                    the evidence behind a score (in a thread on one
                                                   of rtcbot's comments: that one)
    @rtcbot ignore <rule|this> [in <glob>] [because <reason>]
    @rtcbot unignore <rule|this> [in <glob>]
    @rtcbot dismissals                             what is ignored in this repository

Only the first line that starts with the address counts (not one in a code block or a quote).
A comment is text, never a program: a path or glob must be relative and inside the repository
(no `..`, no leading `/`, no backslash, no control character), every part is bounded, and
anything else is `Malformed` (answered with the help text).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from analyzers import registry

MAX_LINE = 500  # characters of the addressed line that are read
MAX_PATH = 300
MAX_TARGET = 200
MAX_REASON = 300
MAX_LINE_NUMBER = 10_000_000
STATEFUL = frozenset({"ignore", "unignore"})  # need write access (rerun too, past the author's budget)

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ADDRESS = re.compile(r"^@(?P<slug>[A-Za-z0-9][A-Za-z0-9-]*)(?:\[bot\])?(?=\s|$)(?P<rest>.*)$", re.I)
_PATH_CHARS = re.compile(r"^[A-Za-z0-9._/@+=,~ -]+$")  # a path: no glob, no control character
_GLOB_CHARS = re.compile(r"^[A-Za-z0-9._/@+=,~*?\[\]{}!-]+$")  # a glob: the same and its wildcards
_TARGET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$")  # a rule id, an analyzer's key, a fingerprint
_IGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?(?:\s+because\s+(?P<reason>.+))?$", re.I | re.S)
_UNIGNORE = re.compile(r"^(?P<target>\S+)(?:\s+in\s+(?P<glob>\S+))?$", re.I)


@dataclass(frozen=True)
class Help:
    verb = "help"


@dataclass(frozen=True)
class Rerun:
    analyzers: tuple[str, ...] = ()  # () : every analysis the repository enables
    verb = "rerun"


@dataclass(frozen=True)
class Explain:
    path: str | None = None  # None: the finding of the thread the command is in
    line: int | None = None
    verb = "explain"


@dataclass(frozen=True)
class Ignore:
    target: str  # a rule id, an analyzer's key or a finding's fingerprint; "this": the thread's
    path_glob: str | None = None
    reason: str = ""
    verb = "ignore"


@dataclass(frozen=True)
class Unignore:
    target: str
    path_glob: str | None = None
    verb = "unignore"


@dataclass(frozen=True)
class Dismissals:
    verb = "dismissals"


@dataclass(frozen=True)
class Malformed:
    why: str
    verb = "malformed"


Command = Help | Rerun | Explain | Ignore | Unignore | Dismissals | Malformed


def help_text(slug: str) -> str:
    """The commands, in one short reply (rtcbot's own Markdown)."""
    at = f"@{slug}"
    return "\n".join([
        f"Commands for `{at}` (in this conversation or in a review thread):",
        "",
        f"- `{at} rerun [analyzer …]`: analyse the head again (all analyses, or those named: "
        + ", ".join(n.replace("_", "-") for n in registry.ANALYZERS) + ")",
        f"- `{at} explain [path:line]`: the evidence behind a score (in a thread on one of rtcbot's "
        "comments, that one)",
        f"- `{at} ignore <rule|this> [in <glob>] [because <reason>]`, `{at} unignore <rule|this> [in <glob>]`: "
        "dismiss a rule or a finding (write access)",
        f"- `{at} dismissals`: what is dismissed in this repository",
        f"- `{at} help`: this list",
    ])


def _outside_code(body: str | None) -> Iterator[str]:
    """The lines of a comment outside its fenced code blocks."""
    fence: str | None = None
    for raw in (body or "").splitlines():
        m = _FENCE.match(raw)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        yield raw


def addressed(body: str | None, slug: str) -> str | None:
    """The text after `@<slug>` on the first line that starts with it, outside code blocks and
    quotes ("" for the address alone), or None when the comment does not address the App."""
    for raw in _outside_code(body):
        a = _ADDRESS.match(raw.strip())
        if a and a.group("slug").lower() == slug.lower():
            return a.group("rest").strip()[:MAX_LINE]
    return None


def safe_path(text: str, *, glob: bool = False) -> str | None:
    """`text` as a path (or glob) inside the repository, or None: relative, no `..` or `.`
    part, no empty part, no backslash, no control character, at most MAX_PATH characters."""
    if not text or len(text) > MAX_PATH or not (_GLOB_CHARS if glob else _PATH_CHARS).match(text):
        return None
    parts = text.split("/")
    if text.startswith(("/", "~")) or any(p in ("", ".", "..") for p in parts):
        return None
    return text


def _explain(rest: str) -> Command:
    if not rest:
        return Explain()
    path, sep, line = rest.rpartition(":")
    if not sep or not line.isdigit() or not 1 <= int(line) <= MAX_LINE_NUMBER:
        return Malformed("explain takes path:line (e.g. src/app.py:12)")
    if safe_path(path) is None:
        return Malformed("explain: the path must be relative and inside the repository")
    return Explain(path, int(line))


def _target(text: str) -> str | None:
    return text if text.lower() == "this" or (len(text) <= MAX_TARGET and _TARGET.match(text)) else None


def _glob(text: str | None) -> tuple[bool, str | None]:
    """(valid, the glob or None)."""
    if text is None:
        return True, None
    found = safe_path(text, glob=True)
    return found is not None, found


def _ignore(verb: str, rest: str) -> Command:
    m = (_IGNORE if verb == "ignore" else _UNIGNORE).match(rest)
    if not m:
        return Malformed(f"{verb} takes <rule|this> [in <glob>]" + (" [because <reason>]" if verb == "ignore" else ""))
    target = _target(m.group("target"))
    if target is None:
        return Malformed(f"{verb}: a rule id, an analyzer's name, a finding's fingerprint, or `this`")
    ok, glob = _glob(m.group("glob"))
    if not ok:
        return Malformed(f"{verb}: the glob after `in` must be relative and inside the repository")
    target = "this" if target.lower() == "this" else target
    if verb == "unignore":
        return Unignore(target, glob)
    reason = " ".join((m.group("reason") or "").split())
    if len(reason) > MAX_REASON:
        return Malformed(f"ignore: the reason is longer than {MAX_REASON} characters")
    return Ignore(target, glob, reason)


def parse(text: str) -> Command:
    """The command in the text after the address (`addressed`)."""
    verb, _, rest = text.strip().partition(" ")
    verb, rest = verb.lower(), rest.strip()
    if verb in ("", "help"):
        return Help() if not rest else Malformed("help takes nothing after it")
    if verb == "rerun":
        try:
            names = registry.parse_names(",".join(rest.replace(",", " ").split()))
        except registry.UnknownAnalyzer as e:
            return Malformed(f"rerun: {e}")
        return Rerun(tuple(dict.fromkeys(names)))
    if verb == "explain":
        return _explain(rest)
    if verb in ("ignore", "unignore"):
        return _ignore(verb, rest)
    if verb == "dismissals":
        return Dismissals() if not rest else Malformed("dismissals takes nothing after it")
    return Malformed(f"unknown command {verb[:40]!r}")


def changes_state(command: Command) -> bool:
    """Whether the command changes what rtcbot keeps (only people with write access may)."""
    return command.verb in STATEFUL


def is_bot(user: object) -> bool:
    """Whether a comment's `user` is a bot's (whose comments are never commands)."""
    if not isinstance(user, dict):
        return False
    return user.get("type") == "Bot" or str(user.get("login") or "").endswith("[bot]")


# -- the replies both surfaces give (rtcbot's Markdown; a state is GitHub's word) --------------
def closed_reply(state: str) -> str:
    said = state if state in ("closed", "merged") else "not open"
    return f"This pull request is {said}: rtcbot takes no commands on it."


def no_write_reply(verb: str) -> str:
    return f"Only people with write access to this repository can use `{verb}`."


RERUN_REFUSED = "Only the pull request's author and people with write access to this repository can `rerun`."


def spend_refused(*, explain: bool) -> str:
    """Why someone who neither wrote the pull request nor has write access may not spend (a
    `rerun`; an `explain` too, where it analyses again)."""
    return RERUN_REFUSED.replace("`rerun`", "`rerun` or `explain` here") if explain else RERUN_REFUSED


def author_budget_reply(budget: int) -> str:
    return (f"The pull request's author can ask for {budget} re-run(s) a day here, and has; "
            "someone with write access can ask for more.")


def turned_off_reply(names: Sequence[str], config: str) -> str:
    """What a `rerun` of analyzers the repository's config turns off says (nothing is run for them)."""
    listed = ", ".join(f"`{n.replace('_', '-')}`" for n in names)
    return (f"{listed} {'is' if len(names) == 1 else 'are'} turned off in `{config}`, so rtcbot does not "
            f"re-run {'it' if len(names) == 1 else 'them'}; turn {'it' if len(names) == 1 else 'them'} on there "
            "(on the default branch) first.")


# -- "won't fix": a resolved thread proposes a dismissal, never makes one -----------------------
_WONT_FIX = re.compile(r"\b(won['\u2019]?t\s+fix|wontfix|will\s+not\s+fix|not\s+a\s+bug|false[\s-]+positive|"
                       r"intended|intentional(?:ly)?|by\s+design)\b", re.I)
_QUOTE = re.compile(r"^\s*>")


def wont_fix(body: str | None) -> str | None:
    """The reason a reply gives for leaving one of rtcbot's findings as it is ("won't fix", "not a
    bug", "false positive", "intended", "by design"): its first line that says so, outside code
    blocks and quotes, on one line and bounded (MAX_REASON); None when it says none of that."""
    for raw in _outside_code(body):
        if _QUOTE.match(raw) or not _WONT_FIX.search(raw):
            continue
        line = " ".join("".join(ch for ch in raw if ch.isprintable()).split())
        return line[:MAX_REASON].rstrip()
    return None


def proposed_ignore(slug: str, reason: str) -> str:
    """The command that confirms a proposed dismissal of a thread's finding (what `parse` reads
    back as `Ignore("this", None, reason)`)."""
    return f"@{slug} ignore this because {' '.join(reason.split())[:MAX_REASON]}"
