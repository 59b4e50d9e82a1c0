"""Search over the segment store's keys: top-k by inner product, restricted to a set of segments, with
exact re-ranking of IVF-PQ candidates. A mixin of `retrieval.store.SegmentStore`, which owns the index,
the refine copy, the metadata rows and the manifest it reads."""

from __future__ import annotations

import numpy as np


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
            allowed = set(self._rows) if only is None else only & set(self._rows)
            allowed -= exclude or set()
            if not allowed:
                return [[] for _ in range(len(q))]
            allowed_ids = np.array([self._rows[s]["id"] for s in allowed], dtype=np.int64)
            k = min(k, len(allowed))
            if factor and len(allowed) <= self.index.nprobe * len(self) / self.index.nlist:
                # no more keys than the probed cells hold: score them all exactly, since the IVF would
                # miss those that lie outside the probed cells (injection's small same-document sets)
                return self._hits(
                    *self._rerank(q, np.broadcast_to(allowed_ids, (len(q), len(allowed_ids))), k)
                )
            sel = faiss.IDSelectorBatch(allowed_ids)
            kind = self.manifest["built"]
            if kind == "ivfpq":
                params = faiss.SearchParametersIVF(sel=sel, nprobe=self.index.nprobe)
            elif kind == "hnsw":
                params = faiss.SearchParametersHNSW(sel=sel, efSearch=self.config.hnsw_ef_search)
            else:
                params = faiss.SearchParameters(sel=sel)
        elif self.manifest["built"] == "hnsw":
            params = faiss.SearchParametersHNSW(efSearch=self.config.hnsw_ef_search)
        k = min(k, len(self))
        if factor:
            _, candidates = self.index.search(q, min(k * factor, len(self)), params=params)
            return self._hits(*self._rerank(q, candidates, k))
        return self._hits(*self.index.search(q, k, params=params))

    def _hits(self, scores: np.ndarray, ids: np.ndarray) -> list[list[tuple[str, float]]]:
        return [
            [(self._sid_of[i], float(s)) for i, s in zip(row_ids, row_s, strict=True) if i >= 0]
            for row_ids, row_s in zip(ids.tolist(), scores.tolist(), strict=True)
        ]

    def _rerank(self, q: np.ndarray, candidates: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The k best of each row's candidate ids by exact inner product with the refine copy's keys."""
        scores = np.full((len(q), k), -np.inf, dtype=np.float32)
        ids = np.full((len(q), k), -1, dtype=np.int64)
        for r, row in enumerate(candidates):
            row = row[row >= 0]
            if not len(row):
                continue
            exact = self.refine.reconstruct_batch(row) @ q[r]
            best = np.argsort(-exact, kind="stable")[:k]
            scores[r, : len(best)], ids[r, : len(best)] = exact[best], row[best]
        return scores, ids
