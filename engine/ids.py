"""Document ids and their two spaces. A synced document's id is its path relative to the synced
folder (:func:`path_id`; a corpus entry's ``<prefix>/<n>``); an uploaded one's is
``upload:<key name>/<file name>``. No synced path may take the upload prefix (such a file is
skipped with the reason), and a folder's sync never removes uploads, so neither space can reach
into the other."""

from __future__ import annotations

import unicodedata

UPLOAD_PREFIX = "upload:"


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
