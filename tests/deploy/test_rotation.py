"""docs/deploy.md's "Rotating secrets", run as written: the webhook secret (the old one kept in
RTCBOT_WEBHOOK_SECRET_PREVIOUS while GitHub's side changes: both accepted, then the old one
refused once it is dropped), and the App's private key (a new key file put in place: the next
token request is signed with it, with no restart, and GitHub — the fake, which checks the JWT
with the App's public keys — no longer knows the old one)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.app.web import create_app
from bot.github import installation_client
from tests.bot.app_support import make_settings
from tests.fakes.github_server import FakeGitHub, sign

OLD, NEW = "the-old-webhook-secret-0123456789", "the-new-webhook-secret-9876543210"


def answers(tmp_path: Path, **settings: Any) -> dict[str, int]:
    """The status a delivery signed with each secret gets from an App started on `settings`."""
    app = create_app(make_settings(tmp_path, **settings))
    try:
        c = app.test_client()
        body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
        return {name: c.post("/webhook", data=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": "ping", "X-GitHub-Delivery": f"d-{name}-{i}",
            "X-Hub-Signature-256": sign(body, secret)}).status_code for i, (name, secret) in enumerate(
                (("old", OLD), ("new", NEW)))}
    finally:
        app.extensions["rtcbot"].store.close()


def test_the_webhook_secret_rotates_without_refusing_a_delivery(tmp_path: Path) -> None:
    assert answers(tmp_path / "1", webhook_secret=OLD) == {"old": 200, "new": 401}
    # step 1: the new secret, the old one kept as previous (then GitHub's side changes)
    assert answers(tmp_path / "2", webhook_secret=NEW, webhook_secret_previous=OLD) == {"old": 200, "new": 200}
    # step 3: the previous one dropped
    assert answers(tmp_path / "3", webhook_secret=NEW) == {"old": 401, "new": 200}


def _pem(key: rsa.RSAPrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def test_a_replaced_key_file_signs_the_next_token_request_without_a_restart(
        tmp_path: Path, fake_github: Callable[..., FakeGitHub]) -> None:
    gh = fake_github()
    gh.add_pr(1, diff_text="")
    key_file = tmp_path / "app.pem"
    key_file.write_text(gh.private_key_pem)
    key_file.chmod(0o600)
    client = installation_client(make_settings(tmp_path, gh, private_key=None, private_key_path=key_file),
                                 gh.installation_id)
    assert client.json("GET", f"/repos/{gh.repo}/pulls/1")["number"] == 1
    assert gh.token_requests == 1
    # the runbook: generate a key on GitHub (the App now has two), put the file in place
    # atomically, then delete the old key on GitHub
    new = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    gh.app_keys.append(new.public_key())
    staged = tmp_path / "app.pem.new"
    staged.write_text(_pem(new))
    staged.chmod(0o600)
    os.replace(staged, key_file)
    gh.app_keys = [new.public_key()]
    gh.tokens.clear()  # the installation token expires (or is revoked): the next request mints one
    assert client.json("GET", f"/repos/{gh.repo}/pulls/1")["number"] == 1
    assert gh.token_requests == 2  # signed with the new key: GitHub no longer knows the old one
    assert not [r for r in gh.rejections if r[0] == 401 and "JSON web token" in r[1]]
