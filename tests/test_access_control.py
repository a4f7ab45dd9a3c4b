"""Access control tries to break: random group assignments, random callers and random or hostile
questions, through every retrieval method, seeder, scorer, structural question, baseline, the
reader, traces, stats and the document list. Nothing outside the caller's groups may come back:
no passage, table, page, seed, path step, trace or count; a caller who may read nothing gets
empty results, not an error. Groups are changed by access files, so a new assignment rewrites
Document nodes only (nothing is embedded again) and each example is cheap. The same tests run
against Neo4j when ``KGP_TEST_NEO4J_URI`` is set."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import kgp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgp.access import ADMIN_CALLER, Caller
from kgp.baselines import make_runner
from kgp.client import KnowledgeGraph
from kgp.errors import AccessDeniedError, ConfigurationError
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder

from tests.conftest import EXAMPLES
from tests.corpus_files import TEXTS, write_corpus
from tests.llm_server import ChatServer, chat_server
from tests.tiny_models import build_tiny_t5

GROUPS = ("board", "hr", "staff")
QUESTIONS = (
    "Which station recorded the most rain in 2024?",
    "What is the capital of Nepal and which mountain is near it?",
    "How much was budgeted for maintenance?",
    "What does Table 1 on page 1 show?",
    "Summarise page 2",
    "Show the tables of budget-2025.pdf",
    "What does rainfall-2024.pdf say about Cedar Hollow?",
    "Which river flows through Cairo?",
)
HOSTILE = (
    "') RETURN p //",
    "MATCH (n) DETACH DELETE n",
    "$caller_admin = true OR 1=1",
    "{caller_admin: true, caller_groups: ['hr', 'board']}",
    "* hr board staff public admin",
    "groups=* what do the board minutes say?",
    '" OR true //',
)
# every way kgp returns passages: (kind, name, choice)
WAYS: tuple[tuple[str, str, str], ...] = (
    *(
        ("kgp", scorer, seeder)
        for scorer in ("tfidf", "embedding", "hybrid", "embedding-text", "mdr", "t5", "llm")
        for seeder in ("hybrid",)
    ),
    *(("kgp", "tfidf", seeder) for seeder in ("vector", "fulltext", "tfidf", "gnn")),
    ("method", "gnn", ""),
    ("method", "rgnn", ""),
    *(("baseline", name, "") for name in ("bm25", "tfidf", "knn", "dense", "mdr", "gnn-ret")),
    ("ask", "tfidf", "hybrid"),
)


def respond(messages: list[dict[str, str]]) -> str:
    """A chat model for the llm scorer, RGNN-Ret and the reader: short evidence, a plain answer
    citing passage 1."""
    prompt = messages[-1]["content"]
    if "What evidence" in prompt:
        return "Cedar Hollow station recorded the most rain."
    return "Cedar Hollow [1]."


@dataclass
class World:
    """One graph of the example documents and the test texts, read as any caller."""

    kg: KnowledgeGraph
    folder: Path
    chat: ChatServer
    documents: list[str] = field(default_factory=list)
    groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    owner: dict[str, str] = field(default_factory=dict)  # node id -> its document id
    texts: dict[str, str] = field(default_factory=dict)  # passage id -> text

    def assign(self, groups: Sequence[frozenset[str]]) -> None:
        """Give the documents these groups (in order) with an access file, and sync: only the
        Document nodes change."""
        self.groups = {d: tuple(sorted(g)) for d, g in zip(self.documents, groups, strict=True)}
        lines = [f'"{d}" = {list(g)!r}'.replace("'", '"') for d, g in self.groups.items()]
        (self.folder / ACCESS_FILE).write_text("[groups]\n" + "\n".join(lines) + "\n")
        report = self.kg.sync(self.folder)
        assert not (report.added or report.changed or report.removed), "groups only"
        with self.kg.store.reading_as(ADMIN_CALLER):
            stored = {d.id: d.groups for d in self.kg.documents()}
        assert stored == self.groups

    @contextmanager
    def reading_as(self, caller: Caller) -> Iterator[list[Any]]:
        """Read as ``caller``, keeping every value every query returns to Python: a forbidden
        id must never be among them (filtering afterwards would hide a leak from the results)."""
        store = self.kg.store
        returned: list[Any] = []
        execute = store._execute

        def keep(query: str, parameters: Any, *, write: bool) -> list[Any]:
            rows = execute(query, parameters, write=write)
            returned.extend(rows)
            return rows

        store._execute = keep  # type: ignore[method-assign]
        try:
            with store.reading_as(caller):
                yield returned
        finally:
            del store._execute
        outside = {i for i in strings(returned) if i in self.owner} - {
            i for i in self.owner if self.owner[i] in self.readable(caller)
        }
        assert not outside, f"queries returned {sorted(outside)[:5]} to {caller}"

    def readable(self, caller: Caller) -> set[str]:
        return {d for d, g in self.groups.items() if caller.may_read(g)}

    def document_of(self, node: str) -> str:
        """The document a node id belongs to (a document is its own)."""
        return self.owner[node]


@pytest.fixture(scope="module")
def world(
    tmp_path_factory: pytest.TempPathFactory, encoder: Encoder, store_kind: str
) -> Iterator[World]:
    root = tmp_path_factory.mktemp("access")
    folder = write_corpus(root / "docs")
    for pdf in EXAMPLES.iterdir():
        shutil.copy(pdf, folder / pdf.name)
    t5 = build_tiny_t5(root / "t5", [*QUESTIONS, *TEXTS.values()])
    with ExitStack() as stack:
        chat = stack.enter_context(chat_server(respond))
        kg = stack.enter_context(
            kgp.open(
                data_dir=root / "kb",
                loaded_encoder=encoder,
                groups="*",
                t5_model=str(t5),
                llm_base_url=chat.url,
                llm_model="test-model",
                device="cpu",
                **store_settings(store_kind),
            )
        )
        if store_kind == "neo4j":
            with kg.store.reading_as(ADMIN_CALLER):
                kg.store.clear()
        kg.sync(folder)
        world = World(kg, folder, chat)
        with kg.store.reading_as(ADMIN_CALLER):
            world.documents = sorted(d.id for d in kg.documents())
            nodes, _ = kg.store.upkeep.dump()
        for node in nodes:
            props = node["props"]
            if node["label"] in {"Passage", "Page", "Table", "Document"}:
                world.owner[node["key"]] = props.get("doc_id", node["key"])
            if node["label"] == "Passage":
                world.texts[node["key"]] = props["text"]
        yield world


def strings(value: Any) -> Iterator[str]:
    """Every string inside a row (lists, maps and nested ones)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def store_settings(kind: str) -> dict[str, Any]:
    if kind == "embedded":
        return {}
    import os

    return {
        "store": "neo4j",
        "neo4j_uri": os.environ["KGP_TEST_NEO4J_URI"],
        "neo4j_user": os.environ.get("KGP_TEST_NEO4J_USER", "neo4j"),
        "neo4j_password": os.environ.get("KGP_TEST_NEO4J_PASSWORD", "password"),
    }


