"""The embedded store: FalkorDB run by kgp in a server process of its own, its passage vectors
in an index beside the graph. Everything that exists because of FalkorDB is here, each
workaround with the upstream fault it answers and what would let it go
(docs/decisions/0002-falkordb-workarounds.md)."""

from kgp.stores.falkordb.store import FalkorStore

__all__ = ["FalkorStore"]
