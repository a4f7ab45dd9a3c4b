"""``kgp train``: fine-tune the traversal's models (encoder, mdr, t5) and fit the final order's
(order) and GNN-Ret's (gnn) weights."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from kgp.cli.context import Context
from kgp.cli.output import err, fail
from kgp.errors import KgpError

train_app = typer.Typer(
    help="Fine-tune the traversal's models from multi-hop QA data (MuSiQue, HotpotQA, 2Wiki): "
    "encoder (the graph's encoder, as shipped), mdr (bi-encoder), t5 (next-evidence "
    "generator), order (the final order's weights, as shipped), gnn (GNN-Ret's alpha).\n\n"
    "Example: kgp train encoder ../shared/data/qa/train/musique_train.json --output models/enc",
    no_args_is_help=True,
)

DataArgument = Annotated[
    list[Path], typer.Argument(help="Training QA files (MuSiQue, HotpotQA or 2Wiki; train/ only).")
]
OrderDataArgument = Annotated[
    list[Path],
    typer.Argument(
        help="Training QA files (MuSiQue, HotpotQA or 2Wiki; train/ only), or kgp's own format "
        "(question and supporting references) with --documents."
    ),
]
OutputOption = Annotated[Path, typer.Option("--output", "-o", help="Directory to write.")]
CorpusOption = Annotated[
    list[Path] | None,
    typer.Option("--corpus", help="[{title, text}] passages for BM25 hard negatives."),
]
EpochsOption = Annotated[int, typer.Option(min=1, help="Passes over the pairs.")]
BatchOption = Annotated[int, typer.Option("--batch-size", min=1, help="Pairs per step.")]
SeedOption = Annotated[int, typer.Option(help="Seed of shuffling, sampling and weights.")]
LengthOption = Annotated[int, typer.Option("--max-length", min=8, help="Tokens per input.")]
DeviceOption = Annotated[str, typer.Option(help="auto (CUDA when present), cpu or cuda.")]
OverwriteOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace an existing output directory.")
]
BaseOption = Annotated[str, typer.Option(help="Sentence-transformers model to start from.")]
ThreadsOption = Annotated[
    int, typer.Option(min=0, help="CPU threads (0: torch's default); the weights depend on it.")
]
HalfOption = Annotated[bool, typer.Option("--half", help="Save the weights in float16.")]


def _train(
    ctx: typer.Context,
    kind: str,
    data: list[Path],
    corpus: list[Path] | None,
    *,
    base: str,
    output: Path,
    device: str,
    overwrite: bool,
    half: bool = False,
    **fields: Any,
) -> None:
    """Train ``kind`` on the pairs of ``data``; ``fields`` are the run's TrainConfig."""
    from functools import partial

    from kgp.training import TrainConfig, load_training_data, train_mdr, train_t5

    config = TrainConfig(**fields)
    quiet = ctx.obj.quiet
    pair_kind = "questions" if kind == "encoder" else "hops"
    try:
        pairs = load_training_data(data, corpus or [], seed=config.seed, kind=pair_kind)
        err.print(
            f"{len(pairs.pairs)} pairs from {pairs.questions} questions "
            f"({pairs.skipped} without gold passages skipped)",
            highlight=False,
        )
        command = shlex.join(["kgp", *sys.argv[1:]])
        train = (
            train_t5 if kind == "t5" else partial(train_mdr, kind=kind, half=half, command=command)
        )
        report = train(
            pairs,
            base,
            output,
            config=config,
            device=device,
            overwrite=overwrite,
            data=[str(p) for p in [*data, *(corpus or [])]],
            progress=(lambda _: None) if quiet else (lambda m: err.print(m, highlight=False)),
        )
    except KgpError as exc:
        raise fail(str(exc)) from None
    held = ", ".join(f"{k} {v}" for k, v in report.held_out.items())
    print(f"saved {output} ({report.seconds:.0f} s on {report.device}; held out: {held})")


def _bi_encoder(kind: str, default_output: Path, doc: str) -> Callable[..., None]:
    """``kgp train encoder`` and ``kgp train mdr``: one recipe (train_mdr), two kinds of
    pairs (questions, hops)."""

    def command(
        ctx: typer.Context,
        data: DataArgument,
        output: OutputOption = default_output,
        base: BaseOption = "all-MiniLM-L6-v2",
        corpus: CorpusOption = None,
        epochs: EpochsOption = 2,
        batch_size: BatchOption = 16,
        learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 3e-5,
        seed: SeedOption = 13,
        max_length: LengthOption = 128,
        threads: ThreadsOption = 0,
        half: HalfOption = False,
        device: DeviceOption = "auto",
        overwrite: OverwriteOption = False,
    ) -> None:
        _train(
            ctx,
            kind,
            data,
            corpus,
            base=base,
            output=output,
            device=device,
            overwrite=overwrite,
            half=half,
            epochs=epochs,
            batch_size=batch_size,
            learning_rate=learning_rate,
            seed=seed,
            max_length=max_length,
            threads=threads,
        )

    command.__doc__ = doc
    return command


