"""The tiny Transformer-XL that unit tests train and encode with: the shape is shared, the weights are
random (seeded), so a test is about the code, not about what a model learned."""

from __future__ import annotations

import torch

from txl.model import TransformerXLConfig, TransformerXLLM

TINY_TXL = dict(d_model=32, n_layer=2, n_head=2, d_head=16, d_inner=64)


def tiny_encoder(tokenizer, seed: int = 0, **overrides) -> TransformerXLLM:
    """A randomly initialised tiny model over the tokenizer's vocabulary, in eval mode, no dropout."""
    torch.manual_seed(seed)
    cfg = TransformerXLConfig(
        vocab_size=tokenizer.hf.get_vocab_size(), **TINY_TXL, cutoffs=[], dropout=0.0, **overrides
    )
    return TransformerXLLM(cfg).eval()
