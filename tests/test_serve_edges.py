"""``kgp serve``'s edges, tried against a real server process as the security probe did: the key
is checked before any body is read, bodies are capped while they stream, wrong keys are limited
per client, keys take effect without a restart, another site's page cannot write and another
host name is not answered, names and ids with tricky characters are refused, traces survive
the documents they cite, and a store's own error text never reaches a client."""

from __future__ import annotations

import http.server
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import kgp
import pytest
from fastapi.testclient import TestClient
from kgp.errors import StoreError
from kgp.ingest.access import ACCESS_FILE
from kgp.ingest.embedding import Encoder
from kgp.serve.app import create_app
from kgp.serve.keys import read_keys

from tests.corpus_files import write_corpus
from tests.served import Server, auth, make_key, run_kgp, serving

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HR = {"cities/egypt.txt", "cities/nepal.md"}  # the documents only group hr reads
MAX_FILE_MB = 0.05  # the upload cap is 20 of these and 1 MB of form: about 2 MB


def graph(root: Path, encoder: Encoder) -> Path:
    folder = write_corpus(root / "docs")
    (folder / ACCESS_FILE).write_text('[groups]\n"cities/*" = ["hr"]\n')
    with kgp.open(data_dir=root / "kb", loaded_encoder=encoder) as kg:
        kg.sync(folder)
    return root / "kb"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, encoder: Encoder) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("edges")
    data = graph(root, encoder)
    file = root / "keys.toml"
    keys = {"alice": make_key(file, "alice", "hr", "--upload", "hr")}
    keys["root"] = make_key(file, "root", "*")
    with serving(data, keys=file, env={"KGP_MAX_FILE_MB": str(MAX_FILE_MB)}) as served:
        served.keys = keys
        yield served


def raw(server: Server, head: str) -> str:
    """Send a request's head alone (no body) and return the status line that comes back."""
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n")
        return sock.recv(4096).decode("latin-1").splitlines()[0]


def test_the_key_is_checked_from_the_headers_before_any_body_is_read(server: Server) -> None:
    host = server.url.removeprefix("http://")
    for path, kind in (("/documents", "multipart/form-data; boundary=x"), ("/retrieve", "json")):
        head = (
            f"POST {path} HTTP/1.1\nHost: {host}\nContent-Type: {kind}\nContent-Length: 100000000\n"
        )
        assert raw(server, head) == "HTTP/1.1 401 Unauthorized", "answered without the body"
    broken = httpx.post(server.url + "/retrieve", content=b"{not json", timeout=10)
    assert broken.status_code == 401 and "API key" in broken.json()["error"]
    assert not list((server.data_dir / "uploads").glob("*/*")), "nothing written"


