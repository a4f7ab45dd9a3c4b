"""Covered reads (kgp.stores.coverage): a caller who may read every document retrieves without
the document checks and gets exactly what the checks give; a caller missing a group checks every
document; a change of groups during a covered retrieval sends it back to the checks; and the
graph's record of the group sets in use is never short of them, whatever writes come (a state
machine of adds, regroupings, removals and maintenance), and exact once maintenance recounts."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import kgp
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from kgp.access import ADMIN_CALLER, Caller
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError, StoreError
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder
from kgp.ingest.maintain import maintain
from kgp.stores.coverage import coverage, read_covered, reads_all
from kgp.stores.tracer import QueryEvent

DOCS = {
    "stations.md": "# Stations\n\nCedar Hollow station serves the northern farms. "
    "Alder Creek station serves the harbour.\n",
    "pumps.md": "# Pumps\n\nThe pumps of Cedar Hollow ran 4,385 hours in 2024. "
    "Birchfield's pumps ran the longest.\n",
    "board/minutes.md": "# Minutes\n\nThe board approved the sale of the Dunmore pumping station "
    "for four million.\n",
}
QUESTIONS = (
    "Which station serves the northern farms, and how long did its pumps run?",
    "What did the board approve about the Dunmore pumping station?",
    "Which pumps ran the longest?",
)
BOARD = "board/minutes.md"


def write_docs(root: Path, board_only: bool) -> Path:
    for rel, text in DOCS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    access = '[groups]\n"board/*" = ["board"]\n' if board_only else "[groups]\n"
    (root / ACCESS_FILE).write_text(access)
    return root


@pytest.fixture
def graph(tmp_path: Path, encoder: Encoder) -> Iterator[tuple[KnowledgeGraph, list[QueryEvent]]]:
    """The documents synced, all public, opened by a public reader with a tracer."""
    root = write_docs(tmp_path / "docs", board_only=False)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as admin:
        admin.sync(root)
    events: list[QueryEvent] = []
    with kgp.open(
        data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="public", tracer=events.append
    ) as kg:
        yield kg, events


def evidence(kg: KnowledgeGraph, question: str) -> list[tuple[str, float]]:
    return [(p.id, p.score) for p in kg.retrieve(question, 6).passages]


def during(events: list[QueryEvent]) -> list[QueryEvent]:
    """The retrieval's queries: those between its two checks of coverage."""
    names = [e.name for e in events]
    first, last = (
        names.index("access_coverage"),
        len(names) - 1 - names[::-1].index("access_coverage"),
    )
    assert last > first + 1
    return events[first + 1 : last]


def test_a_caller_reading_every_document_skips_the_checks_and_finds_the_same(
    graph: tuple[KnowledgeGraph, list[QueryEvent]],
) -> None:
    kg, events = graph
    for question in QUESTIONS:
        events.clear()
        covered = evidence(kg, question)
        names = [e.name for e in during(events)]
        assert "fulltext_term_all" in names and "fulltext_term" not in names
        assert all(e.parameters["caller_reads_all"] for e in during(events))
        kg.store.covered_reads = False  # the same retrieval, each document checked
        kg.retriever().forget()
        events.clear()
        checked = evidence(kg, question)
        assert not any(e.parameters["caller_reads_all"] for e in events)
        assert "fulltext_term" in [e.name for e in events]
        kg.store.covered_reads = True
        assert covered == checked and covered


def test_a_caller_missing_a_group_checks_every_document(tmp_path: Path, encoder: Encoder) -> None:
    root = write_docs(tmp_path / "docs", board_only=True)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as admin:
        admin.sync(root)
    events: list[QueryEvent] = []
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, tracer=events.append) as kg:
        for caller, covered in ((Caller(("public",)), False), (Caller(("board", "public")), True)):
            with kg.store.reading_as(caller):
                for question in QUESTIONS:
                    events.clear()
                    docs = {p.document["id"] for p in kg.retrieve(question, 6).passages}
                    assert (BOARD in docs) <= covered
                    if covered:
                        assert all(e.parameters["caller_reads_all"] for e in during(events))
                    else:  # one check of coverage, then every query checks
                        assert not [e.name for e in events if e.parameters["caller_reads_all"]]
        with kg.store.reading_as(Caller(("board", "public"))):
            assert BOARD in {p.document["id"] for p in kg.retrieve(QUESTIONS[1], 6).passages}


def test_maintenance_drops_the_sets_of_removed_documents(tmp_path: Path, encoder: Encoder) -> None:
    """A removal leaves its document's set in the record (the public still checks every
    document); `kgp maintain` counts the sets again, and the public reads covered."""
    root = write_docs(tmp_path / "docs", board_only=True)
    public = Caller(("public",))
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(root)
        kg.remove(BOARD)
        with kg.store.reading_as(public):
            assert coverage(kg.store)[1] is False
        maintain(kg.syncer())
        with kg.store.reading_as(public):
            assert coverage(kg.store)[1] is True


