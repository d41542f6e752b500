"""`make trial`: the GitHub App's whole loop on this machine, before registering anything.

Starts a local fake GitHub (the one the tests use, tests/fakes/github_server.py: it checks the
App's JWT, issues installation tokens, keeps check runs, sends signed webhook deliveries and
signs you in to the dashboard), then `rtcbot serve` and one `rtcbot worker` on the embedded
defaults (SQLite and its queue in a temporary data directory, the embedded model unless
RTCBOT_LLM_BASE_URL is set; EditingRTC unless RTCBOT_ANALYZERS says otherwise). It opens a pull
request made of samples/demo.diff, delivers its `pull_request.opened` as GitHub would, prints
the dashboard's address, and each check run's title once it completes. Ctrl-C stops it all.

    make trial                                   # .venv/bin/python scripts/trial.py
    .venv/bin/python scripts/trial.py --until-done   # exit once the check runs are completed
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.github_server import FakeGitHub  # noqa: E402

SAMPLE = ROOT / "samples" / "demo.diff"
SECRET = "rtcbot-trial-webhook-secret"
SESSION_SECRET = "rtcbot-trial-session-secret-0123456789abcdef"
WAIT_S = 1800.0  # the embedded model on a small machine takes minutes a job


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment(gh: FakeGitHub, tmp: Path, url: str) -> dict[str, str]:
    key = tmp / "private-key.pem"
    key.write_text(gh.private_key_pem, encoding="utf-8")
    key.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "RTCBOT_REDIS_URL")}
    env.setdefault("RTCBOT_ANALYZERS", "editing_rtc")
    env.update({"RTCBOT_WEBHOOK_SECRET": SECRET, "RTCBOT_APP_ID": str(gh.app_id), "RTCBOT_PRIVATE_KEY_PATH": str(key),
                "RTCBOT_GITHUB_API_URL": gh.base_url, "RTCBOT_DATA_DIR": str(tmp / "data"),
                "RTCBOT_OAUTH_CLIENT_ID": gh.oauth_client_id, "RTCBOT_OAUTH_CLIENT_SECRET": gh.oauth_client_secret,
                "RTCBOT_SESSION_SECRET": SESSION_SECRET, "RTCBOT_GITHUB_URL": gh.base_url, "RTCBOT_PUBLIC_URL": url,
                "PYTHONPATH": str(ROOT)})
    return env


def start(name: str, args: list[str], env: dict[str, str], tmp: Path) -> subprocess.Popen[bytes]:
    with (tmp / f"{name}.log").open("wb") as log:  # its own session: Ctrl-C reaches this script alone
        return subprocess.Popen([sys.executable, "-m", "bot", *args], env=env, cwd=tmp, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)


def wait_serving(url: str, serve: subprocess.Popen[bytes], tmp: Path) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and serve.poll() is None:
        try:
            if httpx.get(f"{url}/livez", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit(f"rtcbot serve did not start; its log:\n{(tmp / 'serve.log').read_text()[-3000:]}")


def follow(gh: FakeGitHub, head: str) -> None:
    """Print each check run of `head` once it is completed; return when all are."""
    said: set[int] = set()
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        runs = gh.runs(head_sha=head)
        for run in runs:
            if run["status"] == "completed" and run["id"] not in said:
                said.add(run["id"])
                title = (run.get("output") or {}).get("title") or ""
                print(f"  check run {run['name']!r}: {run['conclusion']} — {title}", flush=True)
        if runs and len(said) == len(runs):
            return
        time.sleep(0.5)
    raise SystemExit("the check runs did not complete in time")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p, sig in zip(procs, (signal.SIGTERM, signal.SIGINT), strict=False):
        if p.poll() is None:
            p.send_signal(sig)
    for p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until-done", action="store_true", help="Exit once the check runs are completed.")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rtcbot-trial-"))
    procs: list[subprocess.Popen[bytes]] = []
    gh = FakeGitHub().start()
    try:
        url = f"http://127.0.0.1:{free_port()}"
        env = environment(gh, tmp, url)
        procs.append(start("serve", ["serve", "--port", url.rsplit(":", 1)[1], "--workers", "1"], env, tmp))
        procs.append(start("worker", ["worker"], env, tmp))
        print(f"rtcbot trial: a local fake GitHub at {gh.base_url}, rtcbot serve at {url}, one worker; "
              f"logs and data in {tmp}", flush=True)
        wait_serving(url, procs[0], tmp)
        gh.hook_url, gh.hook_secret = f"{url}/webhook", SECRET
        head = gh.add_pr(1, diff_text=SAMPLE.read_text(encoding="utf-8")).head_sha
        status = gh.send_hook("pull_request", gh.pr_event("opened", 1))
        print(f"opened pull request #1 of {gh.repo} ({SAMPLE.relative_to(ROOT)}): the App answered {status}")
        print(f"dashboard: {url}/dashboard/{gh.repo} (the fake GitHub signs you in as {gh.user})")
        print("waiting for the check runs (the embedded model takes minutes a job) …", flush=True)
        follow(gh, head)
        if args.until_done:
            return
        print("done: the dashboard stays up until Ctrl-C", flush=True)
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        raise SystemExit("a service stopped; its logs are in " + str(tmp))
    except KeyboardInterrupt:
        print("\nstopping", flush=True)
    except SystemExit:
        stop(procs)
        gh.stop()
        raise  # the logs stay in tmp
    stop(procs)
    gh.stop()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
