"""The page ``kgp serve`` shows at ``/``, driven in a real headless Chromium (Debian's
``chromium`` package through Playwright; no browser is downloaded): upload the shipped example
documents (one dropped, one chosen from the keyboard), see them listed with their counts, ask the
README's question, watch the answer arrive piece by piece, follow its citation to the evidence,
see the reasoning paths drawn, and remove a document.

``KGP_PAGE_SCREENSHOT=docs/serve-page.png`` keeps the screenshot the test takes, and
``KGP_PAGE_SHOTS=docs`` those of a table in the evidence, of the page at 400 px, of a
document's view and of the graph explorer (each at 1280 and 400 px)."""

from __future__ import annotations

import os
import queue
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm_server import chat_server
from tests.served import Server, run_kgp, serving

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTION = "Which station recorded the most rain, and what does it serve?"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

playwright = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]'")
expect = playwright.expect
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no chromium on PATH (apt-get install chromium; .ci/run does)"
    ),
]


def reply_citing_rain(messages: list[dict[str, str]]) -> str:
    """A reader that answers from the context that mentions the most rain, citing it."""
    numbers = re.findall(r"^(\d+): .*most rain", messages[-1]["content"], flags=re.MULTILINE)
    return f"Cedar Hollow, which serves the northern farms [{numbers[0]}]" if numbers else "?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("page")
    with chat_server(reply_citing_rain) as llm:
        llm.piece_delay = 0.05  # slow enough to see the answer being written
        env = {"KGP_LLM_BASE_URL": llm.url, "KGP_LLM_MODEL": "m"}
        with serving(root / "kb", env=env) as served:
            yield served


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def drop_file(page: Any, path: Path) -> None:
    """Drop a file on the drop zone as a user dragging it from their desktop would."""
    page.evaluate(
        """([name, bytes]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name));
            const zone = document.getElementById("drop");
            for (const type of ["dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true }));
            }
        }""",
        [path.name, list(path.read_bytes())],
    )


def rows(page: Any) -> dict[str, list[str]]:
    cells = page.eval_on_selector_all(
        "#documents tbody tr",
        "rows => rows.map(r => [...r.cells].map(c => c.firstChild.textContent.trim()))",
    )
    return {row[0]: row[1:4] for row in cells}


