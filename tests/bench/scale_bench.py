"""How kgp's cost grows with the graph: graphs of 10k, 100k and 1M passages, each measured the
same way, the smallest the baseline of the ratios.

    python -m tests.bench.scale_bench [--sizes 10000,100000,1000000] [--questions 50]
                                      [--work-dir DIR] [--vectors standin|encoder] [--resume]
                                      [--as-it-stands] [--reopen-only RUNS]
                                      [--callers-only] [--no-cold-add] [--build-only]

The documents are Markdown files of 25 passages (sentences) each, written by a unigram model of
the 2Wiki train corpus (its words at their real frequencies, sentence lengths drawn from its
sentences), so keyword document frequencies follow a real corpus; each document is on one of
(documents / 4) subjects, 12 words that 45% of its words are drawn from, so passages have near
neighbours as real text does (the stand-in vectors' mean similarity to the nearest and to the
5th nearest passage, 0.56 and 0.48, are MiniLM's on the real 2Wiki texts, 0.56 and 0.44).

With ``--vectors standin`` (the default) the vectors come from a cheap deterministic stand-in
(a sum of per-word random vectors, normalised: texts sharing words get near vectors), so the
store side is measured alone; ``--vectors encoder`` embeds with the real MiniLM (about 55
passages/s here: hours at 1M). The output says which.

Per size: ``write_rows_per_s`` (passages through ``kg.sync`` per second: reading, keywords,
vectors, writes and k-NN links), ``store_mb`` (the FalkorDB server's resident memory) and
``kb_per_passage`` (with the vector index file beside the graph: ``index_mb``), ``reopen_s``
(close, open, first answered question), ``index_ready_s`` (to full speed: the vector index is
loaded at the open, so the same moment), retrieve ``p50_ms`` / ``p95_ms`` (the default
configuration, k 30, the same question styles at every size), ``recall_at_10`` (the vector
index against exact search over every passage vector), ``add_s`` (one new 50-passage document
in the reopened session: the median of three adds of new texts, ``add_runs_s``; each run's
store queries are printed, the slowest first), ``first_write_s`` (that session's first write, a
removal of nothing), ``cold_add_s`` (the same add as ``kgp add`` makes it in a new process: the
start, the indexes the last close set aside built again, then the add; null with
``--no-cold-add``), ``cold_command_s`` (that whole command: its close too, which sets those
indexes aside again) and ``kept_add_s`` (the same add in the session that synced the graph, as a
long-lived ``kgp sync --watch`` or ``kgp serve`` makes it; null with ``--as-it-stands``). Keys of
the matrix of every vector that kgp once kept beside the index (``restored``, ``hold_s``,
``held_add_s``) stay, null; ``index_add_s`` is ``add_s`` (every add goes by the index). A
measurement removes what it added. The last line is one JSON object keyed by size.

With ``KGP_STORE=neo4j`` (and ``KGP_NEO4J_URI``, ``KGP_NEO4J_PASSWORD``, ``KGP_NEO4J_DATABASE``)
the same runs against a Neo4j server or cluster. Its graph outlives ``--work-dir``, so each size
starts by deleting the database's documents (it refuses a database holding others: give it an
empty one); ``store_mb`` is NaN there (the server's memory is measured with its own tools).

A sync prints how far it is about once a minute. A large size can be built over several runs:
stop one (Ctrl-C, or even SIGKILL: every sync resumes) and start it again with the same
``--work-dir`` and ``--resume``; ``write_rows_per_s`` then counts the time of every run (kept in
``kb-SIZE.sync.json`` beside the graph, written at each progress line: a SIGKILL loses the time
since the last one).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import kgp
import numpy as np
from kgp.access import ADMIN_CALLER
from kgp.ingest.embedding import Encoder
from kgp.ingest.report import Progress
from kgp.settings import StoreKind, load_settings
from kgp.stores.tracer import TraceLog

from tests.bench import by_query, memory_mb, store_server_pid

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "qa" / "train" / "2wiki_corpus.json"
PASSAGES_PER_DOCUMENT = 25
DOCUMENTS_PER_TOPIC = 4
TOPIC_SHARE = 0.45
TOPIC_WORDS = 12
DIMENSION = 384
ADDS = 3  # the add is timed this many times, its median reported
ADDED = "added.md"  # the document it adds (and removes again)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
_WRITTEN_HERE = re.compile(r"doc-\d{6}\.md|added\.md")  # the ids of the documents it writes


class StandInEncoder(Encoder):
    """Deterministic vectors without a model: each word a fixed random vector (seeded by its
    hash), a text the normalised sum of its words'. Cheap, and texts that share words are near,
    so vector search and k-NN edges have structure to find."""

    def __init__(self) -> None:
        super().__init__(model="standin-bag-of-words-384", device="cpu")
        self._words: dict[str, np.ndarray] = {}

    def load(self) -> Encoder:
        return self

    @property
    def identity(self) -> str:
        """Its name, not a path: a graph it built opens from any working directory."""
        return self.model_name

    @property
    def dimension(self) -> int:
        return DIMENSION

    def _word(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            vector = np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)
            self._words[word] = vector
        return vector

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row] += self._word(word)
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else self._word("<empty>") / 20.0
        return out


class UnigramWriter:
    """Sentences with the 2Wiki corpus's words at their frequencies and its sentence lengths."""

    def __init__(self, corpus: Path, seed: int = 17) -> None:
        entries = json.loads(corpus.read_text())
        words: Counter[str] = Counter()
        lengths: list[int] = []
        for entry in entries:
            for sentence in re.split(r"(?<=[.!?])\s+", entry["text"]):
                tokens = _WORD.findall(sentence)
                if len(tokens) >= 4:
                    lengths.append(min(len(tokens), 60))
                    words.update(tokens)
        self.vocabulary = np.array(list(words))
        counts = np.array(list(words.values()), dtype=np.float64)
        self.p = counts / counts.sum()
        self.lengths = np.array(lengths)
        self.rng = np.random.default_rng(seed)

    def topic(self, number: int) -> np.ndarray:
        """A topic's words: TOPIC_WORDS of the corpus's less common words, fixed by its number
        (real documents share such words with their own sentences and with documents on the same
        subject, which gives their vectors neighbourhoods as real text has)."""
        rng = np.random.default_rng(1000 + number)
        middle = self.vocabulary[np.argsort(-self.p)][200:20_000]
        return rng.choice(middle, size=TOPIC_WORDS, replace=False)

    def sentences(self, n: int, topic: np.ndarray | None = None) -> list[str]:
        """``n`` sentences; with a topic, TOPIC_SHARE of their words are its."""
        sizes = self.rng.choice(self.lengths, size=n)
        flat = self.rng.choice(self.vocabulary, size=int(sizes.sum()), p=self.p)
        if topic is not None:
            mask = self.rng.random(flat.size) < TOPIC_SHARE
            flat[mask] = self.rng.choice(topic, size=int(mask.sum()))
        out, at = [], 0
        for size in sizes:
            words = flat[at : at + size]
            at += size
            out.append(" ".join(words).capitalize() + ".")
        return out


