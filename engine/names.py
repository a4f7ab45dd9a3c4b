"""The names of kgp's interchangeable parts, in a module with no heavy imports: settings
validation, the CLI's help, ``kgp eval`` and the retriever all read them here, so the lists
cannot drift apart."""

from __future__ import annotations

# Eq. (1)'s f/g/φ for each hop of the traversal
SCORERS = ("tfidf", "embedding", "hybrid", "embedding-text", "mdr", "t5", "llm")
# where the traversal starts (Algorithm 1's g(V, X, q))
SEEDERS = ("hybrid", "vector", "fulltext", "tfidf", "gnn")
# the final order of the K passages: as visited, by similarity to the question, both fused by
# reciprocal rank, or each seed followed by its best child
ORDERS = ("visit", "question", "fused", "paths")
# Algorithm 1, GNN-Ret, RGNN-Ret
METHODS = ("kgp", "gnn", "rgnn")


def listing(names: tuple[str, ...]) -> str:
    """``a, b or c``: for help texts."""
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
