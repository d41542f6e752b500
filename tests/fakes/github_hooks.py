"""The fake GitHub's App webhook (tests/fakes/github_server.py mixes it in): it sends signed
deliveries to the App's webhook URL and keeps each attempt, as GitHub's "Recent Deliveries" do,
behind GitHub's App webhook deliveries API (authenticated as the App, with its JWT):

- `GET /app/hook/deliveries`: newest first, `per_page` (at most 100), cursor pagination through
  `Link` headers (`rel="next"`, a `cursor` parameter), each item a "Simple webhook delivery";
- `POST /app/hook/deliveries/{delivery_id}/attempts`: 202, then the delivery is sent again (a
  new attempt, `redelivery: true`, the same `guid`), in the background as on GitHub.

    gh.hook_url, gh.hook_secret = app.url + "/webhook", SECRET
    gh.send_hook("pull_request", gh.pr_event("opened", 1))   # the attempt's status code, or 502
    gh.hook_deliveries[-1]["guid"]                           # X-GitHub-Delivery
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.fakes.github_conversation import Answer, _iso

MAX_PER_PAGE = 100


class HookDeliveries:
    """The App's webhook and its recent deliveries (newest last in `hook_deliveries`)."""

    _lock: Any
    app_id: int
    installation_id: int

    def _init_hooks(self) -> None:
        self.hook_url: str | None = None  # None: every attempt fails to connect
        self.hook_secret = ""
        self.hook_deliveries: list[dict[str, Any]] = []
        self.hook_payloads: dict[str, tuple[str, bytes]] = {}  # guid → (event, body)
        self.redelivery_requests: list[int] = []
        self._hook_ids = itertools.count(90_000_001)

    def send_hook(self, event: str, payload: dict[str, Any], *, guid: str | None = None,
                  redelivery: bool = False) -> int:
        """Deliver `payload` to the App's webhook as GitHub does, and keep the attempt; its status
        code (502 when the App could not be reached)."""
        from tests.fakes.github_server import sign

        guid = guid or str(uuid.uuid4())
        body = json.dumps(payload).encode()
        with self._lock:
            self.hook_payloads.setdefault(guid, (event, body))
        started = time.time()
        status, said = 502, "failed to connect to host"
        if self.hook_url:
            try:
                r = httpx.post(self.hook_url, content=body, timeout=10, headers={
                    "Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": guid,
                    "X-GitHub-Hook-Installation-Target-ID": str(self.app_id),
                    "X-Hub-Signature-256": sign(body, self.hook_secret)})
                status = r.status_code
                said = "OK" if status < 400 else f"Invalid HTTP Response: {status}"
            except httpx.TransportError:
                pass
        item = {"id": next(self._hook_ids), "guid": guid, "delivered_at": _iso(started), "redelivery": redelivery,
                "duration": round(time.time() - started, 3), "status": said, "status_code": status,
                "event": event, "action": payload.get("action"), "installation_id": self.installation_id,
                "repository_id": (payload.get("repository") or {}).get("id"), "throttled_at": None}
        with self._lock:
            self.hook_deliveries.append(item)
        return status

    def hook_routes(self) -> list[tuple[str, str, Any]]:
        return [("GET", r"/app/hook/deliveries", self._list_hook_deliveries),
                ("POST", r"/app/hook/deliveries/(\d+)/attempts", self._redeliver)]

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    def _list_hook_deliveries(self, query: dict[str, str], **_: Any) -> Answer:
        per_page = min(int(query.get("per_page", "30")), MAX_PER_PAGE)
        with self._lock:
            newest_first = sorted(self.hook_deliveries, key=lambda d: -d["id"])
        cursor = query.get("cursor")
        if cursor:  # the id the page starts from
            newest_first = [d for d in newest_first if d["id"] <= int(cursor)]
        page, rest = newest_first[:per_page], newest_first[per_page:]
        headers = {}
        if rest:
            nxt = f"{self.base_url}/app/hook/deliveries?{urlencode({'per_page': per_page, 'cursor': rest[0]['id']})}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        return 200, page, headers, None

    def _redeliver(self, delivery_id: str, **_: Any) -> Answer:
        with self._lock:
            found = next((d for d in self.hook_deliveries if d["id"] == int(delivery_id)), None)
            self.redelivery_requests.append(int(delivery_id))
        if found is None:
            return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}, None
        event, body = self.hook_payloads[found["guid"]]
        threading.Thread(target=self.send_hook, args=(event, json.loads(body)),
                         kwargs={"guid": found["guid"], "redelivery": True}, daemon=True).start()
        return 202, {}, {}, None