def write_documents(folder: Path, writer: UnigramWriter, passages: int) -> list[str]:
    """Markdown files of PASSAGES_PER_DOCUMENT sentences; returns every sentence written."""
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    documents = passages // PASSAGES_PER_DOCUMENT
    topics = max(10, documents // DOCUMENTS_PER_TOPIC)
    for n in range(documents):
        sentences = writer.sentences(PASSAGES_PER_DOCUMENT, writer.topic(n % topics))
        # a number of its own in each sentence keeps every passage's text unique
        sentences = [s[:-1] + f" (item {n}-{i})." for i, s in enumerate(sentences)]
        written += sentences
        (folder / f"doc-{n:06d}.md").write_text(f"# Document {n}\n\n" + " ".join(sentences))
    return written


def questions_from(sentences: list[str], count: int, seed: int = 5) -> list[str]:
    """Questions made of two sentences' words (a multi-hop shape), the same styles at each size."""
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(sentences), size=(count, 2), replace=False)
    out = []
    for a, b in picks:
        left = sentences[a].split()[:8]
        right = sentences[b].split()[:6]
        out.append("Which " + " ".join([*left, "and", *right]).rstrip(".") + "?")
    return out


def every_vector(kg: Any) -> tuple[list[str], np.ndarray]:
    """Every passage's id and vector, read from the graph 500 documents at a time."""
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    documents = [d.id for d in kg.documents()]
    with kg.store.reading_as(ADMIN_CALLER):
        for at in range(0, len(documents), 500):
            for passage in kg.store.document_passages(documents[at : at + 500]):
                ids.append(passage.id)
                vectors.append(np.asarray(passage.embedding, dtype=np.float32))
    return ids, np.vstack(vectors)


