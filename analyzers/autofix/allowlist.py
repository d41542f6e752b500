"""A fix is verified only by an allowlist of what it adds (issue #51, item 2).

The re-scan says a rule's pattern no longer matches; it cannot say the fix did not move the
weakness somewhere the pattern does not look (`getattr(subprocess, "call")(cmd, shell=True)`,
`__import__("os").system(cmd)`, `run = eval; run(expr)`). So the fix's delta is read from the
code — the AST for Python (analyzers/autofix/delta_py.py), the tokens for Java and JavaScript
(analyzers/autofix/delta_tokens.py) — as constructs (analyzers/autofix/constructs.py): every
construct the fixed lines have more of than the flagged lines had must be a call or an import
on the rule's short list of known-safe replacements (or the language's few harmless ones).
Any other call, and any dynamic dispatch, alias, unpacked argument or shell the fix adds,
makes it "proposed, not verified"; what cannot be read is not verified either.

A list names calls by their dotted name as the code writes it (through the imports, for
Python); `*.m` stands for the method `m` of any value (`cmd.split`, `*.hexdigest`). A rule
with no list (the operator's extra rules) allows only the language's harmless calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from analyzers.autofix import delta_py, delta_tokens
from analyzers.autofix.constructs import Added, Construct
from analyzers.autofix.text import line_span

_PY_COMMON = ("str", "int", "float", "len", "isinstance", "list", "tuple", "ValueError", "TypeError",
              "PermissionError", "RuntimeError", "KeyError", "*.strip", "*.encode", "*.decode", "*.startswith")
_JAVA_COMMON = ("String.valueOf", "Integer.parseInt", "Objects.requireNonNull", "IllegalArgumentException",
                "SecurityException", "*.equals", "*.isEmpty", "*.length", "*.trim", "*.matches")
_JS_COMMON = ("String", "Number", "Error", "TypeError", "Array.isArray", "*.trim", "*.test", "*.includes")
_SUBPROCESS = ("subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
               "subprocess.Popen")

SAFE: dict[str, tuple[str, ...]] = {
    # Python
    "python-shell-injection": (*_SUBPROCESS, "shlex.quote", "shlex.split", "shlex.join", "*.split"),
    "python-code-injection": ("ast.literal_eval", "json.loads"),
    "python-sql-string-format": ("*.execute", "*.executemany"),
    "python-unsafe-deserialization": ("json.loads", "json.load"),
    "python-yaml-unsafe-load": ("yaml.safe_load", "yaml.safe_load_all"),
    "python-weak-hash": ("hashlib.sha256", "hashlib.sha384", "hashlib.sha512", "hashlib.sha3_256",
                         "hashlib.blake2b", "*.hexdigest", "*.digest", "*.update"),
    "python-weak-cipher": ("cryptography.hazmat.primitives.ciphers.aead.AESGCM", "AESGCM.generate_key",
                           "os.urandom", "secrets.token_bytes", "*.encrypt", "*.decrypt"),
    "python-hardcoded-secret": ("os.environ.get", "os.getenv"),
    "python-flask-debug": ("os.environ.get", "os.getenv"),
    "python-insecure-tempfile": ("tempfile.mkstemp", "tempfile.NamedTemporaryFile", "tempfile.mkdtemp",
                                 "tempfile.TemporaryDirectory", "os.fdopen"),
    "python-xml-external-entities": ("defusedxml.ElementTree.parse", "defusedxml.ElementTree.fromstring",
                                     "defusedxml.minidom.parse", "defusedxml.minidom.parseString"),
    "python-tarfile-extractall": ("*.getmembers", "os.path.abspath", "os.path.realpath", "os.path.join",
                                  "os.path.commonpath", "*.extractall"),
    # Java
    "java-shell-injection": ("ProcessBuilder", "*.start", "*.command", "*.split", "List.of", "Arrays.asList",
                             "*.waitFor", "*.inheritIO", "*.redirectErrorStream"),
    "java-sql-string-concat": ("*.prepareStatement", "*.setString", "*.setInt", "*.setLong", "*.executeQuery",
                               "*.executeUpdate", "*.execute"),
    "java-weak-hash": ("MessageDigest.getInstance", "java.security.MessageDigest.getInstance"),
    "java-weak-cipher": ("Cipher.getInstance", "javax.crypto.Cipher.getInstance", "GCMParameterSpec",
                         "SecureRandom", "*.nextBytes", "*.init"),
    "java-hardcoded-secret": ("System.getenv", "System.getProperty"),
    "java-xml-external-entities": ("*.setFeature", "*.setExpandEntityReferences", "*.setXIncludeAware",
                                   "*.setAttribute"),
    # JavaScript
    "javascript-code-injection": ("JSON.parse", "parseInt", "parseFloat"),
    "javascript-shell-injection": ("execFile", "execFileSync", "spawn", "spawnSync", "*.execFile",
                                   "*.execFileSync", "*.spawn", "*.spawnSync", "child_process"),
    "javascript-sql-string-concat": ("*.query", "*.execute"),
    "javascript-weak-crypto": ("*.createHash", "*.createCipheriv", "*.randomBytes", "*.digest", "*.update"),
    "javascript-unsafe-deserialization": ("JSON.parse",),
}
COMMON = {"python": _PY_COMMON, "java": _JAVA_COMMON, "javascript": _JS_COMMON, "typescript": _JS_COMMON}
_LISTED = (Added.CALL, Added.IMPORT)


def listed(name: str, entries: Sequence[str]) -> bool:
    """`name` is on the list: named exactly, a module whose names it holds (`shlex` for
    `shlex.quote`), or a method `*.m` of any value."""
    for e in entries:
        if name == e or e.startswith(name + "."):
            return True
        if e.startswith("*.") and "." in name and name.rsplit(".", 1)[1] == e[2:]:
            return True
    return False


def delta(language: str | None, original: str, patched: str, flagged: range, region: range) -> list[Construct]:
    """The constructs the fixed lines (`region` of `patched`) have more of than the flagged
    lines (`flagged` of `original`) had."""
    if language == "python":
        try:
            before, after = delta_py.constructs(original, flagged), delta_py.constructs(patched, region)
        except SyntaxError:
            return [Construct(Added.UNREADABLE, "the file does not parse as Python")]
    elif language in ("java", "javascript", "typescript"):
        before = delta_tokens.constructs(line_span(original, flagged.start, flagged.stop - 1))
        after = delta_tokens.constructs(line_span(patched, region.start, region.stop - 1))
    else:
        return [Construct(Added.UNREADABLE, f"no reader for {language or 'this language'}")]
    return sorted((Counter(after) - Counter(before)).keys(), key=lambda c: (c.kind.name, c.text))


def unlisted(language: str | None, rule_id: str, original: str, patched: str, flagged: range,
             region: range) -> list[Construct]:
    """What the fix adds that is not allowed: every construct of its delta but the calls and
    imports on the rule's list (or the language's harmless ones). Empty: the fix may be verified."""
    entries = SAFE.get(rule_id, ()) + COMMON.get(language or "", ())
    return [c for c in delta(language, original, patched, flagged, region)
            if not (c.kind in _LISTED and listed(c.text, entries))]


def refusal(added: Sequence[Construct], limit: int = 3) -> str:
    """The words after "fix proposed, not verified: "."""
    said = "; ".join(c.words() for c in added[:limit])
    more = f" and {len(added) - limit} more" if len(added) > limit else ""
    return f"it adds what a fix for this rule may not: {said}{more}"
