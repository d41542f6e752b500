"""The webhook service: a Flask app factory with /webhook, /livez, /healthz (/readyz), /stats and
/metrics (the last two only with the operator's bearer token: RTCBOT_STATS_TOKEN,
RTCBOT_METRICS_TOKEN).

`POST /webhook` does only what must happen inside GitHub's 10-second window: refuse bodies
over 25 MB (413, chunked ones too, before anything else is done with them), verify
`X-Hub-Signature-256` over the raw body (gidgethub.sansio), parse the JSON once with a bound on
its nesting (400, never a 500, for anything malformed), route it to jobs (a pure function),
record the delivery and its jobs in one database transaction (its `X-GitHub-Delivery` id makes a
redelivery a no-op), enqueue the job ids and answer 202. A delivery that asks for nothing (an
event or action not handled, one without an `installation`: a repository webhook's) is
recorded and answered 200 with the reason, and queues nothing. The work happens in `rtcbot
worker`. No static files are served.

The body's checks are bot/app/delivery_body.py's; the figures /metrics serves,
bot/app/metrics.py's.
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any

from flask import Flask, Response, g, jsonify, request
from prometheus_client import generate_latest

from analyzers.urls import redact_data
from bot.app.delivery_body import TooLarge, UnsupportedType, decode_payload, read_bounded, verify_signature
from bot.app.health import check as check_health
from bot.app.intake import Accepted
from bot.app.metrics import Meters
from bot.app.refusals import log_refusal
from bot.app.runtime import Runtime
from bot.app.settings import ServiceSettings, load_settings
from bot.core.feedback import acceptance
from bot.core.logs import delivery_context, shown
from bot.core.settings import SettingsError

log = logging.getLogger(__name__)
MAX_HEADER = 100  # X-GitHub-Event and X-GitHub-Delivery: longer ones are refused (the store's columns)


def create_app(settings: ServiceSettings | None = None, *, runtime: Runtime | None = None) -> Flask:
    settings = settings or (runtime.settings if runtime else load_settings())
    if not settings.webhook_secret:
        raise SettingsError("no webhook secret: set RTCBOT_WEBHOOK_SECRET (the secret you gave GitHub "
                            "when registering the app); rtcbot will not accept unsigned deliveries")
    rt = runtime or Runtime(settings)
    app = Flask("rtcbot", static_folder=None)  # no /static: Flask's default serves the cwd's static/
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.extensions["rtcbot"] = rt
    meters = Meters(rt)
    _webhook_route(app, settings, rt, meters)
    _health_route(app, rt)
    _stats_route(app, settings, rt, meters)
    _metrics_route(app, settings, meters)
    _error_handlers(app, settings, meters)
    from bot.app.dashboard import register_dashboard

    register_dashboard(app, settings, rt.store)  # /dashboard, sign-in with GitHub (docs/dashboard.md)
    return app


def _too_large_message(settings: ServiceSettings) -> str:
    return f"payload over {settings.max_body_bytes:,} bytes"


def _read_body(limit: int) -> bytes:
    """The raw body, at most `limit` bytes (TooLarge beyond). With a Content-Length, Werkzeug's
    stream stops there; a chunked body (no length) is read from the server's de-chunked input
    (gunicorn and Werkzeug's server say so with wsgi.input_terminated), which Werkzeug's own
    stream would cut at the limit without a word (its signature then failed: 401 instead of 413)."""
    environ = request.environ
    if request.content_length is None and environ.get("wsgi.input_terminated"):
        stream = environ["wsgi.input"]
    else:
        stream = request.stream
    return read_bounded(stream.read, limit)


def _refused(meters: Meters, status: int, reason: str, event: str) -> Response:
    """The answer to a delivery refused before it is recorded, and its one log line
    (bot/app/refusals.py)."""
    log_refusal(status, reason, event=event, delivery=request.headers.get("X-GitHub-Delivery", ""))
    return meters.answer(status, reason)  # counted under no value of its headers (bot/app/labels.py)


def _verified_delivery(settings: ServiceSettings, secrets: tuple[str, ...], event: str,
                       meters: Meters) -> Response | tuple[str, dict[str, Any], str]:
    """(delivery id, payload, its text) of a signed, well-formed delivery; else the answer that
    refuses it (413, 401, 400 or 415)."""
    length = request.content_length
    if length is not None and length > settings.max_body_bytes:
        return _refused(meters, 413, _too_large_message(settings), event)
    try:
        body = _read_body(settings.max_body_bytes)
    except TooLarge:
        return _refused(meters, 413, _too_large_message(settings), event)
    # SHA-256 only: a request that carries only the SHA-1 X-Hub-Signature is refused
    signature = request.headers.get("X-Hub-Signature-256")
    if not any(verify_signature(body, signature, secret) for secret in secrets):
        return _refused(meters, 401, "missing or wrong X-Hub-Signature-256", event)
    delivery = request.headers.get("X-GitHub-Delivery", "")
    if not event or not delivery:
        return _refused(meters, 400, "missing X-GitHub-Event or X-GitHub-Delivery", event)
    if max(len(event), len(delivery)) > MAX_HEADER:  # GitHub's are a word and a GUID; the store keeps 100
        return _refused(meters, 400, f"X-GitHub-Event or X-GitHub-Delivery over {MAX_HEADER} characters", event)
    try:
        payload, text = decode_payload(request.headers.get("Content-Type", ""), body)
    except UnsupportedType:
        return _refused(meters, 415, "expected a JSON body (content type application/json)", event)
    except ValueError as e:  # json.JSONDecodeError and UnicodeDecodeError among them
        return _refused(meters, 400, f"malformed body: {e}", event)
    if not isinstance(payload, dict):
        return _refused(meters, 400, "malformed body: expected a JSON object", event)
    return delivery, payload, text


def _accepted_answer(meters: Meters, event: str, delivery: str, accepted: Accepted) -> Response:
    """200 for a ping or a delivery that asks for nothing (with the reason), else 202 with the jobs."""
    if event == "ping":
        return meters.answer(200, "pong", event, delivery=delivery)
    if accepted.nothing_to_do:
        # received and recorded, but nothing to do: a 2xx (GitHub shows it as delivered; a
        # redelivery would change nothing), with the reason
        return meters.answer(200, f"received; nothing queued: {accepted.note or 'nothing to do'}", event,
                             delivery=delivery, jobs=[])
    if accepted.note:  # its work joined the same work already queued or running
        return meters.answer(202, f"accepted: {accepted.note}", event, delivery=delivery, jobs=accepted.jobs)
    return meters.answer(202, "accepted", event, delivery=delivery, jobs=accepted.jobs)


def _webhook_route(app: Flask, settings: ServiceSettings, rt: Runtime, meters: Meters) -> None:
    """POST /webhook: verify, record with its jobs, enqueue, answer (the module's docstring)."""
    # the current secret, and the previous one while a rotation keeps it (docs/deploy.md)
    secrets = tuple(s for s in (settings.webhook_secret, settings.webhook_secret_previous) if s)

    @app.post("/webhook")
    def webhook() -> Response:
        t0 = time.perf_counter()
        event = request.headers.get("X-GitHub-Event", "")
        verified = _verified_delivery(settings, secrets, event, meters)
        if isinstance(verified, Response):
            return verified
        delivery, payload, text = verified
        # every line logged while it is handled names the delivery; the two headers, which the
        # signature does not cover, only as `shown` (printable ASCII, cut)
        with delivery_context(delivery):
            resp = _record_delivery(rt, meters, event, delivery, payload, text, t0)
            log.info("%s delivery answered %s", shown(event), g.said)
        return resp


def _record_delivery(rt: Runtime, meters: Meters, event: str, delivery: str, payload: dict[str, Any],
                     text: str, t0: float) -> Response:
    """Record a verified delivery with its jobs and enqueue them; the answer (503 when the
    store refused it, 200 for a duplicate). `t0`: when the request came, for the latency."""
    try:
        accepted = rt.accept(delivery, event, payload, text)
    except Exception:
        log.exception("could not record delivery %s", shown(delivery))
        return meters.answer(503, "could not record the delivery; redeliver it", event, delivery=delivery)
    if accepted is None:
        return meters.answer(200, "duplicate delivery: already received", event, delivery=delivery)
    meters.observe(time.perf_counter() - t0)
    return _accepted_answer(meters, event, delivery, accepted)


def _health_route(app: Flask, rt: Runtime) -> None:
    """GET /healthz (and /readyz, the same): 200 when the database and the queue answer, a worker
    on this queue is live and no job has waited too long; else 503 with the reasons
    (bot/app/health.py): for monitoring the whole service. GET /livez: 200 whenever `rtcbot
    serve` answers, for load balancers and process supervisors (a balancer that pulled serve
    while the workers are down would make GitHub's deliveries fail, and GitHub does not
    redeliver by itself: accepted, they wait in the queue)."""

    @app.get("/healthz")
    @app.get("/readyz", endpoint="readyz")
    def healthz() -> Response:
        health = check_health(rt)
        resp = jsonify(redact_data(health.answer()))  # a reason that quotes a URL shows no credentials
        resp.status_code = 200 if health.ok else 503
        return resp

    @app.get("/livez")
    def livez() -> Response:
        return jsonify({"status": "alive"})


def _stats_route(app: Flask, settings: ServiceSettings, rt: Runtime, meters: Meters) -> None:
    @app.get("/stats")
    def stats() -> Response:
        """Acceptance of rtcbot's suggestions (bot/core/feedback.py), for `?repo=owner/name` (the
        repository the App serves under that name now, by its id) or every repository served;
        only with the operator's RTCBOT_STATS_TOKEN (the figures name repositories)."""
        refused = _bearer_refusal(meters, settings.stats_token, "/stats", "RTCBOT_STATS_TOKEN")
        if refused is not None:
            return refused
        repo = request.args.get("repo") or None
        if repo is not None and (len(repo) > 200 or repo.count("/") != 1):
            return meters.answer(400, "repo: expected owner/name")
        data = acceptance(rt.store.published.served(repo))
        return jsonify({**data, "repo": repo})


def _bearer_refusal(meters: Meters, token: str | None, path: str, variable: str) -> Response | None:
    """None when the request carries `Authorization: Bearer <token>` (compared in constant
    time); else the answer: 404 when no token is set (the endpoint is off), 401 otherwise."""
    if not token:
        return meters.answer(404, f"not found: set {variable} to serve {path}")
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        resp = meters.answer(401, f"a bearer token is required ({variable})")
        resp.headers["WWW-Authenticate"] = 'Bearer realm="rtcbot"'
        return resp
    return None


def _metrics_route(app: Flask, settings: ServiceSettings, meters: Meters) -> None:
    @app.get("/metrics")
    def metrics() -> Response:
        """Prometheus' figures, only with the operator's RTCBOT_METRICS_TOKEN: they count every
        installation's deliveries, jobs and LLM use, and the LLM cache's hits, which no tenant
        may see (a hit would say some code was seen before)."""
        refused = _bearer_refusal(meters, settings.metrics_token, "/metrics", "RTCBOT_METRICS_TOKEN")
        if refused is not None:
            return refused
        return Response(generate_latest(meters.scraped), mimetype="text/plain; version=0.0.4")


def _error_handlers(app: Flask, settings: ServiceSettings, meters: Meters) -> None:
    """Flask's own 413 (over MAX_CONTENT_LENGTH) and 400 as the app's JSON answers."""

    def answer(status: int, message: str) -> Response:
        if request.path == "/webhook":
            return _refused(meters, status, message, request.headers.get("X-GitHub-Event", ""))
        return meters.answer(status, message)

    @app.errorhandler(413)
    def too_large(_e: Any) -> Response:
        return answer(413, _too_large_message(settings))

    @app.errorhandler(400)
    def bad_request(_e: Any) -> Response:
        return answer(400, "malformed request")


def wsgi() -> Flask:
    """Entry for gunicorn (`bot.app.web:wsgi()`): settings from the environment."""
    return create_app(load_settings())
