"""GNN-Ret and RGNN-Ret over the passage graph: the layer of Eq. 3/4 on hand-made graphs, the
store-backed retriever on the example documents (batched queries), the recurrent loop against a
local chat server (self-critique, step limit, malformed and failing replies), fitting α with the
hinge objective, and the seams (client, CLI, kgp eval)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import kgp
import pytest
from kgp.agents.gnn import GnnParams, GnnRetriever, layer, messages
from kgp.agents.gnn_fit import Sample, fit, fit_beta, hinge
from kgp.agents.rgnn import mix
from kgp.errors import ConfigurationError
from kgp.evaluate import evaluate
from kgp.ingest.embedding import Encoder

from tests.llm_server import ChatServer, chat_server
from tests.test_answering import graph_settings
from tests.test_cli import kgp as run_kgp

CHAIN = {"a": {"b"}, "b": {"a", "c"}, "c": {"b"}, "d": set()}


def test_layer_mixes_the_smallest_relevant_distance() -> None:
    h = {"a": 0.1, "b": 0.8, "c": 0.9, "d": 0.2}
    assert messages(h, CHAIN, k=1) == {"b": 0.1}, "only neighbours of the relevant set receive"
    out = layer(h, CHAIN, alpha=0.5, k=1)
    assert out == {"a": 0.1, "b": pytest.approx(0.45), "c": 0.9, "d": 0.2}
    # with K = 3, b (0.8) is relevant too and sends to a and c; a takes min over its relevant nbrs
    out3 = layer(h, CHAIN, alpha=0.5, k=3)
    assert out3["c"] == pytest.approx(0.85) and out3["a"] == pytest.approx(0.45)
    assert layer(h, CHAIN, alpha=1.0, k=3) == h, "alpha 1 is dense retrieval"
    assert layer(h, {}, alpha=0.5, k=3) == h, "isolated passages keep their distance"


def test_params_validate_and_round_trip(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"alphas must be in \[0, 1\]"):
        GnnParams(alphas=(1.5,))
    with pytest.raises(ConfigurationError, match="beta must be in"):
        GnnParams(beta=-0.1)
    path = tmp_path / "gnn.json"
    GnnParams(alphas=(0.3,), top_k=7).save(path)
    assert GnnParams.load(path) == GnnParams(alphas=(0.3,), top_k=7)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigurationError, match="not GNN parameters written by kgp"):
        GnnParams.load(tmp_path / "bad.json")


def test_mix_is_eq6_over_both_steps() -> None:
    mixed = mix({"a": 0.2, "b": 0.4}, {"a": 0.6, "c": 0.1}, beta=0.9)
    assert mixed["a"] == pytest.approx(0.9 * 0.2 + 0.1 * 0.6)
    assert mixed["c"] == pytest.approx(0.9 * 0.4 + 0.1 * 0.1), "unreached now: this step's worst"


def test_fit_lowers_alpha_when_messages_help_the_gold() -> None:
    # the gold "c" is far from the question but next to the nearest passage "a"
    graph = {"a": {"c"}, "c": {"a"}, "b": set(), "d": set(), "e": set()}
    h0 = {"a": 0.1, "b": 0.3, "d": 0.35, "e": 0.4, "c": 0.6}
    sample = Sample(h0, graph, {"a", "c"})
    before = hinge(h0, h0, {"a", "c"}, competitors=5, r=0.01)
    params, losses = fit([sample], GnnParams(top_k=1), competitors=5)
    assert before > 0 and params.alphas[0] < 1.0 and losses[-1] < losses[0]
    with pytest.raises(ConfigurationError, match="one-layer"):
        fit([sample], GnnParams(alphas=(0.5, 0.5)))


def test_gnn_retriever_on_the_example_graph(kg: kgp.KnowledgeGraph) -> None:
    gnn = GnnRetriever(kg.store, kg.encoder.encode, GnnParams(pool=10))
    with kg.store.counting() as calls:
        ranked = gnn.retrieve("Who manages Alder Creek station?", 5)
    assert calls() == 3, "vector search, one neighbours query, one vector fetch"
    assert len(ranked) == 5 and [d for _, d in ranked] == sorted(d for _, d in ranked)
    result = kg.retrieve("Who manages Alder Creek station?", 5, method="gnn")
    assert [p.id for p in result.passages] == [pid for pid, _ in ranked]
    assert all(p.hop == 0 and p.path == [p.id] for p in result.passages)
    seeded = kg.retrieve("Who manages Alder Creek station?", 6, seeder="gnn")
    assert len(seeded.passages) == 6 and any(p.hop == 1 for p in seeded.passages)
    table = kg.retrieve("In Table 1, which station had the most pump hours?", 5, method="gnn")
    assert table.passages[0].kind == "table", "structural questions work the same way"


def test_gnn_over_title_links_only(kg: kgp.KnowledgeGraph) -> None:
    """links="titles": shared keywords pass messages only where one passage names the other's
    document title (the paper's graph links pages by their hyperlinks)."""
    params = GnnParams(pool=10, links="titles")
    gnn = GnnRetriever(kg.store, kg.encoder.encode, params)
    with kg.store.counting() as calls:
        ranked = gnn.retrieve("Who manages Alder Creek station?", 5)
    assert calls() == 4, "vector search, neighbours, vectors and texts, document titles"
    assert len(ranked) == 5
    everything = GnnRetriever(kg.store, kg.encoder.encode, GnnParams(pool=10))
    h_all, h_titles = (
        r.distances("Who manages Alder Creek station?", 5) for r in (everything, gnn)
    )
    assert set(h_titles) <= set(h_all), "fewer links reach fewer passages"
    with pytest.raises(ConfigurationError, match="GNN links must be keywords or titles"):
        GnnParams(links="wikipedia")


def test_a_partial_params_file_keeps_the_other_defaults(tmp_path: Path) -> None:
    path = tmp_path / "gnn.json"
    path.write_text('{"links": "titles"}')
    assert GnnParams.load(path) == GnnParams(links="titles")
    path.write_text('{"alphas": [0.7, 0.6], "top_k": 3}')
    assert GnnParams.load(path) == GnnParams(alphas=(0.7, 0.6), top_k=3)
    path.write_text('{"links": "wikipedia"}')
    with pytest.raises(ConfigurationError, match="GNN links must be keywords or titles"):
        GnnParams.load(path)
    path.write_text('{"alpha": 0.5}')
    with pytest.raises(ConfigurationError, match="not GNN parameters written by kgp"):
        GnnParams.load(path)


def test_gnn_on_an_empty_graph(tmp_path: Path, encoder: Encoder) -> None:
    with kgp.open(data_dir=tmp_path / "empty", loaded_encoder=encoder) as empty:
        assert empty.retrieve("anything?", 5, method="gnn").passages == []


def scripted(steps: list[str]) -> ChatServer:
    """Replies in turn to sub-question, sub-answer and critique prompts."""
    replies = iter(steps)

    def respond(messages: list[dict[str, str]]) -> str:
        return next(replies, "Critique: yes")

    return respond  # type: ignore[return-value]


def test_rgnn_stops_on_critique_step_limit_and_bad_replies(kg: kgp.KnowledgeGraph) -> None:
    question = "Who manages the station whose two pumps were replaced in 2021?"
    script = [
        "Next step: Which station had its two pumps replaced in 2021?",
        "Alder Creek station.",
        "The answers are not enough. Critique: no",
        "Who manages Alder Creek station?",
        "Mira Kovac.",
        "Critique: yes",
    ]
    with chat_server(scripted(script)) as server:  # type: ignore[arg-type]
        client = graph_settings(kg, llm_base_url=server.url, llm_model="m", rgnn_steps=4)
        result = client.retrieve(question, 5, method="rgnn")
        assert result.steps is not None and result.steps["stopped"] == "critique"
        subs = [s["subquestion"] for s in result.steps["steps"]]
        assert subs == [
            "Which station had its two pumps replaced in 2021?",
            "Who manages Alder Creek station?",
        ]
        assert len(result.passages) == 5
    endless = iter(f"Question number {n}?" if n % 3 == 0 else "Critique: no" for n in range(99))
    with chat_server(lambda m: next(endless)) as server:
        client = graph_settings(kg, llm_base_url=server.url, llm_model="m", rgnn_steps=2)
        result = client.retrieve(question, 4, method="rgnn")
        assert result.steps is not None and result.steps["stopped"] == "step limit"
        assert len(result.steps["steps"]) == 2 and len(result.passages) == 4
    with chat_server(lambda m: "") as server:
        client = graph_settings(kg, llm_base_url=server.url, llm_model="m")
        result = client.retrieve(question, 4, method="rgnn")
        assert result.steps is not None and result.steps["stopped"] == "bad sub-question"
        assert len(result.passages) == 4, "falls back to the question's own distances"
    with chat_server(lambda m: "x") as server:
        server.script = [("status", 500)] * 50
        client = graph_settings(kg, llm_base_url=server.url, llm_model="m", llm_retries=0)
        result = client.retrieve(question, 4, method="rgnn")
        assert result.steps is not None and result.steps["stopped"].startswith("llm error: ")
        assert len(result.passages) == 4
    with pytest.raises(ConfigurationError, match="rgnn needs a chat model"):
        kg.retrieve(question, 4, method="rgnn")


HOTPOT_ROWS = [
    {
        "_id": f"q{n}",
        "type": "bridge",
        "question": question,
        "answer": "x",
        "supporting_facts": [[t, 0] for t in gold],
        "context": [
            ["Ada Park", ["Ada Park founded the Acme Pump Company in 1921 in Lowell."]],
            ["Acme Pump Company", ["The Acme Pump Company makes the Foo river pump."]],
            ["Lowell", ["Lowell is a mill town on the Merrimack river."]],
            ["Bea Stone", ["Bea Stone painted harbours and lighthouses in Maine."]],
            ["Maine", ["Maine is the northeasternmost state of the United States."]],
        ],
    }
    for n, (question, gold) in enumerate(
        [
            (
                "Who founded the company that makes the Foo river pump?",
                ["Ada Park", "Acme Pump Company"],
            ),
            ("In which state did Bea Stone paint lighthouses?", ["Bea Stone", "Maine"]),
        ]
    )
]


@pytest.mark.slow
def test_train_gnn_and_evaluate_it(tmp_path: Path, encoder: Encoder) -> None:
    data = tmp_path / "tiny_train.json"
    data.write_text(json.dumps(HOTPOT_ROWS))
    out = tmp_path / "gnn.json"
    done = run_kgp(
        "--data-dir", str(tmp_path / "kb"), "train", "gnn", str(data), "--output", str(out)
    )
    assert done.returncode == 0, done.stderr
    params = GnnParams.load(out)
    # the file holds what the command reported having fitted, for the data it was given
    assert f"(alpha {params.alphas[0]}," in done.stdout and params.trained_on == [str(data)]
    again = run_kgp(
        "--data-dir", str(tmp_path / "kb"), "train", "gnn", str(data), "--output", str(out)
    )
    assert again.returncode == 1 and "exists; choose another --output" in again.stderr
    result = evaluate(
        data,
        partial(kgp.open, loaded_encoder=encoder, gnn_params=str(out)),
        tmp_path / "kb",
        retrievers=["dense,gnn-ret,all"],
        k=3,
    )
    assert result.summaries()["gnn-ret"]["questions"] == 2
    assert "rgnn-ret" in result.unavailable and "chat model" in result.unavailable["rgnn-ret"]


@pytest.mark.slow
def test_cli_retrieve_with_gnn(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[1] / "examples" / "documents"
    data_dir = tmp_path / "kb"
    assert run_kgp("--data-dir", str(data_dir), "sync", str(examples)).returncode == 0
    done = run_kgp(
        "--data-dir",
        str(data_dir),
        "retrieve",
        "Who manages Alder Creek?",
        "--method",
        "gnn",
        "--k",
        "3",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["passages"]) == 3
    bad = run_kgp("--data-dir", str(data_dir), "retrieve", "x", "--method", "walk")
    assert bad.returncode == 1 and "unknown method 'walk'" in bad.stderr


MUSIQUE_ROW = {
    "id": "2hop__1",
    "question": "Who founded the company that makes the Foo river pump?",
    "answer": "Ada Park",
    "paragraphs": [
        {
            "idx": 0,
            "title": "Ada Park",
            "paragraph_text": "Ada Park founded the Acme Pump Company in 1921.",
            "is_supporting": True,
        },
        {
            "idx": 1,
            "title": "Acme Pump Company",
            "paragraph_text": "The Acme Pump Company makes the Foo river pump.",
            "is_supporting": True,
        },
        {
            "idx": 2,
            "title": "Lowell",
            "paragraph_text": "Lowell is a mill town on the Merrimack river.",
            "is_supporting": False,
        },
        {
            "idx": 3,
            "title": "Maine",
            "paragraph_text": "Maine is the northeasternmost state.",
            "is_supporting": False,
        },
    ],
    "question_decomposition": [
        {
            "question": "Foo river pump >> manufacturer",
            "answer": "Acme Pump Company",
            "paragraph_support_idx": 1,
        },
        {"question": "Who founded #1?", "answer": "Ada Park", "paragraph_support_idx": 0},
    ],
}


@pytest.mark.slow
def test_musique_sub_questions_and_fitting_beta(tmp_path: Path, encoder: Encoder) -> None:
    from kgp.qa import parse_item

    item = parse_item(MUSIQUE_ROW, "m")
    assert [s for s, _ in item.steps] == [
        "Foo river pump manufacturer",
        "Who founded Acme Pump Company?",
    ]
    assert [p[0] for _, p in item.steps] == ["Acme Pump Company", "Ada Park"]
    step = Sample({"a": 0.2, "b": 0.5, "c": 0.6}, {}, {"b"})
    params, losses = fit_beta([[step, step]], GnnParams(), competitors=3)
    assert set(losses) == {round(n / 20, 4) for n in range(21)}
    # beta is the grid point with the least loss (of equals, the one nearest the paper's 0.9)
    assert params.beta == min(losses, key=lambda beta: (losses[beta], abs(beta - 0.9)))
    data = tmp_path / "musique_tiny.json"
    data.write_text(json.dumps([MUSIQUE_ROW]))
    out = tmp_path / "rgnn.json"
    done = run_kgp(
        "--data-dir", str(tmp_path / "kb"), "train", "gnn", str(data), "--output", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "from 1 questions with sub-questions" in done.stdout and "rgnn: beta" in done.stderr
    assert f"beta {GnnParams.load(out).beta} from 1 questions" in done.stdout
