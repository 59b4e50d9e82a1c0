"""Moved to txl.pooling (the trainer pools states too, and txl may not import retrieval).

Kept only so that callers not yet updated still import; remove once none import it.
"""

from txl.pooling import POOLINGS, pool_key, pool_states

__all__ = ["POOLINGS", "pool_key", "pool_states"]
