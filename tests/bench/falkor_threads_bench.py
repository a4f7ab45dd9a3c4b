"""Whether the embedded store answers concurrent reads right at FalkorDB's default query threads.

FalkorDB 4.16's vector-index queries returned each other's rows when asked at once, so kgp's
server once ran one query thread; its vectors are now searched in kgp's own index
(kgp.stores.falkordb.vectors) and the server runs its default threads. This asks each kind of read a
question makes of one graph, first each query alone, then all of them from ``--clients`` threads
at once, ``--rounds`` times; a mismatch is an answer that differs from the same query's alone.
The graph: the first ``--documents`` entries of the 2Wiki train corpus (one document each),
embedded by the scale bench's stand-in encoder.

    python -m tests.bench.falkor_threads_bench [--clients 8] [--rounds 10]

Kinds: ``vector`` (the index beside the graph, each hit read back through the graph),
``fulltext`` (one full-text term's postings), ``neighbours`` (the traversal's batched expansion),
``nodes`` (passages by id). The last line is one JSON object: per kind, queries asked,
mismatches and queries that found nothing alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import kgp
import numpy as np
from kgp.access import ADMIN_CALLER

from tests.bench.scale_bench import StandInEncoder

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "qa" / "train" / "2wiki_corpus.json"
QUERIES = 24  # of each kind


def write_documents(folder: Path, documents: int) -> list[str]:
    """The corpus's first entries as Markdown files; their titles, as questions."""
    entries = json.loads(CORPUS.read_text())[:documents]
    folder.mkdir(parents=True)
    for n, entry in enumerate(entries):
        (folder / f"d{n:04d}.md").write_text(f"# {entry['title']}\n\n{entry['text']}\n")
    return [str(entry["title"]) for entry in entries]


def kinds(kg: kgp.KnowledgeGraph, titles: list[str]) -> dict[str, list[Callable[[], Any]]]:
    """Each kind's queries, as calls returning something comparable."""
    store, rng = kg.store, np.random.default_rng(0)
    vectors = [v / np.linalg.norm(v) for v in rng.normal(size=(QUERIES, kg.encoder.dimension))]
    with store.reading_as(ADMIN_CALLER):
        ids = [hit.id for hit in store.vector_search(vectors[0].tolist(), 200)]
    batches = [ids[n : n + 5] for n in range(0, 5 * QUERIES, 5)]
    words = [title.split()[0] for title in titles[:QUERIES]]

    def vector(v: np.ndarray) -> Callable[[], Any]:
        return lambda: [(h.id, h.score) for h in store.vector_search(v.tolist(), 20)]

    def fulltext(word: str) -> Callable[[], Any]:
        return lambda: [(h.id, h.score) for h in store.fulltext_search(word, 20)]

    def neighbours(batch: list[str]) -> Callable[[], Any]:
        return lambda: sorted(map(repr, store.neighbours(batch)))

    def nodes(batch: list[str]) -> Callable[[], Any]:
        return lambda: store.fetch_nodes(batch)

    return {
        "vector": [vector(v) for v in vectors],
        "fulltext": [fulltext(w) for w in words],
        "neighbours": [neighbours(b) for b in batches],
        "nodes": [nodes(b) for b in batches],
    }


def asked(kg: kgp.KnowledgeGraph, call: Callable[[], Any]) -> Any:
    with kg.store.reading_as(ADMIN_CALLER):
        try:
            return call()
        except Exception as exc:  # a wrong answer may also be an error
            return f"error: {type(exc).__name__}: {exc}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="threads asking at once")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--documents", type=int, default=2000)
    args = parser.parse_args()
    if not CORPUS.is_file():
        sys.exit(f"no corpus at {CORPUS}")
    results: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        titles = write_documents(Path(tmp) / "docs", args.documents)
        with kgp.open(data_dir=Path(tmp) / "kb", loaded_encoder=StandInEncoder()) as kg:
            report = kg.sync(Path(tmp) / "docs")
            print(f"{report.passages} passages, the server's default query threads")
            for kind, calls in kinds(kg, titles).items():
                alone = [asked(kg, call) for call in calls]
                with ThreadPoolExecutor(max_workers=args.clients) as pool:
                    together = list(pool.map(lambda c: asked(kg, c), calls * args.rounds))
                wrong = sum(a != b for a, b in zip(alone * args.rounds, together, strict=True))
                empty = sum(
                    not answer for answer in alone
                )  # (a kind that finds nothing tests nothing)
                results[kind] = {"queries": len(together), "mismatches": wrong, "empty": empty}
                print(
                    f"{kind:<11} {len(together):>5} queries at once, {wrong:>5} mismatches "
                    f"({empty} of {len(alone)} empty alone)"
                )
    print(json.dumps({"clients": args.clients, **results}))


if __name__ == "__main__":
    main()
