import os
import subprocess
from subprocess import Popen as run_process


def code_injection(user_text: str) -> None:
    # ruleid: python-code-injection
    eval(user_text)
    # ruleid: python-code-injection
    exec("print(%s)" % user_text)
    # ruleid: python-code-injection
    eval("os.getcwd() + '%s'" % user_text)
    # ok: python-code-injection
    eval("1 + 1")


class Calculator:
    def eval(self) -> int:
        return 1

    def run(self) -> int:
        # ok: python-code-injection
        return self.eval()


def shell_injection(name: str) -> None:
    # ruleid: python-shell-injection
    subprocess.call("ls " + name, shell=True)
    # ruleid: python-shell-injection
    run_process("ls -l", shell=True)
    # ruleid: python-shell-injection
    os.system("rm -rf " + name)
    # ok: python-shell-injection
    subprocess.call(["ls", name])
    # ok: python-shell-injection
    subprocess.run(["ls", name], shell=False)


def sql(cur: object, identifier: str, table: str) -> None:
    # ruleid: python-sql-string-format
    query = "SELECT * FROM users WHERE id = '%s'" % identifier
    # ruleid: python-sql-string-format
    query = "DELETE FROM users WHERE id = '" + identifier + "'"
    # ruleid: python-sql-string-format
    query = "UPDATE users SET name = 'x' WHERE id = '{}'".format(identifier)
    # ruleid: python-sql-string-format
    query = f"INSERT INTO {table} VALUES (1)"
    # ok: python-sql-string-format
    query = "SELECT * FROM users WHERE id = %s"
    # ok: python-sql-string-format
    message = "Delete %s? Select one." % identifier
    # ok: python-sql-string-format
    label = f"Delete {identifier} from the cache"
    print(query, message, label)
