"""The repository config's file read safely (bot/core/config.py holds what it means): at most
`MAX_CONFIG_BYTES`, YAML anchors and aliases refused (no alias bombs), nesting at most
`MAX_DEPTH` deep, duplicate keys errors, every loader error (RecursionError included) one line
with its line number; a file in a checkout read as every fixed-name file is (no symbolic link
followed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from analyzers.code.checkout_files import CheckoutFileError, read_bytes, split

CONFIG_PATH = ".github/rtcbot.yml"
MAX_CONFIG_BYTES = 64 * 1024  # a real config is well under 2 KiB
MAX_DEPTH = 16  # nesting of mappings and lists (options sit at depth 3)


class ConfigError(ValueError):
    """The file cannot be read as configuration (one line)."""


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing duplicate keys (a silently overwritten setting)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                dup = key in seen
                seen.add(key)
            except TypeError:
                continue  # unhashable: the base class reports it
            if dup:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _line(mark: Any) -> str:
    return f" at line {mark.line + 1}" if mark is not None else ""


def _check_events(text: str, name: str) -> None:
    """Refuse anchors, aliases, deep nesting and several documents before anything is built
    (the event stream is flat: neither recursion nor expansion happens here)."""
    depth = docs = 0
    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        where, anchor = _line(ev.start_mark), getattr(ev, "anchor", None)
        if isinstance(ev, yaml.AliasEvent):
            raise ConfigError(f"{name}: YAML aliases (*{anchor}) are not allowed{where}")
        if anchor is not None:
            raise ConfigError(f"{name}: YAML anchors (&{anchor}) are not allowed{where}")
        if isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(f"{name}: nested more than {MAX_DEPTH} levels deep{where}")
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
        elif isinstance(ev, yaml.DocumentStartEvent):
            docs += 1
            if docs > 1:
                raise ConfigError(f"{name}: expected one YAML document, found another{where}")


def load_yaml(text: str | bytes, name: str = CONFIG_PATH) -> Any:
    """The data in a configuration file, loaded safely (see the module's docstring); raises
    ConfigError with one line."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{name}: larger than {MAX_CONFIG_BYTES // 1024} KiB "
                          f"({len(raw)} bytes)")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ConfigError(f"{name}: not UTF-8 text (byte {e.start})") from None
    try:
        _check_events(text, name)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except ConfigError:
        raise
    except yaml.MarkedYAMLError as e:
        what = e.problem or e.context or "invalid YAML"
        raise ConfigError(f"{name} is not valid YAML{_line(e.problem_mark)}: {what}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{name} is not valid YAML: {str(e).splitlines()[0] if str(e) else e}") from None
    except RecursionError:
        raise ConfigError(f"{name}: nested too deeply") from None
    except Exception as e:  # noqa: BLE001 - a loader bug must stay one line too
        raise ConfigError(f"{name} could not be read: {type(e).__name__}: {e}") from None


def read_file(path: Path) -> bytes:
    """A configuration file's bytes, read as every fixed-name file in a checkout is
    (analyzers/code/checkout_files.py: no symbolic link followed, a regular file, at most
    MAX_CONFIG_BYTES); ConfigError with one line when it cannot be read."""
    root, rel = split(path)
    try:
        data = read_bytes(root, rel, limit=MAX_CONFIG_BYTES, name=str(path))
    except CheckoutFileError as e:
        raise ConfigError(str(e)) from None
    if data is None:
        raise ConfigError(f"{path}: no such file")
    return data
