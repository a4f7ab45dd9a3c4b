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
    guard (checked before anything is sent); files a served graph cannot name or should not
    read are skipped with the reason, and keep the upload they had; the graph's other
    documents are left alone."""
    data_dir = tmp_path / "kb"
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
        kg.sync(EXAMPLES)
        synced = {d.id for d in kg.documents()}
    folder = tmp_path / "notes"
    (folder / "deep").mkdir(parents=True)
    for n in range(10):
        (folder / f"pier-{n}.md").write_text(f"# Pier {n}\n\nPier {n} opens at {n} o'clock.\n")
    (folder / "deep" / "locks.md").write_text("# Locks\n\nThe lock at Esna closes at dusk.\n")
    (folder / "deep" / "photo.png").write_bytes(b"\x89PNG not a note")  # a format kgp skips
    (folder / "deep" / "pier-3.md").write_text("a second pier-3.md")
    (folder / 'say "hello".md').write_text("a name a form would change")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nNot in the folder.\n")
    (folder / "link.md").symlink_to(secret)
    heard: list[int] = []
    sent: list[int] = []
    with serving(data_dir) as server, kgp.connect(server.url) as remote:
        add = remote.add
        remote.add = lambda *paths, **kw: sent.append(len(paths)) or add(*paths, **kw)  # type: ignore[method-assign]
        me = remote._call("GET", "/me")
        assert me["uploads"] == "upload:local/" and me["max_file_mb"] > 0
        first = remote.sync(folder, on_progress=lambda p: heard.append(p.done))
        assert sorted(first.added) == sorted(
            ["upload:local/locks.md", *(f"upload:local/pier-{n}.md" for n in range(10))]
        )
        assert first.passages > 0 and sent == [11] and heard == [11]
        skipped = {s.path: s.reason for s in first.skipped}
        assert set(skipped) == {"deep/pier-3.md", 'say "hello".md', "link.md"}
        assert "pier-3.md has the same name" in skipped["deep/pier-3.md"]
        assert "quotation mark" in skipped['say "hello".md']
        assert "outside the folder" in skipped["link.md"]

        again = remote.sync(folder)  # nothing changed: nothing sent
        assert (again.added, again.changed, again.removed, again.unchanged) == ([], [], [], 11)
        assert sent == [11]

        (folder / "pier-0.md").write_text("# Pier 0\n\nPier 0 opens at noon.\n")
        for n in range(1, 8):
            (folder / f"pier-{n}.md").unlink()
        (folder / "deep" / "pier-3.md").unlink()  # (else it would take pier-3.md's place)
        with pytest.raises(kgp.RemovalRefusedError, match="7 of 11 documents"):
            remote.sync(folder)  # (an unmounted share looks like this)
        assert sent == [11], "refused before anything was sent"
        assert "noon" not in remote.retrieve("When does pier 0 open?", 1).passages[0].text

        (folder / "deep" / "locks.md").unlink()
        (folder / "deep" / "locks.md").symlink_to(secret)  # now skipped: keeps its upload
        moved = remote.sync(folder, allow_removal=True)
        assert moved.changed == ["upload:local/pier-0.md"] and sent == [11, 1]
        assert moved.removed == [f"upload:local/pier-{n}.md" for n in range(1, 8)]
        assert "noon" in remote.retrieve("When does pier 0 open?", 1).passages[0].text
        kept = {f"upload:local/{name}" for name in ("pier-0.md", "pier-8.md", "pier-9.md")}
        assert {d.id for d in remote.documents()} == synced | kept | {"upload:local/locks.md"}

        async def cleared() -> list[str]:
            for path in folder.rglob("*"):
                if path.is_file() or path.is_symlink():
                    path.unlink()
            async with kgp.connect_async(server.url) as graph:
                return (await graph.sync(folder, allow_removal=True)).removed

        assert len(asyncio.run(cleared())) == 4
        assert {d.id for d in remote.documents()} == synced