@pytest.fixture(scope="module", params=["embedded", "neo4j"])
def store_kind(request: pytest.FixtureRequest) -> str:
    import os

    if request.param == "neo4j" and not os.environ.get("KGP_TEST_NEO4J_URI"):
        pytest.skip("Neo4j access tests need KGP_TEST_NEO4J_URI (a disposable server)")
    return str(request.param)


# -- one way of retrieving, and what it showed ---------------------------------------------------


@dataclass
class Shown:
    """Every node id a result showed the caller, and the texts it showed."""

    ids: set[str] = field(default_factory=set)
    texts: list[str] = field(default_factory=list)
    empty: bool = True


def retrieve(world: World, way: tuple[str, str, str], question: str) -> Shown:
    kind, name, choice = way
    kg, shown = world.kg, Shown()
    if kind == "baseline":
        ids = make_runner(kg, name, 10)(question, [])
        shown.ids.update(ids)
        shown.empty = not ids
        return shown
    if kind == "ask":
        before = len(world.chat.requests)
        answer = kg.ask(question, 8, scorer=name, seeder=choice)
        shown.texts += [m["content"] for r in world.chat.requests[before:] for m in r["messages"]]
        shown.ids.update(answer.cited + answer.context)
        result = kg.retrieve(question, 8, scorer=name, seeder=choice)
    elif kind == "method":
        result = kg.retrieve(question, 8, method=name)
    else:
        result = kg.retrieve(question, 8, scorer=name, seeder=choice)
    shown.empty = not result.passages
    for p in result.passages:
        shown.ids.update([p.id, p.document["id"], *p.path])
        if p.table:
            shown.ids.add(p.table)
        shown.texts.append(p.text)
    shown.ids.update(str(s["id"]) for s in result.seeds)
    shown.ids.update(str(d) for d in (result.structure or {}).get("documents") or [])
    return shown


