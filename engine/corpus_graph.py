"""The graph of a QA set's passages, built once and reused: ``kgp eval`` measures retrievers on
it and ``kgp train gnn`` fits GNN-Ret on it. A graph lives under ``<root>/eval/<name>-<hash>``,
the hash keyed by the passages and by the settings the graph depends on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kgp.access import ADMIN_CALLER
from kgp.client import KnowledgeGraph
from kgp.files import private_dir, write_private
from kgp.model import SHIPPED_MODEL
from kgp.qa import Paragraph, QaItem, SharedCorpus, shared_corpus
from kgp.settings import Settings

KgFactory = Callable[..., KnowledgeGraph]  # overrides (data_dir, graph, loaded_encoder) -> graph


@dataclass
class Case:
    """A question ready to ask: its gold as passage ids of the graph it is asked of."""

    item: QaItem
    gold: list[list[str]]
    structures: list[list[str]] = field(default_factory=list)


@dataclass
class Target:
    kg: KnowledgeGraph
    cases: list[Case]


def graph_key(settings: Settings) -> str:
    """The settings a built graph depends on: another encoder or k-NN degree is another graph."""
    encoder = settings.encoder or SHIPPED_MODEL  # a new graph's encoder when none is set
    parts = (encoder, settings.knn_k, settings.keywords_per_passage, settings.store)
    return "|".join(str(p) for p in parts)


def corpus_key(corpus: SharedCorpus, settings_key: str) -> str:
    digest = hashlib.sha256(settings_key.encode())
    for title, text in corpus.entries:
        digest.update(title.encode() + b"\x00" + text.encode() + b"\x01")
    return digest.hexdigest()[:16]


def build_corpus_graph(
    factory: KgFactory, folder: Path, corpus: SharedCorpus, prefix: str, graph: str = "kgp"
) -> KnowledgeGraph:
    """The graph of ``corpus`` in ``folder``, synced the first time only."""
    kg = factory(data_dir=folder / "kb", graph=graph)
    marker = folder / f"built-{graph}"
    if not marker.is_file():  # eval's own graph: built whoever asks, read as the caller
        with kg.store.reading_as(ADMIN_CALLER):
            kg.sync_corpus(corpus.write(folder / f"corpus-{graph}.json"), prefix=prefix)
        write_private(marker, json.dumps({"passages": len(corpus.entries)}))
    return kg


def shared_target(
    factory: KgFactory, root: Path, items: list[QaItem], name: str, extra: list[Paragraph], key: str
) -> Target:
    """One graph of every paragraph of ``items`` (and ``extra``), with each question's gold."""
    corpus = shared_corpus(items, prefix=name, extra=extra)
    folder = root / "eval" / f"{name}-{corpus_key(corpus, name + key)}"
    private_dir(folder)
    kg = build_corpus_graph(factory, folder, corpus, name)
    return Target(kg, [Case(item, [[corpus.ids[p]] for p in item.gold]) for item in items])
