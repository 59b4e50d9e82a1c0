"""A hashed TF-IDF view of text, and the .npz files the analyst heads (txl.heads) ship in."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from pipeline.store import atomic_write_bytes


@dataclass
class HashedTfidf:
    """Character (or word) n-gram counts hashed into `n_features` columns, idf-weighted, sublinear tf, l2-normed.

    Hashing keeps the shipped head free of a vocabulary; character n-grams need no word segmenter for
    Chinese and still capture English stems.
    """

    n_features: int = 1 << 14
    ngram_range: tuple[int, int] = (1, 3)
    idf: np.ndarray | None = None
    analyzer: str = "char_wb"  # or "word": word n-grams, for a language whose words are spaced

    def _vectorizer(self):
        # `ldx` commands that never read text through a head should not pay for scikit-learn
        # lazy, a start-up cost: sklearn.feature_extraction.text adds ~1.0 s (measured)
        from sklearn.feature_extraction.text import HashingVectorizer

        return HashingVectorizer(
            n_features=self.n_features,
            analyzer=self.analyzer,
            ngram_range=self.ngram_range,
            alternate_sign=False,
            norm=None,
            lowercase=True,
        )

    def fit(self, texts: list[str]) -> HashedTfidf:
        counts = self._vectorizer().transform(texts)
        df = np.bincount(counts.indices, minlength=self.n_features)
        self.idf = (np.log((1 + len(texts)) / (1 + df)) + 1).astype(np.float32)
        return self

    def transform(self, texts: list[str]) -> sparse.csr_matrix:
        x = self._vectorizer().transform(texts).astype(np.float32)
        x.data = 1 + np.log(x.data)
        x = x @ sparse.diags(self.idf)
        norms = np.sqrt(x.multiply(x).sum(axis=1)).A.ravel()
        norms[norms == 0] = 1
        return sparse.csr_matrix(sparse.diags(1 / norms) @ x, dtype=np.float32)


def save_npz(path: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """Arrays and a JSON-able dict in one compressed .npz, written atomically (a shipped head)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    atomic_write_bytes(path, buf.getvalue())


def load_npz(path: Path) -> tuple[dict[str, np.ndarray], dict]:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files if k != "meta"}
        meta = json.loads(bytes(z["meta"]).decode())
    return arrays, meta