def check(world: World, caller: Caller, shown: Shown) -> set[str]:
    readable = world.readable(caller)
    outside = {i for i in shown.ids if world.document_of(i) not in readable}
    assert not outside, f"{caller} was shown {sorted(outside)}"
    forbidden = [
        text
        for pid, text in world.texts.items()
        if world.document_of(pid) not in readable
        and len(text) > 40
        and not any(text in world.texts[p] for p in world.texts if world.document_of(p) in readable)
    ]
    leaked = [t for t in forbidden if any(t in seen for seen in shown.texts)]
    assert not leaked, f"{caller} was shown the text of {leaked[:1]}"
    if not readable:
        assert shown.empty, f"{caller} may read nothing, yet got results"
    return shown.ids


def test_the_fixed_assignment_leaves_every_caller_something_to_find(world: World) -> None:
    """The checks above are not vacuous: each caller's results are non-empty and hold
    passages found by hops, and an admin gets passages the caller may not read."""
    world.assign(FIXED)
    for caller in (Caller(("hr",)), Caller(("board",))):
        with world.reading_as(caller):
            result = world.kg.retrieve("What is the capital of Nepal?", 12)
        assert len(result.passages) == min(
            12, sum(1 for p in world.texts if world.document_of(p) in world.readable(caller))
        )
        assert any(p.hop > 0 for p in result.passages)
    with world.kg.store.reading_as(ADMIN_CALLER):
        everything = world.kg.retrieve("What is the capital of Nepal?", 30)
    assert {world.document_of(p.id) for p in everything.passages} - world.readable(caller)


assignments = st.lists(
    st.frozensets(st.sampled_from(GROUPS), min_size=1), min_size=8, max_size=8
).map(tuple)
callers = st.frozensets(st.sampled_from((*GROUPS, "nobody")), min_size=1).map(
    lambda names: Caller(tuple(sorted(names)))
)
questions = st.one_of(
    st.sampled_from(QUESTIONS),
    st.sampled_from(HOSTILE),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1).filter(
        str.strip
    ),
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    groups=assignments,
    caller=callers,
    question=questions,
    ways=st.lists(st.sampled_from(WAYS), min_size=1, max_size=3, unique=True),
)
def test_no_way_of_retrieving_shows_anything_outside_the_callers_groups(
    world: World,
    groups: tuple[frozenset[str], ...],
    caller: Caller,
    question: str,
    ways: list[tuple[str, str, str]],
) -> None:
    world.assign(groups)
    before, dump = admin_stats(world), admin_dump(world)
    with world.reading_as(caller):
        for way in ways:
            check(world, caller, retrieve(world, way, question))
        check_views(world, caller, dump)
    assert admin_stats(world) == before, "reading changed nothing"


# a fixed assignment: each group holds a few documents, and some are shared
FIXED = (
    frozenset({"staff"}),
    frozenset({"hr"}),
    frozenset({"board", "hr"}),
    frozenset({"staff"}),
    frozenset({"board"}),
    frozenset({"hr"}),
    frozenset({"staff", "board"}),
    frozenset({"hr"}),
)


@pytest.mark.parametrize("way", WAYS, ids=["-".join(filter(None, w)) for w in WAYS])
def test_every_way_of_retrieving_keeps_to_the_callers_groups(
    world: World, way: tuple[str, str, str]
) -> None:
    world.assign(FIXED)
    for caller in (Caller(("hr",)), Caller(("board",)), Caller(("nobody",))):
        with world.reading_as(caller):
            for question in (*QUESTIONS[:6], HOSTILE[0]):
                check(world, caller, retrieve(world, way, question))


