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
  example database, blobs printed) less the same two;
- `check`: `steady` with CHECK_EXAMPLES examples a property, for the pre-commit lane (`make
  check` names it); a test that asks for more examples asks through `examples(n)`, which gives
  it n under every other profile, so `make test` and CI prove as many inputs as before.

HYPOTHESIS_PROFILE names another registered profile (Hypothesis' `default`, to see the timing
checks again).
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import HealthCheck, settings

TIMING_CHECKS = (HealthCheck.too_slow,)
PROFILES = ("steady", "ci", "check")
CHECK_EXAMPLES = 25
_loaded: list[str] = []  # the name `load` loaded last


def _without_timing(parent: settings) -> settings:
    kept = [c for c in parent.suppress_health_check if c not in TIMING_CHECKS]
    return settings(parent, deadline=None, suppress_health_check=[*kept, *TIMING_CHECKS])


def register() -> None:
    """Register `steady` and `ci` (each from Hypothesis' profile of that role)."""
    settings.register_profile("steady", _without_timing(settings.get_profile("default")))
    settings.register_profile("ci", _without_timing(settings.get_profile("ci")))
    settings.register_profile("check", settings(settings.get_profile("steady"), max_examples=CHECK_EXAMPLES))


def examples(n: int) -> int:
    """The examples for a property that asks for n: n, or at most CHECK_EXAMPLES under `check`."""
    return min(n, CHECK_EXAMPLES) if _loaded[-1:] == ["check"] else n


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
    _loaded.append(name)
    return name
