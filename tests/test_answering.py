"""Model scorers (mdr, t5, llm), structural questions, the reader, `kgp ask`, saved traces, and
their bad inputs; the LLM is a local HTTP server speaking the chat-completions protocol."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from kgp.agents.reader import Answer, answer_prompt, fit_context, parse_citations
from kgp.agents.results import RetrievedPassage
from kgp.agents.structural import Reference, caption_number, detect, title_phrase
from kgp.client import KnowledgeGraph
from kgp.errors import ConfigurationError, LlmError, ModelMissingError
from kgp.ingest.encoder import resolve_encoder

from tests.llm_server import ChatServer, chat_server
from tests.test_cli import kgp as run_kgp
from tests.tiny_models import build_tiny_t5

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTION = "Which station recorded the most rain, and what does it serve?"


def graph_settings(kg: KnowledgeGraph, **overrides: object) -> KnowledgeGraph:
    """The same store and encoder under other settings (a second client on the graph)."""
    other = KnowledgeGraph(settings=kg.settings.model_copy(update=overrides), store=kg.store)
    other._encoder = kg._encoder
    return other


def reply_citing(messages: list[dict[str, str]]) -> str:
    """A reader that answers from the context that mentions the most rain, citing it."""
    prompt = messages[-1]["content"]
    if prompt.startswith("Which page numbers"):
        return 'The question means {"pages": [2], "tables": []}'
    if prompt.startswith("Instruction: What evidence"):
        return "Cedar Hollow station serves the northern farms."
    numbers = re.findall(r"^(\d+): .*most rain", prompt, flags=re.MULTILINE)
    return f"Cedar Hollow [{numbers[0]}]" if numbers else "unknown"


@pytest.fixture
def llm() -> Iterator[ChatServer]:
    with chat_server(reply_citing) as server:
        yield server


# -- scorers ----------------------------------------------------------------------------------


def test_mdr_scorer_with_the_base_encoder(kg: KnowledgeGraph) -> None:
    path = str(resolve_encoder("all-MiniLM-L6-v2"))
    mdr = graph_settings(kg, mdr_model=path)
    result = mdr.retrieve(QUESTION, k=12, scorer="mdr")
    assert len(result.passages) == 12 and any(p.hop > 0 for p in result.passages)
    texts = " ".join(p.text for p in result.passages)
    assert "Cedar Hollow recorded the most rain" in texts


def test_the_shipped_model_scores_hops_on_a_graph_of_another_encoder(kg: KnowledgeGraph) -> None:
    """The example graph is built with the base MiniLM: without KGP_MDR_MODEL, the mdr scorer
    is kgp's shipped model, encoding the candidates itself (the graph's vectors are not its)."""
    assert kg.encoder.model_name == "all-MiniLM-L6-v2"
    retriever = kg.retriever(scorer="mdr")
    assert retriever.scorer.vectors is None  # type: ignore[attr-defined]
    result = retriever.retrieve(QUESTION, 12)
    assert len(result.passages) == 12 and any(p.hop > 0 for p in result.passages)
    assert "Cedar Hollow recorded the most rain" in " ".join(p.text for p in result.passages)


def test_t5_scorer_with_a_tiny_model(kg: KnowledgeGraph, tmp_path: Path) -> None:
    words = [QUESTION, "Cedar Hollow station serves the northern farms and the rain gauges."]
    folder = build_tiny_t5(tmp_path / "t5", words)
    t5 = graph_settings(kg, t5_model=str(folder), device="cpu")
    result = t5.retrieve(QUESTION, k=12, scorer="t5")
    assert len(result.passages) == 12
    hopped = [p for p in result.passages if p.hop > 0]
    assert hopped and all(p.path[-1] == p.id for p in hopped)


def test_llm_scorer_follows_the_generated_evidence(kg: KnowledgeGraph, llm: ChatServer) -> None:
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="test-model")
    result = client.retrieve(QUESTION, k=12, scorer="llm")
    evidence = [r for r in llm.requests if "What evidence" in r["messages"][-1]["content"]]
    assert evidence, "the llm scorer asked the model for the next evidence"
    assert evidence[0]["model"] == "test-model"
    hopped = {p.text for p in result.passages if p.hop > 0}
    assert "Cedar Hollow station serves the northern farms." in hopped


@pytest.mark.parametrize(
    ("overrides", "scorer", "error", "message"),
    [
        ({"mdr_model": "/no/such/model"}, "mdr", ModelMissingError, "no model at /no/such/model"),
        ({"t5_model": "/no/such/t5"}, "t5", ModelMissingError, "no model at /no/such/t5"),
        ({}, "t5", ConfigurationError, "set KGP_T5_MODEL"),
        ({}, "llm", ConfigurationError, "set KGP_LLM_BASE_URL and KGP_LLM_MODEL"),
        ({}, "oracle", ConfigurationError, "unknown scorer 'oracle'"),
    ],
)
def test_missing_models_are_one_line_errors(
    kg: KnowledgeGraph, overrides: dict[str, str], scorer: str, error: type, message: str
) -> None:
    before = kg.stats()
    with pytest.raises(error, match=re.escape(message)) as caught:
        graph_settings(kg, **overrides).retrieve(QUESTION, scorer=scorer)
    assert "\n" not in str(caught.value)
    assert kg.stats() == before


def test_tfidf_seeder(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("pump bearings replaced", k=3, seeder="tfidf")
    assert result.passages and "bearing" in result.passages[0].text.lower()


# -- structural questions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "pages", "tables"),
    [
        ("In Table 3, which station had the most rain?", (), (3,)),
        ("Summarise page 5", (5,), ()),
        ("What is the difference between page 1 and page 2?", (1, 2), ()),
        ("What do pages 3-5 say?", (3, 4, 5), ()),
        ("What does the second table show?", (), (2,)),
        ("What does the 3rd table show?", (), (3,)),
        ("Summarise page five", (5,), ()),
        ("Who manages Alder Creek?", (), ()),
        ("Which pages mention pumps?", (), ()),
    ],
)
def test_detect_references(question: str, pages: tuple[int, ...], tables: tuple[int, ...]) -> None:
    assert detect(question) == Reference(pages, tables)


@pytest.mark.parametrize(
    ("question", "reference"),
    [
        ("What does Table: 3 say?", Reference(tables=(3,))),
        ("What does Table 6.1 show?", Reference(tables=("6.1",))),
        ("In TABLE IV, which source is the largest?", Reference(tables=(4,))),
        ("Compare table iv with Table A.2.", Reference(tables=(4, "A.2"))),
        ("What do Tables I and II list?", Reference(tables=(1, 2))),
        ("What do the tables of budget-2025.pdf show?", Reference(all_tables=True)),
        ("List budget-2025.pdf's tables", Reference(all_tables=True)),
        ("Which table in budget-2025.pdf lists the loan?", Reference(all_tables=True)),
        ("Is the table I need in the appendix?", Reference()),
        ("What does the table of contents list?", Reference()),
        ("Where is table tennis played?", Reference()),
    ],
)
def test_detect_table_numbers_as_printed(question: str, reference: Reference) -> None:
    assert detect(question) == reference


@pytest.mark.parametrize(
    ("caption", "number"),
    [
        ("Table 2.1: Operating budget by cost line", "2.1"),
        ("TABLE IV: Funding sources 2025", 4),
        ("Table: 5 Public Health Outlay 2012-13", 5),
        ("Table 1.", 1),
        ("Table A.2 Appendix figures", "A.2"),
        ("Table of figures", None),
        ("Tableau de bord", None),
    ],
)
def test_caption_numbers(caption: str, number: int | str | None) -> None:
    assert caption_number(caption) == number


def test_table_question_gets_the_table_and_content(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("In Table 1, which station had the most pump hours?", k=8)
    first = result.passages[0]
    assert first.kind == "table" and "| Birchfield | 764 |" in first.text
    assert first.document["path"] == "rainfall-2024.pdf"
    assert result.structure == {
        "pages": [],
        "tables": [1],
        "all_tables": False,
        "documents": ["rainfall-2024.pdf"],
        "notice": None,
    }
    assert any(p.kind == "passage" for p in result.passages[1:]), "content is mixed in"
    assert not [p for p in result.passages if p.table == first.id], "not repeated by its rows"


def test_a_named_documents_table_one_is_never_another_documents(kg: KnowledgeGraph) -> None:
    # rainfall-2024.pdf has a Table 1 too, and it is the answer when no document is named
    result = kg.retrieve("In Table 1 of budget-2025.pdf, what will electricity cost in 2025?", k=6)
    assert result.structure == {
        "pages": [],
        "tables": [1],
        "all_tables": False,
        "documents": ["budget-2025.pdf"],
        "notice": None,
    }
    first = result.passages[0]
    assert first.id == "budget-2025.pdf#page=1&table=0" and "| Electricity | 1,240 |" in first.text
    assert [p.kind for p in result.passages].count("table") == 1
    assert {p.document["path"] for p in result.passages} == {"budget-2025.pdf"}


BUDGET_TABLES = [
    "budget-2025.pdf#page=1&table=0",  # "Table 2.1: Operating budget by cost line"
    "budget-2025.pdf#page=1&table=1",  # "Table 2.2: Capital projects"
    "budget-2025.pdf#page=2&table=0",  # "TABLE IV: Funding sources 2025"
]


@pytest.mark.parametrize(
    ("question", "table"),
    [
        ("What does Table 2.1 of budget-2025.pdf list?", BUDGET_TABLES[0]),
        ("TABLE IV of budget-2025.pdf: what share of the money is the loan?", BUDGET_TABLES[2]),
        ("Table 4 of budget-2025.pdf: what share of the money is the loan?", BUDGET_TABLES[2]),
        ("Which projects does Table 2.2 list?", BUDGET_TABLES[1]),  # the one document with it
        ("What does Table 2 of budget-2025.pdf list?", BUDGET_TABLES[1]),  # no caption: the 2nd
        ("What does Table 3 of budget-2025.pdf list?", BUDGET_TABLES[2]),
    ],
)
def test_a_table_is_found_by_its_captions_number(
    kg: KnowledgeGraph, question: str, table: str
) -> None:
    result = kg.retrieve(question, k=5)
    assert [p.id for p in result.passages if p.kind == "table"] == [table]
    assert result.passages[0].id == table and result.notices == []


def test_a_dotted_number_names_only_the_table_captioned_with_it(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("What does Table 6.1 of budget-2025.pdf show?", k=5)
    assert result.notices == ["budget-2025.pdf has no table 6.1 (it has 3 tables)"]
    assert not [p for p in result.passages if p.kind == "table"]
    other = kg.retrieve("What does Table 2.1 of rainfall-2024.pdf show?", k=5)
    assert other.notices == ["rainfall-2024.pdf has no table 2.1 (it has 1 table)"]
    assert not [p for p in other.passages if p.kind == "table"], "never its first table instead"


def test_the_tables_of_a_named_document_are_all_of_them(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("What do the tables of budget-2025.pdf show?", k=6)
    assert result.structure == {
        "pages": [],
        "tables": [],
        "all_tables": True,
        "documents": ["budget-2025.pdf"],
        "notice": None,
    }
    assert [p.id for p in result.passages[:3]] == BUDGET_TABLES
    assert all(p.kind == "table" and p.score == 1.0 for p in result.passages[:3])
    assert "table-rows" not in {p.kind for p in result.passages}, "tables given whole, once"
    none = kg.retrieve("What do the tables of maintenance.md say?", k=3)
    assert none.notices == ["maintenance.md has no tables"] and none.structure
    assert none.structure["documents"] == ["maintenance.md"]
    unnamed = kg.retrieve("What is in the tables of the report?", k=3)
    assert unnamed.structure is None, "every table of what? Without a name, a content question"


def test_a_named_documents_passages_lead_the_content(kg: KnowledgeGraph) -> None:
    question = "What does page 3 of budget-2025.pdf say about the pumps?"
    result = kg.retrieve(question, k=20)
    assert result.notices == ["budget-2025.pdf has no page 3 (it has 2 pages)"]
    stored = kg.store.document_passages(["budget-2025.pdf"])
    query = kg.encoder.encode([question])[0]
    similarity = {p.id: float(np.dot(query, p.embedding)) for p in stored}
    expected = sorted(similarity, key=lambda pid: (-similarity[pid], pid))
    lead = [p.id for p in result.passages[: len(expected)]]
    assert lead == expected, "every passage of the named document first, by similarity"
    assert [p.score for p in result.passages[: len(expected)]] == pytest.approx(
        [similarity[pid] for pid in expected], abs=1e-5
    )
    rest = result.passages[len(expected) :]
    assert rest and all(p.document["path"] != "budget-2025.pdf" for p in rest)
    by_name = [p for p in result.passages if p.path[0] == "budget-2025.pdf"]
    assert by_name and all(p.path == ["budget-2025.pdf", p.id] and p.hop == 0 for p in by_name)


def test_page_question_names_the_document(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("Summarise page 1 of the maintenance log", k=30)
    assert result.structure and result.structure["documents"] == ["maintenance.md"]
    structural = [p for p in result.passages if p.path[0] == "maintenance.md#page=1"]
    assert structural and all(p.document["id"] == "maintenance.md" for p in structural)
    ordinals = [int(p.id.rsplit("=", 1)[1]) for p in structural if p.kind == "passage"]
    assert ordinals == sorted(ordinals), "a page's passages come in reading order"


def test_a_phrase_of_a_title_finds_the_document_before_content_rank(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("What does page 2 of the rainfall report plan for 2025?", k=5)
    assert result.structure and result.structure["documents"] == ["rainfall-2024.pdf"]
    assert result.passages[0].path[0] == "rainfall-2024.pdf#page=2"
    summary = next(d for d in kg.store.list_documents() if d.id == "rainfall-2024.pdf")
    assert title_phrase("page 2 of the rainfall report", summary) == 2
    assert title_phrase("page 2 of the report", summary) == 0, "one word is not a name"
    assert title_phrase("the 2024 report on rainfall", summary) == 0, "words, not a run"


def test_the_model_resolves_references_the_rules_miss(kg: KnowledgeGraph, llm: ChatServer) -> None:
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m")
    result = client.retrieve("What does the final page of the rainfall report plan?", k=6)
    assert result.structure == {
        "pages": [2],
        "tables": [],
        "all_tables": False,
        "documents": ["rainfall-2024.pdf"],
        "notice": None,
    }
    assert result.passages[0].path[0] == "rainfall-2024.pdf#page=2"
    asked = [r for r in llm.requests if r["messages"][-1]["content"].startswith("Which page")]
    assert len(asked) == 1
    client.retrieve("Who manages Alder Creek?", k=3)
    assert len(llm.requests) == 1, "content questions never ask the model"
    llm.script = [("status", 500)] * 10
    failed = graph_settings(client, llm_retries=0).retrieve("What is on the final page?", k=3)
    assert failed.structure is None and len(failed.passages) == 3


def test_reference_to_a_missing_page_falls_back_to_content(kg: KnowledgeGraph) -> None:
    result = kg.retrieve("What does page 99 say about Cedar Hollow?", k=5)
    assert result.structure == {
        "pages": [99],
        "tables": [],
        "all_tables": False,
        "documents": [],
        "notice": "no document has page 99",
    }
    assert result.notices == ["no document has page 99"]
    assert len(result.passages) == 5 and all(p.kind != "table" for p in result.passages)
    assert all(p.hop > 0 or p.score < 1.0 for p in result.passages), "no page was substituted"


# -- reader -----------------------------------------------------------------------------------


def passage(pid: str, text: str) -> RetrievedPassage:
    return RetrievedPassage(pid, text, 1.0, {"id": "d", "path": "d", "title": "d"}, 1, [pid], 0)


def test_prompt_is_the_papers_listing_with_citations() -> None:
    prompt = answer_prompt("Who?", ["first text", "second text"])
    assert prompt.splitlines() == [
        "Given the following question and contexts, create a final answer to the question.",
        "=====",
        "QUESTION: Who?",
        "=====",
        "CONTEXT:",
        "1: first text",
        "2: second text",
        "=====",
        "QUESTION: Who?",
        "=====",
        "ANSWER: Please answer in less than 6 words. After the answer, cite the numbers of the "
        "contexts you used in square brackets, for example [2][5].",
    ]


def test_citations_and_context_budget() -> None:
    assert parse_citations("Cedar Hollow [2][5, 1] [9]", 5) == ("Cedar Hollow", [2, 5, 1])
    assert parse_citations("no citations", 3) == ("no citations", [])
    passages = [passage(f"p{i}", "x" * 400) for i in range(10)]  # about 100 tokens each
    assert [p.id for p in fit_context(passages, 350)] == ["p0", "p1", "p2"]
    cut = fit_context([passage("big", "y" * 100_000)], 100)
    assert len(cut) == 1 and len(cut[0].text) < 1000


def test_ask_answers_with_cited_passages(kg: KnowledgeGraph, llm: ChatServer) -> None:
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m")
    answer = client.ask(QUESTION, k=10)
    assert answer.error is None and answer.answer == "Cedar Hollow"
    assert len(answer.cited) == 1
    cited = next(p for p in answer.passages if p.id == answer.cited[0])
    assert "most rain" in cited.text
    prompt = llm.requests[-1]["messages"][-1]["content"]
    assert prompt.startswith("Given the following question and contexts")


def test_ask_stream_sends_the_reply_piece_by_piece_then_the_answer(
    kg: KnowledgeGraph, llm: ChatServer
) -> None:
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m")
    items = list(client.ask_stream(QUESTION, k=10))
    *pieces, answer = items
    assert len(pieces) > 1 and all(isinstance(p, str) for p in pieces)
    assert isinstance(answer, Answer) and answer.error is None
    assert re.fullmatch(r"Cedar Hollow \[\d+\]", "".join(pieces)), "the raw reply, marks and all"
    assert llm.requests[-1]["stream"] is True
    whole = client.ask(QUESTION, k=10)
    assert (answer.answer, answer.cited, answer.context) == (
        whole.answer,
        whole.cited,
        whole.context,
    )
    assert "read_ms" in answer.timings


def test_ask_stream_cut_midway_or_without_a_reader_ends_with_the_evidence(
    kg: KnowledgeGraph, llm: ChatServer
) -> None:
    llm.cut_stream = True
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m", llm_retries=0)
    *pieces, answer = client.ask_stream(QUESTION, k=5)
    assert isinstance(answer, Answer) and answer.answer is None and len(answer.passages) == 5
    assert "the reply stopped midway" in str(answer.error)
    assert "Cedar Hollow".startswith("".join(str(p) for p in pieces)), "what came, then the cut"
    assert "Traceback" not in str(answer.error) and "\n" not in str(answer.error)
    (alone,) = kg.ask_stream(QUESTION, k=3)
    assert isinstance(alone, Answer) and alone.answer is None and len(alone.passages) == 3
    assert alone.error == "no reader is configured (set KGP_LLM_BASE_URL and KGP_LLM_MODEL)"


@pytest.mark.slow
def test_reader_retries_rate_limits_and_server_errors(kg: KnowledgeGraph, llm: ChatServer) -> None:
    llm.script = [("status", 429), ("status", 503), ("status", 500)]
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m", llm_retries=3)
    answer = client.ask(QUESTION, k=5)
    assert answer.answer == "Cedar Hollow" and len(llm.requests) == 4


def test_reader_gives_up_with_one_line(kg: KnowledgeGraph, llm: ChatServer) -> None:
    llm.script = [("status", 500)] * 3
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m", llm_retries=2)
    answer = client.ask(QUESTION, k=5)
    assert answer.answer is None and answer.passages, "the evidence is still returned"
    assert answer.error and "failed after 3 tries: HTTP 500" in answer.error
    llm.script = [("status", 401)]
    assert "authentication failed" in str(graph_settings(client).ask(QUESTION, k=3).error)


def test_reader_timeout(kg: KnowledgeGraph, llm: ChatServer) -> None:
    llm.script = [("sleep", 3.0)]
    client = graph_settings(kg, llm_base_url=llm.url, llm_model="m", llm_timeout=0.5, llm_retries=0)
    answer = client.ask(QUESTION, k=3)
    assert answer.answer is None and "timed out (KGP_LLM_TIMEOUT)" in str(answer.error)


def test_unreachable_llm_in_the_scorer_is_an_error(kg: KnowledgeGraph) -> None:
    client = graph_settings(kg, llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_retries=0)
    with pytest.raises(LlmError, match="cannot connect; check KGP_LLM_BASE_URL"):
        client.retrieve(QUESTION, scorer="llm")


def test_ask_without_a_reader_returns_the_evidence(kg: KnowledgeGraph) -> None:
    answer = kg.ask(QUESTION, k=4)
    assert answer.answer is None and len(answer.passages) == 4
    assert answer.error == "no reader is configured (set KGP_LLM_BASE_URL and KGP_LLM_MODEL)"


# -- CLI and traces ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("cli") / "kb"
    done = run_kgp("--data-dir", str(data_dir), "--quiet", "sync", str(EXAMPLES))
    assert done.returncode == 0, done.stderr
    return data_dir


@pytest.mark.slow
def test_cli_ask(synced: Path, llm: ChatServer) -> None:
    env = {"KGP_LLM_BASE_URL": llm.url, "KGP_LLM_MODEL": "m"}
    done = run_kgp("--data-dir", str(synced), "ask", QUESTION, "--k", "6", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Answer: Cedar Hollow\n") and "most rain" in done.stdout
    as_json = json.loads(
        run_kgp("--data-dir", str(synced), "ask", QUESTION, "--json", env=env).stdout
    )
    assert as_json["answer"] == "Cedar Hollow" and as_json["cited"]
    assert set(as_json["cited"]) <= set(as_json["context"])


@pytest.mark.slow
def test_cli_ask_without_or_with_a_broken_reader(synced: Path) -> None:
    done = run_kgp("--data-dir", str(synced), "ask", QUESTION, "--k", "3")
    assert done.returncode == 0 and done.stdout.startswith("Evidence:")
    assert "no reader is configured" in done.stderr
    env = {
        "KGP_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "KGP_LLM_MODEL": "m",
        "KGP_LLM_RETRIES": "0",
    }
    broken = run_kgp("--data-dir", str(synced), "ask", QUESTION, "--k", "3", env=env)
    assert broken.returncode == 1 and broken.stdout.startswith("Evidence:")
    assert broken.stderr.strip().splitlines() == [
        "kgp: error: no answer: language model at http://127.0.0.1:9/v1: cannot connect; "
        "check KGP_LLM_BASE_URL and that the server is running"
    ]


@pytest.mark.slow
def test_save_trace_keeps_the_paths_and_nothing_else_changes(synced: Path) -> None:
    from kgp.stores import FalkorStore

    with FalkorStore(data_dir=synced) as store:
        before = store.counts()
    done = run_kgp(
        "--data-dir", str(synced), "retrieve", QUESTION, "--k", "12", "--save-trace", "--json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    trace = result["trace"]
    assert trace.startswith("trace-")
    steps = {
        (a, b)
        for p in result["passages"]
        if p["hop"] > 0
        for a, b in zip(p["path"], p["path"][1:], strict=False)
    }
    with FalkorStore(data_dir=synced) as store:
        after = store.counts()
        kept = store._execute(
            "MATCH (t:Trace {id: $id})-[r:RETRIEVED]->(p) RETURN p.id AS id, r.rank AS rank "
            "ORDER BY rank",
            {"id": trace},
            write=False,
        )
        stepped = store._execute(
            "MATCH (a)-[s:STEP {trace: $id}]->(b) RETURN a.id AS a, b.id AS b",
            {"id": trace},
            write=False,
        )
    assert [r["id"] for r in kept] == [p["id"] for p in result["passages"]]
    assert {(r["a"], r["b"]) for r in stepped} == steps and steps
    assert after.labels == {**before.labels, "Trace": 1}
    unchanged = {k: v for k, v in after.relationships.items() if k not in ("RETRIEVED", "STEP")}
    assert unchanged == before.relationships
