"""``Neo4jStore`` in a Neo4j cluster, with the driver's real objects and no server: scripted Bolt
servers (tests/bolt_stub.py) play two primaries and a read replica. Like a real cluster, every
member routes, only the leader takes writes (``NotALeader`` elsewhere) and a read transaction
refuses a write. The tests check what each member received: the routing table fetched, reads on
the replica, writes on the leader, a write retried on a new leader, bookmarks. Last, the YAML of
docker/compose.cluster.yaml, which cannot run here."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import kgp
import numpy as np
import pytest
import yaml
from kgp import cypher
from kgp.errors import StoreUnavailableError
from kgp.ingest.embedding import Encoder
from kgp.stores import Neo4jStore
from kgp.stores.neo4j import SCHEMA_QUERIES
from neo4j import exceptions as neo4j_errors

from tests.bolt_stub import HANG_UP, BoltStub, Failure, Reply, Request, Rows, routing_table
from tests.graphs import DIM, make_document

REPO = Path(__file__).resolve().parent.parent
PROBE = "RETURN 1 AS ok"  # open()'s first query
PASSWORD = "pw-sekrit-17"
DELETE = cypher.load("neo4j", "delete_document")  # the write these tests make: a removal
_WRITE_CLAUSE = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DROP)\b")


def answer_probe(request: Request) -> Reply:
    """``open()``'s probe gets its row; every other query an empty result."""
    return Rows(("ok",), ((1,),)) if request.query == PROBE else None


def writes(query: str) -> bool:
    return any(_WRITE_CLAUSE.search(line.split("//")[0]) for line in query.splitlines())


class Cluster:
    """Two primaries (``core1`` leads) and a read replica. ``twist(member, request)`` lets a
    test script an event (a leader stepping down, a dropped connection) before the rules."""

    def __init__(self) -> None:
        self.core1, self.core2, self.replica = (
            BoltStub(name, routing=self.table) for name in ("core1", "core2", "replica")
        )
        for member in self.members:
            member.script = functools.partial(self.answer, member)
        self.leader = self.core1
        self.twist: Callable[[BoltStub, Request], Reply] = lambda member, request: None

    @property
    def members(self) -> tuple[BoltStub, ...]:
        return (self.core1, self.core2, self.replica)

    def table(self, database: str | None) -> dict[str, object]:
        return routing_table(
            routers=[self.core1.address, self.core2.address],
            writers=[self.leader.address],
            readers=[self.replica.address],
        )

    def answer(self, member: BoltStub, request: Request) -> Reply:
        twisted = self.twist(member, request)
        if twisted is not None or request.name != "RUN":
            return twisted
        if writes(request.query) and request.mode == "r":
            return Failure("Neo.ClientError.Statement.AccessMode", "Writing in read access mode")
        if writes(request.query) and member is not self.leader:
            return Failure("Neo.ClientError.Cluster.NotALeader", f"{member.name} is no leader")
        return answer_probe(request)

    def store(self, scheme: str = "neo4j") -> Neo4jStore:
        uri = f"{scheme}://{self.core1.address}"
        return Neo4jStore(uri=uri, user="kgp", password=PASSWORD, database="kb")

    def close(self) -> None:
        for member in self.members:
            member.close()


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    members = Cluster()
    yield members
    members.close()


def runs(member: BoltStub) -> list[str]:
    return [r.query for r in member.seen("RUN")]


def test_reads_go_to_the_replica_and_writes_to_the_leader(cluster: Cluster) -> None:
    with cluster.store() as store:
        store.ensure_schema(DIM)
        store.write_documents([make_document("a.md")])  # what a sync writes
        store.delete_document("a.md")
        store.set_document_groups({"b.md": ["staff"]})
        store.upkeep.set_graph_encoder("stand-in")
        store.list_documents()
        store.neighbours([f"a.md#{i}" for i in range(3)])
        store.fetch_nodes(["a.md#0"])
        store.page_contents([1])
        store.fulltext_search("stations rain", 5)
        store.vector_search([0.25] * DIM, 5)
        store.counts()

    assert "kb" in {r.extra.get("db") for r in cluster.core1.seen("ROUTE")}  # kgp's database
    hellos = [hello for member in cluster.members for hello in member.seen("HELLO")]
    assert hellos and all("routing" in hello.extra for hello in hellos)
    replica, leader = cluster.replica, cluster.core1
    assert {b.extra.get("mode") for b in replica.seen("BEGIN")} == {"r"}
    assert {b.extra.get("mode") for b in leader.seen("BEGIN")} == {None}  # no mode: a write
    assert runs(replica)[0] == PROBE and not any(map(writes, runs(replica)))
    schema = [cypher.load("neo4j", n) for n in (*SCHEMA_QUERIES, "index_passage_vector")]
    recorded = ("set_document_groups", "set_graph_encoder", "record_access_sets")
    named = [cypher.load("neo4j", n) for n in recorded]
    assert runs(leader)[: len(schema)] == schema and runs(leader)[-4:] == [DELETE, *named]
    assert len(runs(leader)) == len(schema) + 5 and all(map(writes, runs(leader)))
    assert not cluster.core2.seen("BEGIN")  # a follower serves no one here


