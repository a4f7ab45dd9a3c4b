"""Does the graph stay whole under incremental syncs? The scenarios of the integrity issue, each
against a clean sync of the same files in the same run.

    python -m tests.bench.integrity_bench

1. An unchanged 5-passage folder synced five times: SIMILAR edges after each sync, and whether
   the sync wrote anything.
2. Seven documents (the shipped examples and four small texts), then three rounds of editing two
   files and removing and re-adding a third: SIMILAR edges against a clean sync, passages that do
   not find themselves among their own 10 nearest, and whether the whole graph equals the clean
   one.
3. What ``kgp sync --watch`` does between events: a 3-passage folder synced again every few
   seconds (five times here).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import kgp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "documents"
SENTENCES = [
    "The Nile flows north through Egypt into the Mediterranean Sea.",
    "Cairo is the capital of Egypt and lies on the banks of the Nile.",
    "Mount Everest lies on the border of Nepal and China.",
    "Kathmandu is the capital of Nepal and the gateway to Everest.",
    "The Amazon drains much of Brazil and Peru into the Atlantic.",
]
TEXTS = {
    "rivers.txt": " ".join(SENTENCES[0:2]) + " The Aswan High Dam controls its floods.",
    "mountains.txt": " ".join(SENTENCES[2:4]) + " Mont Blanc is the highest peak of the Alps.",
    "amazon.txt": SENTENCES[4] + " Its basin holds the largest rainforest on Earth.",
    "nepal.txt": "Trekkers pass through Kathmandu. The valley has seven heritage sites.",
}


def similar(kg: Any) -> int:
    return int(kg.stats().relationships.get("SIMILAR", 0))


def self_misses(kg: Any) -> int:
    """Passages not among the 10 nearest of their own stored vector."""
    store = kg.store
    ids = [n["key"] for n in store.upkeep.dump()[0] if n["label"] == "Passage"]
    rows = store.passage_vectors(ids)
    return sum(
        pid not in {h.id for h in store.vector_search(row.embedding, 10)}
        for pid, row in rows.items()
    )


def canonical(kg: Any) -> Any:
    nodes, rels = kg.store.upkeep.dump()
    for node in nodes:
        node["props"].pop("ingested_at", None)
        node["props"].pop("pending", None)
    for rel in rels:
        if "score" in rel["props"]:
            rel["props"]["score"] = round(rel["props"]["score"], 3)
    return nodes, rels


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="kgp-integrity-"))
    encoder = None
    try:
        print("1. an unchanged 5-passage folder, synced five times (knn_k 5)")
        folder = root / "five"
        folder.mkdir()
        (folder / "five.txt").write_text(" ".join(SENTENCES))
        with kgp.open(data_dir=root / "kb-five") as kg:
            encoder = kg.encoder
            counts, wrote = [], []
            for _ in range(5):
                report = kg.sync(folder)
                counts.append(similar(kg))
                wrote.append(bool(report.added or report.changed or report.refilled))
        print(f"   SIMILAR after each sync: {' -> '.join(map(str, counts))}")
        print(f"   syncs after the first that wrote: {sum(wrote[1:])} of 4")

        print("2. seven documents, three rounds of edits and a remove/re-add")
        folder = root / "seven"
        shutil.copytree(EXAMPLES, folder)
        for name, text in TEXTS.items():
            (folder / name).write_text(text)
        with kgp.open(data_dir=root / "kb-seven", loaded_encoder=encoder) as kg:
            kg.sync(folder)
            for round_ in range(3):
                (folder / "rivers.txt").write_text(f"{TEXTS['rivers.txt']} Edit {round_}.")
                (folder / "stations.md").write_text(
                    (EXAMPLES / "stations.md").read_text() + f"\n\nNote {round_}: pumps checked."
                )
                kg.sync(folder)
                held = (folder / "amazon.txt").read_text()
                (folder / "amazon.txt").unlink()
                kg.sync(folder)
                (folder / "amazon.txt").write_text(held)
                kg.sync(folder)
            incremental = (similar(kg), self_misses(kg), canonical(kg))
            passages = kg.stats().labels.get("Passage", 0)
        with kgp.open(data_dir=root / "kb-clean", loaded_encoder=encoder) as kg:
            kg.sync(folder)
            clean = (similar(kg), self_misses(kg), canonical(kg))
        print(f"   SIMILAR: {incremental[0]} incremental, {clean[0]} clean ({passages} passages)")
        print(
            f"   passages not among their own 10 nearest: {incremental[1]} incremental, "
            f"{clean[1]} clean"
        )
        print(f"   graph equals the clean sync: {incremental[2] == clean[2]}")

        print("3. a 3-passage folder synced again and again (what --watch does)")
        folder = root / "three"
        folder.mkdir()
        (folder / "three.txt").write_text(" ".join(SENTENCES[:3]))
        with kgp.open(data_dir=root / "kb-three", loaded_encoder=encoder) as kg:
            counts = []
            for _ in range(5):
                kg.sync(folder)
                counts.append(similar(kg))
        print(f"   SIMILAR after each sync: {' -> '.join(map(str, counts))}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
