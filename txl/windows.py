"""Earlier windows of a document, returned as retrieved memory.

While a lane reads a document window by window, each window's memory slots are kept under a key (its
mean top-layer state); the k windows most similar to the previous window that have already left the
model's memory come back as the next call's retrieved slots. Evaluation (`ldx eval lm`'s "retrieved"
setting), training with `inject_k` and the encoder's injection (`ldx run`) do this, on one interface
and one rule of what has left the memory: `PastWindows` (clear / add / pick).
It keeps the windows in memory, whole (fp16) or pooled to ≤ P states per layer as a retrieval store
keeps segments (txl.pooling); store-backed variants override its four storage hooks
(retrieval/store_windows.py over the retrieval layer's SegmentStore: the encoder's Injector and
flows/lm_store.py's per-document store for `ldx eval lm`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate

import numpy as np
import torch
import torch.nn.functional as F

from txl.pooling import pool_states, token_runs
from txl.retrieved import Retrieved, layer_indices
from txl.streams import IGNORE, Batch

Window = tuple[list[torch.Tensor], torch.Tensor]  # (per-layer states n_layer of [n, d], slot types [n])


def pool_window(layers: torch.Tensor, types: torch.Tensor, p: int) -> tuple[np.ndarray, torch.Tensor]:
    """[L, n, d] states and [n] types -> ≤ p pooled states per layer [L, ≤p, d] (means of contiguous
    runs) and the type of each run's first token."""
    pooled = pool_states(layers.float().cpu().numpy(), p)
    starts = [int(r[0]) for r in token_runs(layers.size(1), p)]
    return pooled, types.cpu()[starts]


