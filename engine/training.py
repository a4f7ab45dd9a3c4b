"""Fine-tuning the traversal's models from multi-hop QA data (``kgp train``).

Training pairs: for each question, its gold passages in hop order (MuSiQue's decomposition, 2Wiki's
evidence triples, HotpotQA bridge questions by which passage names the other's title; comparison
questions in both orders), and for each hop t, (question + passages 1..t-1 -> passage t), with
hard negatives: the question's own distractors and BM25's best non-gold passages of the whole
pool. Passages are written as the graph stores corpus entries ("title\\ntext").

- ``mdr``: a sentence-transformers bi-encoder (default MiniLM) fine-tuned with a contrastive loss
  (each query against its positive, its hard negative and every other passage of the batch) on
  the MDR query ``question + passages so far`` (what the ``mdr`` scorer encodes).
- ``t5``: a seq2seq checkpoint fine-tuned to write the next passage from Listing 1's instruction
  (what the ``t5`` scorer generates).

Both are deterministic for a seed, print progress and loss, save the model with a model card
(``README.md`` and ``training.json``: data, hyper-parameters, losses, held-out metrics), and use
CUDA when there is one."""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from kgp.agents.generators import t5_prompt
from kgp.errors import ConfigurationError, KgpError
from kgp.ingest.keywords import terms
from kgp.qa import Paragraph, QaItem, load_corpus, load_qa

MAX_PATH_PASSAGES = 3  # the mdr scorer's query keeps the path's last three passages


class TrainingError(KgpError):
    """Training cannot go on (out of memory, no usable data)."""


def passage_text(paragraph: Paragraph) -> str:
    title, text = paragraph
    return f"{title}\n{text}" if title else text


@dataclass(frozen=True, slots=True)
class Pair:
    question: str
    evidence: tuple[str, ...]  # the supporting passages so far, in hop order
    positive: str
    negatives: tuple[str, ...]

    def mdr_query(self) -> str:
        return " ".join([self.question, *self.evidence[-MAX_PATH_PASSAGES:]])

    def t5_input(self) -> str:
        return t5_prompt(self.question, self.evidence)


def hop_orders(item: QaItem) -> list[tuple[Paragraph, ...]]:
    """The orders to learn: the gold in hop order; comparison questions both ways."""
    if "comparison" in item.kind and len(item.gold) == 2:
        return [item.gold, item.gold[::-1]]
    return [item.gold]


