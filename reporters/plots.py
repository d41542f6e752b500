"""Charts as files and as inline SVG, rendered here (Vega-Lite through vl-convert): no browser,
no CDN, the same picture on a terminal's `--plot FILE` and on the App's dashboard.

Chart builders elsewhere make `altair` charts from plain figures; this module only renders them."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
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


class SvgMemo:
    """The SVG of the last `size` specifications drawn. vl-convert's picture depends on the
    specification alone, and drawing one costs ~0.1 s of CPU (the dashboard's repository page
    draws five on each view, the same five until new data is written): a specification drawn
    before is given again without drawing it. Thread-safe; two threads drawing one new chart
    at once both draw it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self._drawn: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, chart: Any) -> str:
        vega = spec(chart)
        key = json.dumps(vega, sort_keys=True)
        with self._lock:
            if key in self._drawn:
                self.hits += 1
                self._drawn.move_to_end(key)
                return self._drawn[key]
        import vl_convert as vlc

        drawn = str(vlc.vegalite_to_svg(vega))
        with self._lock:
            self._drawn[key] = drawn
            while len(self._drawn) > self.size:
                self._drawn.popitem(last=False)
        return drawn


SVG_MEMO = SvgMemo(64)  # a few dashboard pages' charts; an SVG is ~10-40 kB


def svg(chart: Any) -> str:
    """The chart as an SVG document (text). Vega-Lite's `description` becomes its accessible name."""
    return SVG_MEMO(chart)


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