class PastWindows:
    """One lane's earlier windows of its current document, searchable by key (cosine). `pool` None keeps
    every state (fp16), else at most `pool` pooled states per layer; `layers` None keeps every layer,
    else those layers' states only (negative: from the top), and only they read them back; the oldest
    of more than `max_windows` windows go first.

    A window is out of the model's memory once at least as many tokens as the memory holds have been
    read after it, or the memory was emptied since (`reset_memory`); only those can be picked. With
    windows of equal length this is "all but the newest ceil(memory / length)"."""

    def __init__(self, pool: int | None = None, max_windows: int = 512, layers: Sequence[int] | None = None):
        self.pool, self.max_windows, self.layer_spec = pool, max_windows, layers
        self.layers: tuple[int, ...] | None = None  # the kept layers' indices, once a window shows the depth
        self.n = 0  # windows added since the last clear; window i is the i-th of them
        self.ends: list[int] = []  # tokens read since the last clear up to the end of window i
        self.flushed = 0  # windows read before the memory was last emptied
        self.keys: list[torch.Tensor] = []  # [d] unit vectors
        self.numbers: list[int] = []
        self.states: list[torch.Tensor] = []  # [kept layers, n, d] float16
        self.types: list[torch.Tensor] = []  # [n]

    def clear(self) -> None:
        """A new document starts in this lane."""
        self.n, self.ends, self.flushed = 0, [], 0
        self._clear()

    def add(self, key: torch.Tensor, states: list[torch.Tensor], types: torch.Tensor) -> None:
        """The next window: its key [d], its memory slots (n_layer + 1 of [n, d]; the last, the top
        layer's output, is no layer's input and is not kept) and their block types [n]."""
        inputs = states[:-1]
        if self.layer_spec is not None:
            self.layers = layer_indices(self.layer_spec, len(inputs))
            inputs = [inputs[i] for i in self.layers]
        layers = torch.stack([s.detach() for s in inputs])  # [kept layers, n, d]
        self._put(self.n, key.detach(), layers, types.detach())
        self.advance(types.numel())

    def advance(self, n_tokens: int) -> None:
        """The next window, `n_tokens` long, was read (`add` stores it; a subclass that stores its
        windows otherwise calls this alone)."""
        self.ends.append((self.ends[-1] if self.ends else 0) + n_tokens)
        self.n += 1

    def reset_memory(self) -> None:
        """The model's memory was emptied: every window read so far has left it."""
        self.flushed = self.n

    def out_of_memory(self, memory_tokens: int, then: Sequence[int] = ()) -> int:
        """How many windows (the oldest ones: windows leave the memory in reading order) are out of a
        memory of `memory_tokens` tokens, once further windows of `then` tokens are read too."""
        start = self.ends[-1] if self.ends else 0
        ends = self.ends + list(accumulate(then, initial=start))[1:] if then else self.ends
        total = ends[-1] if ends else 0
        return max(self.flushed, bisect_right(ends, total - memory_tokens))

    def search(self, query: torch.Tensor, k: int, memory_tokens: int) -> list:
        """The storage's names of the k windows most similar to `query` among those out of a memory of
        `memory_tokens` tokens (in the order the retrieved slots take)."""
        if k <= 0:
            return []
        return self._search(query, self.out_of_memory(memory_tokens), k)

    def pick(self, query: torch.Tensor, k: int, memory_tokens: int) -> list[Window]:
        """(per-layer states, slot types) of the windows `search` finds."""
        dev = query.device
        return [
            (list(layers.to(dev).float().unbind(0)), types.to(dev))
            for layers, types in self._get(self.search(query, k, memory_tokens))
        ]

    # -- storage hooks: kept in memory here --
    def _clear(self) -> None:
        self.keys, self.numbers, self.states, self.types = [], [], [], []

    def _put(self, n: int, key: torch.Tensor, layers: torch.Tensor, types: torch.Tensor) -> None:
        if self.pool is not None:
            pooled, types = pool_window(layers, types, self.pool)
            layers = torch.from_numpy(pooled)
        self.keys.append(key)
        self.numbers.append(n)
        self.states.append(layers.half())
        self.types.append(types)
        if len(self.keys) > self.max_windows:
            del self.keys[0], self.numbers[0], self.states[0], self.types[0]

    def _search(self, query: torch.Tensor, below: int, k: int) -> list[int]:
        """Numbers (< below) of the k windows nearest `query`, ascending (reading order)."""
        c = sum(1 for n in self.numbers if n < below)  # numbers ascend: the candidates are a prefix
        if c == 0:
            return []
        sims = torch.stack(self.keys[:c]) @ query  # [c]
        return [self.numbers[i] for i in sims.topk(min(k, c)).indices.sort().values.tolist()]

    def _get(self, numbers: list[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        at = {n: i for i, n in enumerate(self.numbers)}
        return [(self.states[at[n]], self.types[at[n]]) for n in numbers]


def retrieve_windows(
    stores: list[PastWindows], query: list[torch.Tensor | None], memory_tokens: int, k: int, device
) -> Retrieved | None:
    """Top-k earlier windows per lane that are out of a memory of `memory_tokens` tokens, as the batch's
    retrieved slots."""
    lanes = []
    for store, q in zip(stores, query, strict=True):
        windows = store.pick(q, k, memory_tokens) if q is not None else []
        if not windows:
            lanes.append(None)
            continue
        states = [torch.cat([w[0][i] for w in windows])[None] for i in range(len(windows[0][0]))]  # [1, R, d]
        types = torch.cat([w[1] for w in windows])[None]  # [1, R]
        states = [s.to(device=device, dtype=torch.float32) for s in states]
        lanes.append(Retrieved(states, types.to(device), layers=store.layers))
    return Retrieved.stack(lanes)


def remember_windows(stores: list[PastWindows], query: list, out, batch: Batch, key_of=None) -> None:
    """Put each lane's window into its store, keyed by its mean top-layer state (also the next query);
    `key_of(out, lane, n, ids)` -> [d] tensor keys the window of n tokens (ids [n]) another way."""
    valid = batch.targets != IGNORE
    t = batch.input_ids.size(1)
    states = out.memory.states
    start = states[0].size(1) - t  # the window's own slots are the newest t of the memory
    for k, store in enumerate(stores):
        n = int(valid[k].sum())
        if n == 0:
            continue
        if key_of is None:
            key = F.normalize(out.hidden[k, :n].float().mean(0), dim=0)
        else:
            key = key_of(out, k, n, batch.input_ids[k, :n])
        store.add(key, [m[k, start : start + n] for m in states], batch.block_types[k, :n].to(key.device))
        query[k] = key
