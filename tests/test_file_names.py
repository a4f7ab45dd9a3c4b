"""Any file name syncs: bytes that are not UTF-8, newlines and other control characters, very
long names. Each file gets an id that a store, a terminal and a URL can carry and that stays the
same at the next sync, or it is skipped with one line; the rest of the folder syncs either way."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator

import kgp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgp.client import KnowledgeGraph
from kgp.ids import path_id
from kgp.ingest.embedding import Encoder

NAMES = st.binary(min_size=1, max_size=200).filter(
    lambda b: b"/" not in b and b"\x00" not in b and not b.startswith(b".")
)


def carried(doc_id: str) -> bool:
    """Whether an id encodes as UTF-8 and holds no control character."""
    try:
        doc_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(unicodedata.category(c) == "Cc" for c in doc_id)


def test_an_id_escapes_undecodable_bytes_and_control_characters_only() -> None:
    assert path_id("reports/q3 ümlaut #1.pdf") == "reports/q3 ümlaut #1.pdf"
    assert path_id(os.fsdecode(b"caf\xe9.txt")) == "caf%E9.txt"
    assert path_id("line\nbreak\t.txt") == "line%0Abreak%09.txt"


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[KnowledgeGraph]:
    data = tmp_path_factory.mktemp("names") / "kb"
    with kgp.open(data_dir=data, loaded_encoder=encoder) as kg:
        yield kg


@given(names=st.lists(NAMES, min_size=1, max_size=5, unique=True))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_file_name_syncs_or_is_skipped_and_never_blocks_the_folder(
    graph: KnowledgeGraph, tmp_path_factory: pytest.TempPathFactory, names: list[bytes]
) -> None:
    folder = tmp_path_factory.mktemp("folder")
    base = os.fsencode(folder)
    (folder / "plain.txt").write_text("A plain file about the northern trains.")
    for n, name in enumerate(names):
        with open(base + b"/" + name + b".txt", "wb") as handle:
            handle.write(f"File number {n} says the ferry leaves at {n + 6}.".encode())
    report = graph.sync(folder, allow_removal=True)
    ids = {d.id for d in graph.documents()}
    assert "plain.txt" in ids, "the rest of the folder synced"
    assert all(carried(doc_id) for doc_id in ids), ids
    named = {path_id(os.fsdecode(name + b".txt")) for name in names}
    assert named - {"plain.txt"} <= ids | {s.path for s in report.skipped}
    for skipped in report.skipped:
        assert carried(skipped.path) and "\n" not in skipped.reason
    again = graph.sync(folder, allow_removal=True)
    assert not (again.added or again.changed or again.removed), "the ids are stable"
    assert {d.id for d in graph.documents()} == ids
