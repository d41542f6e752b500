"""analyzers/autofix/allowlist.py (with delta_py.py and delta_tokens.py): a fix is verified
only if what it adds is on its rule's list (issue #51, item 2).

Each disguise of the issue — a dangerous call reached through `getattr`, `__import__`, an
alias, a `**` dict or a truthy non-literal `shell=` — is refused with the kind of what it
added; honest fixes of the bundled vulnerable fixtures (tests/fixtures/vulnerable/python) and
of the bundled rules' Java and JavaScript examples add nothing off their lists. Pure: no
Semgrep here (tests/security/test_fix_allowlist.py plays the disguises through the surfaces).
"""

from __future__ import annotations

import pytest

from analyzers.autofix.allowlist import SAFE, listed, refusal, unlisted
from analyzers.autofix.checks import Checks
from analyzers.autofix.constructs import Added, Construct
from analyzers.autofix.delta_tokens import tokens
from analyzers.autofix.oracle import FixOutcome, FixTarget, Reason, refuse
from analyzers.autofix.text import Edit, FixAnswer, apply_edits, line_span, reindent
from analyzers.semgrep.scan import SemgrepFinding
from tests.support import FIXTURES

SHELL = "import builtins\nimport subprocess\n\n\ndef run_user(cmd):\n    subprocess.call(cmd, shell=True)\n"
EVAL = "import ast\nimport builtins\n\n\ndef calc(expr):\n    return eval(expr)\n"
JS = "function run(input) {\n    let value = null;\n    value = eval(input);\n    return value;\n}\n"
JS_SHELL = ("const cp = require('child_process');\n\nfunction list(dir) {\n    cp.exec('ls ' + dir);\n}\n")
JAVA = ("class Runner {\n    void run(String cmd) throws Exception {\n        Runtime.getRuntime().exec(cmd);\n"
        "    }\n}\n")


def added(language: str, rule: str, original: str, line: int, fix: str) -> list[Construct]:
    """What `fix`, put in place of line `line` of `original`, adds beyond the rule's list."""
    replacement = reindent(fix, line_span(original, line, line))
    patched, _ = apply_edits(original, [Edit(line, line, replacement)])
    region = range(line, line + len(replacement.splitlines()))
    return unlisted(language, rule, original, patched, range(line, line + 1), region)


def kinds(found: list[Construct]) -> set[Added]:
    return {c.kind for c in found}


# ------------------------------------------------------------------------- the issue's disguises
@pytest.mark.parametrize(("original", "rule", "fix", "expected"), [
    (SHELL, "python-shell-injection", 'getattr(subprocess, "call")(cmd, shell=True)',
     {Added.DYNAMIC, Added.COMPUTED, Added.ALIAS}),
    (SHELL, "python-shell-injection", "subprocess.call(cmd, shell=bool(1))", {Added.SHELL, Added.CALL}),
    (SHELL, "python-shell-injection", 'subprocess.call(cmd, **{"shell": True})', {Added.UNPACKED}),
    (SHELL, "python-shell-injection", '__import__("os").system(cmd)', {Added.DYNAMIC, Added.CALL}),
    (EVAL, "python-code-injection", 'return getattr(builtins, "ev" + "al")(expr)',
     {Added.DYNAMIC, Added.COMPUTED, Added.ALIAS}),
    (EVAL, "python-code-injection", "run = eval\nreturn run(expr)", {Added.ALIAS, Added.CALL}),
])
def test_each_disguise_of_the_issue_is_refused(original: str, rule: str, fix: str, expected: set[Added]) -> None:
    found = added("python", rule, original, 6, fix)
    assert kinds(found) == expected, found


@pytest.mark.parametrize(("fix", "expected"), [
    ('subprocess.call(["sh", "-c", cmd])', Construct(Added.SHELL, "['sh', '-c', cmd]")),
    ("subprocess.call(cmd, 0, None, None, None, None, None, True, True)",
     Construct(Added.SHELL, "subprocess.call with 9 positional arguments")),
    ("subprocess.call(*[cmd], shell=False)", Construct(Added.UNPACKED, "*[cmd]")),
    ("subprocess.call(['-c', cmd], executable='/bin/sh')", Construct(Added.SHELL, "executable='/bin/sh'")),
    ("import os as o\no.system(cmd)", Construct(Added.CALL, "os.system")),
    ("from functools import partial\npartial(subprocess.call, shell=True)(cmd)",
     Construct(Added.ALIAS, "subprocess.call")),
    ("subprocess.__dict__['call'](cmd, shell=True)", Construct(Added.DYNAMIC, ".__dict__")),
    ("vars(subprocess)['call'](cmd, shell=True)", Construct(Added.DYNAMIC, "vars")),
    ("import importlib\nimportlib.import_module('os').system(cmd)",
     Construct(Added.DYNAMIC, "importlib.import_module")),
    ("m = subprocess\nm.call(cmd, shell=True)", Construct(Added.ALIAS, "subprocess")),
    ("import pickle\npickle.loads(cmd)", Construct(Added.IMPORT, "pickle")),
])
def test_other_ways_round_the_pattern_are_refused(fix: str, expected: Construct) -> None:
    assert expected in added("python", "python-shell-injection", SHELL, 6, fix)