def test_retrieval_is_served_by_the_replica(cluster: Cluster, tmp_path: Path) -> None:
    settings = {"store": "neo4j", "neo4j_uri": f"neo4j://{cluster.core1.address}"}
    with kgp.open(
        **settings, neo4j_password=PASSWORD, data_dir=tmp_path, loaded_encoder=StandInEncoder()
    ) as kg:
        for seeder in ("vector", "fulltext"):
            kg.retrieve("Which station recorded the most rain?", seeder=seeder, scorer="tfidf")

    assert len(cluster.replica.seen("RUN")) > 5
    assert {r.mode for r in cluster.replica.seen("RUN")} == {"r"}
    assert not cluster.core1.seen("BEGIN") and not cluster.core2.seen("BEGIN")


@pytest.mark.parametrize("how", ["NotALeader", "connection dropped"])
def test_a_write_meeting_a_leader_change_is_retried_on_the_new_leader(
    cluster: Cluster, how: str
) -> None:
    def step_down(member: BoltStub, request: Request) -> Reply:
        if member is cluster.core1 and request.query == DELETE:
            cluster.leader = cluster.core2  # what the cluster's routing tables now say
            return HANG_UP if how == "connection dropped" else None  # else NotALeader
        return None

    cluster.twist = step_down
    with cluster.store() as store:
        routed = sum(len(m.seen("ROUTE")) for m in cluster.members)
        store.delete_document("a.md")

    assert runs(cluster.core1) == [DELETE] and not cluster.core1.seen("COMMIT")
    assert runs(cluster.core2) == [DELETE] and len(cluster.core2.seen("COMMIT")) == 1
    assert sum(len(m.seen("ROUTE")) for m in cluster.members) > routed  # a fresh routing table


def test_a_connection_lost_during_the_commit_is_reported_not_replayed(cluster: Cluster) -> None:
    def lose_commit(member: BoltStub, request: Request) -> Reply:
        return HANG_UP if member is cluster.core1 and request.name == "COMMIT" else None

    cluster.twist = lose_commit
    with cluster.store() as store, pytest.raises(StoreUnavailableError) as caught:
        store.delete_document("a.md")

    assert "may or may not have been applied; run it again" in str(caught.value)
    assert "\n" not in str(caught.value) and PASSWORD not in str(caught.value)
    assert runs(cluster.core1) == [DELETE] and not runs(cluster.core2)


def test_a_read_after_a_write_carries_the_writes_bookmark(cluster: Cluster) -> None:
    with cluster.store() as store:
        assert "bookmarks" not in cluster.replica.seen("BEGIN")[0].extra  # nothing written yet
        store.delete_document("a.md")
        store.list_documents()
        assert cluster.replica.seen("BEGIN")[-1].extra["bookmarks"] == ["FB:core1:1"]
        # a thread sharing the store reads its writes too: one driver, one bookmark manager
        store.delete_document("b.md")
        worker = threading.Thread(target=store.list_documents)
        worker.start()
        worker.join()
        assert cluster.replica.seen("BEGIN")[-1].extra["bookmarks"] == ["FB:core1:2"]
    assert cluster.core1.bookmarks == ["FB:core1:1", "FB:core1:2"]  # what its COMMITs gave
    with cluster.store() as other:  # another store is another client, with its own bookmarks
        other.list_documents()
    assert "FB:core1:2" not in cluster.replica.seen("BEGIN")[-1].extra.get("bookmarks", [])


