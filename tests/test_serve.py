"""``kgp serve`` tested as users meet it: a real server process on a loopback port, API keys made
by ``kgp key``, requests over HTTP. Each key reads as its groups; no key, a bad key, a forbidden
document and bad input get JSON errors, never a traceback."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import kgp
import pytest
from kgp.errors import AccessDeniedError, ConfigurationError
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder

from tests.corpus_files import write_corpus
from tests.llm_server import chat_server
from tests.served import (
    Server,
    auth,
    free_port,
    make_key,
    reply_from_context,
    run_kgp,
    serving,
)

HR = {"cities/egypt.txt", "cities/nepal.md"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("serve")
    folder = write_corpus(root / "docs")
    (folder / ACCESS_FILE).write_text('[groups]\n"cities/*" = ["hr"]\n')
    with kgp.open(data_dir=root / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
    keys_file = root / "keys.toml"
    keys = {}
    for name, groups, upload in (
        ("alice", "hr", "hr"),
        ("bob", "public", ""),
        ("root", "*", ""),
        ("dana", "hr,staff", "hr"),
    ):
        more = ("--upload", upload) if upload else ()
        keys[name] = make_key(keys_file, name, groups, *more)
    with (
        chat_server(reply_from_context) as llm,
        serving(
            root / "kb",
            keys=keys_file,
            env={"KGP_MAX_FILE_MB": "0.5", "KGP_LLM_BASE_URL": llm.url, "KGP_LLM_MODEL": "m"},
        ) as served,
    ):
        served.keys = keys
        yield served


def test_keys_are_stored_hashed_and_private(server: Server, tmp_path: Path) -> None:
    file = tmp_path / "keys.toml"
    made = run_kgp("key", "ci", "--groups", "staff,hr", "--keys", str(file))
    secret = made.stdout.strip()
    text = file.read_text()
    assert secret.startswith("kgp_") and secret not in text and "scrypt$" in text
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    again = run_kgp("key", "ci", "--groups", "hr", "--keys", str(file))
    assert again.returncode == 1 and "exists" in again.stderr and "Traceback" not in again.stderr


def test_each_key_reads_as_its_groups(server: Server) -> None:
    question = {"question": "Which river flows through Cairo, the capital of Egypt?", "k": 10}
    seen = {}
    for name in ("alice", "bob", "root"):
        done = server.post("/retrieve", question, name)
        assert done.status_code == 200, done.text
        body = done.json()
        assert body["question"] and body["timings"] and "trace" in body  # kgp retrieve --json
        seen[name] = {p["document"]["id"] for p in body["passages"]}
    assert seen["alice"] and seen["alice"] <= HR
    assert seen["bob"] and not seen["bob"] & HR
    assert seen["root"] & HR and seen["root"] - HR
    documents = {n: {d["id"] for d in server.get("/documents", n).json()} for n in seen}
    assert documents["alice"] == HR and documents["root"] >= HR | documents["bob"]
    assert server.get("/stats", "alice").json()["labels"]["Document"] == 2
    answer = server.post("/ask", {"question": "What is the capital of Nepal?"}, "alice")
    assert answer.status_code == 200 and answer.json()["answer"], answer.text
    assert {p["document"]["id"] for p in answer.json()["passages"]} <= HR
    assert answer.json()["cited"] == answer.json()["context"][:1]


def test_saved_traces_are_listed_to_their_callers_only(server: Server) -> None:
    body = {"question": "What is the capital of Nepal?", "k": 3, "save_trace": True}
    trace = server.post("/retrieve", body, "alice").json()["trace"]
    assert trace in {t["id"] for t in server.get("/traces", "alice").json()}
    assert trace not in {t["id"] for t in server.get("/traces", "bob").json()}
    opened = server.get(f"/traces/{trace}", "alice").json()
    assert opened["question"] == body["question"] and opened["id"] == trace
    assert [item["rank"] for item in opened["items"]] == [1, 2, 3]
    assert {item["doc_id"] for item in opened["items"]} <= HR
    assert all(item["text"] and item["page"] >= 1 for item in opened["items"])
    ids = {item["id"] for item in opened["items"]}
    assert all(step["target"] in ids or step["source"] in ids for step in opened["steps"])
    assert server.get(f"/traces/{trace}", "bob").status_code == 404
    assert server.get("/traces/trace-none", "alice").status_code == 404
    with kgp.connect(server.url, api_key=server.keys["alice"]) as remote:
        assert remote.trace(trace) == opened and remote.trace("trace-none") is None


def test_no_key_a_bad_key_and_forbidden_documents(server: Server) -> None:
    assert server.get("/health").json()["keys"] is True
    for key in (None, "kgp_not-a-key"):
        headers = auth(key)
        denied = httpx.get(server.url + "/stats", headers=headers, timeout=30)
        assert denied.status_code == 401 and "API key" in denied.json()["error"]
        assert denied.headers["WWW-Authenticate"] == "Bearer"
    gone = httpx.delete(
        server.url + "/documents/cities/egypt.txt", headers=auth(server.keys["bob"])
    )
    missing = httpx.delete(server.url + "/documents/no/such.txt", headers=auth(server.keys["bob"]))
    assert gone.status_code == missing.status_code == 404, "forbidden reads as absent"
    assert gone.json()["error"].replace("cities/egypt.txt", "X") == missing.json()["error"].replace(
        "no/such.txt", "X"
    )
    refused = httpx.delete(
        server.url + "/documents/cities/egypt.txt", headers=auth(server.keys["alice"])
    )
    assert refused.status_code == 403 and "admin view" in refused.json()["error"]
    assert "cities/egypt.txt" in {d["id"] for d in server.get("/documents", "root").json()}


def test_a_document_is_read_as_kgp_holds_it_by_those_who_may(server: Server) -> None:
    """``GET /documents/ID``: the record and the pages with their passages in order, for a key
    that may read it; to any other the same 404 as for a document that does not exist; the
    remote client says None for both."""
    shown = server.get("/documents/cities/egypt.txt", "alice")
    assert shown.status_code == 200, shown.text
    view = shown.json()
    assert view["id"] == "cities/egypt.txt" and view["groups"] == ["hr"]
    assert view["kind"] and view["bytes"] > 0 and view["ingested_at"].startswith("20")
    texts = [p["text"] for page in view["pages"] for p in page["passages"]]
    ordinals = [int(p["id"].rsplit("=", 1)[1]) for page in view["pages"] for p in page["passages"]]
    assert texts and ordinals == sorted(ordinals), "passages in reading order"
    assert any("Cairo" in text for text in texts)
    hidden = server.get("/documents/cities/egypt.txt", "bob")
    missing = server.get("/documents/no/such.txt", "bob")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["error"].replace("cities/egypt.txt", "X") == missing.json()[
        "error"
    ].replace("no/such.txt", "X")
    with kgp.connect(server.url, api_key=server.keys["alice"]) as remote:
        seen = remote.document("cities/egypt.txt")
        assert seen is not None and [p.text for g in seen.pages for p in g.passages] == texts
    with kgp.connect(server.url, api_key=server.keys["bob"]) as remote:
        assert remote.document("cities/egypt.txt") is None


def test_the_graph_around_a_passage_holds_only_what_the_caller_may_read(server: Server) -> None:
    """``GET /neighbours/ID``: a passage's SIMILAR, NEXT and keyword neighbours. A passage
    whose neighbours, as the admin sees them, include documents a key may not read shows that
    key none of them, not even in a count; a passage the key may not read is a 404."""
    question = {"question": "Which river flows through Cairo, the capital of Egypt?", "k": 30}
    public = [
        p["id"]
        for p in server.post("/retrieve", question, "bob").json()["passages"]
        if p["kind"] == "passage"
    ]
    mixed = None
    for pid in public:
        seen = server.get(f"/neighbours/{quote(pid)}?limit=50", "root").json()
        if {n["doc_id"] for n in seen["nodes"]} & HR:
            mixed = (pid, seen)
            break
    assert mixed is not None, "some public passage has a neighbour in an hr document"
    pid, everything = mixed
    assert everything["node"]["id"] == pid and everything["node"]["text"]
    assert {e["kind"] for e in everything["edges"]} <= {"similar", "next", "keyword"}
    shown = server.get(f"/neighbours/{quote(pid)}?limit=50", "bob").json()
    assert not {n["doc_id"] for n in shown["nodes"]} & HR
    hidden = {n["id"] for n in everything["nodes"] if n["doc_id"] in HR}
    assert not hidden & {e["id"] for e in shown["edges"]}
    assert len(shown["edges"]) == len(everything["edges"]) - sum(
        1 for e in everything["edges"] if e["id"] in hidden
    ), "each readable edge as the admin sees it, and no other"
    only_similar = server.get(f"/neighbours/{quote(pid)}?kinds=similar", "bob").json()
    assert {e["kind"] for e in only_similar["edges"]} <= {"similar"}
    secret = next(iter(hidden))
    assert server.get(f"/neighbours/{quote(secret)}", "bob").status_code == 404
    assert server.get(f"/neighbours/{quote('no/such.txt#passage=0')}", "bob").status_code == 404
    bad = server.get(f"/neighbours/{quote(pid)}?kinds=colour", "bob")
    assert bad.status_code == 422 and "similar, next, keyword" in bad.json()["error"]


def test_every_request_is_in_the_audit_trail_once_with_its_status(server: Server) -> None:
    """Each question, document read and refusal appends one entry: who, what, the documents
    shown, the status; a failed request too; the trail is the admin view's alone (GET /audit,
    kgp audit)."""
    question = "Audit: which river flows through Cairo?"
    asked = server.post("/retrieve", {"question": question, "k": 5}, "alice")
    assert asked.status_code == 200
    shown = {p["document"]["id"] for p in asked.json()["passages"]}
    assert server.get("/documents/cities/egypt.txt", "bob").status_code == 404
    assert (
        server.post("/ask", {"question": question, "k": 3, "save_trace": True}, "dana").status_code
        == 422
    )
    wrong = httpx.get(server.url + "/stats", headers=auth("kgp_" + "x" * 43), timeout=30)
    assert wrong.status_code == 401
    assert server.get("/audit", "alice").status_code == 403, "not for a key without the admin view"
    trail = server.get("/audit?since=1h", "root").json()
    mine = [e for e in trail if e.get("question") == question]
    assert [(e["key"], e["action"], e["status"]) for e in mine] == [
        ("alice", "retrieve", 200),
        ("dana", "ask", 422),
    ]
    assert mine[0]["groups"] == ["hr"] and set(mine[0]["returned"]) == shown and mine[0]["ms"] > 0
    assert "only /retrieve saves traces" in mine[1]["error"]
    looked = server.get("/audit?key=bob&action=document&document=cities/egypt.txt", "root").json()
    assert looked and looked[-1]["status"] == 404 and "returned" not in looked[-1]
    refused = [e for e in trail if e["action"] == "refused" and e["request"] == "GET /stats"]
    assert refused and refused[-1]["status"] == 401
    done = run_kgp("--data-dir", str(server.data_dir), "audit", "--key", "alice", "--json")
    assert done.returncode == 0, done.stderr
    assert question in {e.get("question") for e in json.loads(done.stdout)}
    reader = run_kgp("--data-dir", str(server.data_dir), "--groups", "hr", "audit")
    assert reader.returncode == 1 and "every group" in reader.stderr


def test_metrics_readiness_and_request_ids(server: Server) -> None:
    """``/metrics`` (Prometheus text, no key needed, no document named), ``/ready``, and an
    ``X-Request-ID`` on every answer, a client's plain one kept, carried into the audit trail."""
    question = {"question": "Metrics: what is the capital of Nepal?", "k": 3}
    asked = httpx.post(
        server.url + "/retrieve",
        json=question,
        headers={**auth(server.keys["alice"]), "X-Request-ID": "trace-me-42"},
        timeout=60,
    )
    assert asked.status_code == 200 and asked.headers["x-request-id"] == "trace-me-42"
    refused = httpx.get(server.url + "/stats", headers={"X-Request-ID": "<script>"}, timeout=30)
    assert refused.status_code == 401
    assert len(refused.headers["x-request-id"]) == 32, "a client's odd id is replaced"
    text = httpx.get(server.url + "/metrics", timeout=30).text
    assert 'kgp_requests_total{endpoint="/retrieve",method="POST",status="200"}' in text
    assert 'kgp_retrieval_stage_seconds_count{stage="total"}' in text
    assert 'kgp_request_seconds_bucket{endpoint="/retrieve",le="60.0"}' in text
    assert re.search(r'kgp_graph_nodes\{label="Passage"\} [1-9]', text)
    assert "kgp_vector_index_entries" in text and "kgp_encoder_loaded 1.0" in text
    assert "egypt" not in text.lower() and "nepal" not in text.lower(), "counts only"
    ready = httpx.get(server.url + "/ready", timeout=60)
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["encoder"] == "loaded" and ready.json()["passages"] > 0
    audited = server.get("/audit?key=alice&action=retrieve", "root").json()
    assert audited[-1]["request_id"] == "trace-me-42"


