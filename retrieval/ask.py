"""Question answering over an indexed run: retrieve segments, read an answer, cite the sources.

`AskSession(out_dir)` loads the run's segments, blocks and documents (latest run of each document),
builds BM25 over the segments, and adds the dense arm over the segment-state store when OUT_DIR/index
exists and its checkpoint loads. `session.ask(question, k, doc_id)` returns an `Answer` whose citations
carry the block's page and bbox. The answer text comes from the reader head when a reader checkpoint
exists for the encoder (the most confident answer over the cited segments, and the segment it came
from); otherwise the answer is "none" and only the citations are returned.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from pipeline.errors import DocumentError
from pipeline.records import BlockType, Segment
from pipeline.store import open_duckdb
from retrieval.cache import DocStateCache
from retrieval.config import RetrievalConfig
from retrieval.hybrid import Filters, HybridIndex, Passage
from retrieval.stage import INDEX_DIR
from retrieval.store import SegmentStore, StoreError
from txl.keys import key_identity


class IndexMissing(DocumentError):
    stage = "ask"


class BadQuestion(DocumentError):
    """A question with nothing to search for (empty, or only punctuation)."""

    stage = "ask"


MAX_K = 100  # citations per answer: the reader reads each, so a huge k only buries the answer


@dataclass
class Citation:
    doc_id: str
    segment_id: str
    block_type: str
    page: int | None
    bbox: list[float] | None  # of the segment's block: top-left origin, PDF points
    score: float  # reciprocal-rank-fusion score over the search arms (higher is better)
    text: str


@dataclass
class Answer:
    question: str
    answer: str  # answer text, "YES", "NO" or "none"
    answer_score: float | None  # the reader's P(answer type) in the segment the answer came from
    answer_segment: str | None  # the cited segment the answer was read from
    citations: list[Citation]
    arms: list[str]
    reader: str | None  # the reader checkpoint, None when no reader exists
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


# Each segment/block/document once: a document re-run in a later run replaces its earlier rows.
_LATEST = "QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY run_id DESC) = 1"


class StoreArm:
    """Dense arm over the segment-state store: the query is encoded by the same model as the segments."""

    def __init__(self, store: SegmentStore, model, tokenizer, passages: list[Passage], pooling: str):
        self.store, self.model, self.tokenizer, self.pooling = store, model, tokenizer, pooling
        self.segment_ids = [p.segment_id for p in passages]
        self.row_of = {s: i for i, s in enumerate(self.segment_ids)}

    def top(self, query: str, n: int, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        from retrieval.encoder import encode_query

        q = encode_query(self.model, self.tokenizer, query, self.pooling)
        only = None if allowed is None else {self.segment_ids[i] for i in np.flatnonzero(allowed)}
        hits = [(self.row_of[s], sc) for s, sc in self.store.search(q, n, only=only)[0] if s in self.row_of]
        return np.array([r for r, _ in hits], dtype=np.int64), np.array([s for _, s in hits], dtype=np.float32)


class AskSession:
    def __init__(self, out_dir: str | Path, config: RetrievalConfig | None = None, checkpoint: str | None = None,
                 device: str = "auto", reader: Path | None = None):
        self.out_dir = Path(out_dir)
        self.config = config or RetrievalConfig()
        self.notes: list[str] = []
        if not (self.out_dir / "segments").is_dir():
            raise IndexMissing(str(self.out_dir), "no segments table here; run `ldx run INPUT --out OUT_DIR` first")
        con = open_duckdb(self.out_dir)
        seg = con.execute(
            "SELECT segment_id, doc_id, seg_idx, block_idx, CAST(type AS VARCHAR) AS type, text FROM segments "
            + _LATEST.format(key="segment_id") + " ORDER BY doc_id, seg_idx"
        ).fetchall()
        docs = con.execute(
            "SELECT doc_id, kind, meta.court AS court, meta.date AS date FROM documents " + _LATEST.format(key="doc_id")
        ).fetchall()
        blocks = con.execute(
            "SELECT doc_id, block_idx, page, bbox FROM blocks " + _LATEST.format(key="doc_id, block_idx")
        ).fetchall()
        if not seg:
            raise IndexMissing(str(self.out_dir), "the run wrote no segments")
        self.blocks = {(d, b): (page, list(bbox) if bbox is not None else None) for d, b, page, bbox in blocks}
        doc_meta = {d: (kind, court, date) for d, kind, court, date in docs}
        self.block_of: dict[str, int] = {}
        passages = []
        for sid, doc_id, _, block_idx, btype, text in seg:
            kind, court, date = doc_meta.get(doc_id, (None, None, None))
            passages.append(Passage(sid, doc_id, text, btype, kind, court, date))
            self.block_of[sid] = block_idx
        self.search_index = HybridIndex(passages, bm25=self.config.bm25, config=self.config)
        self.model = self.tokenizer = None
        self._add_dense(checkpoint, device)
        self.reader = self._load_reader(checkpoint, device, reader)
        self.cache = DocStateCache(self.config.cache_bytes)

    def _add_dense(self, checkpoint: str | None, device: str) -> None:
        from retrieval.encoder import checkpoint_file, load_encoder, sha256_file

        if not self.config.dense:
            return
        try:
            store = SegmentStore.open(self.out_dir / INDEX_DIR, mmap=True, config=self.config)
        except StoreError as e:
            self.notes.append(f"dense search off: {e}")
            return
        path = checkpoint_file(checkpoint)
        if path is None or not path.is_file():
            self.notes.append("dense search off: no model checkpoint to encode the question")
            return
        built_with = store.manifest.get("model_id", "")
        if built_with and built_with != sha256_file(path):
            self.notes.append(f"dense search off: the index was built with model {built_with[:12]}, not {path.name}")
            return
        model, tokenizer = load_encoder(path, device, self.config.key_head)
        if store.manifest.get("key_head", "") != key_identity(model):
            built = store.manifest.get("key_head") or "raw keys"
            self.notes.append(f"dense search off: the index was built with {built}, not {key_identity(model) or 'raw keys'}")
            return
        self.model, self.tokenizer = model, tokenizer
        pooling = store.manifest.get("pooling", self.config.pooling)
        self.search_index.add_dense("txl", StoreArm(store, model, tokenizer, self.search_index.passages, pooling))

    def _load_reader(self, checkpoint: str | None, device: str, reader_file: Path | None):
        """The reader head for this encoder: the one given (refused with an error when it was trained on
        another encoder), else the shipped one (left out with a note in that case)."""
        from retrieval.encoder import checkpoint_file, load_encoder, sha256_file
        from retrieval.reader.runtime import READER_FILE, ReaderMismatch, load_reader

        path = checkpoint_file(checkpoint)
        if path is None or not path.is_file():
            return None
        if reader_file is not None and not reader_file.is_file():
            raise ReaderMismatch(str(reader_file), "no such reader checkpoint")
        file = reader_file or READER_FILE
        if not file.is_file():
            return None
        try:
            reader = load_reader(file, None, None, sha256_file(path))
        except ReaderMismatch as e:
            if reader_file is not None:
                raise
            self.notes.append(f"reader not used: {e}")
            return None
        if self.model is None:
            self.model, self.tokenizer = load_encoder(path, device)
        reader.model, reader.tokenizer = self.model, self.tokenizer
        return reader

    def doc_states(self, doc_id: str) -> dict[str, torch.Tensor]:
        """segment_id -> [T, d] states of a document read in order with memory; cached for the session."""
        from pipeline.tokenizer import encode_segment
        from retrieval.inject import encode_document

        device = next(self.model.parameters()).device
        cached = self.cache.get(doc_id, device)
        if cached is None:
            passages = [p for p in self.search_index.passages if p.doc_id == doc_id]
            segments = [Segment(p.doc_id, int(p.segment_id.rsplit(":", 1)[1]), self.block_of[p.segment_id],
                                BlockType(p.block_type), p.text, 0, 0, 0) for p in passages]
            ids = [encode_segment(s, self.tokenizer)[0] for s in segments]
            cached = [e.hidden for e in encode_document(self.model, segments, ids)]
            self.cache.put(doc_id, cached)
        passages = [p for p in self.search_index.passages if p.doc_id == doc_id]
        return {p.segment_id: h for p, h in zip(passages, cached, strict=True)}

    def read(self, question: str, citations: list[Citation]) -> tuple[str, float | None, str | None]:
        """(answer, confidence, segment_id it came from): the most confident answer the reader finds in
        the cited segments; "none" when every segment says no answer."""
        from retrieval.reader.runtime import EncodedText

        q = self.reader.question(question)
        best, best_conf, source = "none", None, None
        for c in citations:
            states = self.doc_states(c.doc_id)[c.segment_id]
            enc = self.tokenizer.hf.encode(c.text, add_special_tokens=False)
            hidden = states[states.size(0) - len(enc.ids):].float().cpu()  # drop the prefix tokens
            pred = self.reader.read(c.text, EncodedText(hidden, [tuple(o) for o in enc.offsets], list(enc.ids)), q)
            # ranked by P(answer type): a span's own probability shrinks with the passage's length, so
            # against it a short title's YES/NO would win every time
            if pred.answer and (best_conf is None or pred.type_prob > best_conf):
                best, best_conf, source = pred.answer, pred.type_prob, c.segment_id
        return best, best_conf, source

    def citation(self, segment_id: str, score: float) -> Citation:
        p = self.search_index.passages[self.search_index.row_of[segment_id]]
        page, bbox = self.blocks.get((p.doc_id, self.block_of[segment_id]), (None, None))
        return Citation(p.doc_id, segment_id, p.block_type, page, bbox, round(float(score), 6), p.text)

    def ask(self, question: str, k: int = 10, doc_id: str | None = None, filters: Filters | None = None) -> Answer:
        if not any(ch.isalnum() for ch in question):
            raise BadQuestion("question", f"{question[:40]!r} has no words to search for")
        if k < 1:
            raise BadQuestion("question", f"k must be at least 1, not {k}")
        notes = list(self.notes)
        if k > MAX_K:
            notes.append(f"k={k} lowered to {MAX_K}")
            k = MAX_K
        filters = filters or Filters()
        if doc_id is not None:
            filters.doc_ids = {doc_id}
            if not any(p.doc_id == doc_id for p in self.search_index.passages):
                raise IndexMissing(str(self.out_dir), f"no document {doc_id} in this run")
        hits = self.search_index.search(question, k=k, filters=filters, level="segment", rrf_k=self.config.rrf_k)
        citations = [self.citation(h.segment_id, h.score) for h in hits]
        answer, score, source = "none", None, None
        if self.reader is None:
            notes.append("no reader for this encoder: answer is 'none'; see the citations")
        else:
            answer, score, source = self.read(question, citations)
        return Answer(question, answer, score, source, citations, self.search_index.arms,
                      getattr(self.reader, "checkpoint", None), notes)


def parse_date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None
