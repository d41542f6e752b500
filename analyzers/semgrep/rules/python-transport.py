import ssl
import urllib.request

import httpx
import requests


def fetch(url: str) -> None:
    # ruleid: python-tls-verification-disabled
    requests.get(url, timeout=10, verify=False)
    # ruleid: python-tls-verification-disabled
    httpx.Client(verify=False)
    # ruleid: python-tls-verification-disabled
    ctx = ssl._create_unverified_context()
    # ruleid: python-tls-verification-disabled
    ctx.verify_mode = ssl.CERT_NONE
    # ok: python-tls-verification-disabled
    requests.get(url, timeout=10, verify=True)
    # ok: python-tls-verification-disabled
    httpx.get(url, verify="/etc/ssl/certs/ca-certificates.crt")


def timeouts(url: str) -> None:
    # ruleid: python-request-without-timeout
    requests.get(url)
    # ruleid: python-request-without-timeout
    requests.post(url, data={"a": 1})
    # ruleid: python-request-without-timeout
    urllib.request.urlopen(url)
    # ok: python-request-without-timeout
    requests.get(url, timeout=5)
    # ok: python-request-without-timeout
    urllib.request.urlopen(url, timeout=5)
