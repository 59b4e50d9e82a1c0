"""Evaluation of document retrieval on any corpus labelled in the CLCR layout.

Layout: CASES.jsonl(.gz) lines `{id, title?, text}`; Q.jsonl lines `{task_id, query}`; QRELS.tsv with a
header and columns `task_id, annotator, case_id, label` (graded 0/1/2, one row per annotator). The gain
of a case for a query is its mean label over the annotators who labelled it; a case is relevant when
that mean is above zero. In one run: BM25 alone, each dense arm alone ("minilm": the packaged sentence
model; "txl": the encoder's keys, each case read in order with memory, through the trained key head when
there is one for the encoder (txl/keys.py); "txl_raw": the same without the head), their RRF hybrid with
the language-aware weights of `retrieval.hybrid.arm_weights` ("hybrid"), with equal weights
("hybrid_equal"), and BM25 with the txl arm alone at equal weights ("bm25+txl").

A dense arm reads the first `dense_passages` passages of a case (0: all, as the index stage of `ldx run`
keys every segment of a document) and ranks a case by its best passage (as `ldx ask`'s store arm and
`HybridIndex` do) or, with `dense_case="mean"`, by the normalised mean of its passages' keys.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.errors import CorruptDocument
from pipeline.records import BlockType, Segment, sha256_file
from pipeline.tokenizer import encode_segment
from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, encode_query, load_encoder
from retrieval.eval.metrics import ndcg_at_k, recall_at_k
from retrieval.hybrid import HybridIndex, MatrixArm, Passage, han_share
from retrieval.inject import encode_document
from retrieval.sentence import embed
from txl.keys import RawKeys, attach, head_for, key_identity

DENSE_CASES = ("passages", "mean")
DENSE_MODELS = (
    "minilm",
    "txl",
    "txl_raw",
)  # the sentence model; the encoder's keys with / without the key head


@dataclass
class RetrievalEvalConfig:
    passage_chars: int = 400  # lines of a case are packed into passages of at most this many characters
    # passages per case given to the dense models, the first ones (2: title, header, parties); 0 = all,
    # as `ldx run` indexes every segment of a document
    dense_passages: int = 2
    # how a dense arm ranks a case: "passages" = by its best passage (each passage its own key, as the
    # store of `ldx run` holds them and HybridIndex forms documents), "mean" = by one key per case, the
    # normalised mean of its passages' keys
    dense_case: str = "passages"
    dense_models: tuple[str, ...] = ("minilm", "txl")
    depth: int = 5000  # passages each arm ranks before documents are formed
    rrf_k: int = 60
    batch_size: int = 64
    checkpoint: str | None = None  # encoder for dense_model "txl"; None = the shipped one
    key_head: str = "auto"  # key head of the "txl" arm (retrieval.config.RetrievalConfig.key_head)
    # a folder for the txl arms' raw passage keys (per encoder and passage texts): a rerun with another
    # key head or `dense_case` reads them instead of encoding the corpus again
    key_cache: str | None = None


def _open_text(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")


def _jsonl(path: Path) -> list[dict]:
    rows = []
    with _open_text(path) as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise CorruptDocument(str(path), f"line {n} is not JSON ({e.msg})") from None
    return rows


def split_passages(doc_id: str, title: str, text: str, max_chars: int) -> list[Passage]:
    """A case's lines packed greedily into passages of ≤ max_chars (a longer line is cut); title first."""
    pieces: list[str] = []
    for line in ([title] if title else []) + text.splitlines():
        line = line.strip()
        while len(line) > max_chars:
            pieces.append(line[:max_chars])
            line = line[max_chars:]
        if line:
            pieces.append(line)
    passages: list[str] = []
    for piece in pieces:
        if passages and len(passages[-1]) + 1 + len(piece) <= max_chars:
            passages[-1] += "\n" + piece
        else:
            passages.append(piece)
    return [Passage(f"{doc_id}:{i}", doc_id, t) for i, t in enumerate(passages)]


def load_qrels(path: Path) -> dict[str, dict[str, float]]:
    """query id -> case id -> mean label over the annotators who gave one."""
    labels: dict[tuple[str, str], list[float]] = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        missing = {"task_id", "case_id", "label"} - set(reader.fieldnames or [])
        if missing:
            raise CorruptDocument(str(path), f"qrels header lacks {sorted(missing)}")
        for row in reader:
            if row["label"] in ("", None, "nan", "NaN"):
                continue
            labels[(row["task_id"], row["case_id"])].append(float(row["label"]))
    gains: dict[str, dict[str, float]] = defaultdict(dict)
    for (q, case), ls in labels.items():
        gains[q][case] = float(np.mean(ls))
    return dict(gains)


