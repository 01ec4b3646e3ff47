"""Secrets kept encrypted at rest (the clusters' kubeconfigs), with the keys of ``FAIRWAY_SECRET_KEYS``.

Fernet (AES-128-CBC with HMAC-SHA256, from ``cryptography``) through ``MultiFernet``: the first key encrypts, any
key decrypts, so a key is rotated by putting a new one first, running ``manage.py rotate_secrets`` (every stored
secret re-encrypted with the first key) and then removing the old key (docs/security.md)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretUnreadable(Exception):
    """A stored secret that none of the configured keys decrypts."""


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in settings.FAIRWAY_SECRET_KEYS])


def encrypt(plaintext: str) -> str:
    """The ciphertext of ``plaintext`` under the first key ("" stays "": nothing stored)."""
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode("utf-8")).decode("ascii")


def decrypt(ciphertext: str) -> str:
    """The plaintext of a stored secret ("" for nothing stored)."""
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError):
        raise SecretUnreadable(
            "a stored secret cannot be decrypted with any key of FAIRWAY_SECRET_KEYS (was a key removed before "
            "manage.py rotate_secrets ran?)"
        ) from None


def rotate(ciphertext: str) -> str:
    """The same secret encrypted with the first key."""
    if not ciphertext:
        return ""
    try:
        return _fernet().rotate(ciphertext.encode("ascii")).decode("ascii")
    except InvalidToken:
        raise SecretUnreadable("a stored secret cannot be decrypted with any key of FAIRWAY_SECRET_KEYS") from None


def validate_keys(keys: list[str], variable: str = "FAIRWAY_SECRET_KEYS") -> None:
    """Raises ValueError naming the variable and the position of a key that is not a Fernet key."""
    if not keys:
        raise ValueError(f"{variable} holds no key")
    for index, key in enumerate(keys, start=1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            raise ValueError(
                f"{variable}: key {index} is not a Fernet key (32 bytes, URL-safe base64; make one with "
                "python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())')"
            ) from None
