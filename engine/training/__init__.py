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
- ``order``: the learned final order's weights, fitted on the same shared graph
  (:mod:`kgp.training.order`).
- ``gnn``: GNN-Ret's α (and RGNN-Ret's β) fitted with the paper's hinge objective on the shared
  graph of the questions (:mod:`kgp.corpus_graph`, the graph ``kgp eval`` builds).

Both mdr and t5 are deterministic for a seed, print progress and loss, save the model with a
model card (``README.md`` and ``training.json``: data, hyper-parameters, losses, held-out
metrics), and use CUDA when there is one.

Modules: ``pairs`` (pairs and BM25 negatives), ``session`` (the setup mdr and t5 share),
``loop`` (their training loop), ``mdr``, ``t5``, ``gnn``, and ``report`` (the reports and the
model card)."""

from kgp.training.gnn import train_gnn
from kgp.training.loop import TrainConfig
from kgp.training.mdr import train_mdr
from kgp.training.order import OrderReport, train_order
from kgp.training.pairs import PairSet, build_pairs, load_training_data, passage_text
from kgp.training.report import GnnReport, TrainReport
from kgp.training.t5 import train_t5

__all__ = [
    "GnnReport",
    "OrderReport",
    "PairSet",
    "TrainConfig",
    "TrainReport",
    "build_pairs",
    "load_training_data",
    "passage_text",
    "train_gnn",
    "train_mdr",
    "train_order",
    "train_t5",
]
