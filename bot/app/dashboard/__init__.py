"""/dashboard: the App's scores per installation and repository, server-rendered (Flask
templates, charts as inline SVG), behind "Sign in with GitHub" (docs/dashboard.md).

`register_dashboard(app, settings, store)` is all bot/app/web.py calls: with the OAuth settings it
adds the routes (views.py); without them /dashboard answers 404 naming the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask, Response, jsonify

from bot.app.service_checks import dashboard_unset

if TYPE_CHECKING:
    from bot.app.settings import ServiceSettings
    from bot.store.store import Store


def register_dashboard(app: Flask, settings: ServiceSettings, store: Store) -> None:
    missing = dashboard_unset(settings)
    if missing:
        message = ("not found: the dashboard is off; set " + ", ".join(missing)
                   + " to serve it (docs/dashboard.md)")

        def off(rest: str = "") -> Response:
            resp = jsonify({"message": message})
            resp.status_code = 404
            return resp

        for rule in ("/dashboard", "/dashboard/<path:rest>", "/login", "/oauth/callback"):
            app.add_url_rule(rule, endpoint=f"dashboard_off:{rule}", view_func=off)
        return
    from bot.app.dashboard.views import blueprint, configure

    configure(app, settings, store)
    app.register_blueprint(blueprint(settings, store))