def test_upload_ask_and_see_the_reasoning_paths(server: Server, browser: Any, tmp_path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    choosers: queue.Queue[Any] = queue.Queue()
    page.on("filechooser", choosers.put)  # listening from the start: the chooser is never missed
    page.goto(server.url + "/")
    expect(page.locator("#documents caption")).to_contain_text("No documents yet")
    assert page.is_hidden("#key-form"), "no keys: no key field"

    # Upload: the PDF dropped, the Markdown chosen with the keyboard (Tab to the zone, Enter).
    drop_file(page, EXAMPLES / "rainfall-2024.pdf")
    page.wait_for_selector("#upload-status.good", timeout=120_000)
    assert "added upload:local/rainfall-2024.pdf" in page.inner_text("#upload-status")
    expect(page.locator("#documents tbody tr")).to_have_count(1)
    page.focus("a.skip")  # the first stop on the page, then Tab, as a keyboard user moves
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "drop"
    page.keyboard.press("Enter")
    for _ in range(300):  # Playwright delivers events while it is called: wait through it
        if not choosers.empty():
            break
        page.wait_for_timeout(100)
    chooser = choosers.get_nowait()
    chooser.set_files([str(EXAMPLES / "stations.md"), str(EXAMPLES / "maintenance.md")])
    expect(page.locator("#documents tbody tr")).to_have_count(3, timeout=120_000)
    listed = rows(page)
    assert listed["upload:local/rainfall-2024.pdf"] == ["2", "1", "7"], "pages, tables, passages"
    assert (
        listed["upload:local/stations.md"][0] == "1"
        and int(listed["upload:local/stations.md"][2]) > 5
    )
    assert "groups: public" in page.locator("#documents tbody tr").first.inner_text()

    # An upload readable by another group only: added, and not listed to this caller (public).
    note = tmp_path / "ops-note.md"
    note.write_text("# Night shift\n\nThe ops team checks the Cedar Hollow pumps at night.\n")
    page.fill("#upload-groups", "ops")
    drop_file(page, note)
    expect(page.locator("#upload-status")).to_have_text("added upload:local/ops-note.md")
    page.fill("#upload-groups", "")
    expect(page.locator("#documents tbody tr")).to_have_count(3)

    # Ask with the keyboard; count how often the answer's text changes while it is written.
    page.evaluate(
        """() => {
            window.writes = 0;
            new MutationObserver(() => window.writes++).observe(
                document.getElementById("answer-text"),
                { childList: true, characterData: true, subtree: true });
        }"""
    )
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_selector("#evidence li")
    page.wait_for_selector("#answer-text:not(.writing) a.cite", timeout=60_000)
    assert page.evaluate("window.writes") >= 5, "the answer arrived piece by piece"
    answer = page.inner_text("#answer-text")
    assert answer.startswith("Cedar Hollow, which serves the northern farms")

    # The citation leads to the evidence that says so.
    citation = page.get_attribute("#answer-text a.cite", "href")
    cited = page.locator(f"{citation}")
    assert "most rain" in cited.inner_text() and "cited" in cited.get_attribute("class")
    evidence = page.locator("#evidence li")
    assert evidence.count() == 10
    first = evidence.first.inner_text()
    assert re.search(r"page \d+ · hop \d+ · score \d\.\d{3}", first), first

    # The reasoning paths: seeds, at least one hop, one circle per passage on a path.
    graph = page.locator("#graph svg")
    assert graph.locator("text.column").all_text_contents()[:2] == ["seeds", "hop 1"]
    nodes = graph.locator("g.node")
    assert nodes.count() >= 10 and graph.locator("path.edge").count() >= 1
    assert graph.locator("g.node.cited").count() == 1
    hops = int(re.search(r"hop (\d+)", cited.inner_text()).group(1))  # type: ignore[union-attr]
    assert graph.locator("path.edge.cited").count() == hops, "the cited passage's path is marked"
    shot = Path(os.environ.get("KGP_PAGE_SCREENSHOT") or tmp_path / "page.png")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 20_000

    # Labels say document and page (a table its number), one number per node: its rank.
    labels = graph.locator("text.label").all_text_contents()
    assert all(
        re.fullmatch(r"\S+ · (p\. \d+|Table [\w.-]+( p\. \d+)?)", label) for label in labels
    ), labels
    assert any("Table 1 p. " in label for label in labels), "the PDF's table is on a path"
    legend = page.locator("#legend li").all_text_contents()
    assert "Annual rainfall report 2024 (upload:local/rainfall-2024.pdf)" in legend
    for width in (1920, 1366, 1024, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        row = [page.locator(f"#{id}").bounding_box()["y"] for id in ("question", "ask-button")]
        assert abs(row[0] - row[1]) < 12, f"the Ask row is one row at {width} px"

    # A table in the evidence is a table: its header, its rows, numbers right-aligned.
    table = page.locator("#evidence table.grid").first
    assert table.locator("thead th").count() >= 2 and table.locator("tbody tr").count() >= 2
    assert "num" in (table.locator("tbody td").last.get_attribute("class") or "")
    table.scroll_into_view_if_needed()
    table_shot = Path(os.environ.get("KGP_PAGE_SHOTS") or tmp_path) / "serve-evidence-table.png"
    page.screenshot(path=str(table_shot))

    # The colours of documents stay as they were when the same question is asked again.
    colours = graph.locator("circle").evaluate_all("cs => cs.map(c => c.getAttribute('fill'))")
    page.press("#question", "Enter")
    page.wait_for_selector("#answer-text:not(.writing) a.cite", timeout=60_000)
    again = page.locator("#graph svg circle").evaluate_all(
        "cs => cs.map(c => c.getAttribute('fill'))"
    )
    assert again == colours

    # At 400 px: one column, nothing wider than the screen (the drawing scrolls in its box).
    page.set_viewport_size({"width": 400, "height": 860})
    page.wait_for_timeout(400)  # (the drawing is made again for its narrower box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    drawn = page.locator("#graph svg").bounding_box()
    assert drawn["width"] <= page.locator("#graph").bounding_box()["width"], "no column hidden"
    page.locator("#answer").scroll_into_view_if_needed()
    narrow_shot = Path(os.environ.get("KGP_PAGE_SHOTS") or tmp_path) / "serve-page-400.png"
    page.screenshot(path=str(narrow_shot))
    page.set_viewport_size({"width": 1280, "height": 900})
    graph = page.locator("#graph svg")

    hop = graph.locator("g.node", has=page.locator("text", has_text=re.compile(r"^\d+$"))).last
    hop.focus()
    page.keyboard.press("Enter")  # a node leads to its evidence, from the keyboard too
    focused = page.evaluate("document.activeElement.id")
    assert focused.startswith("evidence-") and page.locator(f"#{focused}").get_attribute(
        "data-id"
    ) == hop.get_attribute("data-id")

    # The evidence's document opens as kgp holds it, at the passage; Find narrows it down.
    table_item = page.locator("#evidence li", has=page.locator("table.grid")).first
    table_item.locator("a.doc-link").click()
    expect(page.locator("#reader")).to_be_visible()
    assert page.is_hidden("#asking")
    assert page.inner_text("#reader-title") == (
        "Annual rainfall report 2024 (upload:local/rainfall-2024.pdf)"
    )
    meta = page.inner_text("#reader-meta")
    assert "2 pages, 6 passages, 1 table" in meta and "readable by public" in meta, meta
    lit = page.locator("#reader-pages .lit")
    assert lit.count() == 1 and lit.locator("table.grid").count() == 1, "opened at the table"
    assert page.locator("#reader-pages h3").all_text_contents() == ["Page 1", "Page 2"]
    page.fill("#reader-find", "cedar hollow")
    expect(page.locator("#reader-found")).to_contain_text("contain it")
    shown = page.locator("#reader-pages .passage:visible").all_inner_texts()
    assert shown and all("cedar hollow" in text.lower() for text in shown)
    reader_shot = Path(os.environ.get("KGP_PAGE_SHOTS") or tmp_path) / "serve-document.png"
    page.fill("#reader-find", "")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(reader_shot))
    page.set_viewport_size({"width": 400, "height": 860})
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    page.evaluate("document.getElementById('reader').scrollIntoView()")
    page.screenshot(path=str(reader_shot.with_name("serve-document-400.png")))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.keyboard.press("Escape")
    expect(page.locator("#asking")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == "question"
    page.locator("#documents a.doc-link", has_text="stations.md").click()  # from the list too
    expect(page.locator("#reader-title")).to_contain_text("upload:local/stations.md")
    page.click("#reader-close")
    expect(page.locator("#asking")).to_be_visible()

    # The graph around the cited passage: its neighbours by kind, explored by keyboard.
    page.locator(f"{citation} a.explore").click()
    expect(page.locator("#explorer")).to_be_visible()
    assert page.inner_text("#explorer-title").startswith("Around upload:local/")
    assert "most rain" in page.inner_text("#explorer-text")
    assert "page 1" in page.inner_text("#explorer-where")
    kinds = page.locator("#explorer-list .kind").all_text_contents()
    assert kinds and any(k.startswith("similar 0.") for k in kinds), kinds
    first = page.locator("#explorer-graph g.node[role=button]:not(.belongs)").first
    target = first.get_attribute("data-id")
    first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#explorer-trail li")).to_have_count(2)
    assert page.locator("#explorer-graph g.node.focus").get_attribute("data-id") == target
    page.uncheck("#explorer input[value=next]")
    page.uncheck("#explorer input[value=keyword]")
    expect(page.locator("#explorer-list .kind", has_text="next in the text")).to_have_count(0)
    expect(page.locator("#explorer-list .kind", has_text="shared keyword")).to_have_count(0)
    assert all(
        k.startswith("similar") for k in page.locator("#explorer-list .kind").all_text_contents()
    )
    page.check("#explorer input[value=next]")
    page.check("#explorer input[value=keyword]")
    page.locator("#explorer-trail a").first.click()  # back along the trail
    expect(page.locator("#explorer-trail li")).to_have_count(1)
    belongs = page.locator("#explorer-graph g.belongs.kind-page")
    assert belongs.get_attribute("aria-label").startswith("Open upload:local/")
    explorer_shot = Path(os.environ.get("KGP_PAGE_SHOTS") or tmp_path) / "serve-explorer.png"
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(explorer_shot))
    page.set_viewport_size({"width": 400, "height": 860})
    page.locator("#explorer-list button").first.click()  # (a neighbour, from the list)
    expect(page.locator("#explorer-trail li")).to_have_count(2)
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.scrollWidth") <= 400
    page.screenshot(path=str(explorer_shot.with_name("serve-explorer-400.png")))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.locator("#explorer-graph g.belongs.kind-page").focus()
    page.keyboard.press("Enter")  # the page it belongs to: the document opens there
    expect(page.locator("#reader")).to_be_visible()
    assert page.locator("#reader-pages .lit").count() == 1
    page.keyboard.press("Escape")
    expect(page.locator("#asking")).to_be_visible()

    # A question saved through the API; removing asks first, then the document is gone from
    # the list, and the saved question is listed, opened again with what it retrieved.
    expect(page.locator("#traces-empty")).to_be_visible()
    saved = server.post("/retrieve", {"question": QUESTION, "k": 5, "save_trace": True})
    assert saved.status_code == 200, saved.text
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("button[aria-label='Remove upload:local/maintenance.md']")
    expect(page.locator("#documents tbody tr")).to_have_count(2)
    assert "Removed upload:local/maintenance.md" in page.inner_text("#upload-status")
    expect(page.locator("#traces li")).to_have_count(1)
    assert page.is_hidden("#traces-empty")
    page.locator("#traces li a").click()
    expect(page.locator("#ask-status")).to_contain_text("Saved ")
    assert page.input_value("#question") == QUESTION
    kept = page.locator("#evidence li").count()
    assert 1 <= kept <= 5 and page.locator("#graph svg g.node").count() >= kept
    assert page.is_hidden("#answer")
    assert problems == [], problems
    page.close()


def test_a_refused_upload_is_said_on_the_page(server: Server, browser: Any, tmp_path: Path):
    page = browser.new_page()
    page.goto(server.url + "/")
    expect(page.locator("#documents caption")).not_to_have_text("Loading…")
    before = rows(page)
    bad = tmp_path / "tool.exe"
    bad.write_bytes(b"MZ not a document")
    drop_file(page, bad)
    page.wait_for_selector("#upload-status.bad")
    status = page.inner_text("#upload-status")
    assert status.startswith("Upload refused:") and "kgp reads" in status
    assert rows(page) == before, "nothing written"
    page.close()


def test_with_keys_the_page_asks_for_one(browser: Any, tmp_path: Path) -> None:
    keys = tmp_path / "keys.toml"
    made = run_kgp("key", "carol", "--groups", "public", "--keys", str(keys))
    assert made.returncode == 0, made.stderr
    with serving(tmp_path / "kb", keys=keys) as served:
        page = browser.new_page()
        page.goto(served.url + "/")
        page.wait_for_selector("#key-form:not([hidden])")
        assert "needs an API key" in page.inner_text("#who")
        assert page.evaluate("document.activeElement.id") == "key"
        page.fill("#key", "kgp_wrong")
        page.press("#key", "Enter")
        expect(page.locator("#who")).to_contain_text("That key was not accepted")
        page.fill("#key", made.stdout.strip())
        page.press("#key", "Enter")
        expect(page.locator("#who")).to_have_text("0 documents, 0 passages readable with this key")
        expect(page.locator("#documents caption")).to_contain_text("No documents yet")
        page.close()