@pytest.mark.parametrize(("fix", "expected"), [
    ("subprocess.call(cmd.split())", []),  # an argument list, shell left off
    ("subprocess.call(cmd.split(), shell=False)", []),
    ("import shlex\nsubprocess.run(shlex.split(cmd), check=True)", []),
    ("from shlex import quote\nsubprocess.call(['ls', quote(cmd)], stdout=subprocess.PIPE)", []),
    ("raise ValueError('no shell commands')", []),
    ("pass", []),  # removing the flagged call adds nothing
])
def test_honest_shell_fixes_add_nothing_off_the_list(fix: str, expected: list[Construct]) -> None:
    assert added("python", "python-shell-injection", SHELL, 6, fix) == expected


# ------------------------------------------------------------------------- the bundled fixtures
HONEST = [  # (fixture, the flagged line's text, its rule, a fix a reviewer would accept)
    ("eval.py", "print(eval(\"os.chmod", "python-code-injection", "print(ast.literal_eval('1 + 1'))"),
    ("exec.py", 'exec("do evil")', "python-code-injection", "pass"),
    ("flask_debug.py", "app.run(debug=True)", "python-flask-debug", "app.run(debug=os.environ.get('DEBUG') == '1')"),
    ("mktemp.py", "tmp.mktemp(foo)", "python-insecure-tempfile", "tmp.mkstemp(suffix=foo)"),
    ("pickle_deserialize.py", "print(pickle.loads(pick))", "python-unsafe-deserialization",
     "print(json.loads(pick))"),
    ("requests-ssl-verify-disabled.py", "requests.get('https://gmail.com', timeout=30, verify=False)",
     "python-tls-verification-disabled", "requests.get('https://gmail.com', timeout=30, verify=True)"),
    ("sql_statements.py", "cur.execute(\"SELECT * FROM foo WHERE id = '%s'\" % identifier)",
     "python-sql-string-format", 'cur.execute("SELECT * FROM foo WHERE id = %s", (identifier,))'),
    ("subprocess_shell.py", "pop('/bin/gcc --version', shell=True)", "python-shell-injection",
     "pop(['/bin/gcc', '--version'])"),
    ("subprocess_shell.py", "subprocess.check_output('/bin/ls -l', shell=True)", "python-shell-injection",
     "subprocess.check_output(['/bin/ls', '-l'])"),
    ("tarfile_extractall.py", "tar.extractall(path=tempfile.mkdtemp())", "python-tarfile-extractall",
     "tar.extractall(path=tempfile.mkdtemp(), filter='data')"),
    ("yaml_load.py", "y = yaml.load(ystr)", "python-yaml-unsafe-load", "y = yaml.safe_load(ystr)"),
    ("crypto-md5.py", "hashlib.md5(1).hexdigest()", "python-weak-hash", "hashlib.sha256(1).hexdigest()"),
    ("hardcoded-passwords.py", 'password = "class_password"', "python-hardcoded-secret",
     'password = os.environ.get("CLASS_PASSWORD", "")'),
]


@pytest.mark.parametrize(("name", "flagged", "rule", "fix"), HONEST)
def test_honest_fixes_of_the_bundled_fixtures_add_nothing_off_the_list(name: str, flagged: str, rule: str,
                                                                       fix: str) -> None:
    text = (FIXTURES / "vulnerable" / "python" / name).read_text(encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith(flagged))
    assert rule in SAFE or rule == "python-tls-verification-disabled"
    assert added("python", rule, text, line, fix) == []


# ------------------------------------------------------------------------- Java, JavaScript
@pytest.mark.parametrize(("language", "original", "line", "rule", "fix", "expected"), [
    ("javascript", JS, 3, "javascript-code-injection", 'value = globalThis["ev" + "al"](input);',
     {Added.COMPUTED, Added.DYNAMIC, Added.ALIAS}),
    ("javascript", JS, 3, "javascript-code-injection", "const run = eval; value = run(input);",
     {Added.ALIAS, Added.CALL}),
    ("javascript", JS, 3, "javascript-code-injection", 'value = Function("return " + input)();',
     {Added.COMPUTED, Added.DYNAMIC}),
    ("javascript", JS, 3, "javascript-code-injection", "value = [input].map(eval)[0];",
     {Added.ALIAS, Added.CALL}),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "cp.spawn('ls', [dir], {...opts, shell: true});",
     {Added.UNPACKED, Added.SHELL}),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "cp.execFile('/bin/sh', ['-c', 'ls ' + dir]);",
     {Added.SHELL}),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "cp.spawn('ls', [dir], {\"shell\": 1});",
     {Added.SHELL}),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "opts.shell = true; cp.spawn('ls', [dir], opts);",
     {Added.SHELL}),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "require(name).exec('ls ' + dir);",
     {Added.DYNAMIC, Added.CALL}),
    ("java", JAVA, 3, "java-shell-injection",
     'Class.forName("java.lang.Runtime").getMethod("exec", String.class).invoke(Runtime.getRuntime(), cmd);',
     {Added.DYNAMIC}),
    ("java", JAVA, 3, "java-shell-injection", 'new ProcessBuilder("sh", "-c", cmd).start();', {Added.SHELL}),
    ("java", JAVA, 3, "java-shell-injection", "java.util.function.Consumer<String> f = Runtime.getRuntime()::exec;",
     {Added.ALIAS}),
])
def test_java_and_javascript_disguises_are_refused(language: str, original: str, line: int, rule: str, fix: str,
                                                   expected: set[Added]) -> None:
    assert kinds(added(language, rule, original, line, fix)) == expected


