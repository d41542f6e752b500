"""Hypothesis settings profiles for a machine that may be busy (tests/conftest.py loads one).

Two of Hypothesis' checks measure wall-clock time: the `deadline` on each example (200 ms by
default) and the `too_slow` health check on input generation (a second, or five deadlines, for
the first examples). Neither says anything about the code under test: on a machine at load
average 12-16 a list of floats can take a second to draw, and the run fails with
FailedHealthCheck or DeadlineExceeded. These profiles drop the two; every other setting
(example counts, the database, the other health checks) is Hypothesis' own, so a property is
proved on as many inputs as before. `data_too_large` and `filter_too_much` stay on: they count
inputs, not seconds, and say the same on any machine.

- `steady`: the default here, Hypothesis' `default` less the two timing checks;
- `ci`: chosen when CI is set (as Hypothesis itself does), Hypothesis' `ci` (derandomized, no
  example database, blobs printed) less the same two.

HYPOTHESIS_PROFILE names another registered profile (Hypothesis' `default`, to see the timing
checks again).
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import HealthCheck, settings

TIMING_CHECKS = (HealthCheck.too_slow,)
PROFILES = ("steady", "ci")


def _without_timing(parent: settings) -> settings:
    kept = [c for c in parent.suppress_health_check if c not in TIMING_CHECKS]
    return settings(parent, deadline=None, suppress_health_check=[*kept, *TIMING_CHECKS])


def register() -> None:
    """Register `steady` and `ci` (each from Hypothesis' profile of that role)."""
    settings.register_profile("steady", _without_timing(settings.get_profile("default")))
    settings.register_profile("ci", _without_timing(settings.get_profile("ci")))


def chosen(environ: Mapping[str, str]) -> str:
    """The profile to load: HYPOTHESIS_PROFILE if set, `ci` under CI, else `steady`."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    return "ci" if environ.get("CI", "").lower() not in ("", "0", "false") else "steady"


def load(environ: Mapping[str, str]) -> str:
    """Register the profiles and load the one `chosen` names; return its name."""
    register()
    name = chosen(environ)
    settings.load_profile(name)
    return name
