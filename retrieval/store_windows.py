"""Past windows kept in the segment-state store: txl.windows.PastWindows over a SegmentStore.

`StoreWindows` keeps one document's windows as stored segments (a FAISS key and at most P pooled
states per layer each) and searches them with the store, among those that have left the model's memory
by PastWindows' rule. `Injector` is the encoder's (retrieval/inject.py): the document's segments are
written by the encoder as it goes, and with `inject_cross_document` every other document's segments
can be injected too, except a near-duplicate's (retrieval/store_dedup.py). flows/lm_store.py keeps
`ldx eval lm`'s windows the same way.
"""

from __future__ import annotations

import numpy as np
import torch

from pipeline.records import BLOCK_TYPE_IDS, BlockType
from retrieval.config import RetrievalConfig
from retrieval.store import SegmentEntry, SegmentStore
from retrieval.store_dedup import StoreDuplicates
from txl.retrieved import Retrieved
from txl.windows import PastWindows, pool_window

_TYPE_NAMES = {i: str(t) for t, i in BLOCK_TYPE_IDS.items()}


def retrieved_inputs(
    store: SegmentStore, segment_ids: list[str], device: torch.device, dtype: torch.dtype = torch.float32
) -> Retrieved | None:
    """The given stored segments as one lane's retrieved slots, in the given order: the stored layers'
    states [1, R, d], their types and validity mask [1, R], R = k·P; None for no segments."""
    if not segment_ids:
        return None
    states, mask = store.states(segment_ids)  # [k, L, P, d], [k, P]
    k, n_layers, p, d = states.shape
    per_layer = torch.from_numpy(states.astype(np.float32)).permute(1, 0, 2, 3).reshape(n_layers, 1, k * p, d)
    types = [BLOCK_TYPE_IDS[BlockType(store.entry(s)["block_type"])] for s in segment_ids]
    return Retrieved(
        [per_layer[i].to(device=device, dtype=dtype) for i in range(n_layers)],
        torch.tensor(types, device=device).repeat_interleave(p)[None],  # [1, R]
        torch.from_numpy(mask.reshape(1, k * p)).to(device),  # [1, R]
        store.state_layers,
    )


class StoreWindows(PastWindows):
    """One document's windows in a SegmentStore: window i is the stored segment `ids[i]`. `add` pools a
    window's states and stores it as `{doc_id}:w{i}`; `keep` stores one that the caller pooled and
    named. Searches return segment ids, nearest first."""

    def __init__(self, store: SegmentStore | None, doc_id: str, pool: int, layers: list[int] | None = None):
        super().__init__(pool=pool, layers=layers)
        self.store = store
        self.doc_id = doc_id
        self.ids: list[str] = []

    def keep(self, entry: SegmentEntry, key: np.ndarray, states: np.ndarray | None, n_tokens: int) -> None:
        """The next window, already pooled: its key [d] and states [L, ≤P, d] go into the store."""
        self._store(entry, key, states)
        self.advance(n_tokens)

    def _store(self, entry: SegmentEntry, key: np.ndarray, states: np.ndarray | None) -> None:
        self.store.add([entry], key[None], [states])
        self.ids.append(entry.segment_id)

    def _candidates(self, below: int) -> set[str]:
        """The segments a search may return: the windows out of memory."""
        return set(self.ids[:below])

    # -- the storage hooks of PastWindows --
    def _clear(self) -> None:
        self.ids = []

    def _put(self, n: int, key: torch.Tensor, layers: torch.Tensor, types: torch.Tensor) -> None:
        pooled, _ = pool_window(layers, types, self.pool)
        main_type = _TYPE_NAMES[int(types.mode().values)]  # a stored segment has one block type
        self._store(SegmentEntry(f"{self.doc_id}:w{n}", self.doc_id, n, main_type), key.cpu().numpy(), pooled)

    def _search(self, query: torch.Tensor, below: int, k: int) -> list[str]:
        allowed = self._candidates(below)
        if not allowed:
            return []
        return [sid for sid, _ in self.store.search(query.cpu().numpy(), k, only=allowed)[0]]

    def _get(self, ids: list[str]) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Each segment's filled state slots [L, n, d] and their types [n]."""
        if not ids:
            return []
        r = retrieved_inputs(self.store, ids, torch.device("cpu"))
        p = r.width // len(ids)
        out = []
        for i in range(len(ids)):
            kept = r.mask[0, i * p : (i + 1) * p]
            layers = torch.stack([s[0, i * p : (i + 1) * p][kept] for s in r.states])
            out.append((layers, r.types[0, i * p : (i + 1) * p][kept]))
        return out


def choose_all(injectors: list[Injector | None], queries: list[np.ndarray | None]) -> list[list[str]]:
    """The stored segments to inject into each lane's next segment (none for a lane without an injector
    or a query): what `PastWindows.search` finds for each, the lanes that search one store with the same
    k asked in one `SegmentStore.search_each` call."""
    out: list[list[str]] = [[] for _ in injectors]
    groups: dict[tuple[int, int], list[tuple[int, np.ndarray, set[str]]]] = {}
    stores: dict[int, SegmentStore] = {}
    for i, (injector, query) in enumerate(zip(injectors, queries, strict=True)):
        allowed = injector.allowed() if injector is not None and query is not None else set()
        if allowed:
            stores[id(injector.store)] = injector.store
            groups.setdefault((id(injector.store), injector.k), []).append((i, query, allowed))
    for (store, k), asks in groups.items():
        hits = stores[store].search_each(np.stack([q for _, q, _ in asks]), k, [a for _, _, a in asks])
        for (i, _, _), found in zip(asks, hits, strict=True):
            out[i] = [sid for sid, _ in found]
    return out


class Injector(StoreWindows):
    """Chooses the stored segments to inject for the next segment of one document: its own segments
    that have left the memory (at least mem_len tokens read after them, or a memory reset since) and,
    with `inject_cross_document`, the segments of every other document that the store holds when the
    document first asks (those stored before it, and what documents encoded beside it have stored by
    then), less those of documents that `duplicates` does not let it draw on (near-duplicates)."""

    def __init__(
        self,
        store: SegmentStore,
        doc_id: str,
        config: RetrievalConfig,
        mem_len: int,
        duplicates: StoreDuplicates | None = None,
    ):
        super().__init__(store, doc_id, config.states_per_layer, store.state_layers)
        self.k = config.inject_k
        self.cross_document = config.inject_cross_document
        if self.cross_document and duplicates is None:
            raise ValueError("cross-document injection needs the store's near-duplicates (StoreDuplicates)")
        self.duplicates = duplicates
        self.mem_len = mem_len
        self._other_docs: set[str] | None = None

    def allowed(self) -> set[str]:
        """The segments `choose_all` may inject into the document's next segment."""
        return self._candidates(self.out_of_memory(self.mem_len)) if self.k > 0 else set()

    def idle_after(self, lengths: list[int]) -> bool:
        """Whether `choose` is sure to find nothing for a segment that follows the recorded ones and then
        segments of these token counts: none of this document's segments has left memory by then."""
        if self.k <= 0:
            return True
        return not self.cross_document and self.out_of_memory(self.mem_len, lengths) == 0

    def _candidates(self, below: int) -> set[str]:
        allowed = super()._candidates(below)
        if self.cross_document:
            if self._other_docs is None:  # the corpus outside this document does not change meanwhile
                docs = self.duplicates.injectable(self.doc_id)
                self._other_docs = {r["segment_id"] for r in self.store.entries() if r["doc_id"] in docs}
            allowed |= self._other_docs
        return allowed
