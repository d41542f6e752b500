import hashlib

from Crypto.Cipher import AES, ARC4
from Crypto.Hash import MD5, SHA256
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import modes


def digests(data: bytes) -> None:
    # ruleid: python-weak-hash
    hashlib.md5(data).hexdigest()
    # ruleid: python-weak-hash
    hashlib.sha1(data)
    # ruleid: python-weak-hash
    MD5.new(data)
    # ruleid: python-weak-hash
    hashes.SHA1()
    # ok: python-weak-hash
    hashlib.sha256(data)
    # ok: python-weak-hash
    hashlib.md5(data, usedforsecurity=False)
    # ok: python-weak-hash
    SHA256.new(data)


def ciphers(key: bytes) -> None:
    # ruleid: python-weak-cipher
    ARC4.new(key)
    # ruleid: python-weak-cipher
    AES.new(key, AES.MODE_ECB)
    # ruleid: python-weak-cipher
    modes.ECB()
    # ok: python-weak-cipher
    AES.new(key, AES.MODE_GCM)
