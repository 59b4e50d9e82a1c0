"""The memory a batch of lanes carries from window to window.

Training and evaluation both step a model through `LaneStream` batches. This keeps what the model
returns for the next call (`out.carry()`: memories and the tags, connective flags and visibility of
every slot), hides a lane's memory when the lane starts a new document (`mem_keep`), and can shorten
the memory (progressive cache eviction). Slicing and joining by lanes serve gradient-accumulation
chunks and DDP ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from txl.streams import IGNORE, Batch


def _map(carry: dict, fn) -> dict:
    return {k: (None if v is None else [fn(t) for t in v] if isinstance(v, list) else fn(v)) for k, v in carry.items()}


@dataclass
class LaneMemory:
    carry: dict = field(default_factory=dict)  # the model's out.carry(); empty = no memory yet

    def inputs(self, batch: Batch, max_len: int | None = None) -> dict:
        """Keyword arguments for the model: the memory (at most `max_len` newest slots) and which
        lanes may see it."""
        if not self.carry or self.carry.get("mems") is None or max_len == 0:
            return {}
        carry = self.carry
        m = carry["mems"][0].size(1)
        if max_len is not None and max_len < m:
            carry = _map(carry, lambda t: t[:, m - max_len :])
        device = carry["mems"][0].device
        return {**carry, "mem_keep": ~batch.new_doc.to(device)}

    def update(self, out) -> None:
        self.carry = out.carry()

    def lanes(self, start: int, stop: int) -> LaneMemory:
        return LaneMemory(_map(self.carry, lambda t: t[start:stop]))

    @staticmethod
    def join(parts: list[LaneMemory]) -> LaneMemory:
        if not parts or not parts[0].carry:
            return LaneMemory()
        joined = {}
        for key, first in parts[0].carry.items():
            if first is None:
                joined[key] = None
            elif isinstance(first, list):
                joined[key] = [torch.cat([p.carry[key][i] for p in parts], 0) for i in range(len(first))]
            else:
                joined[key] = torch.cat([p.carry[key] for p in parts], 0)
        return LaneMemory(joined)

    def to(self, device: torch.device) -> LaneMemory:
        return LaneMemory(_map(self.carry, lambda t: t.to(device)))

    def gathered(self, gather) -> LaneMemory:
        """Every rank's lanes in one memory (for a checkpoint); `gather` concatenates over ranks."""
        return LaneMemory(_map(self.carry, gather))


def run_batch(model, batch: Batch, device: torch.device, tags: bool = True, connectives: bool = True, **memory_kwargs):
    """The model on one batch; `out.nll` is zero at padding positions (targets == IGNORE).

    `tags` / `connectives` False withhold the block types / connective marks (ablations on the same
    weights: the model then adds no tag bias / no connective boost)."""
    targets = batch.targets.to(device)
    valid = targets != IGNORE
    out = model(
        batch.input_ids.to(device),
        targets=targets.clamp(min=0),
        block_types=batch.block_types.to(device) if tags else None,
        connective_mask=batch.connective.to(device) if connectives else None,
        **memory_kwargs,
    )
    out.nll = out.nll * valid
    return out
