"""Access groups: who may read a document. A document carries a set of group names; its pages,
tables and passages inherit it. Names are checked here, once, wherever they come from (an access
file, ``kg.add(groups=…)``, a corpus entry, ``KGP_DEFAULT_GROUPS``), so the graph only ever holds
clean ones. ``*`` is not a group: it is the unfiltered (admin) view of a caller."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kgp.errors import ConfigurationError

ADMIN = "*"  # a caller's unfiltered view; never a document's group
DEFAULT_GROUPS = ("public",)
_NAME = re.compile(r"[\w.:@/+-]+")  # letters, digits and _ . : @ / + - (no spaces, commas, *)


def check_groups(values: object, where: str, *, text: bool = False) -> tuple[str, ...]:
    """The group names in ``values`` (a list of strings; with ``text``, also one
    comma-separated string, as environment variables give them), deduplicated and sorted. An
    empty set or a bad name is a :class:`ConfigurationError` naming ``where`` and the value."""
    if text and isinstance(values, str):
        values = values.split(",")
    if not isinstance(values, list | tuple | set | frozenset):
        raise ConfigurationError(f"{where}: groups must be a list of names, not {values!r}")
    names: set[str] = set()
    for value in values:
        name = value.strip() if isinstance(value, str) else value
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigurationError(
                f"{where}: {name!r} is not a group name; use letters, digits and _ . : @ / + - "
                f"(no spaces, commas or {ADMIN})"
            )
        names.add(name)
    if not names:
        raise ConfigurationError(f"{where}: give at least one group (or leave the groups out)")
    return tuple(sorted(names))


@dataclass(frozen=True, slots=True)
class Caller:
    """Who reads: the groups whose documents a query may return, or ``admin`` (every document,
    asked for explicitly with ``*``). Every read query receives ``$caller_admin`` and
    ``$caller_groups`` from :attr:`parameters`; caches key what they hold by :attr:`key`."""

    groups: tuple[str, ...] = ()
    admin: bool = False

    def __post_init__(self) -> None:
        bad = [g for g in self.groups if not isinstance(g, str) or not _NAME.fullmatch(g)]
        if bad:  # made from check_groups' names; this holds for any other way in too
            raise ConfigurationError(f"{bad[0]!r} is not a group name; see check_groups")
        if not self.admin and not self.groups:
            raise ConfigurationError(
                "a caller needs at least one group (or the admin view, groups ['*'])"
            )

    @classmethod
    def of(cls, values: object, where: str) -> Caller:
        """The caller of a list of group names or a comma-separated string; ``*`` alone is the
        admin view (mixing it with names is an error: the intent would be unclear)."""
        if isinstance(values, str):
            values = values.split(",")
        if isinstance(values, list | tuple | set | frozenset):
            names = [v.strip() if isinstance(v, str) else v for v in values]
            if ADMIN in names:
                if len(names) > 1:
                    raise ConfigurationError(
                        f"{where}: {ADMIN} is the admin view of every document; give it alone, "
                        "not with group names"
                    )
                return ADMIN_CALLER
        return cls(check_groups(values, where, text=True))

    @property
    def parameters(self) -> dict[str, object]:
        # $caller_reads_all: the document checks may be skipped (the admin; the store sets it
        # for a caller who reads every document, in a covered read: kgp.stores.coverage)
        return {
            "caller_admin": self.admin,
            "caller_groups": list(self.groups),
            "caller_reads_all": self.admin,
        }

    @property
    def key(self) -> tuple[str, ...]:
        return (ADMIN,) if self.admin else self.groups

    def may_read(self, groups: Iterable[str]) -> bool:
        """Whether a document with these groups is readable (the same rule as the queries)."""
        return self.admin or not set(self.groups).isdisjoint(groups)

    def __str__(self) -> str:
        return ADMIN if self.admin else ",".join(self.groups)


ADMIN_CALLER = Caller(admin=True)