def test_a_caller_with_few_documents_still_gets_k_passages(world: World) -> None:
    """The vector index is asked deeper when most of its nearest entries are not readable."""
    world.assign(FIXED)
    caller = Caller(("board",))
    readable = world.readable(caller)
    wanted = sum(1 for pid in world.texts if world.document_of(pid) in readable)
    assert 0 < wanted < len(world.texts) / 2
    vector = world.kg.encoder.encode(["What is the capital of Nepal?"])[0].tolist()
    with world.reading_as(caller):
        hits = world.kg.store.vector_search(vector, min(10, wanted))
    assert len(hits) == min(10, wanted)
    assert {world.document_of(h.id) for h in hits} <= readable


def check_views(world: World, caller: Caller, dump: Any) -> None:
    """The document list, stats and traces of a caller hold only what it may read (``dump``:
    the admin's, taken before reading as the caller)."""
    kg, readable = world.kg, world.readable(caller)
    documents = kg.documents()
    assert {d.id for d in documents} == readable
    assert all(set(d.groups) <= set(caller.groups) for d in documents)
    stats = kg.stats()
    assert stats.labels.get("Document", 0) == len(readable)
    assert stats.labels.get("Passage", 0) == sum(
        1 for pid in world.texts if world.document_of(pid) in readable
    )
    assert set(stats.groups) <= set(caller.groups)
    expected_labels, expected_rels = readable_counts(world, caller, dump)
    assert {k: v for k, v in stats.labels.items() if k != "Trace"} == expected_labels
    assert {k: v for k, v in stats.relationships.items() if k not in TRACE_RELS} == expected_rels
    for trace in kg.traces():
        assert set(trace["groups"]) <= set(caller.groups), trace


TRACE_RELS = ("RETRIEVED", "STEP")


def admin_dump(world: World) -> Any:
    with world.kg.store.reading_as(ADMIN_CALLER):
        return world.kg.store.upkeep.dump()


def readable_counts(
    world: World, caller: Caller, dump: Any
) -> tuple[dict[str, int], dict[str, int]]:
    """What a caller's counts of document nodes and links must be, worked out from the admin's
    dump: a node is readable when its document is, a keyword when a readable passage uses it,
    a SIMILAR edge when both its passages are."""
    nodes, rels = dump
    readable = world.readable(caller)
    owner = {  # a document's pages, tables and passages carry its id
        str(n["key"]): str(n["props"].get("doc_id", n["key"]))
        for n in nodes
        if n["label"] in ("Document", "Page", "Table", "Passage")
    }
    used = {
        str(r["target"])
        for r in rels
        if r["type"] == "HAS_KEYWORD" and owner[str(r["source"])] in readable
    }
    labels: dict[str, int] = {}
    for n in nodes:
        key = str(n["key"])
        if (n["label"] == "Keyword" and key in used) or owner.get(key) in readable:
            labels[n["label"]] = labels.get(n["label"], 0) + 1
    counted: dict[str, int] = {}
    for r in rels:
        if r["type"] in (*TRACE_RELS, "NEEDS_KNN") or owner[str(r["source"])] not in readable:
            continue
        if r["type"] == "SIMILAR" and owner[str(r["target"])] not in readable:
            continue
        counted[r["type"]] = counted.get(r["type"], 0) + 1
    return labels, counted