class Bm25:
    """Okapi BM25 over a pool of passages (k1 1.2, b 0.75), for hard negatives."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.texts = list(texts)
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        lengths: list[int] = []
        for n, text in enumerate(self.texts):
            bag = Counter(terms(text))
            lengths.append(sum(bag.values()))
            for term, tf in bag.items():
                self.postings[term].append((n, tf))
        self.lengths = lengths
        self.average = sum(lengths) / max(len(lengths), 1) or 1.0
        self.k1, self.b = k1, b

    def top(self, query: str, limit: int) -> list[int]:
        scores: dict[int, float] = defaultdict(float)
        total = len(self.texts)
        for term in set(terms(query)):
            posting = self.postings.get(term, [])
            idf = math.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            for n, tf in posting:
                norm = tf + self.k1 * (1 - self.b + self.b * self.lengths[n] / self.average)
                scores[n] += idf * tf * (self.k1 + 1) / norm
        return sorted(scores, key=lambda n: (-scores[n], n))[:limit]


@dataclass
class PairSet:
    pairs: list[Pair]
    questions: int
    skipped: int  # questions without gold passages


def build_pairs(
    items: Sequence[QaItem],
    *,
    extra: Iterable[Paragraph] = (),
    negatives: int = 3,
    seed: int = 13,
) -> PairSet:
    """Training pairs of ``items`` (see the module's docstring); ``extra`` adds passages to the
    BM25 pool (a retrieval corpus beside the questions)."""
    rng = random.Random(seed)
    pool = list(dict.fromkeys([*extra, *(p for i in items for p in (*i.paragraphs, *i.gold))]))
    index = Bm25([passage_text(p) for p in pool])
    pairs: list[Pair] = []
    usable = [item for item in items if len(item.gold) >= 1]
    for item in usable:
        gold = set(item.gold)
        distractors = [p for p in item.paragraphs if p not in gold]
        for order in hop_orders(item):
            for hop, paragraph in enumerate(order):
                evidence = tuple(passage_text(p) for p in order[:hop])
                query = " ".join([item.question, *evidence])
                lexical = [pool[n] for n in index.top(query, 4 * negatives) if pool[n] not in gold]
                own = rng.sample(distractors, min(len(distractors), negatives))
                mixed = [p for both in zip_longest(lexical[:negatives], own) for p in both if p]
                chosen = list(dict.fromkeys(mixed))
                pairs.append(
                    Pair(
                        item.question,
                        evidence,
                        passage_text(paragraph),
                        tuple(passage_text(p) for p in chosen[:negatives]),
                    )
                )
    return PairSet(pairs, len(usable), len(items) - len(usable))


def load_training_data(
    paths: Sequence[Path], corpora: Sequence[Path] = (), *, negatives: int = 3, seed: int = 13
) -> PairSet:
    """Pairs from QA files in any format ``kgp eval`` reads (kgp's own format has no
    paragraphs to learn from and is refused)."""
    items: list[QaItem] = []
    for path in paths:
        loaded = load_qa(path)
        if any(item.supports for item in loaded):
            raise ConfigurationError(
                f"{path}: kgp's JSONL refers into a graph; training needs MuSiQue, HotpotQA or "
                "2Wiki questions with their passages"
            )
        items += loaded
    extra = [p for corpus in corpora for p in load_corpus(corpus)]
    pairs = build_pairs(items, extra=extra, negatives=negatives, seed=seed)
    if not pairs.pairs:
        raise TrainingError("no training pairs: none of the questions has gold passages")
    return pairs


# -- shared machinery --------------------------------------------------------------------------


@dataclass
class TrainConfig:
    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 3e-5
    warmup: float = 0.1
    seed: int = 13
    max_length: int = 128  # MiniLM's training length; 256 doubled the time per step
    negatives: int = 1  # hard negatives per pair in each batch (mdr)
    scale: float = 20.0  # similarity scale of the contrastive loss (mdr)


@dataclass
class TrainReport:
    kind: str
    base: str
    output: str
    device: str
    pairs: int
    questions: int
    skipped: int
    data: list[str]
    config: dict[str, Any]
    losses: list[float] = field(default_factory=list)  # mean loss per epoch
    held_out: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    peak_memory_mb: float = 0.0


Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def prepare_output(path: Path, overwrite: bool) -> Path:
    """A temporary sibling to write into; ``finish_output`` moves it into place."""
    if path.exists() and not overwrite:
        raise ConfigurationError(f"{path} exists; choose another --output or pass --overwrite")
    temp = path.with_name(path.name + ".partial")
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    return temp


def finish_output(temp: Path, path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)
    temp.rename(path)


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _out_of_memory(exc: BaseException, batch_size: int) -> TrainingError | None:
    text = str(exc).lower()
    if isinstance(exc, MemoryError) or "out of memory" in text or "can't allocate" in text:
        return TrainingError(
            f"ran out of memory at batch size {batch_size}; try --batch-size "
            f"{max(1, batch_size // 2)} (or a shorter --max-length)"
        )
    return None


def _batches(count: int, size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(count))
    rng.shuffle(order)
    return [order[i : i + size] for i in range(0, count, size)]


def _schedule(optimizer: Any, steps: int, warmup: float) -> Any:
    import torch

    warm = max(1, int(steps * warmup))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (steps - step) / max(1, steps - warm))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def _optimise(
    model: Any,
    loss_of: Callable[[list[Pair]], Any],
    train: list[Pair],
    config: TrainConfig,
    rng: random.Random,
    temp: Path,
    progress: Progress,
) -> list[float]:
    """The training loop both models share: shuffled batches, AdamW with linear warm-up and
    decay, progress every ten steps; the mean loss of each epoch. Running out of memory removes
    the partial output and becomes one line suggesting a smaller batch."""
    import torch

    steps = config.epochs * math.ceil(len(train) / config.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    scheduler = _schedule(optimizer, steps, config.warmup)
    step, means = 0, []
    try:
        for epoch in range(config.epochs):
            model.train()
            losses = []
            for batch in _batches(len(train), config.batch_size, rng):
                loss = loss_of([train[i] for i in batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                scheduler.step()
                step += 1
                losses.append(float(loss.detach()))
                if step % 10 == 0 or step == steps:
                    recent = losses[-10:]
                    progress(
                        f"epoch {epoch + 1}/{config.epochs} step {step}/{steps} "
                        f"loss {sum(recent) / len(recent):.4f}"
                    )
            means.append(round(sum(losses) / max(len(losses), 1), 4))
    except (RuntimeError, MemoryError) as exc:
        shutil.rmtree(temp, ignore_errors=True)
        error = _out_of_memory(exc, config.batch_size)
        if error is not None:
            raise error from None
        raise
    return means


def _peak_memory_mb(device: str) -> float:
    import resource

    import torch

    if device.startswith("cuda"):
        return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def split_held_out(pairs: list[Pair], share: float, seed: int) -> tuple[list[Pair], list[Pair]]:
    """Hold out whole questions (never a question's other hops) to measure on."""
    questions = sorted({p.question for p in pairs})
    random.Random(seed).shuffle(questions)
    held = set(questions[: int(len(questions) * share)])
    return [p for p in pairs if p.question not in held], [p for p in pairs if p.question in held]


# -- mdr ---------------------------------------------------------------------------------------


def ranking_metrics(encode: Callable[[list[str]], Any], pairs: Sequence[Pair]) -> dict[str, float]:
    """Each held-out query against its positive and its hard negatives: how often the positive
    ranks first (hit@1) and its mean reciprocal rank."""
    import numpy as np

    if not pairs:
        return {}
    queries = encode([p.mdr_query() for p in pairs])
    hits, rr = 0.0, 0.0
    for query, pair in zip(queries, pairs, strict=True):
        candidates = encode([pair.positive, *pair.negatives])
        scores = candidates @ np.asarray(query)
        rank = 1 + int((scores[1:] > scores[0]).sum())
        hits += rank == 1
        rr += 1 / rank
    return {"hit@1": round(100 * hits / len(pairs), 1), "mrr": round(100 * rr / len(pairs), 1)}


def train_mdr(
    pairs: PairSet,
    base: str,
    output: Path,
    *,
    config: TrainConfig | None = None,
    device: str = "auto",
    overwrite: bool = False,
    held_out: float = 0.1,
    data: Sequence[str] = (),
    progress: Progress = _stderr,
) -> TrainReport:
    """Fine-tune the bi-encoder at ``base`` (a sentence-transformers directory or the default
    encoder's name) and save it at ``output``."""
    from kgp.ingest.encoder import resolve_device, resolve_encoder
    from sentence_transformers import SentenceTransformer

    config = config or TrainConfig()
    temp = prepare_output(output, overwrite)
    started = time.perf_counter()
    seed_everything(config.seed)
    where = resolve_device(device)
    model = SentenceTransformer(str(resolve_encoder(base)), device=where, local_files_only=True)
    model.max_seq_length = config.max_length
    train, held = split_held_out(pairs.pairs, held_out, config.seed)

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)

    report = TrainReport(
        "mdr",
        base,
        str(output),
        where,
        len(train),
        pairs.questions,
        pairs.skipped,
        list(data),
        asdict(config),
    )
    before = ranking_metrics(encode, held)
    rng = random.Random(config.seed)
    report.losses = _optimise(
        model,
        lambda batch: _contrastive_step(model, batch, config, rng),
        train,
        config,
        rng,
        temp,
        lambda m: progress("mdr " + m),
    )
    model.eval()
    after = ranking_metrics(encode, held)
    report.held_out = {
        "questions": len({p.question for p in held}),
        "pairs": len(held),
        **{f"base_{k}": v for k, v in before.items()},
        **after,
    }
    model.save(str(temp))
    report.seconds = round(time.perf_counter() - started, 1)
    report.peak_memory_mb = _peak_memory_mb(where)
    write_card(temp, report)
    finish_output(temp, output)
    return report


def _contrastive_step(
    model: Any, batch: list[Pair], config: TrainConfig, rng: random.Random
) -> Any:
    """In-batch negatives plus hard negatives: each query must pick its own positive among
    every passage of the batch (a passage equal to its positive is masked, not a negative)."""
    import torch
    import torch.nn.functional as F
    from sentence_transformers.util import batch_to_device

    queries = [p.mdr_query() for p in batch]
    passages = [p.positive for p in batch]
    for pair in batch:
        passages += rng.sample(list(pair.negatives), min(config.negatives, len(pair.negatives)))

    def embed(texts: list[str]) -> Any:
        prepare = getattr(model, "preprocess", None) or model.tokenize  # renamed in ST 6
        features = batch_to_device(prepare(texts), model.device)
        return F.normalize(model(features)["sentence_embedding"], dim=-1)

    scores = embed(queries) @ embed(passages).T * config.scale
    same = torch.tensor([[text == p.positive for text in passages] for p in batch])
    labels = torch.arange(len(batch))
    same[labels, labels] = False
    scores = scores.masked_fill(same.to(scores.device), float("-inf"))
    return F.cross_entropy(scores, labels.to(scores.device))


# -- t5 ----------------------------------------------------------------------------------------


def train_t5(
    pairs: PairSet,
    base: str,
    output: Path,
    *,
    config: TrainConfig | None = None,
    device: str = "auto",
    overwrite: bool = False,
    held_out: float = 0.1,
    max_target_length: int = 128,
    data: Sequence[str] = (),
    progress: Progress = _stderr,
) -> TrainReport:
    """Instruction fine-tuning of the seq2seq checkpoint at ``base`` (Listing 1's input ->
    the next supporting passage); saved with its tokenizer at ``output``."""
    import torch
    from kgp.ingest.encoder import resolve_device
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    config = config or TrainConfig(learning_rate=3e-4)
    source = Path(base).expanduser()
    if not (source / "config.json").is_file():
        raise ConfigurationError(
            f"t5 base: no model at {source} (no config.json); give a seq2seq checkpoint directory"
        )
    temp = prepare_output(output, overwrite)
    started = time.perf_counter()
    seed_everything(config.seed)
    where = resolve_device(device)
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(source, local_files_only=True).to(where)
    train, held = split_held_out(pairs.pairs, held_out, config.seed)
    report = TrainReport(
        "t5",
        base,
        str(output),
        where,
        len(train),
        pairs.questions,
        pairs.skipped,
        list(data),
        {**asdict(config), "max_target_length": max_target_length},
    )

    def loss_of(batch: list[Pair]) -> Any:
        inputs = tokenizer(
            [p.t5_input() for p in batch],
            padding=True,
            truncation=True,
            max_length=config.max_length,
            return_tensors="pt",
        ).to(where)
        labels = tokenizer(
            [p.positive for p in batch],
            padding=True,
            truncation=True,
            max_length=max_target_length,
            return_tensors="pt",
        ).input_ids.to(where)
        labels[labels == tokenizer.pad_token_id] = -100
        return model(**inputs, labels=labels).loss

    def held_loss() -> float:
        if not held:
            return float("nan")
        model.eval()
        with torch.no_grad():
            values = [
                float(loss_of(held[i : i + config.batch_size]))
                for i in range(0, len(held), config.batch_size)
            ]
        return round(sum(values) / len(values), 4)

    before = held_loss()
    report.losses = _optimise(
        model,
        loss_of,
        train,
        config,
        random.Random(config.seed),
        temp,
        lambda m: progress("t5 " + m),
    )
    report.held_out = {
        "questions": len({p.question for p in held}),
        "pairs": len(held),
        "base_loss": before,
        "loss": held_loss(),
    }
    model.save_pretrained(temp)
    tokenizer.save_pretrained(temp)
    report.seconds = round(time.perf_counter() - started, 1)
    report.peak_memory_mb = _peak_memory_mb(where)
    write_card(temp, report)
    finish_output(temp, output)
    return report


# -- model card --------------------------------------------------------------------------------


def write_card(folder: Path, report: TrainReport) -> None:
    (folder / "training.json").write_text(json.dumps(asdict(report), indent=1))
    use = (
        "KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (the graph's encoder: a KNN-MDR graph)"
        if report.kind == "mdr"
        else "KGP_T5_MODEL (scorer t5)"
    )
    lines = [
        f"# kgp {report.kind} model",
        "",
        f"Fine-tuned by `kgp train {report.kind}` from `{report.base}` on {report.device}. "
        f"Use it with {use}.",
        "",
        "## Data",
        "",
        *(f"- `{path}`" for path in report.data),
        "",
        f"{report.pairs} training pairs from {report.questions} questions "
        f"({report.skipped} without gold passages skipped); "
        f"{report.held_out.get('questions', 0)} questions held out for the figures below.",
        "",
        "## Hyper-parameters",
        "",
        *(f"- {key}: {value}" for key, value in report.config.items()),
        "",
        "## Results",
        "",
        f"- loss per epoch: {', '.join(str(v) for v in report.losses)}",
        *(f"- held out {key}: {value}" for key, value in report.held_out.items()),
        f"- time: {report.seconds} s; peak memory: {report.peak_memory_mb} MB",
        "",
    ]
    (folder / "README.md").write_text("\n".join(lines))


# -- gnn ---------------------------------------------------------------------------------------


def train_gnn(
    paths: Sequence[Path],
    factory: Callable[..., Any],
    root: Path,
    output: Path,
    *,
    settings: Any,
    corpora: Sequence[Path] = (),
    top_k: int = 5,
    competitors: int = 25,
    margin: float = 0.01,
    overwrite: bool = False,
    progress: Progress = _stderr,
) -> dict[str, Any]:
    """Fit GNN-Ret's α on the shared graph of ``paths`` (built once under ``root/eval``, as
    ``kgp eval`` builds it) with the hinge objective; write the parameters to ``output``."""
    from kgp.agents.gnn import GnnParams, GnnRetriever, fit, fit_beta, sample_for
    from kgp.evaluate import graph_key, shared_target

    if output.exists() and not overwrite:
        raise ConfigurationError(f"{output} exists; choose another --output or pass --overwrite")
    items: list[QaItem] = []
    for path in paths:
        loaded = load_qa(path)
        if any(item.supports for item in loaded):
            raise ConfigurationError(f"{path}: training needs MuSiQue, HotpotQA or 2Wiki questions")
        items += [item for item in loaded if item.gold]
    if not items:
        raise TrainingError("no training questions with gold passages")
    started = time.perf_counter()
    extra = [p for corpus in corpora for p in load_corpus(corpus)]
    name = "train-" + "-".join(Path(p).stem for p in paths)[:40]
    progress(f"gnn: the graph of {len(items)} questions (built once under {root / 'eval'})")
    target = shared_target(factory, root, items, name, extra, graph_key(settings))
    try:
        start = GnnParams(top_k=top_k)
        gnn = GnnRetriever(target.kg.store, target.kg.encoder.encode, start)
        samples = [
            sample_for(gnn, case.item.question, {pid for unit in case.gold for pid in unit})
            for case in target.cases
        ]
        fitted, losses = fit(samples, start, r=margin, competitors=competitors)
        # RGNN-Ret's beta from the questions that come with sub-questions (MuSiQue): per step,
        # the gold of that step and the later ones (Eq. 7)
        ids = [
            (
                case,
                {
                    paragraph: pid
                    for unit, paragraph in zip(case.gold, case.item.gold, strict=True)
                    for pid in unit
                },
            )
            for case in target.cases
            if case.item.steps
        ]
        fitted_gnn = GnnRetriever(target.kg.store, target.kg.encoder.encode, fitted)
        recurrent = [
            [
                sample_for(
                    fitted_gnn,
                    sub,
                    {by_paragraph[p] for _, p in case.item.steps[t:] if p in by_paragraph},
                )
                for t, (sub, _) in enumerate(case.item.steps)
            ]
            for case, by_paragraph in ids
        ]
        beta_losses: dict[float, float] = {}
        if recurrent:
            fitted, beta_losses = fit_beta(recurrent, fitted, r=margin)
    finally:
        target.kg.close()
    progress(
        f"gnn: alpha {fitted.alphas[0]} after {len(losses)} iterations, loss "
        f"{losses[0] if losses else 0} -> {losses[-1] if losses else 0}"
    )
    if beta_losses:
        progress(
            f"rgnn: beta {fitted.beta} from {len(recurrent)} questions with sub-questions, "
            f"loss {beta_losses[fitted.beta]} (at 0.9: {beta_losses.get(0.9)})"
        )
    params = GnnParams(
        fitted.alphas,
        fitted.beta,
        fitted.top_k,
        fitted.pool,
        fitted.similar,
        trained_on=[str(p) for p in paths],
    )
    output.parent.mkdir(parents=True, exist_ok=True)
    params.save(output)
    return {
        "alpha": params.alphas[0],
        "beta": params.beta,
        "beta_questions": len(recurrent),
        "iterations": len(losses),
        "losses": losses,
        "questions": len(samples),
        "seconds": round(time.perf_counter() - started, 1),
    }
