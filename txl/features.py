"""How block types and connective marks reach the Transformer-XL: as additive attention logits, and as
learned vectors added to the layer-0 input.

Attention logits (`logit_table`, the parameters live in each layer's attention): a per-head bias for
each (query type, key type) pair (the tag bias), a per-head boost on keys marked as connectives, and the
per-head bias of retrieved slots, gathered into one table that txl.relative's KeyAxis indexes.

Input features (`InputFeatures`), each made only when its config flag is on, so a model without them has
exactly the parameters it always had:
- tag embedding (`tag_embedding`): one vector per block type, added to every token of that type (a
  token of unknown type, -1, gets none). Tags then reach the values and queries of every layer, not
  only the attention logits;
- scope embedding (`scope_embedding`): one vector added to every token inside a clause a connective
  opens (`txl.streams.clause_scope`, a causal flag), so queries know they sit under "but", "unless", 但.
Both start at zero: an untrained model with them equals the same model without them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def logit_table(
    n_block_types: int,
    tag_bias: torch.Tensor | None,
    boost: torch.Tensor | float,
    retrieved_bias: torch.Tensor,
    dtype: torch.dtype,
) -> torch.Tensor:
    """[H, (n + 1) * 3 * (n + 1) + 1]: the additive logit of every (query type, key group, key type) for
    the n block types and unknown (no tag bias), the key groups plain, connective (+ boost) and
    retrieved (+ retrieved bias), and last -inf for hidden keys; indexed by KeyAxis.pair.

    tag_bias [H, n, n] or None (no tag bias), boost [H] or one float for every head, retrieved_bias [H]."""
    ref = retrieved_bias
    h, n = ref.size(0), n_block_types
    tags = F.pad(tag_bias, (0, 1, 0, 1)) if tag_bias is not None else ref.new_zeros(h, n + 1, n + 1)
    if not isinstance(boost, torch.Tensor):
        boost = ref.new_full((h,), boost)
    groups = torch.stack(
        [tags, tags + boost[:, None, None], tags + ref[:, None, None]], 2
    )  # [H, n+1, 3, n+1]
    table = torch.cat([groups.reshape(h, -1), ref.new_full((h, 1), float("-inf"))], 1)
    return table.to(dtype)


class InputFeatures(nn.Module):
    def __init__(self, d_model: int, n_block_types: int, tag_embedding: bool, scope_embedding: bool):
        super().__init__()
        # "emb" in the names: the trainer exempts embeddings from weight decay
        if tag_embedding:
            self.tag_emb = nn.Parameter(torch.zeros(n_block_types, d_model))
        if scope_embedding:
            self.scope_emb = nn.Parameter(torch.zeros(d_model))

    def forward(
        self, word: torch.Tensor, block_types: torch.Tensor | None, scope: torch.Tensor | None
    ) -> torch.Tensor:
        """word [B, T, d] plus the features of block_types [B, T] (long, -1 = unknown) and scope [B, T]
        (bool); a feature whose input is None adds nothing."""
        x = word
        if hasattr(self, "tag_emb") and block_types is not None:
            n = self.tag_emb.size(0)
            table = torch.cat(
                [self.tag_emb, self.tag_emb.new_zeros(1, self.tag_emb.size(1))]
            )  # last: unknown
            x = x + table.to(x.dtype)[torch.where(block_types < 0, n, block_types)]
        if hasattr(self, "scope_emb") and scope is not None:
            x = x + scope.to(x.dtype)[..., None] * self.scope_emb.to(x.dtype)
        return x