def test_a_caller_reading_every_document_gets_the_graphs_counts_of_them(world: World) -> None:
    """Every document readable: the caller's counts of them are the graph's own, read without a
    filter per node (count_labels); one document hidden, and the filtered counts take
    over. Either way they are what the admin's dump says the caller may read."""
    kg, caller = world.kg, Caller(("staff",))
    names: list[str] = []
    run = kg.store.run

    def noting(name: str, *args: Any, **options: Any) -> Any:
        names.append(name)
        return run(name, *args, **options)

    kg.store.run = noting  # type: ignore[method-assign]
    try:
        world.assign([frozenset({"staff"})] * len(world.documents))
        dump = admin_dump(world)
        with world.reading_as(caller):
            names.clear()
            check_views(world, caller, dump)
        assert "count_labels" in names and "readable_labels" not in names
        labels, rels = admin_stats(world)
        with world.reading_as(caller):
            stats = kg.stats()
        assert stats.labels["Passage"] == labels["Passage"]
        assert stats.relationships["SIMILAR"] == rels["SIMILAR"]
        world.assign([frozenset({"staff"})] * (len(world.documents) - 1) + [frozenset({"hr"})])
        dump = admin_dump(world)
        with world.reading_as(caller):
            names.clear()
            check_views(world, caller, dump)
        assert "readable_labels" in names
    finally:
        del kg.store.run


def admin_stats(world: World) -> Any:
    with world.kg.store.reading_as(ADMIN_CALLER):
        counts = world.kg.stats()
    return counts.labels, {k: v for k, v in counts.relationships.items() if k != "STEP"}


def test_saved_traces_are_seen_only_by_callers_holding_their_groups(world: World) -> None:
    world.assign(FIXED)
    kg = world.kg
    saved: dict[Caller, str] = {}
    for caller in (Caller(("hr",)), Caller(("board", "hr")), Caller(("staff",))):
        with kg.store.reading_as(caller):
            result = kg.retrieve(QUESTIONS[0], 6)
            saved[caller] = kg.save_trace(result, scorer="tfidf", seeder="hybrid")
    seen = {}
    for caller in (*saved, Caller(("board",)), Caller(("nobody",)), ADMIN_CALLER):
        with kg.store.reading_as(caller):
            seen[caller] = {t["id"] for t in kg.traces(100)}
    hr, board_hr, staff = saved.values()
    assert hr in seen[Caller(("hr",))] and board_hr not in seen[Caller(("hr",))]
    assert {hr, board_hr} <= seen[Caller(("board", "hr"))]
    assert staff not in seen[Caller(("board", "hr"))] and staff in seen[Caller(("staff",))]
    assert not ({hr, board_hr, staff} & seen[Caller(("board",))]) and not seen[Caller(("nobody",))]
    assert {hr, board_hr, staff} <= seen[ADMIN_CALLER]
    with kg.store.reading_as(ADMIN_CALLER):
        _, rels = kg.store.upkeep.dump()
    for caller, ids in seen.items():  # kgp stats counts the traces each caller sees, no more
        with kg.store.reading_as(caller):
            stats = kg.stats()
        assert stats.labels.get("Trace", 0) == len(ids)
        for kind, trace_of in (("RETRIEVED", "source"), ("STEP", "trace")):
            mine = [
                r
                for r in rels
                if r["type"] == kind and (r.get(trace_of) or r["props"].get(trace_of)) in ids
            ]
            assert stats.relationships.get(kind, 0) == len(mine), (caller, kind)
    retrieved = [r for r in rels if r["type"] == "RETRIEVED"]
    readable = world.readable(Caller(("hr",)))
    assert retrieved and all(
        world.document_of(r["target"]) in readable for r in retrieved if r["source"] == hr
    )


def test_a_reader_may_not_write_or_run_maintenance(world: World) -> None:
    with world.kg.store.reading_as(Caller(("hr",))):
        with pytest.raises(AccessDeniedError, match="'delete_document' needs the admin view"):
            world.kg.store.delete_document(world.documents[0])
        with pytest.raises(AccessDeniedError, match="'dump_nodes' needs the admin view"):
            world.kg.store.upkeep.dump()
    with world.kg.store.reading_as(ADMIN_CALLER):
        assert world.documents[0] in {d.id for d in world.kg.documents()}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(groups=assignments, caller=callers)