def metric_values(server: Server) -> dict[str, float]:
    """``/metrics`` as {name with labels: value}."""
    text = httpx.get(server.url + "/metrics", timeout=30).text
    return {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def test_the_servers_own_messages_as_json_lines(tmp_path: Path) -> None:
    """``KGP_LOG_FORMAT=json``: each message kgp serve writes is one JSON object (time, level,
    message, the request id of the request it is about, none at start)."""
    with serving(tmp_path / "kb", env={"KGP_LOG_FORMAT": "json"}) as served:
        assert httpx.get(served.url + "/ready", timeout=60).status_code == 200
    lines = [json.loads(line) for line in served.log.splitlines() if line.startswith("{")]
    assert lines and all({"time", "level", "message", "request_id"} <= set(e) for e in lines)
    assert any("no API keys: serving on 127.0.0.1" in e["message"] for e in lines)
    assert all(e["level"] == "info" and e["request_id"] is None for e in lines)


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ("{not json", 422, "JSON decode error"),
        ({"question": "x", "colour": "red"}, 422, "colour: Extra inputs are not permitted"),
        ({"question": "x", "k": 0}, 422, "k: Input should be greater than or equal to 1"),
        ({"k": 3}, 422, "question: Field required"),
        ({"question": "x", "scorer": "nope"}, 400, "nope"),
        ({"question": "x", "save_trace": True, "k": 1}, 422, "only /retrieve saves traces"),
    ],
)
def test_bad_input_is_a_json_error_naming_the_problem(
    server: Server, body: object, status: int, error: str
) -> None:
    path = "/ask" if isinstance(body, dict) and body.get("save_trace") else "/retrieve"
    content = body if isinstance(body, str) else json.dumps(body)
    done = httpx.post(
        server.url + path,
        content=content,
        headers={**auth(server.keys["bob"]), "Content-Type": "application/json"},
        timeout=60,
    )
    assert done.status_code == status, done.text
    assert error in done.json()["error"] and "Traceback" not in done.text


