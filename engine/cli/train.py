"""``kgp train``: fine-tune the traversal's models (mdr, t5) and fit GNN-Ret's weights (gnn)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from kgp.cli.context import Context
from kgp.cli.output import err, fail
from kgp.errors import KgpError

train_app = typer.Typer(
    help="Fine-tune the traversal's models from multi-hop QA data (MuSiQue, HotpotQA, 2Wiki): "
    "mdr (bi-encoder), t5 (next-evidence generator), gnn (GNN-Ret's alpha).\n\n"
    "Example: kgp train mdr ../shared/data/qa/train/musique_train.json --output models/mdr",
    no_args_is_help=True,
)

DataArgument = Annotated[
    list[Path], typer.Argument(help="Training QA files (MuSiQue, HotpotQA or 2Wiki; train/ only).")
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
    config: Any,
) -> None:
    from kgp.training import load_training_data, train_mdr, train_t5

    quiet = ctx.obj.quiet
    try:
        pairs = load_training_data(data, corpus or [], seed=config.seed)
        err.print(
            f"{len(pairs.pairs)} pairs from {pairs.questions} questions "
            f"({pairs.skipped} without gold passages skipped)",
            highlight=False,
        )
        train = train_mdr if kind == "mdr" else train_t5
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


@train_app.command("mdr")
def train_mdr_command(
    ctx: typer.Context,
    data: DataArgument,
    output: OutputOption = Path("models/mdr"),
    base: Annotated[
        str, typer.Option(help="Sentence-transformers model to start from.")
    ] = "all-MiniLM-L6-v2",
    corpus: CorpusOption = None,
    epochs: EpochsOption = 2,
    batch_size: BatchOption = 16,
    learning_rate: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 3e-5,
    seed: SeedOption = 13,
    max_length: LengthOption = 128,
    device: DeviceOption = "auto",
    overwrite: OverwriteOption = False,
) -> None:
    """Fine-tune the MDR-style bi-encoder (question + passages so far -> next passage) with a
    contrastive loss over in-batch and hard negatives.

    Use the result as KGP_MDR_MODEL (scorer mdr) or KGP_ENCODER (a KNN-MDR graph).
    Example: kgp train mdr ../shared/data/qa/train/musique_train.json --output models/mdr
    """
    from kgp.training import TrainConfig

    config = TrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        max_length=max_length,
    )
    _train(
        ctx,
        "mdr",
        data,
        corpus,
        base=base,
        output=output,
        device=device,
        overwrite=overwrite,
        config=config,
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
    from kgp.training import TrainConfig

    config = TrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        max_length=max_length,
    )
    _train(
        ctx,
        "t5",
        data,
        corpus,
        base=base,
        output=output,
        device=device,
        overwrite=overwrite,
        config=config,
    )


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

    state: Context = ctx.obj
    try:
        settings = state.settings()
        report = train_gnn(
            data,
            state.open_with,
            settings.data_dir,
            output,
            settings=settings,
            corpora=corpus or [],
            top_k=top_k,
            competitors=competitors,
            margin=margin,
            overwrite=overwrite,
            progress=(lambda _: None) if state.quiet else (lambda m: err.print(m, highlight=False)),
        )
    except KgpError as exc:
        raise fail(str(exc)) from None
    print(
        f"saved {output} (alpha {report.alpha}, beta {report.beta} from "
        f"{report.beta_questions} questions with sub-questions; {report.questions} "
        f"questions, {report.seconds:.0f} s)"
    )