def recall_at_10(kg: Any, encoder: Encoder, questions: list[str]) -> float:
    """The vector index's top 10 against exact cosine search over every passage vector."""
    ids, matrix = every_vector(kg)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)  # (stored: lengths miss 1 a little)
    found = []
    for vector in encoder.encode(questions):
        exact = {ids[i] for i in np.argsort(-(matrix @ vector))[:10]}
        index = {hit.id for hit in kg.store.vector_search(vector.tolist(), 10)}
        found.append(len(exact & index) / 10)
    return statistics.mean(found)


def empty_server_graph(data_dir: Path, encoder: Encoder) -> None:
    """Delete the documents an earlier size (or run) left in a Neo4j database, one transaction
    each (one DETACH DELETE of a large graph can exceed the server's transaction memory), then
    what remains; refuse a database holding documents this benchmark did not write."""
    with (
        kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg,
        kg.store.reading_as(ADMIN_CALLER),  # every document, whoever may read it
    ):
        documents = kg.store.list_documents()
        foreign = [d.id for d in documents if not _WRITTEN_HERE.fullmatch(d.id)]
        if foreign:
            raise SystemExit(
                f"{kg.store.describe()} holds documents this benchmark did not write "
                f"({foreign[0]!r} ...); give it an empty database (KGP_NEO4J_DATABASE)"
            )
        for document in documents:
            kg.store.delete_document(document.id)
        kg.store.clear()


def sentences_in(folder: Path) -> list[str]:
    """The sentences :func:`write_documents` wrote to ``folder`` (a resumed run reads them back)."""
    written: list[str] = []
    for path in sorted(folder.glob("doc-*.md")):
        body = path.read_text().split("\n\n", 1)[1]  # after the title
        written += re.split(r"(?<=\)\.) ", body)  # each sentence ends "(item N-I)."
    return written


class SyncProgress:
    """Prints how far a long sync is, about once a minute (passages written, and the rate over
    the last interval, which falls as the graph grows), and keeps the time spent and the
    passages written so far in ``ledger``, so a run stopped even by SIGKILL can be resumed."""

    def __init__(self, size: int, ledger: Path, before: int, every_s: float = 60.0) -> None:
        self.size, self.ledger, self.every_s = size, ledger, every_s
        self.spent_before = float(json.loads(ledger.read_text())["seconds"])
        self.before = before  # passages in the graph when this run started
        self.started = self.last_at = time.perf_counter()
        self.last = self.written = self.before

    def seconds(self) -> float:
        """Time spent syncing this size, in every run so far."""
        return self.spent_before + time.perf_counter() - self.started

    def save(self, passages: int | None = None) -> None:
        if passages is not None:
            self.written = passages
        # whole or not at all: a run killed as it writes (SIGTERM at 451k) left it empty
        staged = self.ledger.with_name(self.ledger.name + ".new")
        staged.write_text(json.dumps({"seconds": self.seconds(), "passages": self.written}))
        os.replace(staged, self.ledger)

    def __call__(self, progress: Progress) -> None:
        now = time.perf_counter()
        if now - self.last_at < self.every_s:
            return
        self.written = self.before + progress.passages
        rate = (self.written - self.last) / max(now - self.last_at, 1e-9)
        print(
            f"{self.size}: {self.written:,} passages written, {progress.done:,}/"
            f"{progress.total:,} documents looked at, {rate:.0f} passages/s over the last "
            f"{now - self.last_at:.0f} s ({now - self.started:.0f} s in this run)",
            flush=True,
        )
        self.last_at, self.last = now, self.written
        self.save()