def test_the_openapi_schema_describes_every_answer(server: Server) -> None:
    schema = server.get("/openapi.json").json()
    paths = schema["paths"]
    assert {"/retrieve", "/ask", "/documents", "/stats", "/traces", "/health"} <= set(paths)
    for path, methods in paths.items():
        for method, spec in methods.items():
            if path in ("/metrics", "/ready"):  # Prometheus' text; the checks by name
                continue
            content = spec["responses"]["200"]["content"]["application/json"]
            assert content["schema"], f"{method.upper()} {path} has no reply model"
    models = schema["components"]["schemas"]
    assert {"Retrieved", "RetrievedPassage", "Answer", "Uploaded", "Trace"} <= set(models)
    assert "text/event-stream" in paths["/ask"]["post"]["responses"]["200"]["content"]
    passage = models["RetrievedPassage"]["properties"]
    assert {"id", "text", "score", "document", "path", "hop"} <= set(passage)


def test_without_keys_only_loopback(tmp_path: Path) -> None:
    done = run_kgp("--data-dir", str(tmp_path / "kb"), "serve", "--host", "0.0.0.0")
    assert done.returncode == 1 and "loopback address only" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    bad = tmp_path / "keys.toml"
    bad.write_text('[keys.x]\nhash = "plain"\ngroups = ["hr"]\n')
    done = run_kgp("--data-dir", str(tmp_path / "kb"), "serve", "--keys", str(bad))
    assert done.returncode == 1 and "keys.x: hash is not one kgp key wrote" in done.stderr
    assert os.environ.get("KGP_SERVE_KEYS") is None


