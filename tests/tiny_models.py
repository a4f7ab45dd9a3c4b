"""Tiny real models built from configs (no download): a T5 with a word-level tokenizer."""

from __future__ import annotations

import re
from pathlib import Path


def build_tiny_t5(folder: Path, corpus: list[str]) -> Path:
    """A randomly initialised two-layer T5 and a word-level tokenizer over ``corpus``'s words,
    saved in ``transformers`` format."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    words = sorted({w for text in corpus for w in re.findall(r"\w+|[^\w\s]", text.lower())})
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2, **{w: i + 3 for i, w in enumerate(words)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="</s>", unk_token="<unk>"
    )
    config = T5Config(
        vocab_size=len(vocab),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    import torch

    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