def test_a_bolt_uri_does_no_routing(cluster: Cluster) -> None:
    with cluster.store("bolt") as store:
        store.delete_document("a.md")
        store.list_documents()

    assert not any(m.seen("ROUTE") for m in cluster.members)
    assert not any("routing" in hello.extra for hello in cluster.core1.seen("HELLO"))
    assert runs(cluster.core1)[:2] == [PROBE, DELETE]  # reads too: the one server
    assert not runs(cluster.core2) and not runs(cluster.replica)


def test_a_routing_uri_to_a_server_that_does_not_route_says_so() -> None:
    single = BoltStub("single", script=answer_probe)  # and no routing table
    try:
        store = Neo4jStore(uri=f"neo4j://{single.address}", user="kgp", password=PASSWORD)
        with pytest.raises(StoreUnavailableError) as caught:
            store.open()
        with Neo4jStore(uri=f"bolt://{single.address}", user="kgp", password=PASSWORD) as direct:
            assert direct.list_documents() == []
    finally:
        single.close()
    message = str(caught.value)
    assert "gave no routing table (Neo.ClientError.Procedure.ProcedureNotFound)" in message
    assert "use bolt://" in message and "\n" not in message


def test_a_routing_table_naming_unreachable_members_says_so(cluster: Cluster) -> None:
    cluster.replica.close()  # the address the routing table gives for reads answers no more
    with pytest.raises(StoreUnavailableError, match="advertised addresses") as caught:
        cluster.store().open()
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("error", "routed", "text"),
    [
        (neo4j_errors.WriteServiceUnavailable("No write service"), False, "use a neo4j:// URI"),
        (
            neo4j_errors.Neo4jError._hydrate_neo4j(
                code="Neo.ClientError.Cluster.NotALeader", message="not the leader"
            ),
            True,
            "no member took the write",
        ),
        (neo4j_errors.IncompleteCommit("lost"), True, "may or may not have been applied"),
    ],
)
def test_cluster_errors_are_translated(error: Exception, routed: bool, text: str) -> None:
    scheme = "neo4j" if routed else "bolt"
    store = Neo4jStore(uri=f"{scheme}://db.example:7687", user="kgp", password=PASSWORD)
    translated = store._translate(error)
    assert type(translated) is StoreUnavailableError
    assert text in str(translated) and "\n" not in str(translated)


class StandInEncoder(Encoder):
    """Vectors without a model: retrieval here tests routing, not ranking."""

    def __init__(self) -> None:
        super().__init__(model="stand-in", device="cpu")

    def load(self) -> Encoder:
        return self

    @property
    def dimension(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.full((len(texts), DIM), 0.25, dtype=np.float32)


def test_the_cluster_compose_file_describes_three_primaries_and_a_replica() -> None:
    """docker/compose.cluster.yaml cannot run here (no Docker): check what kgp relies on."""
    compose = yaml.safe_load((REPO / "docker" / "compose.cluster.yaml").read_text())
    services = compose["services"]
    members = {name: s for name, s in services.items() if s.get("image", "").startswith("neo4j")}
    modes = sorted(
        s["environment"]["NEO4J_initial_server_mode__constraint"] for s in members.values()
    )
    assert modes == ["PRIMARY", "PRIMARY", "PRIMARY", "SECONDARY"]
    for name, member in members.items():
        env = member["environment"]
        assert member["image"] == "neo4j:5.26-enterprise"
        assert "${NEO4J_ACCEPT_LICENSE_AGREEMENT:?" in env["NEO4J_ACCEPT_LICENSE_AGREEMENT"]
        assert "${NEO4J_PASSWORD" in env["NEO4J_AUTH"]
        # a routing table names advertised addresses: each must be where the member listens
        port = env["NEO4J_server_bolt_listen__address"].rsplit(":", 1)[1]
        assert env["NEO4J_server_bolt_advertised__address"] == f"{name}:{port}"
        assert f"127.0.0.1:{port}:{port}" in member["ports"]
        assert any(v.endswith(":/data") for v in member["volumes"])
        assert "cypher-shell" in " ".join(member["healthcheck"]["test"])
    endpoints = members["core1"]["environment"]["NEO4J_dbms_cluster_discovery_v2_endpoints"]
    assert endpoints == "core1:6000,core2:6000,core3:6000"
    kgp_env = services["kgp"]["environment"]
    assert kgp_env["KGP_STORE"] == "neo4j" and kgp_env["KGP_NEO4J_URI"].startswith("neo4j://")
    assert set(services["kgp"]["depends_on"]) == set(members)