def test_without_keys_requests_read_as_kgp_groups_and_only_the_operator_writes(
    tmp_path: Path, encoder: Encoder
) -> None:
    folder = write_corpus(tmp_path / "docs")
    (folder / ACCESS_FILE).write_text('[groups]\n"cities/*" = ["hr"]\n')
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
    with serving(tmp_path / "kb", env={"KGP_GROUPS": "hr"}) as served:
        assert {d["id"] for d in served.get("/documents").json()} == HR
        refused = served.upload("", ("note.txt", b"A note that must not be kept."))
        assert refused.status_code == 403 and "may not upload" in refused.json()["error"]
        removing = httpx.delete(served.url + "/documents/cities/egypt.txt", timeout=30)
        assert removing.status_code == 403
    environment = {k: v for k, v in os.environ.items() if k != "KGP_GROUPS"}
    with serving(tmp_path / "kb", env=environment) as served:  # the operator: default groups
        added = served.upload("", ("note.txt", b"Ferries to Kom Ombo leave at dawn.")).json()
        assert added["added"] == ["upload:local/note.txt"]
        documents = {d["id"]: d for d in served.get("/documents").json()}
        assert documents["upload:local/note.txt"]["groups"] == ["public"] and HR.isdisjoint(
            documents
        )
        assert documents["upload:local/note.txt"]["passages"] == 1
        removed = httpx.delete(served.url + "/documents/upload:local/note.txt", timeout=30)
        assert removed.status_code == 200 and removed.json()["removed"] is True