def say(size: int, line: str) -> None:
    """A figure as soon as it is taken: at a million passages each step takes minutes."""
    print(f"{size}: {line}", flush=True)


def measure(
    size: int,
    work: Path,
    writer: UnigramWriter,
    encoder: Encoder,
    count: int,
    resume: bool = False,
    as_it_stands: bool = False,
    cold_add: bool = True,
    build_only: bool = False,
) -> dict:
    folder, data_dir = work / f"docs-{size}", work / f"kb-{size}"
    ledger = work / f"kb-{size}.sync.json"  # time and passages of every run so far
    if as_it_stands and not (folder.is_dir() and ledger.is_file()):
        raise SystemExit(f"{size}: no graph left in {work} to measure; run without --as-it-stands")
    if (resume and folder.is_dir() and ledger.is_file()) or as_it_stands:
        sentences = sentences_in(folder)
        spent = json.loads(ledger.read_text())
        how = "measuring as it stands" if as_it_stands else "resuming"
        print(f"{size}: {how}: {spent['passages']:,} passages, {spent['seconds']:.0f} s before")
    else:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
        if load_settings().store is StoreKind.NEO4J:  # the embedded store's data_dir is new
            empty_server_graph(data_dir, encoder)
        sentences = write_documents(folder, writer, size)
        ledger.write_text(json.dumps({"seconds": 0.0, "passages": 0}))
    questions = questions_from(sentences, count)
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
        progress = SyncProgress(size, ledger, kg.stats().labels.get("Passage", 0))
        added = 0
        try:
            if not as_it_stands:
                added = len(kg.sync(folder, on_progress=progress).added)
        finally:  # what a stopped run wrote is kept, and --resume goes on from it
            passages = kg.stats().labels.get("Passage", 0)
            if not as_it_stands:
                progress.save(passages)
        write_s = progress.seconds() if not as_it_stands else progress.spent_before
        store_mb = memory_mb(store_server_pid(kg.store))
        measured = not (as_it_stands or build_only)
        kept_add_s = kept_adds(size, kg, writer, folder) if measured else None
    print(f"{size}: {passages} passages in {write_s:.1f} s ({added} documents added in this run)")
    rate = passages / write_s
    if build_only:  # closed as any session closes: the next start is a reopen like any other
        return {
            "passages": passages,
            "write_rows_per_s": round(rate, 1),
            "store_mb": round(store_mb, 1),
        }
    if as_it_stands:  # the rate of the runs that wrote it, as their ledger keeps it
        spent = json.loads(ledger.read_text())
        rate = spent["passages"] / spent["seconds"]
        print(f"{size}: measured as it stands: {passages:,} passages of {size:,}, no sync")

    started = time.perf_counter()
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
        kg.retrieve(questions[0], 30)
        reopen_s = index_s = time.perf_counter() - started  # to the first answer, full speed
        say(size, f"reopened, first answer in {reopen_s:.2f} s")
        if as_it_stands:
            store_mb = memory_mb(store_server_pid(kg.store))
        index_mb = index_file_mb(kg)
        for question in questions[:3]:  # warm: models and caches
            kg.retrieve(question, 30)
        times = []
        for question in questions:
            began = time.perf_counter()
            kg.retrieve(question, 30)
            times.append(1000 * (time.perf_counter() - began))
        recall = recall_at_10(kg, encoder, questions)
        say(size, f"retrieve p50 {statistics.median(times):.1f} ms, recall@10 {recall:.3f}")
        added = folder.parent / f"added-{size}"
        shutil.rmtree(added, ignore_errors=True)
        added.mkdir()
        # what an earlier measurement added (one stopped, or an older bench); its text differs
        began = time.perf_counter()  # (the session's first write)
        if kg.remove(ADDED):
            writer.sentences(50, writer.topic(7))
        first_write_s = time.perf_counter() - began
        say(size, f"first write {first_write_s:.2f} s")
        adds = timed_adds(size, kg, writer, added / ADDED)
        add_s = statistics.median(adds)
        say(size, f"add {add_s:.2f} s")
        kg.remove(ADDED)  # the graph is left as it was found
    cold_add_s: float | None = None
    cold_command_s: float | None = None
    if cold_add:  # the same add as ``kgp add`` makes it in a new process: the start, then the
        # add, which first waits for the indexes the last close set aside to be built again
        began = time.perf_counter()
        with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
            opened_s = time.perf_counter() - began
            log = kg.store.tracer = TraceLog()
            kg.add(added / ADDED)
            cold_add_s = time.perf_counter() - began
            kg.store.tracer = None
        cold_command_s = time.perf_counter() - began
        say(
            size,
            f"a new session's add {cold_add_s:.2f} s (with its close {cold_command_s:.2f} s): "
            f"the open {opened_s:.2f} s, then {by_query(log)}",
        )
        with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
            kg.remove(ADDED)
    quantiles = statistics.quantiles(times, n=20)
    return {
        "passages": passages,
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(quantiles[18], 1),
        "write_rows_per_s": round(rate, 1),
        "reopen_s": round(reopen_s, 2),
        "index_ready_s": round(index_s, 2),
        "add_s": round(add_s, 2),
        "add_runs_s": [round(seconds, 2) for seconds in adds],
        "restored": None,
        "index_add_s": round(add_s, 2),
        "first_write_s": round(first_write_s, 2),
        "cold_add_s": None if cold_add_s is None else round(cold_add_s, 2),
        "cold_command_s": None if cold_command_s is None else round(cold_command_s, 2),
        "kept_add_s": None if kept_add_s is None else round(kept_add_s, 2),
        "hold_s": None,
        "held_add_s": None,
        "store_mb": round(store_mb, 1),
        "index_mb": round(index_mb, 1),
        "kb_per_passage": round(1024 * (store_mb + index_mb) / max(passages, 1), 2),
        "recall_at_10": round(recall, 3),
    }