train_app.command("encoder")(
    _bi_encoder(
        "encoder",
        Path("models/encoder"),
        """Fine-tune the graph's encoder: each question against each of its gold passages (the
    second hop's too) and each MuSiQue sub-question against its passage, with a contrastive
    loss over in-batch and hard negatives. kgp's shipped model, kgp-traversal, is this
    command's output (its card says how it was run).

    Use the result as KGP_ENCODER (vectors, seeds, SIMILAR edges, final order).
    Example: kgp train encoder ../shared/data/qa/train/musique_train.json --output models/enc
    """,
    )
)
train_app.command("mdr")(
    _bi_encoder(
        "mdr",
        Path("models/mdr"),
        """Fine-tune the MDR-style bi-encoder (question + passages so far -> next passage) with a
    contrastive loss over in-batch and hard negatives.

    Use the result as KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (a KNN-MDR graph).
    Example: kgp train mdr ../shared/data/qa/train/musique_train.json --output models/mdr
    """,
    )
)


@train_app.command("t5")
def train_t5_command(
    ctx: typer.Context,
    data: DataArgument,
    base: Annotated[str, typer.Option(help="Seq2seq checkpoint directory to start from.")],
    output: OutputOption = Path("models/t5"),
    corpus: CorpusOption = None,
    epochs: EpochsOption = 2,
    batch_size: BatchOption = 8,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 3e-4,
    seed: SeedOption = 13,
    max_length: LengthOption = 512,
    device: DeviceOption = "auto",
    overwrite: OverwriteOption = False,
) -> None:
    """Instruction fine-tuning of a seq2seq model (Listing 1's input -> the next supporting
    passage), for the t5 scorer.

    Example: kgp train t5 ../shared/data/qa/train/hotpotqa_train.json --base ./t5-large
    """
    _train(
        ctx,
        "t5",
        data,
        corpus,
        base=base,
        output=output,
        device=device,
        overwrite=overwrite,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        max_length=max_length,
    )


def _fit_on_graph(
    ctx: typer.Context,
    fit: Callable[..., Any],
    data: list[Path],
    output: Path,
    corpus: list[Path] | None,
    overwrite: bool,
    **options: Any,
) -> Any:
    """``fit`` (train_gnn, train_order) on the shared graph of ``data`` under the data
    directory, with progress on stderr unless quiet; its report."""
    state: Context = ctx.obj
    try:
        settings = state.settings()
        return fit(
            data,
            state.open_with,
            settings.data_dir,
            output,
            settings=settings,
            corpora=corpus or [],
            overwrite=overwrite,
            progress=(lambda _: None) if state.quiet else (lambda m: err.print(m, highlight=False)),
            **options,
        )
    except KgpError as exc:
        raise fail(str(exc)) from None


@train_app.command("order")
def train_order_command(
    ctx: typer.Context,
    data: OrderDataArgument,
    output: OutputOption = Path("models/kgp-order"),
    corpus: CorpusOption = None,
    documents: Annotated[
        Path | None,
        typer.Option(
            "--documents",
            help="A folder of the documents that questions in kgp's own format (supporting "
            "references, as kgp eval reads) refer to; synced into a graph under DATA_DIR/eval/.",
        ),
    ] = None,
    k: Annotated[int, typer.Option("--k", min=2, help="Passages retrieved per question.")] = 30,
    overwrite: OverwriteOption = False,
) -> None:
    """Fit the weights of the learned final order (the default, shipped as kgp-order) on the
    shared graph of the training questions (built once under DATA_DIR/eval/), and on questions
    in kgp's own format asked of the graph of --documents; the same data give the same files.

    Example: kgp train order ../shared/data/qa/train/musique_train.json --output models/order
    """
    from kgp.training import train_order

    report = _fit_on_graph(
        ctx, train_order, data, output, corpus, overwrite, k=k, documents=documents
    )
    for dataset, orders in report.figures.items():
        before, after = orders["linked"], orders["learned"]
        print(
            f"{dataset}: recall@2 {before['recall@2']} -> {after['recall@2']}, "
            f"MRR {before['mrr']} -> {after['mrr']} (linked -> learned, training questions)"
        )
    print(f"saved {output} ({report.questions} questions, {report.seconds:.0f} s)")


@train_app.command("gnn")
def train_gnn_command(
    ctx: typer.Context,
    data: DataArgument,
    output: OutputOption = Path("models/gnn.json"),
    corpus: CorpusOption = None,
    top_k: Annotated[int, typer.Option(min=1, help="K: relevant passages per layer.")] = 5,
    competitors: Annotated[int, typer.Option(min=1, help="O: the hinge's competitors.")] = 25,
    margin: Annotated[float, typer.Option(help="r: the hinge's margin.")] = 0.01,
    overwrite: OverwriteOption = False,
) -> None:
    """Fit GNN-Ret's alpha (and RGNN-Ret's beta, from MuSiQue's sub-questions) with the paper's
    hinge objective on the shared graph of the training questions (built once under
    DATA_DIR/eval/); use the result as KGP_GNN_PARAMS.

    Example: kgp train gnn ../shared/data/qa/train/musique_train.json --output models/gnn.json
    """
    from kgp.training import train_gnn

    report = _fit_on_graph(
        ctx,
        train_gnn,
        data,
        output,
        corpus,
        overwrite,
        top_k=top_k,
        competitors=competitors,
        margin=margin,
    )
    print(
        f"saved {output} (alpha {report.alpha}, beta {report.beta} from "
        f"{report.beta_questions} questions with sub-questions; {report.questions} "
        f"questions, {report.seconds:.0f} s)"
    )