@pytest.mark.parametrize(("language", "original", "line", "rule", "fix"), [
    ("javascript", JS, 3, "javascript-code-injection", "value = JSON.parse(input);"),
    ("javascript", JS, 3, "javascript-code-injection", "value = Number(input); // no code runs"),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "cp.execFile('ls', [dir]);"),
    ("javascript", JS_SHELL, 4, "javascript-shell-injection", "cp.spawn('ls', [dir], {shell: false});"),
    ("java", JAVA, 3, "java-shell-injection", 'new ProcessBuilder(cmd.split(" ")).start();'),
    ("java", JAVA, 3, "java-shell-injection", "new ProcessBuilder(List.of(cmd)).inheritIO().start().waitFor();"),
])
def test_honest_java_and_javascript_fixes_add_nothing_off_the_list(language: str, original: str, line: int,
                                                                   rule: str, fix: str) -> None:
    assert added(language, rule, original, line, fix) == []


def test_tokens_drop_comments_and_read_template_code() -> None:
    assert tokens("a(`x ${eval(y)} z`) // eval(q)\n/* exec() */") == ["a", "(", '""', "eval", "(", "y", ")", ")"]


# ------------------------------------------------------------------------- fail closed
def test_what_cannot_be_read_is_not_verified() -> None:
    assert kinds(added("python", "python-code-injection", "def f(:\n    eval(x)\n", 2, "x")) == {Added.UNREADABLE}
    assert kinds(added("ruby", "ruby-eval", "eval(x)\n", 1, "x")) == {Added.UNREADABLE}


def test_a_rule_without_a_list_allows_only_the_languages_harmless_calls() -> None:
    assert added("python", "operators-rule", EVAL, 6, "return ast.literal_eval(expr)") == [
        Construct(Added.CALL, "ast.literal_eval")]
    assert added("python", "operators-rule", EVAL, 6, "return int(expr)") == []


def test_listed_names_modules_and_methods() -> None:
    entries = ("shlex.quote", "*.split")
    assert listed("shlex.quote", entries) and listed("shlex", entries) and listed("cmd.split", entries)
    assert not listed("shlex.join", entries) and not listed("split", entries) and not listed("sh", entries)


def test_the_refusal_says_the_first_three_and_counts_the_rest() -> None:
    found = [Construct(Added.CALL, f"f{i}") for i in range(5)]
    words = refusal(found)
    assert words.startswith("it adds what a fix for this rule may not: call not in the flagged code")
    assert "`f2`" in words and "`f3`" not in words and words.endswith(" and 2 more")


# ------------------------------------------------------------------------- in the oracle's checks
def _outcome(text: str, line: int, rule: str, replacement: str) -> FixOutcome:
    target = FixTarget(SemgrepFinding(rule, "app.py", line, line, "flagged"), "python", text)
    patched, _ = apply_edits(text, [Edit(line, line, replacement)])
    return FixOutcome(target, FixAnswer("code", code=replacement), replacement=replacement, patched=patched,
                      verdict="fixed")


def test_the_oracles_checks_refuse_a_disguise_with_its_reason_and_constructs() -> None:
    o = _outcome(EVAL, 6, "python-code-injection", "    run = eval\n    return run(expr)\n")
    refuse([o], Checks())
    assert (o.verdict, o.reason) == ("not fixed", Reason.ADDS_UNLISTED)
    assert o.added == [Construct(Added.ALIAS, "eval"), Construct(Added.CALL, "run")]
    assert o.refused == refusal(o.added)


def test_a_fix_that_only_deletes_the_flagged_line_adds_nothing() -> None:
    """The line after a deletion is the file's own code, not the fix's: it adds nothing."""
    text = "def f(code):\n    exec(code)\n    return print(code)\n"
    o = _outcome(text, 2, "python-code-injection", "")
    refuse([o], Checks())
    assert (o.verdict, o.reason, o.added) == ("fixed", None, [])
