"""Outputs: one Reporter protocol (start, publish, flush) and one module per output.

See reporters/base.py for the protocol and the registry; reporters/check_run.py is the one
check-run renderer the App and the Action share.
"""

from reporters.base import (
    FORMATS,
    REPORTERS,
    Reporter,
    ReporterError,
    Sinks,
    Target,
    UnknownReporter,
    printable,
    render,
    reporter_class,
    reporter_names,
    reporters_named,
    run_reporter,
)

__all__ = ["FORMATS", "REPORTERS", "Reporter", "ReporterError", "Sinks", "Target", "UnknownReporter", "reporters_named",
           "reporter_names", "printable", "run_reporter", "render", "reporter_class"]
