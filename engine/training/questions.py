"""The shared graph of training questions that ``kgp train gnn`` and ``kgp train order`` fit on:
every paragraph of the QA files (and of any extra corpus) in one graph, built once under
``root/eval`` as ``kgp eval`` builds it, with each question's gold passages."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kgp.errors import ConfigurationError, TrainingError
from kgp.qa import QaItem, load_corpus, load_qa
from kgp.training.loop import Progress


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

    if output.exists() and not overwrite:
        raise ConfigurationError(f"{output} exists; choose another --output or pass --overwrite")
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
