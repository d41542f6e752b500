import os


class Settings:
    # ruleid: python-hardcoded-secret
    password = "hunter2"


# ruleid: python-hardcoded-secret
DB_PASSWORD = "s3cr3t-value"
# ruleid: python-hardcoded-secret
config = {"api_key": "abcd1234"}


# ruleid: python-hardcoded-secret
def login(user: str, password: str = "admin") -> bool:
    # ruleid: python-hardcoded-secret
    return password == "root"


# ok: python-hardcoded-secret
EMPTY_PASSWORD = ""
# ok: python-hardcoded-secret
password = os.environ["APP_PASSWORD"]
# ok: python-hardcoded-secret
username = "alice"
# ok: python-hardcoded-secret
other = {"password": password}