def kept_adds(size: int, kg: Any, writer: UnigramWriter, folder: Path) -> float:
    """The add (median of ADDS) in the session that synced the graph: what a long-lived process
    that wrote the graph (``kgp sync --watch``, ``kgp serve``) pays."""
    added = folder.parent / f"added-{size}"
    shutil.rmtree(added, ignore_errors=True)
    added.mkdir()
    adds = timed_adds(size, kg, writer, added / ADDED)
    kg.remove(ADDED)
    say(size, f"kept add {statistics.median(adds):.2f} s (in the session that synced)")
    return statistics.median(adds)


def index_file_mb(kg: Any) -> float:
    """The resident size of the embedded store's vector index, as its file holds it (0 for a
    store whose database keeps the index: Neo4j)."""
    vectors = getattr(kg.store, "vectors", None)
    path = getattr(vectors, "path", None)
    kg.store.upkeep.checkpoint()  # (saved as it stands)
    return path.stat().st_size / 1e6 if path is not None and path.exists() else 0.0


def write_added(writer: UnigramWriter, path: Path) -> None:
    """A new 50-passage document to add, on a subject the graph has; its sentences numbered, so
    that none is short enough to join the next (a generated "Above above spent ask." did)."""
    drawn = writer.sentences(50, writer.topic(7))
    text = " ".join(f"{s[:-1]} (added sentence {i})." for i, s in enumerate(drawn))
    path.write_text("# Added\n\n" + text)


def timed_adds(size: int, kg: Any, writer: UnigramWriter, path: Path) -> list[float]:
    """The add of a new 50-passage document ADDS times, each run's seconds; says where each
    went. Each run's text is new (the last run's document removed first, untimed)."""
    seconds = []
    for _ in range(ADDS):
        write_added(writer, path)
        kg.remove(path.name)
        log = kg.store.tracer = TraceLog()
        began = time.perf_counter()
        kg.add(path)
        seconds.append(time.perf_counter() - began)
        kg.store.tracer = None
        say(size, f"an add {seconds[-1]:.2f} s: {by_query(log)}")
    return seconds


