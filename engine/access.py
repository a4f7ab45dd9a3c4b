"""Access groups: who may read a document. A document carries a set of group names; its pages,
tables and passages inherit it. Names are checked here, once, wherever they come from (an access
file, ``kg.add(groups=…)``, a corpus entry, ``KGP_DEFAULT_GROUPS``), so the graph only ever holds
clean ones. ``*`` is not a group: it is the unfiltered (admin) view of a caller."""

from __future__ import annotations

import re

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
