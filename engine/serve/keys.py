"""API keys of ``kgp serve``: a TOML file of named keys, each stored as a salted hash with the
access groups it reads as. A key is shown once, when ``kgp key`` makes it; the file never holds
it::

    # keys.toml (kgp key NAME --groups hr,staff --upload hr --keys keys.toml)
    [keys.alice]
    hash = "scrypt$<salt hex>$<hash hex>"
    groups = ["hr", "staff"]
    upload = ["hr"]

A request sends ``Authorization: Bearer <key>``; the server finds the entry whose hash matches
and reads as its groups (``["*"]``: the admin view). ``upload`` (optional) lets the key upload
documents, which get those groups: some of the key's own, or any for an admin key."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kgp.access import Caller, check_groups
from kgp.errors import ConfigurationError
from kgp.files import write_private

PREFIX = "kgp_"  # every key starts so, which makes a leaked one easy to find in logs and repos
_NAME = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
FIELDS = {"hash", "groups", "upload"}


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    caller: Caller
    salt: bytes
    digest: bytes
    upload: tuple[str, ...] = ()  # the groups of what the key uploads; empty: no uploads

    def matches(self, secret: str) -> bool:
        return hmac.compare_digest(_hash(secret, self.salt), self.digest)


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, dklen=32, **_SCRYPT)


def stored_hash(secret: str) -> str:
    salt = secrets.token_bytes(16)
    return f"scrypt${salt.hex()}${_hash(secret, salt).hex()}"


class Keys:
    """The keys of one file. Looking a key up hashes it against each entry (scrypt, about
    50 ms), so the server keeps the keys it has seen, by their SHA-256, for the process."""

    def __init__(self, keys: list[Key], path: Path) -> None:
        self.keys = keys
        self.path = path
        self._seen: dict[bytes, Key | None] = {}

    def caller(self, secret: str) -> Key | None:
        fingerprint = hashlib.sha256(secret.encode()).digest()
        if fingerprint not in self._seen:
            if len(self._seen) > 10_000:
                self._seen.clear()
            found = next((k for k in self.keys if k.matches(secret)), None)
            self._seen[fingerprint] = found
        return self._seen[fingerprint]


def read_keys(path: Path) -> Keys:
    """The keys of ``path``; a file that cannot be read or has a bad entry is one line naming the
    file and the entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read the keys file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{path}: not valid TOML ({exc})") from None
    table = data.get("keys", {})
    if set(data) - {"keys"} or not isinstance(table, dict):
        raise ConfigurationError(f"{path}: expected only [keys.NAME] tables")
    keys = []
    for name, entry in table.items():
        where = f"{path}: keys.{name}"
        if not isinstance(entry, dict) or not {"hash", "groups"} <= set(entry) <= FIELDS:
            raise ConfigurationError(f"{where}: needs hash and groups, and may have upload")
        parts = str(entry["hash"]).split("$")
        if len(parts) != 3 or parts[0] != "scrypt":
            raise ConfigurationError(f"{where}: hash is not one kgp key wrote (kgp key NAME)")
        try:
            salt, digest = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
        except ValueError:
            raise ConfigurationError(f"{where}: hash is not hexadecimal") from None
        caller = Caller.of(entry["groups"], where)
        upload = upload_groups(entry.get("upload"), caller, where)
        keys.append(Key(name, caller, salt, digest, upload))
    return Keys(keys, path)


def upload_groups(value: object, caller: Caller, where: str) -> tuple[str, ...]:
    """The groups a key's uploads get: some of its own groups (any, for an admin key)."""
    if value is None:
        return ()
    groups = check_groups(value, f"{where}: upload", text=True)
    if not caller.admin and set(groups) - set(caller.groups):
        raise ConfigurationError(
            f"{where}: upload groups {', '.join(groups)} must be among the key's own groups"
        )
    return groups


def add_key(path: Path, name: str, groups: str, upload: str | None = None) -> str:
    """Add a key named ``name`` reading as ``groups`` (and uploading as ``upload``) to the file
    (made if missing) and return the key, which is shown this once."""
    if not _NAME.fullmatch(name):
        raise ConfigurationError(f"{name!r}: a key name is 1-64 letters, digits or _ . @ -")
    caller = Caller.of(groups, "--groups")
    uploads = upload_groups(upload, caller, "--upload")
    existing = read_keys(path).keys if path.exists() else []
    if any(k.name == name for k in existing):
        raise ConfigurationError(f"{path}: a key named {name!r} exists; remove it first")
    secret = PREFIX + secrets.token_urlsafe(32)
    listed = ", ".join(f'"{g}"' for g in (["*"] if caller.admin else caller.groups))
    entry = f'\n[keys.{name}]\nhash = "{stored_hash(secret)}"\ngroups = [{listed}]\n'
    if uploads:
        entry += "upload = [" + ", ".join(f'"{g}"' for g in uploads) + "]\n"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    write_private(path, old + entry)
    return secret