def reopen_times(size: int, work: Path, encoder: Encoder, count: int, runs: int) -> dict:
    """Only the reopen to the first answer of a graph an earlier run left, ``runs`` times (a
    start's time varies by seconds here; a session that only reads writes nothing, so every run
    loads the same snapshot)."""
    folder, data_dir = work / f"docs-{size}", work / f"kb-{size}"
    if not data_dir.is_dir():
        raise SystemExit(f"{size}: no graph in {data_dir} to reopen; build it first")
    question = questions_from(sentences_in(folder), count)[0]
    times: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        with kgp.open(data_dir=data_dir, loaded_encoder=encoder) as kg:
            kg.retrieve(question, 30)
            times.append(time.perf_counter() - started)
            say(size, f"reopened, first answer in {times[-1]:.2f} s")
    runs_s = [round(t, 2) for t in times]
    return {"reopen_s": round(statistics.median(times), 2), "reopen_runs": runs_s}


def caller_times(size: int, work: Path, encoder: Encoder, count: int) -> dict:
    """Retrieve p50 on a graph an earlier run left, the same questions asked in turn by the
    admin, by a public reader (who reads every document: covered reads skip the document
    checks, kgp.stores.coverage) and by the same reader checking every document, question by
    question in one process, so the machine's noise falls on all three alike."""
    data_dir = work / f"kb-{size}"
    if not data_dir.is_dir():
        raise SystemExit(f"{size}: no graph in {data_dir} to ask; build it first")
    questions = questions_from(sentences_in(work / f"docs-{size}"), count)
    times: dict[str, list[float]] = {"admin": [], "covered": [], "checked": []}
    with kgp.open(data_dir=data_dir, loaded_encoder=encoder, groups="public") as kg:
        for question in questions[:3]:  # warm: models and caches
            kg.retrieve(question, 30)
        for question in questions:
            for arm in times:
                kg.retriever().forget()  # no arm reads what another left in the cache
                kg.store.covered_reads = arm != "checked"
                began = time.perf_counter()
                if arm == "admin":
                    with kg.store.reading_as(ADMIN_CALLER):
                        kg.retrieve(question, 30)
                else:
                    kg.retrieve(question, 30)
                times[arm].append(1000 * (time.perf_counter() - began))
    p50 = {arm: round(statistics.median(ms), 1) for arm, ms in times.items()}
    say(
        size,
        f"p50 admin {p50['admin']} ms, public reader {p50['covered']} ms (covered reads), "
        f"{p50['checked']} ms checking every document",
    )
    return {f"{arm}_p50_ms": ms for arm, ms in p50.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--work-dir", type=Path, default=None)
    parser.add_argument("--vectors", choices=["standin", "encoder"], default="standin")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--resume",
        action="store_true",
        help="Go on with the graphs an earlier run left in --work-dir (stopped part way or "
        "not): only what is missing is synced, and the write rate counts every run's time.",
    )
    parser.add_argument(
        "--as-it-stands",
        action="store_true",
        help="Measure the graphs an earlier run left in --work-dir without syncing first (a size "
        "built over several sessions, measured part way; its write rate is its ledger's).",
    )
    parser.add_argument(
        "--reopen-only",
        type=int,
        default=0,
        metavar="RUNS",
        help="Only time the reopen to the first answer of the graphs left in --work-dir, RUNS "
        "times each (the median and every run); nothing is synced or written.",
    )
    parser.add_argument(
        "--callers-only",
        action="store_true",
        help="Only time retrieval on the graphs left in --work-dir as the admin, a public reader "
        "(covered reads) and the same reader checking every document, in turn.",
    )
    parser.add_argument(
        "--no-cold-add",
        action="store_true",
        help="Leave out the add in a new session (cold_add_s null), which starts the server and "
        "builds again the indexes the last close set aside.",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="Only sync the graphs (with --resume, go on with them) and close: measure them "
        "later with --reopen-only or --as-it-stands.",
    )
    parser.add_argument("--plot", type=Path, default=None, help="Draw cost against size here.")
    parser.add_argument(
        "--replot", type=Path, default=None, help="Only draw --plot from this run's JSON line."
    )
    args = parser.parse_args()
    if args.replot is not None:
        plot(json.loads(args.replot.read_text().strip().splitlines()[-1]), args.plot)
        return
    if not args.corpus.is_file():
        raise SystemExit(f"no corpus at {args.corpus}; pass --corpus")
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.vectors == "standin":
        encoder: Encoder = StandInEncoder()
        print("vectors: a deterministic stand-in (bag of random word vectors), not the encoder:")
        print("the store side is measured alone; embedding would add ~18 ms per passage here")
    else:
        encoder = Encoder(model="all-MiniLM-L6-v2", device="cpu").load()
        print("vectors: the real encoder (all-MiniLM-L6-v2, CPU)")
    print(f"store: {load_settings().store.value}")
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="kgp-scale-"))
    if args.reopen_only:
        reopened = {
            str(size): reopen_times(size, work, encoder, args.questions, args.reopen_only)
            for size in sizes
        }
        print(json.dumps(reopened))
        return
    if args.callers_only:
        by_caller = {str(size): caller_times(size, work, encoder, args.questions) for size in sizes}
        print(json.dumps(by_caller))
        return
    writer = UnigramWriter(args.corpus)
    results: dict[str, dict] = {}
    for size in sizes:
        results[str(size)] = measure(
            size,
            work,
            writer,
            encoder,
            args.questions,
            args.resume,
            args.as_it_stands,
            cold_add=not args.no_cold_add,
            build_only=args.build_only,
        )
        if args.build_only:
            print(f"{size}: built: {results[str(size)]}", flush=True)
            continue
        row = results[str(size)]
        base = results[str(sizes[0])]
        print(
            f"{size}: p50 {row['p50_ms']} ms ({row['p50_ms'] / base['p50_ms']:.2f}x the "
            f"{sizes[0]} graph), p95 {row['p95_ms']} ms, {row['write_rows_per_s']} passages/s, "
            f"reopen {row['reopen_s']} s (index complete {row['index_ready_s']} s), "
            f"add {row['add_s']} s ({cold_add_said(row['cold_add_s'])}; by the session that "
            f"synced it, {row['kept_add_s']} s; by a new session's read of every vector, "
            f"{row['held_add_s']} s after a {row['hold_s']} s read), "
            f"store {row['store_mb']} MB "
            f"({row['kb_per_passage']} KB/passage), recall@10 {row['recall_at_10']}",
            flush=True,
        )
    if args.plot is not None and not args.build_only:  # (nothing measured to draw)
        plot(results, args.plot)
    print(json.dumps(results))


def cold_add_said(seconds: float | None) -> str:
    return "not made in a new session" if seconds is None else f"in a new session {seconds} s"


def plot(results: dict[str, dict], path: Path | None) -> None:
    """Cost against size, both axes logarithmic: one panel per measure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if path is None:
        raise SystemExit("--replot needs --plot FILE")
    sizes = sorted(int(s) for s in results)
    panels = [
        ("p50_ms", "retrieve p50 (ms)"),
        ("write_rows_per_s", "sync (passages/s)"),
        ("reopen_s", "reopen to first answer (s)"),
        ("index_ready_s", "vector index complete (s)"),
        ("add_s", "add a 50-passage document (s)"),
        ("kb_per_passage", "server memory (KB/passage)"),
    ]
    figure, axes = plt.subplots(2, 3, figsize=(11, 6))
    for axis, (key, title) in zip(axes.flat, panels, strict=True):
        values = [results[str(s)].get(key) for s in sizes]
        axis.plot(sizes, values, marker="o")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(title, fontsize=10)
        axis.set_xlabel("passages")
        axis.grid(True, which="both", alpha=0.3)
    figure.suptitle("kgp on one 2-core machine, embedded FalkorDB (stand-in vectors)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
