"""The graph never degrades: after any sequence of syncs, watch events, single adds and
removals, edits, copies, interrupted syncs, server restarts and kills and index rebuilds, the
graph equals a clean sync of the same files, vector search included (a Hypothesis state machine
against a clean rebuild). The writes come from a long-lived client and from another process
(another store of the same graph, a syncer of its own each time), in any order; the vector index
beside the graph
(kgp.stores.falkordb.vectors) is deleted, or put back as an older copy, between a stop
and the next start, and must come back equal to the graph."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from kgp.client import KnowledgeGraph
from kgp.errors import KgpError, RemovalRefusedError, StoreUnavailableError
from kgp.ingest import prepare
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder
from kgp.ingest.report import SyncReport
from kgp.ingest.sync import Syncer
from kgp.settings import Settings, load_settings
from kgp.stores import FalkorStore, GraphStore

from tests.test_falkor_server import crash
from tests.test_reopen import snapshot_indexes, write_indexes_in
from tests.test_sync import canonical

SENTENCES = [
    "The Nile flows north through Egypt into the Mediterranean Sea.",
    "The Aswan High Dam controls the floods of the Nile.",
    "Cairo is the capital of Egypt and lies on the banks of the Nile.",
    "Mount Everest lies on the border of Nepal and China.",
    "Kathmandu is the capital of Nepal and the gateway to Everest.",
    "Mont Blanc is the highest peak of the Alps in western Europe.",
    "The Amazon drains much of Brazil and Peru into the Atlantic.",
    "Cedar Hollow station recorded the most rain of any station.",
    "The pumps at Birchfield ran longer than anywhere else last year.",
    "Station managers report to the regional engineer for planned work.",
    "Sandbags are kept on site from November to April.",
    "Rainfall in the northern valleys doubled during the autumn storms.",
]
NAMES = ["a.txt", "b.txt", "notes/c.txt", "notes/d.md", "e.txt"]
texts = st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=4).map(" ".join)
# access files: who may read which documents (a change of groups alone rewrites no passage)
ACCESS_NAMES = [ACCESS_FILE, f"notes/{ACCESS_FILE}"]
access_rules = st.lists(
    st.tuples(
        st.sampled_from(["*.txt", "notes/*", "c.txt", "*"]),
        st.sampled_from([["hr"], ["staff", "hr"], ["public"]]),
    ),
    max_size=3,
    unique_by=lambda rule: rule[0],
).map(lambda rules: "[groups]\n" + "".join(f'"{p}" = {json.dumps(g)}\n' for p, g in rules))


# who writes: this process's long-lived client (most often, so that what it keeps across its
# syncs is used as well as dropped), or another process
writers = st.sampled_from(["client", "client", "client", "other"])


def documents(files: Mapping[str, str]) -> list[str]:
    return sorted(name for name in files if not name.endswith(ACCESS_FILE))


class Interrupted(StoreUnavailableError):
    """The injected fault: the process 'died' before this write."""


class Faulty:
    """Wraps a store's ``run`` so that the n-th write raises, as if the process had been killed
    between two queries (each query is atomic in FalkorDB)."""

    def __init__(self, store: GraphStore, writes_before_crash: int) -> None:
        self.store = store
        self.left = writes_before_crash
        self.original = store.run

    def __enter__(self) -> None:
        def run(name: str, parameters: Mapping[str, Any] | None = None, *, write: bool = False):  # type: ignore[no-untyped-def]
            if write:
                if self.left == 0:
                    self.fault(name)
                self.left -= 1
            return self.original(name, parameters, write=write)

        self.store.run = run  # type: ignore[method-assign]

    def __exit__(self, *exc: object) -> None:
        self.store.run = self.original  # type: ignore[method-assign]

    def fault(self, name: str) -> None:
        raise Interrupted(f"killed before {name}")


CRASHES = int(os.environ.get("KGP_TEST_SYNC_CRASHES", "12"))  # server crashes a run


class Crashing(Faulty):
    """Crashes the server (SIGSEGV, as a FalkorDB bug would) before the n-th write, which then
    goes to it: the store starts it again from its log and the sync goes again (once)."""

    def fault(self, name: str) -> None:
        assert isinstance(self.store, FalkorStore)
        crash(self.store)


class Server:
    """One embedded FalkorDB server; each graph a named graph in it."""

    def __init__(self, data_dir: Path, encoder: Encoder) -> None:
        self.data_dir = data_dir
        self.encoder = encoder
        self.holder = FalkorStore(data_dir=data_dir, graph="holder").open()  # keeps it up
        # the clean syncs on a server of their own
        self.clean_dir = data_dir / "clean syncs"
        self.clean_holder = FalkorStore(data_dir=self.clean_dir, graph="holder").open()
        self.settings = load_settings(data_dir=data_dir, knn_k=3)
        self.names = itertools.count()
        self.clean: dict[str, Any] = {}  # content hash -> (dump, self-lookups)

    def store(self, name: str) -> FalkorStore:
        return FalkorStore(data_dir=self.data_dir, graph=name).open()

    def restart(self, kill: bool, stores: list[FalkorStore], check: str | None = None) -> None:
        """Every user leaves (the last one stops the server), or the server is killed; then
        each store opens again and replays the log. ``check``: a graph whose snapshot, the
        server stopped, must hold no index a start need not load (an empty vector index costs
        nothing and stays)."""
        passages = sum(store.links.count_passages() for store in stores) if check else 0
        if kill:
            os.kill(int(self.holder.server.pid_file.read_text()), signal.SIGKILL)
        for store in [self.holder, *stores]:
            store.close()
        if check is not None:
            loaded = snapshot_indexes(self.data_dir, check)
            assert not passages or "VECTOR" not in loaded.get("Passage", []), loaded
            assert not write_indexes_in(loaded), loaded
        self.holder = FalkorStore(data_dir=self.data_dir, graph="holder").open()
        for store in stores:
            store.open()

    def syncer(self, store: GraphStore, settings: Settings | None = None) -> Syncer:
        return Syncer(store=store, settings=settings or self.settings, encoder=self.encoder)

    def clean_state(self, model: Mapping[str, str], folder: Path) -> Any:
        """The dump and vector self-lookups of a clean sync of ``model`` (cached)."""
        key = hashlib.sha256(repr(sorted(model.items())).encode()).hexdigest()[:16]
        if key not in self.clean:
            shutil.rmtree(folder, ignore_errors=True)
            materialise(folder, model)
            store = FalkorStore(data_dir=self.clean_dir, graph=f"clean-{key}").open()
            try:
                self.syncer(store).sync_folder(folder)
                self.clean[key] = observe(store)
            finally:
                store.close()
        return self.clean[key]


def materialise(folder: Path, model: Mapping[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in model.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def observe(store: GraphStore) -> tuple[Any, dict[str, list[tuple[str, float]]]]:
    """The canonical dump, and for every passage the ten nearest to its own stored vector."""
    dump = canonical(store.upkeep.dump())
    rows = store.passage_vectors(n["key"] for n in dump[0] if n["label"] == "Passage")
    lookups = {
        pid: [(h.id, round(h.score, 5)) for h in store.vector_search(row.embedding, 10)]
        for pid, row in rows.items()
    }
    return dump, lookups


class SyncMachine(RuleBasedStateMachine):
    server: Server
    root: Path
    steps = 0  # invariant checks: one after each rule (and one at the start)
    crashes = 0  # syncs that went on after their server crashed
    spoiled = 0  # starts whose index file was missing or older than the graph
    current: SyncMachine | None = None

    def __init__(self) -> None:
        super().__init__()
        n = next(self.server.names)
        self.folder = self.root / f"folder-{n}"
        self.folder.mkdir(parents=True)
        self.store = self.server.store(f"graph-{n}")  # the client's, which the checks read
        self.other = self.server.store(f"graph-{n}")  # another process's
        admin = self.server.settings.model_copy(update={"groups": ("*",)})  # it dumps the store
        self.kg = KnowledgeGraph(settings=admin, store=self.store)
        self.kg._encoder = self.server.encoder
        self.files: dict[str, str] = {}  # what the folder holds
        self.model: dict[str, str] | None = {}  # what the graph should hold (None: unknown)
        self.server.syncer(self.other).sync_folder(self.folder)  # records the encoder
        SyncMachine.current = self

    def teardown(self) -> None:
        # whatever the sequence was, a stop with the index file gone and a start end it
        try:
            self.client_stops_the_server_and_opens_again(index="deleted", then=NAMES[0])
            self.equals_a_clean_sync()
        finally:
            self.other.close()
            self.store.close()

    def _store(self, by: str) -> FalkorStore:
        return self.store if by == "client" else self.other

    def _sync(self, by: str, allow: bool = False) -> SyncReport:
        if by == "client":
            return self.kg.sync(self.folder, allow_removal=allow)
        return self.server.syncer(self.other).sync_folder(self.folder, allow_removal=allow)

    def _write(self, name: str, text: str) -> None:
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.files[name] = text

    # -- the folder --------------------------------------------------------------------------

    @rule(name=st.sampled_from(NAMES), text=texts)
    def write_file(self, name: str, text: str) -> None:
        self._write(name, text)

    @rule(name=st.sampled_from(ACCESS_NAMES), text=access_rules)
    def write_access_file(self, name: str, text: str) -> None:
        self._write(name, text)

    @precondition(lambda self: len(self.files) >= 1)
    @rule(data=st.data())
    def copy_file(self, data: st.DataObject) -> None:
        source = data.draw(st.sampled_from(sorted(self.files)))
        target = data.draw(st.sampled_from(NAMES))
        self._write(target, self.files[source])

    @precondition(lambda self: len(self.files) >= 1)
    @rule(data=st.data())
    def delete_file(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.files)))
        (self.folder / name).unlink()
        del self.files[name]

    # -- the graph ---------------------------------------------------------------------------

    def _refused(self, refused: RemovalRefusedError) -> None:
        """A refused sync changed nothing: it would have removed every document."""
        assert not set(self.files) & set(refused.would_remove)
        assert refused.stored == len(refused.would_remove)  # the small folders: all of them

    @rule(allow=st.booleans(), by=writers)
    def sync(self, allow: bool, by: str) -> None:
        try:
            self._sync(by, allow)
            self.model = dict(self.files)
        except RemovalRefusedError as refused:
            self._refused(refused)

    @rule(names=st.lists(st.sampled_from(NAMES), min_size=2, max_size=2), text=texts, more=texts)
    def client_syncs_twice(self, names: list[str], text: str, more: str) -> None:
        """A file written and synced, then another, by the same client."""
        for name, written in zip(names, (text, more), strict=True):
            self._write(name, written)
            try:
                self.kg.sync(self.folder)
            except RemovalRefusedError as refused:  # (files deleted since the last sync)
                self._refused(refused)
                return
            self.model = dict(self.files)

    @rule(events=st.integers(1, 3))
    def watch(self, events: int) -> None:
        """What kgp sync --watch does: a sync after each burst of file events."""
        seen: list[object] = []
        self.kg.watch(self.folder, seen.append, changes=[{"event"}] * events)
        for outcome in seen:
            if isinstance(outcome, RemovalRefusedError):
                self._refused(outcome)
            elif isinstance(outcome, KgpError):  # a sync failed for the store's sake, reported:
                self.model = None  # only a later sync says what the graph holds
            else:
                self.model = dict(self.files)

    @precondition(lambda self: self.model is not None and documents(self.files))
    @rule(data=st.data(), by=writers)
    def add_one(self, data: st.DataObject, by: str) -> None:
        name = data.draw(st.sampled_from(documents(self.files)))
        if by == "client":
            self.kg.add(self.folder / name, root=self.folder)
        else:
            syncer = self.server.syncer(self.other)
            report = SyncReport()
            found = syncer.candidates([self.folder / name], self.folder, report)
            syncer.sync_candidates(found, report)
        assert self.model is not None
        self.model[name] = self.files[name]
        if any(self.model.get(a) != self.files.get(a) for a in ACCESS_NAMES):
            self.model = None  # this document under new rules, the others under old ones

    @precondition(lambda self: self.model is not None and documents(self.model))
    @rule(data=st.data(), by=writers)
    def remove_one(self, data: st.DataObject, by: str) -> None:
        assert self.model is not None
        name = data.draw(st.sampled_from(documents(self.model)))
        if by == "client":
            assert self.kg.remove(name)
        else:
            assert self.server.syncer(self.other).remove(name)
        del self.model[name]

    @rule(writes=st.integers(0, 12), by=writers)
    def interrupted_sync(self, writes: int, by: str) -> None:
        with Faulty(self._store(by), writes):
            try:
                self._sync(by)
                self.model = dict(self.files)  # it finished before the fault
            except Interrupted:
                self.model = None  # half done: only a later sync says what it holds
            except RemovalRefusedError as refused:
                self._refused(refused)

    @rule(name=st.sampled_from(NAMES), text=texts, writes=st.integers(0, 3), by=writers)
    def crash_during_sync(self, name: str, text: str, writes: int, by: str) -> None:
        """A file is written, and the server crashes before the n-th write of the sync that
        follows (if it writes that many: these small folders' syncs write a few times). Each
        crash's restart replays every graph of the run: CRASHES of them, the rest plain syncs."""
        self._write(name, text)
        if SyncMachine.crashes >= CRASHES:
            writes = -1
        with Crashing(self._store(by), writes):
            try:
                report = self._sync(by)
            except RemovalRefusedError as refused:
                self._refused(refused)
                return
        self.model = dict(self.files)
        assert all("crashed by signal: 11" in r for r in report.restarts)
        SyncMachine.crashes += len(report.restarts)

    @rule()
    def rebuild_vector_index(self) -> None:
        self.store.upkeep.rebuild_vector_index()

    @rule(kill=st.booleans())
    def restart_server(self, kill: bool) -> None:
        """Stop the server (or kill -9 it) and open again: it replays its append-only file.
        A stop leaves the graph's snapshot without the indexes a start need not load (the
        vector index, the write indexes), whatever came before: a first sync, a kill."""
        stores = [self.store, self.other]
        self.server.restart(kill, stores, check=None if kill else self.store.graph_name)

    @rule(index=st.sampled_from(["kept", "deleted", "older"]), then=st.sampled_from([None, *NAMES]))
    def client_stops_the_server_and_opens_again(self, index: str, then: str | None) -> None:
        """Every other user leaves, then the client closes (``KnowledgeGraph.close``, as a
        process ends): the server stops and the index file beside the graph is saved. Then it is
        kept, deleted by hand, or replaced by the copy the previous such stop left (a restored
        backup); the client opens again, the others after it, and with ``then`` writes at once."""
        self.server.holder.close()
        self.other.close()
        self.kg.close()
        path = self.store.vectors.path
        assert path is not None
        copy = path.with_name(path.name + ".older")
        if index == "deleted" and path.exists():
            path.unlink()
            SyncMachine.spoiled += 1
        elif index == "older" and copy.exists():
            newer = path.read_bytes() if path.exists() else None
            shutil.copyfile(copy, path)
            SyncMachine.spoiled += newer != path.read_bytes()
        if path.exists():
            shutil.copyfile(path, copy)
        self.store.open()
        self.server.holder = FalkorStore(data_dir=self.server.data_dir, graph="holder").open()
        self.other.open()
        self.kg = KnowledgeGraph(settings=self.kg.settings, store=self.store)
        self.kg._encoder = self.server.encoder
        if then is not None:
            self._write(then, f"Written by the client as it opens again {self.steps}.")
            self.sync(False, "client")

    @invariant()
    def equals_a_clean_sync(self) -> None:
        SyncMachine.steps += 1
        if self.model is None:
            return
        clean = self.server.clean_state(self.model, self.root / "clean")
        dump, lookups = observe(self.store)
        assert dump == clean[0]
        assert lookups == clean[1]
        for pid, hits in lookups.items():  # itself, or only exact copies of it (ties by id)
            assert pid in [h for h, _ in hits] or hits[-1][1] >= 0.99999, pid


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[Server]:
    made = Server(tmp_path_factory.mktemp("sync machine"), encoder)
    yield made
    made.clean_holder.close()
    made.holder.close()


@pytest.mark.slow
def test_any_sequence_equals_a_clean_sync(
    server: Server, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # documents linked two at a time: a sync of several groups uses what the linker kept of the
    # earlier ones (vectors, weakest edges) across the documents it rewrites
    monkeypatch.setattr(prepare, "LINK_DOCUMENTS", 2)
    SyncMachine.server = server
    SyncMachine.root = tmp_path_factory.mktemp("folders")
    SyncMachine.steps = SyncMachine.crashes = SyncMachine.spoiled = 0
    run_state_machine_as_test(
        SyncMachine,
        settings=settings(
            max_examples=int(os.environ.get("KGP_TEST_SYNC_EXAMPLES", "30")),
            stateful_step_count=int(os.environ.get("KGP_TEST_SYNC_STEPS", "12")),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    print(
        f"{SyncMachine.steps} steps, {SyncMachine.crashes} syncs through a crash, "
        f"{SyncMachine.spoiled} starts with the index file deleted or older than the graph"
    )
    assert SyncMachine.steps >= 200, f"only {SyncMachine.steps} steps ran"
    assert SyncMachine.spoiled, "no start found its index file deleted or older"
