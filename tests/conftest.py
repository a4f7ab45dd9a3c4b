"""Shared fixtures: the embedded FalkorDB store always, Neo4j when KGP_TEST_NEO4J_URI is set."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import kgp
import pytest
from hypothesis import settings as hypothesis_settings
from kgp.client import KnowledgeGraph
from kgp.ingest.embedding import Encoder
from kgp.stores import FalkorStore, GraphStore, Neo4jStore
from kgp.stores.falkordb.processes import CRASH_END, REPORT_AT

from tests.graphs import DIM

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"

# CI replays the same generated examples every run (a failure there is reproducible from its
# log); on developers' machines Hypothesis explores new ones each time.
hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"

NEO4J_URI = os.environ.get("KGP_TEST_NEO4J_URI")


def _neo4j_store() -> Neo4jStore:
    return Neo4jStore(
        uri=NEO4J_URI or "",
        user=os.environ.get("KGP_TEST_NEO4J_USER", "neo4j"),
        password=os.environ.get("KGP_TEST_NEO4J_PASSWORD", ""),
        database=os.environ.get("KGP_TEST_NEO4J_DATABASE", "neo4j"),
    )


STORE_KINDS = [
    "falkordb",
    pytest.param(
        "neo4j",
        marks=[
            pytest.mark.neo4j,
            pytest.mark.skipif(
                NEO4J_URI is None,
                reason="Neo4j contract tests need KGP_TEST_NEO4J_URI (a disposable server)",
            ),
        ],
    ),
]


@pytest.fixture(scope="module", params=STORE_KINDS)
def shared_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    """One open store per test module and kind, with kgp's schema (embedding dimension 16)."""
    if request.param == "falkordb":
        store: GraphStore = FalkorStore(data_dir=tmp_path_factory.mktemp("kgp data"))
    else:
        store = _neo4j_store()
    with store:
        store.clear()
        store.ensure_schema(DIM)
        yield store


@pytest.fixture(params=STORE_KINDS)
def fresh_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GraphStore]:
    """A store whose indexes have never seen a deletion (a new data directory for FalkorDB)."""
    store: GraphStore = (
        FalkorStore(data_dir=tmp_path / "fresh") if request.param == "falkordb" else _neo4j_store()
    )
    with store:
        store.clear()
        store.ensure_schema(DIM)
        yield store


@pytest.fixture
def store(shared_store: GraphStore) -> GraphStore:
    """The module's store, emptied for this test."""
    shared_store.clear()
    return shared_store


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    """The real default encoder, loaded once per test session."""
    return Encoder(model="all-MiniLM-L6-v2", device="cpu").load()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "kgp data"


@pytest.fixture(scope="module")
def kg(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[KnowledgeGraph]:
    """The shipped example documents synced into a fresh graph, one per test module."""
    with kgp.open(data_dir=tmp_path_factory.mktemp("kb")) as graph:
        graph._encoder = encoder
        graph.sync(EXAMPLES)
        yield graph


# -- a FalkorDB crash in a failed test ------------------------------------------------------------
CRASHED = re.compile(re.escape(REPORT_AT) + r" (.+?server\.log)")
CRASH_SECTIONS = ("STACK TRACE", "CLIENT LIST OUTPUT", "MODULES INFO OUTPUT")  # and the cause


def crash_excerpt(log: Path) -> str:
    """Of the last crash report in a server log: its cause, every thread's stack, the clients
    and the queries FalkorDB was running (the rest is memory and registers)."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    start = max(n for n, line in enumerate(lines) if "BUG REPORT START" in line)
    kept: list[str] = []
    keep = True
    for line in lines[start:]:
        if line.startswith("------ ") or CRASH_END in line:
            keep = any(line.startswith(f"------ {name}") for name in CRASH_SECTIONS)
        if keep:
            kept.append(line)
    return "\n".join(kept)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A test failed by a crashed FalkorDB server shows the crash (CI keeps no temp files)."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.excinfo is not None:
        for log in dict.fromkeys(CRASHED.findall(str(report.longreprtext))):
            if Path(log).is_file():
                report.sections.append((f"FalkorDB crash report ({log})", crash_excerpt(Path(log))))
