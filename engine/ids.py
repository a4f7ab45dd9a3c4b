"""Document ids and their two spaces. A synced document's id is its path relative to the synced
folder (:func:`path_id`; a corpus entry's ``<prefix>/<n>``); an uploaded one's is
``upload:<key name>/<file name>``. No synced path may take the upload prefix (such a file is
skipped with the reason), and a folder's sync never removes uploads, so neither space can reach
into the other."""

from __future__ import annotations

import re
import unicodedata

UPLOAD_PREFIX = "upload:"
MAX_UPLOAD_FILES = 20  # files in one upload request to kgp serve
_UPLOAD_NAME = re.compile(r"[^/\\\x00-\x1f\x7f]{1,200}")
# characters that draw as a slash or a backslash but are none (NFKC keeps these as they are)
LOOK_ALIKE_SEPARATORS = frozenset("\u2044\u2215\u2216\u29f5\u29f8\u29f9\ufe68\u3033\u2571\u2572")
NOT_PLAIN = (
    "is not a plain file name (no folders, hidden names, control or direction characters, or "
    "look-alike slashes)"
)


def plain_upload_name(name: str) -> str | None:
    """The name an upload is kept under (NFKC-normalised), or None if it is not a plain,
    visible file name: no folders or ``..``, nothing hidden, no control or direction
    characters, no look-alike slashes, at most 200 characters."""
    plain = unicodedata.normalize("NFKC", name)
    if (
        not _UPLOAD_NAME.fullmatch(plain)
        or plain.startswith(".")
        or ".." in plain
        or any(unicodedata.category(c) in ("Cc", "Cf") for c in plain)  # bidi controls too
        or LOOK_ALIKE_SEPARATORS.intersection(plain)
    ):
        return None
    return plain


def path_id(rel: str) -> str:
    """A relative path as an id that any store, terminal and URL can carry, the same at every
    sync: bytes of the name that are not UTF-8 (which Python keeps as lone surrogates) and
    control characters such as a newline become ``%XX``; every other character stays."""
    if rel.isascii() and rel.isprintable():
        return rel
    out = []
    for char in rel:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte, as os.fsdecode keeps it
            out.append(f"%{code - 0xDC00:02X}")
        elif unicodedata.category(char) in ("Cc", "Cs"):
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        else:
            out.append(char)
    return "".join(out)


def upload_id(key: str, name: str) -> str:
    """The id of the file ``name`` uploaded with the key ``key``."""
    return f"{UPLOAD_PREFIX}{key}/{name}"


def is_upload(doc_id: str) -> bool:
    return doc_id.startswith(UPLOAD_PREFIX)


def uploader(doc_id: str) -> str | None:
    """The name of the key that uploaded ``doc_id``; None for a synced document."""
    if not is_upload(doc_id):
        return None
    key, slash, _ = doc_id.removeprefix(UPLOAD_PREFIX).partition("/")
    return key if slash else None


def reserved(doc_id: str) -> str | None:
    """Why a synced document may not have ``doc_id``; None when it may."""
    if is_upload(doc_id):
        return f"ids starting with {UPLOAD_PREFIX!r} are kept for uploads; rename it"
    return None
