"""The dense arm of `ldx ask` over the run's segment-state store."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, encode_query, load_encoder, sha256_file
from retrieval.hybrid import Passage
from retrieval.store import SegmentStore, StoreError
from txl.keys import key_identity

MAX_KEYS = 20_000  # sentence keys kept per session: 256 float32 each, 20 MB in all


class StoreArm:
    """Dense arm over the segment-state store: the query is encoded by the same model as the segments.
    `similarity` scores a question against sentences with the same keys (a sentence encoded as a query)."""

    def __init__(self, store: SegmentStore, model, tokenizer, passages: list[Passage], pooling: str):
        self.store, self.model, self.tokenizer, self.pooling = store, model, tokenizer, pooling
        self.segment_ids = [p.segment_id for p in passages]
        self.row_of = {s: i for i, s in enumerate(self.segment_ids)}
        self.keys: OrderedDict[str, np.ndarray] = OrderedDict()

    def key(self, text: str) -> np.ndarray:
        """The unit key of a text encoded alone, kept for the session (least recently used out first): the
        sentences of a cited segment are scored again by every question that cites it."""
        if text not in self.keys:
            self.keys[text] = np.asarray(encode_query(self.model, self.tokenizer, text, self.pooling)).ravel()
            while len(self.keys) > MAX_KEYS:
                self.keys.popitem(last=False)
        self.keys.move_to_end(text)
        return self.keys[text]

    def similarity(self, question: str) -> Callable[[list[str]], np.ndarray]:
        """The scorer `retrieval.sentence_rank.rank_sentences` takes: each sentence's key's cosine with the
        question's."""
        q = self.key(question)
        return lambda texts: np.array([float(self.key(t) @ q) for t in texts], dtype=np.float32)

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        q = self.key(query)  # a Chinese question is ranked against its evidence sentences with the same key
        only = None if allowed is None else {self.segment_ids[i] for i in np.flatnonzero(allowed)}
        hits = [(self.row_of[s], sc) for s, sc in self.store.search(q, n, only=only)[0] if s in self.row_of]
        return np.array([r for r, _ in hits], dtype=np.int64), np.array(
            [s for _, s in hits], dtype=np.float32
        )


def open_store_arm(
    root: Path,
    config: RetrievalConfig,
    checkpoint: str | None,
    device: str,
    passages: list[Passage],
    notes: list[str],
) -> StoreArm | None:
    """The dense arm over the store at `root` with the encoder that built it; None, with a note saying why
    dense search is off, when there is no store or checkpoint or the store was built by another model or
    with other keys."""
    try:
        store = SegmentStore.open(root, mmap=True, config=config)
    except StoreError as e:
        notes.append(f"dense search off: {e}")
        return None
    path = checkpoint_file(checkpoint)
    if path is None or not path.is_file():
        notes.append("dense search off: no model checkpoint to encode the question")
        return None
    built_with = store.manifest.get("model_id", "")
    if built_with and built_with != sha256_file(path):
        notes.append(f"dense search off: the index was built with model {built_with[:12]}, not {path.name}")
        return None
    model, tokenizer = load_encoder(path, device, config.key_head)
    if store.manifest.get("key_head", "") != key_identity(model):
        built = store.manifest.get("key_head") or "raw keys"
        notes.append(
            f"dense search off: the index was built with {built}, not {key_identity(model) or 'raw keys'}"
        )
        return None
    return StoreArm(store, model, tokenizer, passages, store.manifest.get("pooling", config.pooling))
