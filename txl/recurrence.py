"""Stepping a model through `LaneStream` batches with its recurrence memory.

Training and evaluation both carry a txl.memory.Memory from window to window: what the model returned
for the lanes (`out.memory`), hidden in a lane that starts a new document, and possibly shortened
(progressive cache eviction). Memory.lanes / Memory.join serve gradient-accumulation chunks and DDP
ranks.
"""

from __future__ import annotations

import torch

from txl.memory import Memory
from txl.retrieved import Retrieved
from txl.streams import IGNORE, Batch


def memory_for(memory: Memory | None, batch: Batch, max_len: int | None = None) -> Memory | None:
    """The memory the model sees for `batch`: at most the `max_len` newest slots, hidden in the lanes
    where a new document starts."""
    mem = memory.newest(max_len) if memory is not None else None
    return mem.reset(batch.new_doc) if mem is not None else None


def run_batch(
    model,
    batch: Batch,
    device: torch.device,
    memory: Memory | None = None,
    retrieved: Retrieved | None = None,
    tags: bool = True,
    connectives: bool = True,
):
    """The model on one batch; `out.nll` is zero at padding positions (targets == IGNORE).

    `tags` / `connectives` False withhold the block types / connective marks and clause scopes
    (ablations on the same weights: the model then adds no tag bias or embedding / no connective boost
    or scope embedding)."""
    targets = batch.targets.to(device)
    valid = targets != IGNORE
    out = model(
        batch.input_ids.to(device),
        memory,
        retrieved,
        targets=targets.clamp(min=0),
        block_types=batch.block_types.to(device) if tags else None,
        connective_mask=batch.connective.to(device) if connectives else None,
        scope_mask=batch.scope.to(device) if connectives else None,
    )
    out.nll = out.nll * valid
    return out
