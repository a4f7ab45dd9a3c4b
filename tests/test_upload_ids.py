"""Uploads live in their own id space (``upload:<key>/<file>``): an upload never replaces or
regroups a synced document or another key's upload, a folder's sync never removes uploads, a
key removes only its own, and graphs from before are moved over when the server starts."""

from __future__ import annotations

import hashlib
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import kgp
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kgp.access import ADMIN_CALLER
from kgp.client import KnowledgeGraph
from kgp.ids import UPLOAD_PREFIX
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder
from kgp.serve.app import create_app
from kgp.serve.keys import Keys, add_key, read_keys

from tests.served import auth, make_key, serving

SECRET = "The beta launch date is 14 March; only group B may know it."


def test_an_upload_named_as_a_synced_document_leaves_it_alone(
    tmp_path: Path, encoder: Encoder
) -> None:
    """The probe's attack: key beta (groups C, uploads C) uploads beta-secret.md over the synced
    beta/beta-secret.md of group B."""
    folder = tmp_path / "docs"
    (folder / "beta").mkdir(parents=True)
    (folder / "beta" / "beta-secret.md").write_text(f"# Beta\n\n{SECRET}\n")
    (folder / "local").mkdir()
    (folder / "local" / "note.md").write_text("# Note\n\nThe canteen opens at eight.\n")
    (folder / ACCESS_FILE).write_text('[groups]\n"beta/*" = ["B"]\n')
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
    file = tmp_path / "keys.toml"
    keys = {
        "beta": make_key(file, "beta", "C", "--upload", "C"),
        "admin": make_key(file, "admin", "*", "--upload", "B"),
    }
    planted = b"# Beta\n\nThe beta launch is cancelled."
    with serving(tmp_path / "kb", keys=tmp_path / "keys.toml") as served:
        served.keys = keys
        done = served.upload("beta", ("beta-secret.md", planted))
        assert done.status_code == 200, done.text
        assert done.json()["added"] == ["upload:beta/beta-secret.md"]
        everything = {d["id"]: d for d in served.get("/documents", "admin").json()}
        assert everything["beta/beta-secret.md"]["groups"] == ["B"]
        assert everything["upload:beta/beta-secret.md"]["groups"] == ["C"]
        mine = {d["id"] for d in served.get("/documents", "beta").json()}
        assert mine == {"upload:beta/beta-secret.md"}, "key beta still cannot read group B's"
        found = served.post("/retrieve", {"question": "When is the beta launch?"}, "admin")
        texts = " ".join(p["text"] for p in found.json()["passages"])
        assert "14 March" in texts, "the synced text is intact"
        removing = httpx.delete(
            served.url + "/documents/beta/beta-secret.md", headers=auth(keys["beta"])
        )
        assert removing.status_code == 404, "not readable: as if it did not exist"
    with serving(tmp_path / "kb") as served:  # without keys: the operator's uploads
        done = served.upload("", ("note.md", b"# Note\n\nThe canteen closes at noon."))
        assert done.json()["added"] == ["upload:local/note.md"]
        ids = {d["id"] for d in served.get("/documents").json()}
        assert {"local/note.md", "upload:local/note.md"} <= ids


