"""Ingest benchmark, with the same encoder embedding the same texts alone as the baseline.

    python -m tests.bench.ingest_bench [--corpus ../shared/data/qa/train/2wiki_corpus.json]

1. ingest the corpus (one passage per entry) into a fresh embedded store: passages/s end to end,
   and its ratio to embedding-only throughput (the physical limit here), embedded alone before
   and after the ingest (the mean: the machine's speed drifts by 10% in a few minutes);
2. add one 50-passage document to that graph and to a 500-passage graph: seconds for each;
3. peak memory of this process and of the FalkorDB server.

The last line reads ``ratio R``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from kgp.ingest.embedding import Encoder
from kgp.ingest.report import SyncReport
from kgp.ingest.sources import corpus_settings
from kgp.ingest.sync import Syncer
from kgp.settings import load_settings
from kgp.stores import FalkorStore

from tests.bench import memory_mb, store_server_pid

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "qa" / "train" / "2wiki_corpus.json"


def fifty_sentences(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = " ".join(
        f"Sentence number {i} of the added report describes station {i % 7} and its rainfall."
        for i in range(50)
    )
    (folder / "added.txt").write_text(text)
    return folder


def add_one(data_dir: Path, encoder: Encoder, folder: Path) -> tuple[float, SyncReport]:
    """Seconds to add the folder's document to a graph reopened."""
    settings = load_settings(data_dir=data_dir)
    started = time.perf_counter()
    with FalkorStore(data_dir=data_dir) as store:
        print(f"  {data_dir.name}: open: {time.perf_counter() - started:.2f} s")
        syncer = Syncer(store=store, settings=settings, encoder=encoder)
        report = SyncReport()
        candidates = syncer.scan(folder, report)
        started = time.perf_counter()
        syncer.sync_candidates(candidates, report)
        return time.perf_counter() - started, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    if not args.corpus.is_file():
        sys.exit(f"no corpus at {args.corpus}; pass --corpus")
    entries = json.loads(args.corpus.read_text())
    # the texts sync embeds: the title before the text (see corpus_candidates)
    texts = [" ".join(f"{e.get('title', '')}\n{e['text']}".split()) for e in entries]
    encoder = Encoder(model="all-MiniLM-L6-v2", device="cpu").load()
    encoder.encode(texts[:64])  # warm up

    def embed_alone(when: str) -> float:
        started = time.perf_counter()
        encoder.encode(texts)
        embed_s = time.perf_counter() - started
        print(
            f"baseline {when}: embedding {len(texts)} passages alone: {embed_s:.1f} s, "
            f"{len(texts) / embed_s:.0f} passages/s",
            flush=True,
        )
        return embed_s

    before_s = embed_alone("before")

    with tempfile.TemporaryDirectory() as tmp:
        big, small = Path(tmp) / "big", Path(tmp) / "small"
        settings = corpus_settings(load_settings(data_dir=big))
        with FalkorStore(data_dir=big) as store:
            syncer = Syncer(store=store, settings=settings, encoder=encoder)
            started = time.perf_counter()
            report = syncer.sync_corpus(args.corpus, prefix="2wiki")
            ingest_s = time.perf_counter() - started
            counts = store.counts()
            server_mb = memory_mb(store_server_pid(store), "VmHWM")
        rate = report.passages / ingest_s
        print(
            f"ingest: {report.passages} passages ({len(report.added)} documents) "
            f"in {ingest_s:.1f} s, {rate:.0f} passages/s",
            flush=True,
        )
        print(f"graph: {counts.as_dict()}")
        embed_s = (before_s + embed_alone("after")) / 2
        ratio = rate / (len(texts) / embed_s)
        print(f"ingest against embedding alone (the mean of both): {ratio:.2f} (aim >= 0.8)")

        small_corpus = Path(tmp) / "small.json"
        small_corpus.write_text(json.dumps(entries[:500]))
        with FalkorStore(data_dir=small) as store:
            Syncer(store=store, settings=settings, encoder=encoder).sync_corpus(small_corpus)
        folder = fifty_sentences(Path(tmp) / "added")
        small_s, small_report = add_one(small, encoder, folder)
        big_s, big_report = add_one(big, encoder, folder)
        assert small_report.passages == big_report.passages == 50, (small_report, big_report)
        print(
            f"add one 50-passage document: {small_s:.2f} s to a 500-passage graph, {big_s:.2f} s "
            f"to a {report.passages}-passage graph, ratio {big_s / small_s:.2f} "
            "(aim <= 1.5, each < 2 s)"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak memory: this process {peak:.0f} MB, FalkorDB server {server_mb:.0f} MB (aim < 2048)"
    )
    print(f"ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