def test_uploads_go_through_the_sync_with_the_keys_upload_groups(server: Server) -> None:
    note = b"The Aswan ferry timetable changes in October. Night ferries stop at Kom Ombo."
    broken = b"%PDF-1.7 this is not really a PDF"
    before = metric_values(server)
    done = server.upload("alice", ("ferries.txt", note), ("broken.pdf", broken))
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["added"] == ["upload:alice/ferries.txt"]
    assert [s["path"] for s in body["skipped"]] == ["upload:alice/broken.pdf"]
    assert str(server.data_dir) not in done.text, "no server path in the reasons"
    after = metric_values(server)  # (other tests may write meanwhile: at least these)
    assert (
        after['kgp_documents_written_total{change="added"}']
        >= before.get('kgp_documents_written_total{change="added"}', 0) + 1
    )
    assert after['kgp_documents_written_total{change="skipped"}'] >= 1
    assert after["kgp_passages_written_total"] >= 1
    assert after['kgp_write_seconds_count{kind="upload"}'] >= 1
    assert after["kgp_writes_waiting"] >= 0
    again = server.upload("alice", ("ferries.txt", note)).json()
    assert again["unchanged"] == ["upload:alice/ferries.txt"]
    documents = {d["id"]: d["groups"] for d in server.get("/documents", "alice").json()}
    assert documents["upload:alice/ferries.txt"] == ["hr"]
    assert "upload:alice/ferries.txt" not in {
        d["id"] for d in server.get("/documents", "bob").json()
    }
    found = server.post("/retrieve", {"question": "When do night ferries stop?", "k": 3}, "alice")
    assert "upload:alice/ferries.txt" in {p["document"]["id"] for p in found.json()["passages"]}


