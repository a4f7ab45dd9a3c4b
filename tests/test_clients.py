"""One client interface (:mod:`kgp.api`): ``kgp.open`` and ``kgp.connect`` (and
``connect_async``) have the same methods with the same signatures, and one scenario run
through both gives the same results, in the same types, with the same fields filled."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import kgp
import pytest
from kgp.api import METHODS, AsyncGraph, Graph
from kgp.client import KnowledgeGraph
from kgp.ingest.embedding import Encoder
from kgp.remote import AsyncRemoteGraph, RemoteGraph

from tests.served import serving
from tests.test_examples import EXAMPLES


def shape(function: object) -> list[tuple[str, object, object, str]]:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default, str(p.annotation)) for p in signature.parameters.values()]


@pytest.mark.parametrize("name", METHODS)
def test_both_clients_have_the_interfaces_signatures(name: str) -> None:
    assert shape(getattr(KnowledgeGraph, name)) == shape(getattr(Graph, name)), name
    assert shape(getattr(RemoteGraph, name)) == shape(getattr(Graph, name)), name
    asynchronous = "aclose" if name == "close" else name
    assert shape(getattr(AsyncRemoteGraph, asynchronous)) == shape(
        getattr(AsyncGraph, asynchronous)
    )
    if name != "close":
        assert shape(getattr(AsyncRemoteGraph, name)) == shape(getattr(Graph, name)), name


def test_one_scenario_through_both_clients(tmp_path: Path, encoder: Encoder) -> None:
    data_dir = tmp_path / "kb"
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
        kg.sync(EXAMPLES)
    local_note = tmp_path / "local" / "ferries.md"
    served_note = tmp_path / "served" / "piers.md"
    for note, text in (
        (local_note, "Night ferries stop at Kom Ombo."),
        (served_note, "Pier 4 opens at dawn."),
    ):
        note.parent.mkdir()
        note.write_text(f"# {note.stem}\n\n{text}\n")
    question = "Which station recorded the most rain, and what does it serve?"
    with (
        serving(data_dir) as server,
        kgp.open(data_dir=data_dir, loaded_encoder=encoder) as local,
        kgp.connect(server.url) as remote,
    ):
        clients: list[Graph] = [local, remote]
        reports = [local.add(local_note), remote.add(served_note)]
        for report in reports:
            assert len(report.added) == 1 and report.passages > 0 and report.seconds > 0
        assert reports[0].added == ["ferries.md"] and reports[1].added == ["upload:local/piers.md"]
        with pytest.raises(kgp.ConfigurationError, match="leave root out"):
            remote.add(served_note, root=tmp_path)

        found = [c.retrieve(question, 5, order="linked") for c in clients]
        assert [p.id for p in found[0].passages] == [p.id for p in found[1].passages]
        assert [p.score for p in found[0].passages] == pytest.approx(
            [p.score for p in found[1].passages]
        )
        assert type(found[0].passages[0]) is type(found[1].passages[0])
        listed = [sorted(d.id for d in c.documents()) for c in clients]
        assert listed[0] == listed[1] and {"ferries.md", "upload:local/piers.md"} <= set(listed[0])
        views = [c.document("stations.md") for c in clients]
        assert views[0] == views[1] and views[0] is not None
        assert (
            clients[0].document("nothing.md") is None and clients[1].document("nothing.md") is None
        )
        assert clients[0].stats() == clients[1].stats()
        answers = [c.ask(question, 3) for c in clients]  # no chat model configured
        assert [a.answer for a in answers] == [None, None]
        assert answers[0].error == answers[1].error and answers[0].error
        streamed = [list(c.ask_stream(question, 3)) for c in clients]
        assert [type(s[-1]) for s in streamed] == [type(answers[0])] * 2
        assert local.traces() == remote.traces()

        async def served_async() -> list[str]:
            async with kgp.connect_async(server.url) as graph:
                retrieval = await graph.retrieve(question, 5, order="linked")
                return [p.id for p in retrieval.passages]

        assert asyncio.run(served_async()) == [p.id for p in found[0].passages]
        assert local.remove("ferries.md") and remote.remove("upload:local/piers.md")
        assert local.remove("ferries.md") is False and remote.remove("ferries.md") is False


def test_a_folder_kept_in_sync_through_a_served_graph(tmp_path: Path, encoder: Encoder) -> None:
    """``kgp.connect(...).sync(folder)`` makes the key's uploads equal to the folder: new and
    changed files sent, unchanged ones not, removed ones removed, under ``kgp sync``'s removal
    guard; the embedded graph's other documents are left alone."""
    data_dir = tmp_path / "kb"
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
        kg.sync(EXAMPLES)
        synced = {d.id for d in kg.documents()}
    folder = tmp_path / "notes"
    (folder / "deep").mkdir(parents=True)
    (folder / "piers.md").write_text("# Piers\n\nPier 4 opens at dawn.\n")
    (folder / "deep" / "locks.md").write_text("# Locks\n\nThe lock at Esna closes at dusk.\n")
    (folder / "deep" / "photo.png").write_bytes(b"\x89PNG not a note")  # a format kgp skips
    heard: list[int] = []
    with serving(data_dir) as server, kgp.connect(server.url) as remote:
        assert remote._call("GET", "/me")["uploads"] == "upload:local/"
        first = remote.sync(folder, on_progress=lambda p: heard.append(p.done))
        assert sorted(first.added) == ["upload:local/locks.md", "upload:local/piers.md"]
        assert first.passages > 0 and heard == [2]
        again = remote.sync(folder)
        assert (again.added, again.changed, again.removed, again.unchanged) == ([], [], [], 2)

        (folder / "piers.md").write_text("# Piers\n\nPier 4 opens at noon.\n")
        (folder / "deep" / "locks.md").unlink()
        (folder / "piers.md").rename(tmp_path / "piers.md")
        with pytest.raises(kgp.RemovalRefusedError, match="every document"):
            remote.sync(folder)  # the folder now holds nothing: refused, nothing changed
        assert {"upload:local/locks.md", "upload:local/piers.md"} <= {
            d.id for d in remote.documents()
        }
        (tmp_path / "piers.md").rename(folder / "piers.md")
        moved = remote.sync(folder)
        assert moved.changed == ["upload:local/piers.md"]
        assert moved.removed == ["upload:local/locks.md"]
        assert "noon" in remote.retrieve("When does pier 4 open?", 1).passages[0].text
        assert {d.id for d in remote.documents()} == synced | {"upload:local/piers.md"}

        (folder / "deep" / "piers.md").write_text("another")
        with pytest.raises(kgp.ConfigurationError, match="by its file name"):
            remote.sync(folder)

        async def cleared() -> list[str]:
            (folder / "deep" / "piers.md").unlink()
            (folder / "piers.md").unlink()
            async with kgp.connect_async(server.url) as graph:
                return (await graph.sync(folder, allow_removal=True)).removed

        assert asyncio.run(cleared()) == ["upload:local/piers.md"]
        assert {d.id for d in remote.documents()} == synced