def test_a_group_change_during_a_covered_read_is_read_again_with_the_checks(
    graph: tuple[KnowledgeGraph, list[QueryEvent]],
) -> None:
    """The board's minutes leave the public while a public reader's retrieval runs (after its
    first hop): what it read unchecked is dropped, and it is read again, checking each document."""
    kg, events = graph
    assert BOARD in {p.document["id"] for p in kg.retrieve(QUESTIONS[1], 6).passages}
    moved: list[str] = []

    def regroup_once(event: QueryEvent) -> None:
        if event.name in ("neighbours", "neighbours_all") and not moved:
            moved.append(event.name)
            with kg.store.reading_as(ADMIN_CALLER):
                kg.store.set_document_groups({BOARD: ["board"]})

    kg.store.tracer = lambda event: (events.append(event), regroup_once(event))
    events.clear()
    result = kg.retrieve(QUESTIONS[1], 6)
    assert moved, "the groups changed during the retrieval"
    assert BOARD not in {p.document["id"] for p in result.passages}
    assert result.passages, "the public documents are still found"
    names = [e.name for e in events]
    again = names.index("access_coverage", 1) + 1  # the check that saw the change
    assert not any(e.parameters["caller_reads_all"] for e in events[again:])
    assert BOARD not in {p.document["id"] for p in kg.retrieve(QUESTIONS[1], 6).passages}
    counted = int(kg.store.run("count_readable_passages")[0]["n"])
    assert kg.store.readable_passages() == counted, "BM25's n counts no board passage"


def test_an_error_in_a_covered_read_after_a_regrouping_is_read_again(
    graph: tuple[KnowledgeGraph, list[QueryEvent]],
) -> None:
    """What goes wrong in a covered read may tell of what it read: after a change of groups it
    is read again with the checks (whose result stands), not raised."""
    kg, _ = graph
    store = kg.store
    runs: list[bool] = []

    def work() -> str:
        runs.append(reads_all(store, store.caller_now()))
        if len(runs) == 1:
            with store.reading_as(ADMIN_CALLER):
                store.set_document_groups({BOARD: ["board"]})
            raise StoreError(f"something about {BOARD}")
        return "checked"

    assert read_covered(store, work, again=lambda: None) == "checked" and runs == [True, False]
    with pytest.raises(StoreError):  # nothing changed: the error is the caller's to see
        read_covered(store, lambda: (_ for _ in ()).throw(StoreError("x")), again=lambda: None)


def test_a_caller_is_made_of_group_names_only() -> None:
    """A covered read compares names with the record's sets: no empty or odd name gets in."""
    for bad in ("", "a,b", "*"):
        with pytest.raises(ConfigurationError, match="not a group name"):
            Caller((bad,))


NAMES = ("a", "b", "c")
CALLERS = tuple(Caller(g) for g in (("a",), ("b",), ("a", "b"), ("a", "b", "c"), ("public",)))
group_sets = st.sets(st.sampled_from(NAMES), min_size=1).map(sorted)


class AccessRecordMachine(RuleBasedStateMachine):
    """Documents added, regrouped (the same text, new groups: set_document_groups), rewritten
    (new text: write_documents), removed and maintained; the record of group sets must never
    tell a caller it reads all while a document it may not read exists."""

    root: Path  # the test's tmp_path: a folder in it per example, removed with it

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(dir=self.root))
        self.kg = kgp.open(data_dir=self.dir / "kb", loaded_encoder=ENCODER[0], groups="*")
        self.groups: dict[str, list[str]] = {}  # live documents and their groups
        self.synced = False
        self.version: object = None
        self.sets_seen: set[tuple[str, ...]] = set()

    def teardown(self) -> None:
        self.kg.close()

    def _write(self, name: str, text: str, groups: list[str]) -> None:
        path = self.dir / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        self.kg.add(path, groups=groups)
        self.groups[name] = groups
        self.synced = True

    @rule(number=st.integers(0, 3), groups=group_sets, text=st.sampled_from(("one", "two")))
    def add(self, number: int, groups: list[str], text: str) -> None:
        self._write(
            f"d{number}.md", f"# Doc {number}\n\nStation {number} keeps log {text}.\n", groups
        )

    @precondition(lambda self: self.groups)
    @rule(data=st.data(), groups=group_sets)
    def regroup(self, data: st.DataObject, groups: list[str]) -> None:
        name = data.draw(st.sampled_from(sorted(self.groups)))
        self.kg.add(self.dir / "docs" / name, groups=groups)
        self.groups[name] = groups

    @precondition(lambda self: self.groups)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.groups)))
        self.kg.remove(name)
        del self.groups[name]

    @rule()
    def maintain(self) -> None:
        with self.kg.store.reading_as(ADMIN_CALLER):
            self.kg.store.upkeep.record_access_sets()
        for caller in CALLERS:  # exact (a graph never synced has no schema yet: no one reads all)
            assert self._reads_all(caller) == (self._truth(caller) and self.synced), caller

    def _truth(self, caller: Caller) -> bool:
        return all(caller.may_read(groups) for groups in self.groups.values())

    def _reads_all(self, caller: Caller) -> bool:
        with self.kg.store.reading_as(caller):
            return coverage(self.kg.store)[1]

    @invariant()
    def no_caller_is_told_it_reads_all_while_it_may_not(self) -> None:
        for caller in CALLERS:
            assert self._reads_all(caller) <= self._truth(caller), caller

    @invariant()
    def a_new_set_of_groups_moves_the_version(self) -> None:
        with self.kg.store.reading_as(CALLERS[0]):
            version = coverage(self.kg.store)[0]
        sets = {tuple(g) for g in self.groups.values()}
        if self.version is not None and sets - self.sets_seen:
            assert version != self.version
        self.version, self.sets_seen = version, self.sets_seen | sets


ENCODER: list[Encoder] = []


def test_the_record_of_group_sets_is_never_short_of_those_in_use(
    encoder: Encoder, tmp_path: Path
) -> None:
    ENCODER[:] = [encoder]
    AccessRecordMachine.root = tmp_path
    machine = AccessRecordMachine.TestCase
    machine.settings = settings(
        max_examples=25,
        stateful_step_count=8,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    machine().runTest()
