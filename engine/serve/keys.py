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
import threading
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgp.access import Caller, check_groups
from kgp.errors import ConfigurationError
from kgp.files import replace_private

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
    """The keys of one file, as it is now: a change to the file (a key added, changed or
    revoked) takes effect within ``recheck_s`` seconds, without a restart; a file that no
    longer reads makes every key fail (:class:`ConfigurationError`) until it is mended.

    Hashing a key against an entry takes about 50 ms (scrypt), so each key looked up is
    remembered by its SHA-256, found or not; a change of the file forgets the keys not found
    and those no longer in it."""

    def __init__(
        self, path: Path, *, recheck_s: float = 1.0, say: Callable[[str], None] | None = None
    ) -> None:
        self.path = path
        self.recheck_s = recheck_s
        self.say = say or (lambda line: None)  # told when the file stops or starts to read
        self._lock = threading.Lock()
        self._checked = 0.0
        self._version: tuple[int, int, int, int] | None = None
        self._keys: list[Key] = []
        self._seen: dict[bytes, Key | None] = {}
        self._problem: str | None = None
        self._refresh(force=True)
        if self._problem:
            raise ConfigurationError(self._problem)

    @property
    def keys(self) -> list[Key]:
        self._refresh()
        return self._keys

    def cached(self, secret: str) -> tuple[bool, Key | None]:
        """Whether ``secret`` was looked up since the file last changed, and what was found."""
        self._refresh()
        fingerprint = hashlib.sha256(secret.encode()).digest()
        with self._lock:
            if fingerprint in self._seen:
                return True, self._seen[fingerprint]
        return False, None

    def caller(self, secret: str) -> Key | None:
        """The key ``secret`` is, or None; raises ConfigurationError while the file does not
        read."""
        self._refresh()
        fingerprint = hashlib.sha256(secret.encode()).digest()
        with self._lock:
            if self._problem:
                raise ConfigurationError(self._problem)
            keys, seen = self._keys, self._seen
            if fingerprint in seen:
                return seen[fingerprint]
        found = next((k for k in keys if k.matches(secret)), None)
        with self._lock:
            if seen is self._seen:  # the file did not change meanwhile
                if len(seen) > 10_000:  # bounded: wrong keys forgotten, the found kept
                    for stale in [f for f, k in seen.items() if k is None]:
                        del seen[stale]
                seen[fingerprint] = found
        return found

    def _refresh(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < self.recheck_s:
            return
        with self._lock:
            if not force and now - self._checked < self.recheck_s:
                return
            self._checked = now
            try:
                info = self.path.stat()
                version = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
            except OSError as exc:
                version = None
                problem: str | None = f"{self.path}: cannot read the keys file ({exc.strerror})"
            else:
                if version == self._version and not force:
                    return
                try:
                    keys, problem = parse_keys(self.path), None
                except ConfigurationError as exc:
                    problem = str(exc)
            if problem:
                if problem != self._problem:
                    self.say(f"{problem}; every API key is refused until it reads")
                self._keys, self._seen, self._problem = [], {}, problem
            else:
                if self._problem:
                    self.say(f"{self.path} reads again: {len(keys)} API keys")
                # a key still in the file is known without hashing it again, as it is now
                # (its groups may have changed); any other key is looked up afresh
                now_stored = {(k.salt, k.digest): k for k in keys}
                kept: dict[bytes, Key | None] = {
                    fingerprint: now_stored[(k.salt, k.digest)]
                    for fingerprint, k in self._seen.items()
                    if k is not None and (k.salt, k.digest) in now_stored
                }
                self._keys, self._seen, self._problem = keys, kept, None
            self._version = version


def read_keys(path: Path, say: Callable[[str], None] | None = None) -> Keys:
    """The keys of ``path``, kept up to date with it; a file that cannot be read or has a bad
    entry is one line naming the file and the entry. ``say`` hears when a changed file stops
    reading, and when it reads again."""
    return Keys(path, say=say)


def parse_keys(path: Path) -> list[Key]:
    """The entries of ``path`` as they are now."""
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
    folded: set[str] = set()
    for name, entry in table.items():
        where = f"{path}: keys.{name}"
        if not _NAME.fullmatch(name):  # it names the key's upload folder and id space
            raise ConfigurationError(f"{where}: a key name is 1-64 letters, digits or _ . @ -")
        if name.lower() in folded:
            raise ConfigurationError(f"{where}: another key has this name in other case")
        folded.add(name.lower())
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
    return keys


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
    (made if missing) and return the key, which is shown this once. A running server takes it
    within a few seconds."""
    if not _NAME.fullmatch(name):
        raise ConfigurationError(f"{name!r}: a key name is 1-64 letters, digits or _ . @ -")
    caller = Caller.of(groups, "--groups")
    uploads = upload_groups(upload, caller, "--upload")
    existing = parse_keys(path) if path.exists() else []
    if any(k.name.lower() == name.lower() for k in existing):
        raise ConfigurationError(f"{path}: a key named {name!r} exists; revoke it first")
    secret = PREFIX + secrets.token_urlsafe(32)
    entry = _entry(name, stored_hash(secret), caller, uploads)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    replace_private(path, old + entry)
    return secret


def revoke_key(path: Path, name: str) -> None:
    """Remove the key named ``name`` from the file (written anew, whole); a running server
    refuses it within a few seconds."""
    existing = parse_keys(path) if path.exists() else []
    if not any(k.name == name for k in existing):
        names = ", ".join(k.name for k in existing) or "none"
        raise ConfigurationError(f"{path}: no key named {name!r} (the file has: {names})")
    kept = [k for k in existing if k.name != name]
    text = "".join(
        _entry(k.name, f"scrypt${k.salt.hex()}${k.digest.hex()}", k.caller, k.upload) for k in kept
    )
    replace_private(path, text)


def _entry(name: str, hashed: str, caller: Caller, uploads: tuple[str, ...]) -> str:
    listed = ", ".join(f'"{g}"' for g in (["*"] if caller.admin else caller.groups))
    entry = f'\n[keys."{name}"]\nhash = "{hashed}"\ngroups = [{listed}]\n'
    if uploads:
        entry += "upload = [" + ", ".join(f'"{g}"' for g in uploads) + "]\n"
    return entry
