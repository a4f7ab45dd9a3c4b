"""The graphs of training questions that ``kgp train gnn`` and ``kgp train order`` fit on: every
paragraph of the QA files (and of any extra corpus) in one graph, built once under ``root/eval``
as ``kgp eval`` builds it, with each question's gold passages; and for questions in kgp's own
format (``kgp train order`` only), a folder of documents synced into a graph of its own, where
their supporting references are looked up as ``kgp eval`` looks them up."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgp.errors import ConfigurationError, TrainingError
from kgp.files import private_dir
from kgp.qa import QaItem, load_corpus, load_qa
from kgp.training.loop import Progress


def own_format(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """``paths`` split into the files of MuSiQue, HotpotQA or 2Wiki questions (gold paragraphs)
    and the files in kgp's own format (supporting references into documents)."""
    native: list[Path] = []
    own: list[Path] = []
    for path in paths:
        referring = {bool(item.supports) for item in load_qa(path)}
        if len(referring) > 1:
            raise ConfigurationError(
                f"{path}: some questions have supporting references and some gold paragraphs; "
                "put each kind in a file of its own"
            )
        (own if True in referring else native).append(Path(path))
    return native, own


def training_graph(
    what: str,
    paths: Sequence[Path],
    factory: Callable[..., Any],
    root: Path,
    output: Path,
    *,
    settings: Any,
    corpora: Sequence[Path],
    overwrite: bool,
    progress: Progress,
) -> tuple[Any, list[str]]:
    """The graph of ``paths``' questions with gold passages (a
    :class:`~kgp.corpus_graph.Target`) and the stem of the file each case came from. ``output``
    is checked first: it must not exist unless ``overwrite``."""
    from kgp.corpus_graph import graph_key, shared_target

    refuse_existing(output, overwrite)
    items: list[QaItem] = []
    sources: list[str] = []
    for path in paths:
        loaded = load_qa(path)
        if any(item.supports for item in loaded):
            raise ConfigurationError(f"{path}: training needs MuSiQue, HotpotQA or 2Wiki questions")
        chosen = [item for item in loaded if item.gold]
        items += chosen
        sources += [Path(path).stem] * len(chosen)
    if not items:
        raise TrainingError("no training questions with gold passages")
    extra = [p for corpus in corpora for p in load_corpus(corpus)]
    name = "train-" + "-".join(Path(p).stem for p in paths)[:40]
    progress(f"{what}: the graph of {len(items)} questions (built once under {root / 'eval'})")
    return shared_target(factory, root, items, name, extra, graph_key(settings)), sources


def refuse_existing(output: Path, overwrite: bool) -> None:
    if output.exists() and not overwrite:
        raise ConfigurationError(f"{output} exists; choose another --output or pass --overwrite")


def check_documents(own: Sequence[Path], documents: Path | None) -> None:
    """Refuses, before any graph is built, questions in kgp's own format without a folder of
    documents to ask them of, such a folder without them, and a ``documents`` not a folder."""
    if own and documents is None:
        raise ConfigurationError(
            f"{own[0]}: questions with supporting references need --documents FOLDER "
            "(the documents they refer to)"
        )
    if documents is not None and not own:
        raise ConfigurationError(
            f"--documents {documents}: no question file in kgp's own format (question and "
            "supporting references) is given to ask of it"
        )
    if documents is not None and not documents.is_dir():
        raise ConfigurationError(f"{documents}: --documents must be a folder of documents")


def documents_graph(
    what: str,
    paths: Sequence[Path],
    documents: Path,
    factory: Callable[..., Any],
    root: Path,
    *,
    settings: Any,
    progress: Progress,
) -> tuple[Any, list[str]]:
    """``documents`` synced into a graph under ``root/eval`` (kept, so an unchanged folder is
    not read again) and ``paths``' questions with their supporting references resolved in it
    (a :class:`~kgp.corpus_graph.Target`), with the stem of the file each case came from. A
    question with a reference not found there (or with none) is left out, with one line saying
    how many."""
    from kgp.corpus_graph import Target, graph_key
    from kgp.evaluate.report import Evaluation
    from kgp.evaluate.targets import graph_target

    key = f"{documents.resolve()}\n{graph_key(settings)}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    folder = root / "eval" / f"{what}-documents-{digest}"
    private_dir(folder)
    kg = factory(data_dir=folder / "kb")
    try:
        progress(f"{what}: syncing {documents} (kept under {folder})")
        report = kg.sync(documents)
        if report.skipped:
            progress(f"{what}: {len(report.skipped)} documents of {documents} could not be read")
        cases, sources = [], []
        for path in paths:
            result = Evaluation(dataset=str(path), k=0, setting="graph")
            resolved = graph_target(kg, load_qa(path), result).cases
            kept = [case for case in resolved if case.gold and all(case.gold)]
            if len(kept) < len(resolved):
                progress(
                    f"{what}: {len(resolved) - len(kept)} questions of {path} left out "
                    f"(a supporting reference not found in {documents}, or none given)"
                )
            cases += kept
            sources += [Path(path).stem] * len(kept)
    except BaseException:
        kg.close()
        raise
    return Target(kg, cases), sources