def test_a_folder_sync_leaves_uploads_alone_and_skips_the_upload_prefix(
    tmp_path: Path, encoder: Encoder
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha trains run hourly.\n")
    (folder / "y.md").write_text("# Y\n\nYellow trams run at night.\n")
    (folder / "upload:alice").mkdir()
    (folder / "upload:alice" / "b.md").write_text("# B\n\nA synced file posing as an upload.\n")
    uploads = tmp_path / "kb" / "uploads"
    (uploads / "alice").mkdir(parents=True)
    (uploads / "alice" / "c.md").write_text("# C\n\nAlice's upload about ferries.\n")
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.add_files([uploads / "alice" / "c.md"], root=uploads, id_prefix=UPLOAD_PREFIX)
        report = kg.sync(folder)
        assert report.added == ["a.md", "y.md"] and not report.removed
        assert [(s.path, "kept for uploads" in s.reason) for s in report.skipped] == [
            ("upload:alice/b.md", True)
        ]
        (folder / "a.md").unlink()
        (folder / "z.md").write_text("# Z\n\nZeta buses stop at the depot.\n")
        assert kg.sync(folder).removed == ["a.md"]
        assert {d.id for d in kg.documents()} == {"y.md", "z.md", "upload:alice/c.md"}


def test_uploads_from_before_their_id_space_move_over_at_the_start(
    tmp_path: Path, encoder: Encoder
) -> None:
    data = tmp_path / "kb"
    uploads = data / "uploads"
    (uploads / "alice").mkdir(parents=True, mode=0o755)
    note = uploads / "alice" / "ferries.md"
    note.write_text("# Ferries\n\nNight ferries stop at Kom Ombo.\n")
    # as kgp serve wrote them before
    with kgp.open(data_dir=data, loaded_encoder=encoder, groups=("*",)) as kg:
        kg.add_files([note], root=uploads, groups=["hr"])
        assert {d.id for d in kg.documents()} == {"alice/ferries.md"}
    with serving(data, env={"KGP_GROUPS": "hr"}) as served:
        documents = {d["id"]: d for d in served.get("/documents").json()}
        assert "alice/ferries.md" not in documents, documents
        assert documents["upload:alice/ferries.md"]["groups"] == ["hr"]
    for folder in (uploads, uploads / "alice"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    # once: an old id made again later (here by a Python client) is not moved at the next start
    with kgp.open(data_dir=data, loaded_encoder=encoder, groups=("*",)) as kg:
        kg.add_files([note], root=uploads, groups=["hr"])
    with serving(data, env={"KGP_GROUPS": "hr"}) as served:
        ids = {d["id"] for d in served.get("/documents").json()}
        assert {"alice/ferries.md", "upload:alice/ferries.md"} <= ids


# -- the property: no upload changes a document its key does not own --------------------------

KEY_NAMES = ("alpha", "beta", "local")
FILE_NAMES = ("notes.md", "plan.txt", "beta.md")
folders = st.lists(
    st.tuples(
        st.sampled_from(("", "alpha/", "beta/", "local/", "beta/sub/")), st.sampled_from(FILE_NAMES)
    ),
    min_size=1,
    max_size=5,
    unique=True,
)
uploads_drawn = st.lists(
    st.tuples(
        st.sampled_from(KEY_NAMES),
        st.sampled_from(FILE_NAMES),
        st.sampled_from(("1", "2")),
        st.booleans(),  # whether it asks for its key's second group
    ),
    min_size=1,
    max_size=6,
)


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[KnowledgeGraph]:
    root = tmp_path_factory.mktemp("owners")
    with kgp.open(data_dir=root / "kb", loaded_encoder=encoder, groups=("*",)) as kg:
        yield kg


@pytest.fixture(scope="module")
def owners(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Keys]:
    """A key per name, each reading as two groups of its own and uploading as the first."""
    file = tmp_path_factory.mktemp("keys") / "keys.toml"
    made = {n: add_key(file, n, f"{n}1,{n}2", f"{n}1") for n in KEY_NAMES}
    return made, read_keys(file)


def _state(kg: KnowledgeGraph) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {d.id: (d.sha256, tuple(d.groups or ())) for d in kg.documents()}


@given(layout=folders, drawn=uploads_drawn)
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_upload_changes_a_document_its_key_does_not_own(
    graph: KnowledgeGraph,
    owners: tuple[dict[str, str], Keys],
    tmp_path_factory: pytest.TempPathFactory,
    layout: list[tuple[str, str]],
    drawn: list[tuple[str, str, str, bool]],
) -> None:
    root = tmp_path_factory.mktemp("layout")
    folder = root / "docs"
    for where, name in layout:
        (folder / where).mkdir(parents=True, exist_ok=True)
        (folder / where / name).write_text(f"# {name}\n\nSynced text of {where}{name}.\n")
    with graph.store.reading_as(ADMIN_CALLER):
        graph.sync(folder, allow_removal=True)
    secrets, keys = owners
    client = TestClient(create_app(graph, keys, hosts=None))
    for name, file, version, other_group in drawn:
        with graph.store.reading_as(ADMIN_CALLER):
            before = _state(graph)
        form = {"groups": f"{name}2"} if other_group else {}
        content = f"# Upload\n\nVersion {version} of {file} by {name}.\n".encode()
        reply = client.post(
            "/documents",
            files=[("file", (file, content, "text/markdown"))],
            data=form,
            headers=auth(secrets[name]),
        )
        with graph.store.reading_as(ADMIN_CALLER):
            after = _state(graph)
        own = f"upload:{name}/"
        for doc_id, stored in before.items():
            if not doc_id.startswith(own):
                assert after.get(doc_id) == stored, (doc_id, reply.text)
        assert set(after) - set(before) <= {own + file}, reply.text
        if reply.status_code == 200:
            expected = (
                hashlib.sha256(content).hexdigest(),
                (f"{name}2" if other_group else f"{name}1",),
            )
            assert after[own + file] == expected
        else:
            assert reply.status_code == 403 and "admin view" in reply.json()["error"], reply.text
            assert after == before
