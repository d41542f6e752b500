import tarfile
import tempfile
import xml.etree.ElementTree as ET

import defusedxml.ElementTree as SafeET
from flask import Flask

app = Flask(__name__)
# ruleid: python-flask-debug
app.run(debug=True)
# ok: python-flask-debug
app.run()


def run(debug: bool = False) -> None:
    pass


# ok: python-flask-debug
run(debug=True)


def temp() -> None:
    # ruleid: python-insecure-tempfile
    name = tempfile.mktemp()
    # ok: python-insecure-tempfile
    handle = tempfile.NamedTemporaryFile()
    print(name, handle)


def xml(text: str) -> None:
    # ruleid: python-xml-external-entities
    ET.fromstring(text)
    # ok: python-xml-external-entities
    SafeET.fromstring(text)


def extract(path: str) -> None:
    tar = tarfile.open(path)
    # ruleid: python-tarfile-extractall
    tar.extractall(path="/tmp/out")
    # ok: python-tarfile-extractall
    tar.extractall(path="/tmp/out", filter="data")
