"""txl: the Transformer-XL encoder (relative attention, memory with block tags, connective boost,
retrieved memory), its training and evaluation. Never imports Prefect."""

from txl.model import TransformerXLConfig, TransformerXLLM, TXLOutput

__all__ = ["TransformerXLConfig", "TransformerXLLM", "TXLOutput"]
