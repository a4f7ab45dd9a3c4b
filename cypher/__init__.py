"""Cypher queries, one per file and per dialect, loaded by name.

``cypher/neo4j/NAME.cypher`` and ``cypher/falkordb/NAME.cypher`` hold the same operation in each
store's dialect. Queries take values only as ``$parameters``; nothing is ever concatenated into
them.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal

from kgp.errors import QueryNotFoundError

Dialect = Literal["neo4j", "falkordb"]
DIALECTS: tuple[Dialect, ...] = ("neo4j", "falkordb")

__all__ = ["DIALECTS", "Dialect", "QueryNotFoundError", "load", "names"]


@cache
def load(dialect: Dialect, name: str) -> str:
    """The text of ``cypher/<dialect>/<name>.cypher``, with ``//`` comment lines removed."""
    if dialect not in DIALECTS or not name.replace("_", "").isalnum():
        raise QueryNotFoundError(f"no Cypher query {dialect}/{name}")
    resource = resources.files(__name__).joinpath(dialect, f"{name}.cypher")
    if not resource.is_file():
        raise QueryNotFoundError(f"no Cypher query {dialect}/{name}.cypher")
    lines = resource.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("//")).strip()


def names(dialect: Dialect) -> list[str]:
    """The names of every query of a dialect."""
    folder = resources.files(__name__).joinpath(dialect)
    return sorted(
        entry.name.removesuffix(".cypher")
        for entry in folder.iterdir()
        if entry.name.endswith(".cypher")
    )