def _dense_vectors(name: str, cfg: RetrievalEvalConfig, passages: list[Passage]):
    """(unit vectors of the passages, query encoder, key head id or "") of the dense model `name`."""
    if name == "minilm":
        return embed([p.text for p in passages], batch_size=cfg.batch_size), lambda q: embed([q])[0], ""
    if name not in ("txl", "txl_raw"):
        raise ValueError(f"dense model must be one of {DENSE_MODELS}, not {name!r}")
    path = checkpoint_file(cfg.checkpoint)
    if path is None or not path.is_file():
        raise CorruptDocument(
            str(cfg.checkpoint or "data/models/"), "no encoder checkpoint for the txl dense arm"
        )
    model, tok = load_encoder(path, "auto", "raw")
    head = None if name == "txl_raw" else head_for(path, cfg.key_head)
    reads = head.raw_keys if head is not None else RawKeys()
    attach(model, reads)
    raw = raw_passage_keys(model, tok, passages, path, cfg.key_cache, reads)
    # the head maps each raw key on its own, so keys through it are the head of the raw keys
    attach(model, head)
    vecs = raw if head is None else head.apply_np(raw)
    return vecs, lambda q: encode_query(model, tok, q), key_identity(model)


def raw_passage_keys(
    model, tok, passages: list[Passage], checkpoint: Path, cache: str | None, reads: RawKeys
) -> np.ndarray:
    """Raw keys of the passages (pooled as `reads` says, which the model has attached), each case's
    read in order with memory as the index stage does; with a `cache` folder, kept there per encoder,
    pooling and passage texts and read back instead of encoding."""
    h = hashlib.sha256(sha256_file(checkpoint).encode())
    for p in passages:
        h.update(f"{p.segment_id}\0{p.text}\0".encode())
    h.update(reads.fingerprint())
    path = Path(cache) / f"raw-{h.hexdigest()[:24]}.npy" if cache else None
    if path is not None and path.is_file():
        return np.load(path)
    by_doc: dict[str, list[Passage]] = defaultdict(list)
    for p in passages:
        by_doc[p.doc_id].append(p)
    keys = {}
    for doc_passages in by_doc.values():
        segs = [Segment(p.doc_id, i, 0, BlockType.OTHER, p.text, 0, 0, 0) for i, p in enumerate(doc_passages)]
        ids = [encode_segment(s, tok)[0] for s in segs]
        if reads.context_free(model):  # the embedded tokens: the same keys without the layers
            found = reads.embedded(model, ids)
        else:
            found = [e.key for e in encode_document(model, segs, ids)]
        keys.update({p.segment_id: k for p, k in zip(doc_passages, found, strict=True)})
    raw = np.stack([keys[p.segment_id] for p in passages]).astype(np.float32)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, raw)
    return raw


def case_means(vecs: np.ndarray, rows: np.ndarray, passages: list[Passage]) -> tuple[np.ndarray, np.ndarray]:
    """One unit key per case, the normalised mean of its passages' keys (`vecs[i]` is passage `rows[i]`),
    held at the case's first passage row: (keys, rows)."""
    docs = np.array([passages[r].doc_id for r in rows])
    _, first, inverse = np.unique(docs, return_index=True, return_inverse=True)
    sums = np.zeros((len(first), vecs.shape[1]), dtype=np.float64)
    np.add.at(sums, inverse, vecs)
    sums /= np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return sums.astype(np.float32), rows[first]


@dataclass
class EvalSet:
    """A labelled corpus made searchable: every arm indexed, the labelled queries and their gains."""

    index: HybridIndex
    queries: dict[str, str]  # task_id -> text, labelled queries only
    gains: dict[str, dict[str, float]]
    n_cases: int
    n_dense_passages: int
    seconds: dict[str, float]  # indexing time per arm
    key_heads: dict[str, str]  # dense arm -> the key head its keys went through ("" = none)