def test_an_upload_may_choose_among_the_keys_own_groups(server: Server, tmp_path: Path) -> None:
    file = tmp_path / "rota.md"
    file.write_text("# Rota\n\nThe night shift at the Aswan depot starts at ten.\n")
    before = server.get("/documents", "root").json()
    with kgp.connect(server.url, api_key=server.keys["dana"]) as dana:
        with pytest.raises(ConfigurationError, match="422 groups: upload groups finance, staff"):
            dana.add(file, groups=["staff", "finance"])
        assert server.get("/documents", "root").json() == before, "nothing written"
        assert dana.add(file, groups=["staff"]).added == ["upload:dana/rota.md"]
        mine = {d.id: d.groups for d in dana.documents()}
        assert mine["upload:dana/rota.md"] == ("staff",)
        assert "upload:dana/rota.md" not in {
            d["id"] for d in server.get("/documents", "alice").json()
        }
        with pytest.raises(AccessDeniedError, match="changing a document's groups needs the admin"):
            dana.add(file)  # the key's own upload groups, hr: a regrouping
        assert {d.id: d.groups for d in dana.documents()}["upload:dana/rota.md"] == ("staff",)
    regrouped = httpx.patch(
        server.url + "/documents/upload:dana/rota.md",
        json={"groups": ["hr"]},
        headers=auth(server.keys["root"]),
    )
    assert regrouped.status_code == 200, regrouped.text
    assert "upload:dana/rota.md" in {d["id"] for d in server.get("/documents", "alice").json()}
    refused = httpx.patch(
        server.url + "/documents/cities/egypt.txt",
        json={"groups": ["staff"]},
        headers=auth(server.keys["dana"]),
    )
    assert refused.status_code == 403 and "needs the admin view" in refused.json()["error"]
    with kgp.connect(server.url, api_key=server.keys["dana"]) as dana:
        assert dana.remove("upload:dana/rota.md") is True  # its own upload
    assert not (server.data_dir / "uploads" / "dana" / "rota.md").exists(), "its file too"


@pytest.mark.parametrize(
    ("name", "size", "status", "error"),
    [
        ("../../etc/passwd", 10, 422, "not a plain file name"),
        (".env", 10, 422, "not a plain file name"),
        ("tool.exe", 10, 415, "kgp reads"),
        ("big.txt", 600_000, 413, "over the 0.5 MB limit"),
    ],
)
def test_a_refused_upload_writes_nothing(
    server: Server, name: str, size: int, status: int, error: str
) -> None:
    before = server.get("/documents", "root").json()
    fine = ("fine.txt", b"A fine file that must not be kept when another is refused.")
    done = server.upload("alice", fine, (name, b"x" * size))
    assert done.status_code == status, done.text
    assert error in done.json()["error"] and "Traceback" not in done.text
    assert server.get("/documents", "root").json() == before
    folder = server.data_dir / "uploads" / "alice"
    assert not (folder / "fine.txt").exists() and not list(folder.glob(".upload-*"))


def test_a_key_without_upload_may_not_upload(server: Server) -> None:
    done = server.upload("bob", ("x.txt", b"hello there"))
    assert done.status_code == 403 and "may not upload" in done.json()["error"]