def test_bodies_are_capped_while_they_stream(server: Server) -> None:
    host = server.url.removeprefix("http://")
    key = server.keys["alice"]
    head = (
        f"POST /retrieve HTTP/1.1\nHost: {host}\nAuthorization: Bearer {key}\n"
        "Content-Type: application/json\nContent-Length: 100000000\n"
    )
    assert raw(server, head) == "HTTP/1.1 413 Request Entity Too Large"

    def chunks(total: int, first: bytes = b"") -> Iterator[bytes]:
        yield first
        for _ in range(total // 65536):
            yield b"x" * 65536

    streamed = httpx.post(  # no Content-Length: counted as it arrives
        server.url + "/retrieve",
        content=chunks(2 * 1024 * 1024, b'{"question": "'),
        headers={**auth(key), "Content-Type": "application/json"},
        timeout=30,
    )
    assert streamed.status_code == 413 and "at most 1 MB" in streamed.json()["error"]
    before = server.get("/documents", "root").json()
    boundary = "kgpboundary"
    start = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    upload = httpx.post(
        server.url + "/documents",
        content=chunks(4 * 1024 * 1024, start),
        headers={**auth(key), "Content-Type": f"multipart/form-data; boundary={boundary}"},
        timeout=60,
    )
    assert upload.status_code == 413, upload.text
    assert "KGP_MAX_FILE_MB" in upload.json()["error"]
    assert server.get("/documents", "root").json() == before
    assert not list((server.data_dir / "uploads").rglob("big.txt"))
    reader = httpx.post(  # a key that may not upload gets the cap of a question
        server.url + "/documents",
        content=chunks(2 * 1024 * 1024, start),
        headers={
            **auth(server.keys["root"]),
            "Content-Type": f"multipart/form-data; boundary={boundary}",
        },
        timeout=60,
    )
    assert reader.status_code == 413 and "at most 1 MB" in reader.json()["error"]


def test_interactive_docs_are_off_and_the_schema_is_open(server: Server) -> None:
    for path in ("/docs", "/redoc"):
        assert server.get(path, "root").status_code == 404
    assert "/retrieve" in server.get("/openapi.json").json()["paths"]


def test_upload_names_are_normalised_and_tricky_ones_refused(server: Server) -> None:
    for name in ("report\u202etxt.md", "a\u2215b.txt", "notes\u200f.md", "a\uff0fb.txt"):
        refused = server.upload("alice", (name, b"Some text about ferries."))
        assert refused.status_code == 422, (name, refused.text)
        assert "not a plain file name" in refused.json()["error"]
    wide = server.upload("alice", ("\uff4e\uff4f\uff54\uff45.txt", b"Ferries to Edfu run daily."))
    assert wide.status_code == 200 and wide.json()["added"] == ["upload:alice/note.txt"]
    folder = server.data_dir / "uploads" / "alice"
    assert (folder / "note.txt").exists() and oct(folder.stat().st_mode & 0o777) == "0o700"


def test_control_characters_in_ids_and_questions_are_refused_at_the_edge(server: Server) -> None:
    removing = httpx.delete(server.url + "/documents/%00", headers=auth(server.keys["root"]))
    assert removing.status_code == 422 and "control character" in removing.json()["error"]
    asked = server.post("/retrieve", {"question": "ferries\u0000", "save_trace": True}, "alice")
    assert asked.status_code == 422 and "control character" in asked.json()["error"]
    for reply in (removing, asked):
        assert "FalkorDB" not in reply.text and "CYPHER" not in reply.text


def test_a_trace_survives_the_replacement_of_what_it_cites(server: Server) -> None:
    first = b"# Depot\n\nThe Aswan depot's night shift starts at ten."
    assert server.upload("alice", ("depot.md", first)).status_code == 200
    saved = server.post(
        "/retrieve", {"question": "When does the night shift start?", "save_trace": True}, "alice"
    ).json()
    assert server.upload("alice", ("depot.md", first + b" It ends at six.")).status_code == 200
    listed = server.get("/traces", "alice")
    assert listed.status_code == 200, listed.text
    trace = next(t for t in listed.json() if t["id"] == saved["trace"])
    assert any(gone.startswith("upload:alice/depot.md") for gone in trace["gone"])


def test_wrong_keys_are_limited_per_client(tmp_path: Path, encoder: Encoder) -> None:
    file = tmp_path / "keys.toml"
    good = make_key(file, "alice", "hr")
    with serving(graph(tmp_path, encoder), keys=file) as served:
        served.keys = {"alice": good}
        assert served.get("/stats", "alice").status_code == 200  # seen once: a lookup from now on
        statuses = []
        for n in range(12):
            served.keys["wrong"] = "kgp_" + f"{n:02d}" * 21 + "x"
            statuses.append(served.get("/stats", "wrong").status_code)
        assert statuses == [401] * 10 + [429] * 2
        served.keys["garbage"] = "not-a-key"
        assert served.get("/stats", "garbage").status_code == 401  # refused by its shape
        assert served.get("/stats", "alice").status_code == 200, "a known key still reads"
        limited = served.get("/stats", "wrong")
        assert limited.headers["retry-after"] == "60" and "try again" in limited.json()["error"]


def test_one_key_cannot_take_the_server(tmp_path: Path, encoder: Encoder) -> None:
    """Past KGP_SERVE_REQUESTS_PER_MINUTE a key gets 429 with Retry-After, the refusal is in the
    audit trail, and other keys go on; uploads at once are capped per key."""
    file = tmp_path / "keys.toml"
    keys = {"alice": make_key(file, "alice", "hr"), "root": make_key(file, "root", "*")}
    env = {"KGP_SERVE_REQUESTS_PER_MINUTE": "5"}
    with serving(graph(tmp_path, encoder), keys=file, env=env) as served:
        served.keys = keys
        statuses = [served.get("/stats", "alice").status_code for _ in range(7)]
        assert statuses == [200] * 5 + [429] * 2
        busy = served.get("/documents", "alice")
        assert busy.status_code == 429 and 1 <= int(busy.headers["retry-after"]) <= 60
        assert "key 'alice' sent more than 5 requests in a minute" in busy.json()["error"]
        assert served.get("/stats", "root").status_code == 200, "another key goes on"
        trail = served.get("/audit?action=refused", "root").json()
        assert any(e["key"] == "alice" and e["status"] == 429 for e in trail)


def test_a_stalled_body_is_dropped_and_writes_waiting_are_bounded(
    tmp_path: Path, encoder: Encoder
) -> None:
    """A client that sends half an upload and stops holds a write's place in the queue
    (KGP_SERVE_WRITE_QUEUE=1 here) only until its body has not moved for
    KGP_SERVE_BODY_STALL_S: meanwhile another write is 503 with Retry-After and questions go
    on; then the stalled one is 408 and writes are taken again."""
    file = tmp_path / "keys.toml"
    keys = {"alice": make_key(file, "alice", "hr", "--upload", "hr")}
    keys["root"] = make_key(file, "root", "*")
    env = {"KGP_SERVE_WRITE_QUEUE": "1", "KGP_SERVE_BODY_STALL_S": "2"}
    with serving(graph(tmp_path, encoder), keys=file, env=env) as served:
        served.keys = keys
        port = int(served.url.rsplit(":", 1)[1])
        host = served.url.removeprefix("http://")
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(
                (
                    f"POST /documents HTTP/1.1\r\nHost: {host}\r\n"
                    f"Authorization: Bearer {keys['alice']}\r\n"
                    "Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 5000\r\n\r\n"
                    '--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
                ).encode()
            )
            time.sleep(0.3)  # (the upload has its place)
            removal = httpx.delete(
                served.url + "/documents/cities/egypt.txt", headers=auth(keys["root"]), timeout=30
            )
            assert removal.status_code == 503, removal.text
            assert removal.headers["retry-after"] == "10"
            assert "1 writes in progress or waiting" in removal.json()["error"]
            asked = served.post("/retrieve", {"question": "Where is Kathmandu?"}, "alice")
            assert asked.status_code == 200, "questions go on"
            answer = ""  # the server gives up on the body
            while not answer.endswith("}"):
                answer += sock.recv(4096).decode("latin-1")
        assert answer.startswith("HTTP/1.1 408"), answer
        assert "stopped arriving for 2 s" in answer
        removal = httpx.delete(
            served.url + "/documents/cities/egypt.txt", headers=auth(keys["root"]), timeout=30
        )
        assert removal.status_code == 200, removal.text
        assert not list((served.data_dir / "uploads").rglob("a.txt")), "nothing kept"


def test_a_key_has_so_many_uploads_at_once_and_so_many_requests_a_minute() -> None:
    from kgp.serve.edge import KeyLimits

    limits = KeyLimits(per_minute=3, uploads=2, window_s=0.5)
    assert [limits.ask("a") for _ in range(3)] == [0.0] * 3
    assert 0 < limits.ask("a") <= 0.5 and limits.ask("b") == 0.0
    time.sleep(0.55)
    assert limits.ask("a") == 0.0, "a minute (here half a second) later it goes on"
    assert limits.start_upload("a") and limits.start_upload("a")
    assert not limits.start_upload("a") and limits.start_upload("b")
    limits.end_upload("a")
    assert limits.start_upload("a")
    assert KeyLimits(per_minute=0, uploads=1).ask("a") == 0.0, "0: no limit"
    writes = KeyLimits(per_minute=0, uploads=1, writes=2)
    assert writes.start_write() and writes.start_write() and not writes.start_write()
    writes.end_write()
    assert writes.start_write()


def wait_for(check: Callable[[], bool], seconds: float = 10, seen: object = None) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"no effect within the time: {seen}"
        time.sleep(0.5)  # (each wrong key counts against this client's limit)


def test_keys_take_effect_without_a_restart(tmp_path: Path, encoder: Encoder) -> None:
    file = tmp_path / "keys.toml"
    keys = {"bob": make_key(file, "bob", "public")}
    with serving(graph(tmp_path, encoder), keys=file) as served:
        served.keys = keys

        def documents(name: str) -> set[str] | int:
            reply = served.get("/documents", name)
            seen.append((name, reply.status_code))
            return (
                {d["id"] for d in reply.json()} if reply.status_code == 200 else reply.status_code
            )

        seen: list[tuple[str, int]] = []
        public = documents("bob")
        assert public and not HR & public  # type: ignore[operator]
        keys["carol"] = make_key(file, "carol", "hr")
        wait_for(lambda: documents("carol") == HR, seen=seen)
        revoked = run_kgp("key", "carol", "--revoke", "--keys", str(file))
        assert revoked.returncode == 0, revoked.stderr
        wait_for(lambda: documents("carol") == 401, seen=seen)
        file.write_text(file.read_text().replace('groups = ["public"]', 'groups = ["hr"]'))
        wait_for(lambda: documents("bob") == HR, seen=seen)
        file.write_text("[keys.bob\n")  # broken: every key refused until it is mended
        wait_for(lambda: documents("bob") == 503, seen=seen)
        assert "cannot read its keys file" in served.get("/stats", "bob").json()["error"]
        file.write_text("")
        assert make_key(file, "bob2", "public")
        wait_for(lambda: documents("bob") == 401, seen=seen)


def test_a_cross_site_page_cannot_write_and_another_host_is_not_answered(tmp_path: Path) -> None:
    with serving(tmp_path / "kb") as served:
        host = {"Host": "evil.example"}
        assert httpx.get(served.url + "/documents", headers=host).status_code == 400
        origin = {"Origin": "http://localhost:1"}
        sent = httpx.post(
            served.url + "/documents", files={"file": ("a.txt", b"x")}, headers=origin
        )
        assert sent.status_code == 403 and "another site" in sent.json()["error"]
        site = {"Sec-Fetch-Site": "cross-site"}
        removing = httpx.delete(served.url + "/documents/upload:local/a.txt", headers=site)
        assert removing.status_code == 403
        if CHROMIUM is None:
            pytest.skip("no chromium on PATH for the browser half (apt-get install chromium)")
        with attacker_site(served.url) as attacker:
            outcome = in_browser(attacker + "/attack.html")
        assert outcome == "sent", outcome  # the request reached the server, which refused it
        assert served.get("/documents").json() == [], "the attacker's upload was not kept"
        same_site = served.upload("", ("b.txt", b"The operator's own upload."))
        assert same_site.json()["added"] == ["upload:local/b.txt"]


ATTACK = """<!doctype html><script>
const form = new FormData();
form.append("file", new Blob(["Planted by another site."]), "planted.txt");
fetch("%s/documents", {method: "POST", body: form, mode: "no-cors"})
  .then(() => { document.title = "sent"; }, (e) => { document.title = "sent, refused: " + e; });
</script>"""


@contextmanager
def attacker_site(target: str) -> Iterator[str]:
    """Another origin on loopback (localhost, another port) serving a page that posts a file
    to ``target``, as a page on any site a user visits could."""
    page = (ATTACK % target).encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


def in_browser(url: str) -> str:
    """Open ``url`` in headless Chromium and return the page's title once its script is done."""
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(url)
            page.wait_for_function("document.title.startsWith('sent')", timeout=30_000)
            return str(page.title())
        finally:
            browser.close()


def test_a_store_error_reaches_the_client_as_one_kgp_line(
    tmp_path: Path, encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "keys.toml"
    key = make_key(file, "alice", "hr")
    told: list[str] = []
    engine_text = "FalkorDB rejected a query: errMsg: Invalid input at MATCH (d:Document {id: $id})"
    with kgp.open(data_dir=graph(tmp_path, encoder), loaded_encoder=encoder) as kg:
        client = TestClient(create_app(kg, read_keys(file), say=told.append))

        def fails(*args: Any, **kwargs: Any) -> Any:
            raise StoreError(engine_text)

        monkeypatch.setattr(kg.store, "run", fails)
        reply = client.get("/documents", headers=auth(key))
    assert reply.status_code == 503
    assert reply.json() == {"error": "the graph store failed this request; its log says why"}
    assert told == [f"the graph store failed: {engine_text}"], "the log has the engine's words"


def test_key_names_with_dots_and_at_signs_keep_the_file_readable(tmp_path: Path) -> None:
    file = tmp_path / "keys.toml"
    for name in ("bob@example.com", "alice.smith", "carol"):
        make_key(file, name, "hr")
    assert [k.name for k in read_keys(file).keys] == ["bob@example.com", "alice.smith", "carol"]
    again = run_kgp("key", "Carol", "--groups", "hr", "--keys", str(file))
    assert again.returncode == 1 and "exists" in again.stderr, "names differ by more than case"
    revoked = run_kgp("key", "alice.smith", "--revoke", "--keys", str(file))
    assert revoked.returncode == 0, revoked.stderr
    assert [k.name for k in read_keys(file).keys] == ["bob@example.com", "carol"]