def build_eval_set(
    corpus: Path,
    queries: Path,
    qrels: Path,
    config: RetrievalEvalConfig | None = None,
    retrieval: RetrievalConfig | None = None,
) -> EvalSet:
    """BM25 over every passage of every case and each dense model over the first `dense_passages` (0:
    all), a case ranked by its best passage or by its mean key (`dense_case`)."""
    cfg = config or RetrievalEvalConfig()
    if cfg.dense_case not in DENSE_CASES:
        raise ValueError(f"dense_case must be one of {DENSE_CASES}, not {cfg.dense_case!r}")
    t0 = time.perf_counter()
    cases = _jsonl(corpus)
    passages: list[Passage] = []
    dense_rows: list[int] = []
    for case in cases:
        if "id" not in case or "text" not in case:
            raise CorruptDocument(str(corpus), "every line needs `id` and `text`")
        ps = split_passages(str(case["id"]), case.get("title") or "", case["text"], cfg.passage_chars)
        n_dense = len(ps) if cfg.dense_passages <= 0 else min(cfg.dense_passages, len(ps))
        dense_rows.extend(range(len(passages), len(passages) + n_dense))
        passages.extend(ps)
    qs = {str(q["task_id"]): q["query"] for q in _jsonl(queries)}
    gains = load_qrels(qrels)
    index = HybridIndex(passages, config=retrieval)
    seconds = {"bm25": round(time.perf_counter() - t0, 1)}
    rows = np.array(dense_rows, dtype=np.int64)
    heads = {}
    for name in cfg.dense_models:
        t1 = time.perf_counter()
        vecs, encode, heads[name] = _dense_vectors(name, cfg, [passages[r] for r in rows])
        arm_vecs, arm_rows = (
            (vecs, rows) if cfg.dense_case == "passages" else case_means(vecs, rows, passages)
        )
        index.add_dense(name, MatrixArm(arm_vecs, encode, len(passages), arm_rows))
        seconds[name] = round(time.perf_counter() - t1, 1)
    labelled = {q: text for q, text in qs.items() if q in gains}
    n_dense = len(dense_rows) if cfg.dense_models else 0
    return EvalSet(index, labelled, gains, len(cases), n_dense, seconds, heads)


def score_queries(
    es: EvalSet, arms: list[str], weights: dict | None, cfg: RetrievalEvalConfig
) -> dict[str, list[float]]:
    """Per labelled query: [nDCG@10, nDCG@30, recall@100] of the document ranking of `arms` fused with
    `weights` (None = the language-aware weights of the index's RetrievalConfig)."""
    out = {}
    for q, text in es.queries.items():
        hits = es.index.search(
            text, k=100, level="document", arms=arms, depth=cfg.depth, rrf_k=cfg.rrf_k, weights=weights
        )
        ranking = [h.doc_id for h in hits]
        out[q] = [
            ndcg_at_k(ranking, es.gains[q], 10),
            ndcg_at_k(ranking, es.gains[q], 30),
            recall_at_k(ranking, es.gains[q], 100),
        ]
    return out


METRICS = ("ndcg@10", "ndcg@30", "recall@100")


def mean_metrics(per_query: dict[str, list[float]]) -> dict[str, float]:
    means = np.mean(list(per_query.values()), axis=0)
    return {m: round(float(v), 4) for m, v in zip(METRICS, means, strict=True)}


def evaluate_retrieval(
    corpus: Path,
    queries: Path,
    qrels: Path,
    config: RetrievalEvalConfig | None = None,
    retrieval: RetrievalConfig | None = None,
) -> dict:
    """nDCG@10, nDCG@30 and recall@100 per arm (bm25, each dense model, hybrid, hybrid_equal), averaged
    over the labelled queries; `retrieval` gives the hybrid's fusion weights."""
    cfg = config or RetrievalEvalConfig()
    es = build_eval_set(corpus, queries, qrels, cfg, retrieval)
    index = es.index
    # (arms, weights): None = the language-aware weights of the index's RetrievalConfig
    runs: dict[str, tuple[list[str], dict | None]] = {a: ([a], {}) for a in index.arms}
    if len(index.arms) > 1:
        runs.update(hybrid=(index.arms, None), hybrid_equal=(index.arms, {}))
    if "bm25" in index.arms and "txl" in index.arms:
        runs["bm25+txl"] = (["bm25", "txl"], {})
    result: dict = {
        "n_cases": es.n_cases,
        "n_passages": len(index.passages),
        "n_dense_passages": es.n_dense_passages,
        "n_queries": len(es.queries),
        "gain": "mean label over annotators",
        "config": cfg.__dict__,
        "hybrid_weights": {
            "arm_weights": index.config.arm_weights,
            "zh_arm_weights": index.config.zh_arm_weights,
        },
        "n_zh_queries": sum(han_share(t) >= index.config.zh_min_han_share for t in es.queries.values()),
        "index_seconds": es.seconds,
        "key_heads": {arm: head or "raw keys" for arm, head in es.key_heads.items() if arm.startswith("txl")},
    }
    for name, (use, weights) in runs.items():
        result[name] = mean_metrics(score_queries(es, use, weights, cfg))
    return result
