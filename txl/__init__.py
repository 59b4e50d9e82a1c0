"""txl: the Transformer-XL encoder (relative attention, memory with block tags, connective boost,
retrieved memory), its training and evaluation. Never imports Prefect.

The model classes load on first use, so that importing `txl.config` (as every `ldx` command does)
does not pull in torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["TransformerXLConfig", "TransformerXLLM", "TXLOutput"]

if TYPE_CHECKING:
    from txl.model import TransformerXLConfig, TransformerXLLM, TXLOutput


def __getattr__(name: str):
    if name in __all__:
        # lazy, a start-up cost: txl.model loads torch, ~1.3 s (measured), which `txl.config` users skip
        from txl import model

        return getattr(model, name)
    raise AttributeError(f"module 'txl' has no attribute {name!r}")
