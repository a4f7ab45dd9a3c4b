"""Evaluation: run retrievers over a QA set and measure them (``kgp eval``).

Three settings:

- ``shared`` (native sets, the main one): every paragraph of the file becomes one passage of one
  graph, built once and kept under ``<data_dir>/eval/<name>-<content hash>`` so later runs (and
  every retriever) reuse it.
- ``per-question`` (the KGP paper's): each question gets a graph of its own paragraphs, a named
  graph in one store under ``<data_dir>/eval/<name>-<hash>-per-question``, also built once.
- ``graph`` (kgp's JSONL format): the questions are asked of the configured graph; supporting
  texts, pages and tables are looked up in it, and those it lacks are reported.

Every retriever gets the same budget ``k``. A question a retriever fails on counts as a miss;
questions without gold are skipped and counted. With a reader, each retriever's passages are
answered from and graded (EM, F1, and the paper's LLM grading prompt).

Modules: ``config`` (:class:`EvalConfig`: what to evaluate), ``runner`` (:func:`run_evaluation`),
``targets`` (the graphs asked and each question's gold), ``answers`` (reading and grading) and
``report`` (results, their JSON file and plot). The graph of a native set's passages is built by
:mod:`kgp.corpus_graph`, which ``kgp train gnn`` shares."""

from kgp.evaluate.config import EvalConfig, choose_items, parse_retrievers
from kgp.evaluate.report import Evaluation, QuestionResult, RetrieverReport
from kgp.evaluate.runner import evaluate, run_evaluation

__all__ = [
    "EvalConfig",
    "Evaluation",
    "QuestionResult",
    "RetrieverReport",
    "choose_items",
    "evaluate",
    "parse_retrievers",
    "run_evaluation",
]
