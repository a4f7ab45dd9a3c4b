"""The graphs questions are asked of, with each question's gold as passage ids of its graph: one
graph per question (the per-question setting), or the configured graph, where a user's
supporting references (texts, pages, tables) are looked up."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from kgp.client import KnowledgeGraph
from kgp.corpus_graph import Case, KgFactory, Target, build_corpus_graph, corpus_key
from kgp.errors import DocumentError
from kgp.evaluate.report import Evaluation
from kgp.files import private_dir
from kgp.qa import QaItem, Support, shared_corpus
from kgp.stores import GraphStore, StoredTable


def report_missing(target: Target, result: Evaluation) -> None:
    """Gold passages the graph lacks (a paragraph ingest skipped, say) are listed; they stay
    in the gold, so they count as misses."""
    wanted = [pid for case in target.cases for unit in case.gold for pid in unit]
    present = target.kg.store.fetch_nodes(wanted)
    for case in target.cases:
        missing = [pid for unit in case.gold for pid in unit if pid not in present]
        if missing:
            result.unresolved[case.item.id or case.item.question] = missing


def per_question_folder(root: Path, items: list[QaItem], name: str, key: str) -> Path:
    digest = corpus_key(shared_corpus(items, name), name + key)
    folder = root / "eval" / f"{name}-{digest}-per-question"
    private_dir(folder)
    return folder


def per_question_targets(
    factory: KgFactory, folder: Path, items: list[QaItem], name: str, holder: KnowledgeGraph
) -> Iterator[Target]:
    """One graph per question (graph ``q<n>`` in ``folder``'s store), each built once;
    ``holder``, open on the same store, keeps its server up and lends its encoder."""
    for n, item in enumerate(items):
        corpus = shared_corpus([item], prefix=name)
        graph = f"q{n}"
        kg = build_corpus_graph(
            lambda **o: factory(**o, loaded_encoder=holder.encoder), folder, corpus, name, graph
        )
        yield Target(kg, [Case(item, [[corpus.ids[p]] for p in item.gold])])


class GoldResolver:
    """Finds a user's supporting references in a graph: a text matches the passages that
    contain it or that it contains (whitespace and case aside); a page is all its passages and
    tables; a table is the document's n-th."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.documents = store.list_documents()
        self._tables: list[StoredTable] | None = None

    def document(self, name: str) -> str | None:
        exact = [d for d in self.documents if d.path == name or d.id == name]
        ends = [d for d in self.documents if d.path.endswith("/" + name.lstrip("/"))]
        matches = exact or ends
        if len(matches) > 1:
            paths = ", ".join(sorted(d.path for d in matches)[:3])
            raise DocumentError(f"document {name!r} is ambiguous ({paths}); give more of its path")
        return matches[0].id if matches else None

    def resolve(self, support: Support) -> tuple[list[str], list[str] | None]:
        """The ids that count as finding the reference (any one of them), and for a page or a
        table the ids that must all be found for it to be retrieved whole (else None). A
        table's passages of rows count as finding it; whole, it is the Table node."""
        if support.text is not None:
            return self._text(support.text), None
        doc = self.document(support.document or "")
        structural = support.page is not None or support.table is not None
        if doc is None:
            return [], [] if structural else None
        rows = self.store.document_passages([doc])
        if support.page is not None:
            whole = []
            for page in self.store.page_contents([support.page]):
                if page.doc_id == doc:
                    whole += [x.id for x in page.passages] + [t.id for t in page.tables]
            parts = [r.id for r in rows if r.table_id in whole]
            return [*whole, *parts], whole
        if support.table is not None:
            tables = [t for t in self.tables() if t.doc_id == doc]
            if support.table > len(tables):
                return [], []
            table = tables[support.table - 1].id
            parts = [r.id for r in rows if r.table_id == table]
            return [table, *parts], [table]
        return [r.id for r in rows], None

    def tables(self) -> list[StoredTable]:
        if self._tables is None:
            self._tables = self.store.tables()
        return self._tables

    def _text(self, text: str) -> list[str]:
        wanted = " ".join(text.lower().split())
        hits = [h.id for h in self.store.fulltext_search(text, 50)]
        stored = self.store.passage_vectors(hits)
        out = []
        for pid in hits:
            have = " ".join((stored[pid].text if pid in stored else "").lower().split())
            if have and (wanted in have or have in wanted):
                out.append(pid)
        return out


def graph_target(kg: KnowledgeGraph, items: list[QaItem], result: Evaluation) -> Target:
    resolver = GoldResolver(kg.store)
    cases = []
    for item in items:
        gold, structures, missing = [], [], []
        for support in item.supports:
            ids, whole = resolver.resolve(support)
            gold.append(ids)
            if whole is not None:
                structures.append(whole)
            if not ids:
                missing.append(support.describe())
        if missing:
            result.unresolved[item.id or item.question] = missing
        cases.append(Case(item, gold, structures))
    if items and len(result.unresolved) == len(items):
        raise DocumentError(
            f"none of the supporting references of {result.dataset} is in {kg.store.describe()}; "
            "sync the documents they come from first (kgp sync FOLDER)"
        )
    return Target(kg, cases)
