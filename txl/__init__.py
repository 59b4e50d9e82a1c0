"""txl: the Transformer-XL encoder (relative attention, memory with block tags, connective boost,
retrieved memory), its training and evaluation. Never imports Prefect."""