def test_the_remote_client_has_the_methods_and_types_of_open(
    server: Server, tmp_path: Path
) -> None:
    """kgp.connect gives what kgp.open gives: an application switches by changing one line."""
    from kgp.agents.reader import Answer
    from kgp.agents.results import Retrieval, RetrievedPassage
    from kgp.ingest.report import SyncReport
    from kgp.stores.model import DocumentSummary, GraphCounts

    file = tmp_path / "ferry-fares.md"
    file.write_text("# Fares\n\nA night ferry ticket from Aswan costs forty pounds.\n")
    with kgp.connect(server.url, api_key=server.keys["alice"]) as kg:
        result = kg.retrieve("What is the capital of Nepal?", 3)
        assert isinstance(result, Retrieval) and isinstance(result.passages[0], RetrievedPassage)
        assert {p.document["id"] for p in result.passages} <= HR | {"upload:alice/ferries.txt"}
        report = kg.add(file)
        assert isinstance(report, SyncReport) and report.added == ["upload:alice/ferry-fares.md"]
        documents = kg.documents()
        assert all(isinstance(d, DocumentSummary) for d in documents)
        assert "upload:alice/ferry-fares.md" in {d.id for d in documents}
        assert isinstance(kg.stats(), GraphCounts)
        answer = kg.ask("How much is a night ferry ticket?")
        assert isinstance(answer, Answer) and answer.answer and answer.cited
        assert all(isinstance(p, RetrievedPassage) for p in answer.passages)
        with pytest.raises(AccessDeniedError, match="403 key 'alice' may remove only what it"):
            kg.remove("cities/egypt.txt")
    with kgp.connect(server.url, api_key=server.keys["root"]) as admin:
        assert admin.remove("upload:alice/ferry-fares.md") is True
        assert admin.remove("upload:alice/ferry-fares.md") is False, "as kg.remove: none left"
    with (
        kgp.connect(server.url, api_key="kgp_wrong") as stranger,
        pytest.raises(AccessDeniedError, match="401 a valid API key is needed"),
    ):
        stranger.stats()


def test_a_document_id_with_a_space_and_a_hash_is_removed_by_the_clients(
    server: Server, tmp_path: Path
) -> None:
    import asyncio

    names = ["minutes #3.md", "notes ?draft.md"]
    for name in names:
        (tmp_path / name).write_text(f"# Minutes\n\nThe {name} ferry meeting moved to Aswan.\n")
    with kgp.connect(server.url, api_key=server.keys["alice"]) as alice:
        assert alice.add(*(tmp_path / n for n in names)).added == [
            f"upload:alice/{n}" for n in names
        ]
    with kgp.connect(server.url, api_key=server.keys["root"]) as admin:
        assert admin.remove("upload:alice/minutes #3.md") is True

    async def remove() -> bool:
        async with kgp.connect_async(server.url, api_key=server.keys["root"]) as remote:
            return await remote.remove("upload:alice/notes ?draft.md")

    assert asyncio.run(remove()) is True
    left = {d["id"] for d in server.get("/documents", "root").json()}
    assert not left & {f"upload:alice/{n}" for n in names}


def test_the_async_client(server: Server) -> None:
    import asyncio

    async def main() -> tuple[int, int]:
        async with kgp.connect_async(server.url, api_key=server.keys["bob"]) as kg:
            results = await asyncio.gather(
                *(kg.retrieve("Which mountain is the highest?", 4) for _ in range(4))
            )
            return len({tuple(p.id for p in r.passages) for r in results}), len(
                await kg.documents()
            )

    distinct, documents = asyncio.run(main())
    assert distinct == 1 and documents >= 2


def stream_events(server: Server, key: str, body: dict[str, object], **headers: str) -> list:
    """The server-sent events of one streamed /ask, as (name, data)."""
    from kgp.serve.events import read_events

    with httpx.stream(
        "POST",
        server.url + "/ask",
        json=body,
        headers={**auth(server.keys[key]), **headers},
        timeout=60,
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_events(response.iter_lines()))


def test_ask_streams_server_sent_events(server: Server) -> None:
    question = {"question": "What is the capital of Nepal?", "k": 6}
    for body, headers in (
        ({**question, "stream": True}, {}),
        (question, {"Accept": "text/event-stream"}),
    ):
        events = stream_events(server, "alice", body, **headers)
        names = [name for name, _ in events]
        assert names[0] == "evidence" and names[-1] == "answer", names
        assert names.count("token") >= 2 and set(names[1:-1]) == {"token"}
        evidence, answer = events[0][1], events[-1][1]
        assert {p["document"]["id"] for p in evidence["passages"]} <= HR
        reply = "".join(data["text"] for name, data in events if name == "token")
        assert reply.endswith("[1]") and answer["answer"] == reply.removesuffix(" [1]")
        assert answer["cited"] == [evidence["passages"][0]["id"]] and "passages" not in answer
        whole = server.post("/ask", question, "alice").json()
        assert (whole["answer"], whole["cited"]) == (answer["answer"], answer["cited"])
    refused = server.post("/ask", {"question": "x", "stream": "yes please"}, "alice")
    assert refused.status_code == 422 and "stream" in refused.json()["error"]


