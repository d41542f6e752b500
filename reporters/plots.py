"""Charts as files and as inline SVG, rendered here (Vega-Lite through vl-convert): no browser,
no CDN, the same picture on a terminal's `--plot FILE` and on the App's dashboard.

Chart builders elsewhere make `altair` charts from plain figures; this module only renders them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = (".svg", ".png")


class PlotError(ValueError):
    """A plot that cannot be written (an unknown file type, say); the message says why."""


def check_path(path: str | Path) -> Path:
    """The plot's path, or PlotError when its extension is not one we write."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise PlotError(f"{p}: a plot is written as .svg or .png, not {p.suffix or 'a file without an extension'!r}")
    return p


def spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite specification of an altair chart (or a spec given as a dict)."""
    return chart if isinstance(chart, dict) else chart.to_dict()


def svg(chart: Any) -> str:
    """The chart as an SVG document (text). Vega-Lite's `description` becomes its accessible name."""
    import vl_convert as vlc

    return str(vlc.vegalite_to_svg(spec(chart)))


def png(chart: Any, scale: float = 2.0) -> bytes:
    import vl_convert as vlc

    return bytes(vlc.vegalite_to_png(spec(chart), scale=scale))


def save(chart: Any, path: str | Path) -> Path:
    """Writes the chart to `path` (.svg or .png, by its extension) and returns the path."""
    p = check_path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() == ".svg":
        p.write_text(svg(chart), encoding="utf-8")
    else:
        p.write_bytes(png(chart))
    return p
