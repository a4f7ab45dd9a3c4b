"""Access files: a ``.kgp-access.toml`` in a synced folder names the access groups of the
documents in that folder and below it. The nearest folder's file decides a document's groups:
its first pattern (in file order) that matches the document's path relative to that folder
gives them; when none matches, or no folder up to the synced root has a file, the document gets
the default groups (``KGP_DEFAULT_GROUPS``). Patterns are shell globs matched case-sensitively
against the whole relative path, ``*`` also across folders (``hr/*`` is everything under
``hr/``)::

    # .kgp-access.toml
    [groups]
    "board/*" = ["board"]
    "*.pdf" = ["staff", "hr"]
    "*" = ["public"]

A file that cannot be read or parsed, an unknown key or a bad group name stops the sync with one
line naming the file, before anything is written."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

from kgp.access import check_groups
from kgp.errors import ConfigurationError

ACCESS_FILE = ".kgp-access.toml"

Rules = list[tuple[str, tuple[str, ...]]]  # (pattern, groups) in file order


def read_rules(file: Path) -> Rules:
    """The (pattern, groups) rules of one access file."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{file}: cannot read the access file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigurationError(f"{file}: not valid TOML ({exc}); fix it and sync again") from None
    unknown = sorted(set(data) - {"groups"})
    if unknown:
        raise ConfigurationError(
            f"{file}: unknown key {unknown[0]!r}; an access file holds one [groups] table of "
            '"pattern" = ["group", ...]'
        )
    table = data.get("groups", {})
    if not isinstance(table, dict):
        raise ConfigurationError(f'{file}: [groups] must be a table of "pattern" = ["group", ...]')
    return [
        (pattern, check_groups(groups, f"{file}: {pattern!r}")) for pattern, groups in table.items()
    ]


class AccessRules:
    """The access files under a synced root, each read once."""

    def __init__(self, root: Path, default: tuple[str, ...]) -> None:
        self.root = root.resolve()
        self.default = default
        self._rules: dict[Path, Rules | None] = {}

    def groups(self, rel: str) -> tuple[str, ...]:
        """The groups of the document at ``rel`` (a path relative to the root)."""
        path = self.root / rel
        folder = path.parent
        while folder.is_relative_to(self.root):
            rules = self._folder(folder)
            if rules is not None:
                inside = path.relative_to(folder).as_posix()
                for pattern, groups in rules:
                    if fnmatchcase(inside, pattern):
                        return groups
                return self.default
            if folder == self.root:
                break
            folder = folder.parent
        return self.default

    def _folder(self, folder: Path) -> Rules | None:
        if folder not in self._rules:
            file = folder / ACCESS_FILE
            self._rules[folder] = read_rules(file) if file.is_file() else None
        return self._rules[folder]