def test_asked_for_everything_by_id_the_store_returns_only_what_the_caller_may_read(
    world: World, groups: tuple[frozenset[str], ...], caller: Caller
) -> None:
    """Every read method of the store, given every id there is (as a hostile caller of the
    library would), returns nothing outside the caller's groups (World.reading_as checks every
    row), and counts the way the caller sees the graph."""
    world.assign(groups)
    store, everything = world.kg.store, sorted(world.owner)
    vector = world.kg.encoder.encode(["rain"])[0].tolist()
    with world.reading_as(caller):
        readable = world.readable(caller)
        nodes = store.fetch_nodes(everything)
        assert set(nodes) == {i for i in everything if world.document_of(i) in readable}
        for node in nodes.values():  # of a document's groups, only the caller's own
            assert set(node.get("groups", ())) <= set(caller.groups)
        store.passage_vectors(everything)
        store.neighbours(everything, max_df=10_000)
        store.document_passages(world.documents)
        store.page_contents(range(1, 10))
        for doc_id in world.documents:
            assert bool(store.document_pages(doc_id)) == (doc_id in readable)
        store.tables()
        store.fulltext_search("rain station river capital budget table", 100)
        hits = store.vector_search(vector, 100)
        assert len(hits) == sum(1 for p in world.texts if world.document_of(p) in readable)
        store.nearest([vector], want=5, exclude_docs=["x"], floor=-1.0)


def test_every_read_query_filters_on_the_callers_groups() -> None:
    """Each query file of both dialects is a write (refused to readers but their own trace), a
    read of the indexes' statistics, an admin-only read, or a read that filters on
    ``$caller_groups``: a new query cannot forget the filter unnoticed."""
    from kgp import cypher
    from kgp.stores.coverage import ADMIN_QUERIES, CALLER_WRITES, INDEX_QUERIES

    writes = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DROP)\b|db\.[\w.]+\.(create|drop)\w*\(")
    names: set[str] = set()
    unfiltered = []
    for dialect in cypher.DIALECTS:
        for name in cypher.names(dialect):
            names.add(name)
            text = cypher.load(dialect, name)
            if name in ADMIN_QUERIES | INDEX_QUERIES:
                continue
            if writes.search(text) and name not in CALLER_WRITES:
                continue
            short_cut = "$caller_admin" in text or "$caller_reads_all" in text
            if not short_cut or "$caller_groups" not in text:
                unfiltered.append(f"{dialect}/{name}")
    assert not unfiltered, f"read queries without the access filter: {unfiltered}"
    assert names >= (ADMIN_QUERIES | INDEX_QUERIES | CALLER_WRITES)


def test_a_caller_given_groups_may_not_sync_add_or_remove(world: World, tmp_path: Path) -> None:
    """Writes change what everyone reads and report documents by id: a caller given groups gets
    one line naming its groups, no document id, and nothing changes. A sync refused for removing
    too much would list every document: it is refused before that."""
    world.assign(FIXED)
    before = admin_stats(world)
    empty = tmp_path / "empty"
    empty.mkdir()
    kg = world.kg
    with kg.store.reading_as(Caller(("hr",))):
        for attempt in (
            lambda: kg.sync(empty, allow_removal=True),
            lambda: kg.sync(world.folder),
            lambda: kg.add(world.folder / "rivers.txt", groups=["hr"]),
            lambda: kg.remove(world.documents[0]),
        ):
            with pytest.raises(AccessDeniedError) as refused:
                attempt()
            message = str(refused.value)
            assert "\n" not in message and "groups hr" in message
            assert not any(d in message for d in world.documents)
    assert admin_stats(world) == before


def test_a_runner_reused_by_another_caller_reads_again(world: World) -> None:
    """The knn baseline keeps every passage's text between questions: per caller."""
    world.assign(FIXED)
    runner = make_runner(world.kg, "knn", 10)
    with world.kg.store.reading_as(ADMIN_CALLER):
        runner(QUESTIONS[0], [])
    caller = Caller(("board",))
    with world.reading_as(caller):
        ids = runner(QUESTIONS[0], [])
    assert ids and {world.document_of(i) for i in ids} <= world.readable(caller)


def test_a_caller_has_groups_or_is_the_admin() -> None:
    with pytest.raises(ConfigurationError, match="at least one group"):
        Caller(())
    assert Caller.of("*", "x") == ADMIN_CALLER and Caller.of(" hr, staff", "x").groups == (
        "hr",
        "staff",
    )
