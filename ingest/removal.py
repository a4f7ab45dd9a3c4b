"""The guard every sync passes before it removes documents, local (``kgp sync``) or remote
(``kgp.connect(...).sync``): a typo, an empty folder or an unmounted share must not empty the
knowledge base."""

from __future__ import annotations

from kgp.errors import RemovalRefusedError


def check_removal(gone: list[str], stored: int, share: float, source: str) -> None:
    """Refuse removing every one of ``stored`` documents, or more than ``share`` of 10 or
    more, naming ``source`` (the folder) and how to allow it."""
    everything = bool(gone) and len(gone) == stored
    too_many = stored >= 10 and len(gone) > share * stored
    if not (everything or too_many):
        return
    what = (
        f"every document ({stored})"
        if everything
        else f"{len(gone)} of {stored} documents, more than {share:.0%} (KGP_MAX_REMOVAL_SHARE)"
    )
    raise RemovalRefusedError(
        f"{source}: this sync would remove {what}, because the folder no longer holds them (is "
        "it the right folder, and mounted?); nothing was changed; pass --allow-removal "
        "(Python: allow_removal=True) to remove them",
        would_remove=gone,
        stored=stored,
    )
