"""Search over the segment store's keys: top-k by inner product, restricted to a set of segments, with
exact re-ranking of IVF-PQ candidates. A mixin of `retrieval.store.SegmentStore`, which owns the index,
the refine copy, the metadata rows and the manifest it reads.

A search restricted to a small set (injection's: a document's own segments that left the memory) scores
that set's keys exactly where the store holds them exactly beside an approximate index (HNSW's flat
storage, IVF-PQ's refine copy): its cost follows the set, not the store, and an approximate index
filtered down to a few keys would miss some of them. `search_each` does so for many queries, each with
its own set, gathering their keys in one call.
"""

from __future__ import annotations

import numpy as np

# a restricted HNSW search over at most this many keys scores them exactly (4096 x d = 256: ~0.3 ms)
EXACT_MAX = 4096


class StoreSearch:
    """The reading half of `SegmentStore` that asks FAISS for neighbours."""

    def search(
        self, queries: np.ndarray, k: int, only: set[str] | None = None, exclude: set[str] | None = None
    ) -> list[list[tuple[str, float]]]:
        """Top-k (segment_id, inner product) per query row; `only`/`exclude` restrict by segment_id."""
        # lazy, a start-up cost: faiss and its OpenMP runtime (see retrieval/faiss_index.py)
        import faiss

        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        if len(self) == 0 or k <= 0:
            return [[] for _ in range(len(q))]
        params = None
        factor = self.config.ivf_refine_k_factor if self.refine is not None else 0
        if only is not None or exclude is not None:
            allowed_ids = self._allowed_ids(only, exclude)
            if not len(allowed_ids):
                return [[] for _ in range(len(q))]
            k = min(k, len(allowed_ids))
            if self._scores_exactly(len(allowed_ids)):
                return self._hits(*self._rerank(q, [allowed_ids] * len(q), k))
            sel = faiss.IDSelectorBatch(allowed_ids)
            kind = self.manifest["built"]
            if kind == "ivfpq":
                params = faiss.SearchParametersIVF(sel=sel, nprobe=self.index.nprobe)
            elif kind == "hnsw":
                params = faiss.SearchParametersHNSW(sel=sel, efSearch=self.config.ef_search(len(self)))
            else:
                params = faiss.SearchParameters(sel=sel)
        elif self.manifest["built"] == "hnsw":
            params = faiss.SearchParametersHNSW(efSearch=self.config.ef_search(len(self)))
        k = min(k, len(self))
        if factor:
            _, candidates = self.index.search(q, min(k * factor, len(self)), params=params)
            return self._hits(*self._rerank(q, [row[row >= 0] for row in candidates], k))
        return self._hits(*self.index.search(q, k, params=params))

    def search_each(self, queries: np.ndarray, k: int, only: list[set[str]]) -> list[list[tuple[str, float]]]:
        """`search(queries[i], k, only=only[i])` for every row i, with the same results; where every set is
        scored exactly, the keys of all of them are read in one call."""
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        allowed = [self._allowed_ids(s, None) for s in only]
        if len(self) == 0 or k <= 0 or not all(self._scores_exactly(len(a)) for a in allowed if len(a)):
            return [self.search(q[i], k, only=s)[0] for i, s in enumerate(only)]
        out: list[list[tuple[str, float]]] = [[] for _ in range(len(q))]
        rows = [i for i, a in enumerate(allowed) if len(a)]
        if not rows:
            return out
        keys = self._exact_keys().reconstruct_batch(np.concatenate([allowed[i] for i in rows]))
        at = 0
        for i in rows:
            n = len(allowed[i])
            # a copy of its own, as `search` scores a freshly read array: the same product, bit for bit
            scores, ids = self._top(q[i], allowed[i], np.ascontiguousarray(keys[at : at + n]), min(k, n))
            out[i] = self._hits(scores[None], ids[None])[0]
            at += n
        return out

    def _allowed_ids(self, only: set[str] | None, exclude: set[str] | None) -> np.ndarray:
        """The FAISS ids of the stored segments in `only` (all when None) and not in `exclude`, ascending
        (so that equal scores rank the same way whatever the set's history)."""
        rows = self._rows
        names = self._rows.keys() if only is None else (s for s in only if s in rows)
        ids = [rows[s]["id"] for s in names if not exclude or s not in exclude]
        return np.sort(np.array(ids, dtype=np.int64))

    def _scores_exactly(self, n_allowed: int) -> bool:
        """Whether a search restricted to `n_allowed` keys scores them all exactly instead of asking the
        index: with HNSW, for a small set; with IVF-PQ and its refine copy, for no more keys than the
        probed cells hold, since the IVF would miss those that lie outside the probed cells."""
        if self.manifest["built"] == "hnsw":
            return n_allowed <= EXACT_MAX
        if self.refine is not None and self.config.ivf_refine_k_factor:
            return n_allowed <= self.index.nprobe * len(self) / self.index.nlist
        return False

    def _exact_keys(self):
        """The index that holds the keys exactly: the refine copy, else the index itself (flat, HNSW)."""
        return self.refine if self.refine is not None else self.index

    def _hits(self, scores: np.ndarray, ids: np.ndarray) -> list[list[tuple[str, float]]]:
        return [
            [(self._sid_of[i], float(s)) for i, s in zip(row_ids, row_s, strict=True) if i >= 0]
            for row_ids, row_s in zip(ids.tolist(), scores.tolist(), strict=True)
        ]

    def _rerank(self, q: np.ndarray, candidates: list[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best of each row's candidate ids by exact inner product with their stored keys."""
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        for r, row in enumerate(candidates):
            if len(row):
                scores[r], ids[r] = self._top(q[r], row, self._exact_keys().reconstruct_batch(row), k)
        return scores, ids

    @staticmethod
    def _top(query: np.ndarray, ids: np.ndarray, keys: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """[k] best scores and ids (-inf and -1 past the candidates) of the candidates `ids` with `keys`."""
        exact = keys @ query
        best = np.argsort(-exact, kind="stable")[:k]
        scores = np.full(k, -np.inf, dtype=np.float32)
        out = np.full(k, -1, dtype=np.int64)
        scores[: len(best)], out[: len(best)] = exact[best], ids[best]
        return scores, out
