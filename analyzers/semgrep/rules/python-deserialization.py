import json
import marshal
import pickle
import shelve

import yaml
from yaml import SafeLoader


def deserialize(blob: bytes, path: str) -> None:
    # ruleid: python-unsafe-deserialization
    pickle.loads(blob)
    # ruleid: python-unsafe-deserialization
    marshal.loads(blob)
    # ruleid: python-unsafe-deserialization
    shelve.open(path)
    # ok: python-unsafe-deserialization
    pickle.dumps({"a": 1})
    # ok: python-unsafe-deserialization
    json.loads(blob)


def load_yaml(text: str) -> None:
    # ruleid: python-yaml-unsafe-load
    yaml.load(text)  # type: ignore[call-arg]
    # ruleid: python-yaml-unsafe-load
    yaml.load(text, Loader=yaml.Loader)
    # ruleid: python-yaml-unsafe-load
    yaml.unsafe_load(text)
    # ok: python-yaml-unsafe-load
    yaml.load(text, Loader=yaml.SafeLoader)
    # ok: python-yaml-unsafe-load
    yaml.load(text, SafeLoader)
    # ok: python-yaml-unsafe-load
    yaml.safe_load(text)
