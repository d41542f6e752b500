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
    build,
    check_names,
    printable,
    publish,
    render,
    reporter_class,
)

__all__ = ["FORMATS", "REPORTERS", "Reporter", "ReporterError", "Sinks", "Target", "UnknownReporter", "build",
           "check_names", "printable", "publish", "render", "reporter_class"]