def test_the_remote_client_streams_the_answer(server: Server) -> None:
    import asyncio

    from kgp.agents.reader import Answer

    with kgp.connect(server.url, api_key=server.keys["bob"]) as kg:
        *pieces, answer = kg.ask_stream("Which mountain is the highest?", 4)
    assert pieces and all(isinstance(p, str) for p in pieces)
    assert isinstance(answer, Answer) and answer.answer and len(answer.passages) == 4
    assert not {p.document["id"] for p in answer.passages} & HR

    async def main() -> list[str | Answer]:
        async with kgp.connect_async(server.url, api_key=server.keys["bob"]) as remote:
            return [item async for item in remote.ask_stream("Which mountain is the highest?", 4)]

    *more, last = asyncio.run(main())
    assert "".join(map(str, more)) == "".join(pieces)
    assert isinstance(last, Answer) and last.cited == answer.cited
    with (
        kgp.connect(server.url, api_key="kgp_wrong") as stranger,
        pytest.raises(AccessDeniedError, match="401"),
    ):
        list(stranger.ask_stream("Which mountain is the highest?"))


def test_streaming_without_a_reader_sends_the_evidence_then_why(tmp_path: Path) -> None:
    from kgp.agents.results import Retrieval
    from kgp.serve.events import answer_events, read_events
    from kgp.settings import Settings

    retrieval = Retrieval("Why?", timings={"total_ms": 1.0})
    text = "".join(answer_events(retrieval, Settings(data_dir=tmp_path)))
    events = list(read_events(text.splitlines()))
    assert [name for name, _ in events] == ["evidence", "answer"]
    assert events[1][1]["answer"] is None and "no reader is configured" in events[1][1]["error"]


def test_the_page_and_its_assets_ship_with_the_package(server: Server) -> None:
    page = httpx.get(server.url + "/", timeout=30)
    assert page.status_code == 200 and "<title>kgp" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("static/app.js", "static/app.css"):
        served = httpx.get(f"{server.url}/{asset}", timeout=30)
        assert served.status_code == 200 and len(served.text) > 1000
        addresses = re.findall(r"https?://[^\s\"'`)]+", served.text)
        assert addresses in ([], ["http://www.w3.org/2000/svg"]), "no CDN, nothing fetched"
    # a path out of the assets' folder, sent as typed (httpx would fold a plain "..")
    for escape in ("%2e%2e/app.py", "..%2fapp.py", "%2e%2e%2f%2e%2e%2fpyproject.toml"):
        outside = httpx.get(f"{server.url}/static/{escape}", timeout=30)
        assert outside.status_code == 404 and "def create_app" not in outside.text, escape


def test_an_unreachable_server_is_one_line() -> None:
    from kgp.errors import StoreUnavailableError

    with (
        kgp.connect(f"http://127.0.0.1:{free_port()}") as kg,
        pytest.raises(StoreUnavailableError, match="cannot reach kgp serve"),
    ):
        kg.stats()


def test_a_long_question_is_cut_with_a_notice_as_in_the_cli(server: Server) -> None:
    done = httpx.post(
        server.url + "/retrieve",
        json={"question": "Which pump " * 90_000, "k": 2},
        headers=auth(server.keys["bob"]),
        timeout=60,
    )
    assert done.status_code == 200, done.text
    assert any("only its first 4,000" in notice for notice in done.json()["notices"])
    (entry,) = server.get("/audit?key=bob&action=retrieve&limit=1", "root").json()
    assert len(entry["question"]) == 4000 and entry["question_chars"] == 990_000
    assert "request" not in entry, "fields an entry lacks are left out, not null"
