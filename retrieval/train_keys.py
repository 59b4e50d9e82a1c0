"""Training the key head (txl/keys.py) on frozen states of an encoder, with positives from the data itself.

Pairs (a should find b; retrieval/key_pairs.py lists the kinds), each side a raw key of the encoder
(`retrieval.encoder`: a document's passages read in order with memory, as the index stage reads them; a
query encoded alone, as `ldx ask` does). By default: neighbouring CLCR passages, a CLCR title or 本院认为
sentence and a passage, a CJRC question or CUAD clause category and the passage holding its answer;
switched on in `KeyTrainConfig`: far passages of a case, its facts and its reasoning, and facts and the
reasoning of another case with the same charge or cause, and the judge_criminal judgments as a source.
Hard negatives: for every pair, the passage BM25 ranks highest for a's text among other documents (and,
with charge pairs, among cases of another cause).

The split is fixed in code. Validation: the records the tokenizer's rule holds apart
(`pipeline.tokenizer.is_held_out`, seed 0, 5%), so neither the LM nor the head saw them. Never used:
the contexts and contracts that the QA and CUAD evaluations hold apart (`retrieval.eval.qa.held_apart`)
CLCR's queries and relevance labels (only the case texts are read), and the judge_criminal cases the
article evaluation holds apart.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import bm25s
import numpy as np
import torch

from pipeline.paths import SHARED_DATA
from pipeline.records import BlockType, Segment, sha256_file
from retrieval.encoder import checkpoint_file, encode_query, load_encoder, query_ids
from retrieval.inject import DocInput, encode_documents
from retrieval.key_pairs import PairBuilder, build_pairs
from retrieval.text import terms
from txl.keys import KEYS_FILE, FitConfig, PairTable, RawKeys, attach, fit_key_head, rank_metrics
from txl.pooling import KEY_LAYER, KEY_POOLING, KEY_POOLINGS, WEIGHTED

DATA = SHARED_DATA
SOURCES = ("clcr", "cjrc", "cuad")  # the default; "judge" (judge_criminal) is the fourth


@dataclass
class KeyTrainConfig:
    data: str = str(DATA)
    sources: tuple[str, ...] = SOURCES
    seed: int = 0  # the tokenizer's split seed; also seeds the training
    holdout: float = 0.05  # the tokenizer's held-out fraction: these records are the validation split
    max_train_docs: int | None = None  # training records per source at most (validation is always whole)
    passage_chars: int = 400  # as `ldx eval retrieval` cuts cases into passages
    case_passages: int = 3  # first passages of a CLCR case encoded (the eval's dense arm reads 2)
    contract_passages: int = 16  # first passages of a contract encoded (CUAD uses 600 characters each)
    questions_per_context: int = 3
    hard_negatives: bool = True
    # the pair kinds closer to case search (retrieval/key_pairs.py), off by default (the shipped head)
    far_pairs: bool = False  # a case's facts passage and its reasoning passage
    facts_pairs: bool = False  # a case's facts (alone, as a query) and its reasoning passage
    charge_pairs: int = 0  # per case: its facts (alone) and the reasoning of another case of its cause
    cause_min_cases: int = 3  # a title ending counts as a cause when this many titles share it
    query_chars: int = 160  # characters of a case's facts read as a query
    # what the head reads (txl/keys.py): the states of this layer (0: the embedded input, i: the input
    # of layer i, -1: the last layer's output), pooled by "mean", "idf" or "bm25" (weights counted here
    # over the training passages; txl.pooling.token_weights)
    layer: int = KEY_LAYER
    pooling: str = KEY_POOLING
    device: str = "cpu"
    # raw keys saved here after encoding and read back when they were made by this encoder from the
    # same texts: a retraining of the head on the same encoder and pairs skips the encoding
    raw_cache: str | None = None  # .npz
    fit: FitConfig = field(default_factory=FitConfig)


def encode_raw(model, tokenizer, b: PairBuilder, reads: RawKeys | None = None) -> np.ndarray:
    """Raw keys [n_queries + n_passages, d]: queries first, then every passage in builder order; keys
    that read the tokens alone (`reads.context_free`) come from the embedding table, the layers unrun."""
    docs = []
    for d, texts in enumerate(b.docs):
        segs = [Segment(f"k{d}", i, 0, BlockType.OTHER, t, 0, 0, 0) for i, t in enumerate(texts)]
        docs.append(DocInput.encoded(segs, tokenizer))
    if reads is not None and reads.context_free(model):
        queries = [query_ids(model, tokenizer, q) for q in b.queries]
        return reads.embedded(model, queries + [ids for doc in docs for ids in doc.token_ids])
    passages = [e.key for doc in encode_documents(model, docs) for e in doc]
    queries = [encode_query(model, tokenizer, q) for q in b.queries]
    return np.stack(queries + passages).astype(np.float32)


def hard_negatives(b: PairBuilder, rows: list[int]) -> dict[int, int]:
    """Pair row -> the passage (of the same split, another document, of another cause when a's case
    names one) BM25 ranks first for a's text."""
    by_split: dict[bool, list[int]] = defaultdict(list)
    for j, v in enumerate(b.passage_val):
        by_split[v].append(j)
    out = {}
    for val, pool in by_split.items():
        index = bm25s.BM25()
        index.index([terms(b.passages[j]) for j in pool], show_progress=False)
        mine = [r for r in rows if b.rows[r][3] == val and terms(b.text(b.rows[r][0]))]
        if not mine:
            continue
        found, _ = index.retrieve(
            [terms(b.text(b.rows[r][0])) for r in mine], k=min(8, len(pool)), show_progress=False
        )
        for r, hits in zip(mine, found, strict=True):
            group, cause = b.rows[r][2], b.rows[r][5]
            other = [
                pool[h]
                for h in hits
                if b.passage_group[pool[h]] != group
                and (cause < 0 or b.group_cause.get(b.passage_group[pool[h]]) != cause)
            ]
            if other:
                out[r] = other[0]
    return out


def pair_tables(
    b: PairBuilder, negatives: dict[int, int]
) -> tuple[PairTable, PairTable, np.ndarray, list[str]]:
    """(training pairs, validation pairs, validation candidate rows, source of each validation pair)."""
    nq = len(b.queries)

    def row(ref) -> int:
        return ref[1] if ref[0] == "q" else nq + ref[1]

    tables = {}
    for val in (False, True):
        rows = [r for r, x in enumerate(b.rows) if x[3] == val]
        tables[val] = PairTable(
            np.array([row(b.rows[r][0]) for r in rows], dtype=np.int64),
            np.array([row(b.rows[r][1]) for r in rows], dtype=np.int64),
            np.array([b.rows[r][2] for r in rows], dtype=np.int64),
            np.array([nq + negatives[r] if r in negatives else -1 for r in rows], dtype=np.int64),
            np.array([b.rows[r][5] for r in rows], dtype=np.int64),
        )
    candidates = np.array([nq + j for j, v in enumerate(b.passage_val) if v], dtype=np.int64)
    sources = [x[4] for x in b.rows if x[3]]
    return tables[False], tables[True], candidates, sources


def per_source(z, val: PairTable, candidates: np.ndarray, sources: list[str]) -> dict[str, dict]:
    names = np.array(sources)
    return {
        s: rank_metrics(z, val.take(np.flatnonzero(names == s)), candidates) for s in sorted(set(sources))
    }


def train_keys(
    checkpoint: str | None = None, out: str | Path = KEYS_FILE, cfg: KeyTrainConfig | None = None
) -> dict:
    """Encode the pairs with the frozen encoder, train the key head, save it to `out`; the report has
    the validation metrics of the raw keys and of the head (overall and per pair source)."""
    cfg = cfg or KeyTrainConfig()
    path = checkpoint_file(checkpoint)
    if path is None or not path.is_file():
        raise FileNotFoundError(
            f"{checkpoint or 'data/models/txl_lm.pt'}: no encoder checkpoint to train keys on"
        )
    if cfg.pooling not in KEY_POOLINGS:
        raise ValueError(f"key pooling must be one of {KEY_POOLINGS}, not {cfg.pooling!r}")
    torch.manual_seed(cfg.seed)
    t0 = time.perf_counter()
    b = build_pairs(cfg)
    model, tokenizer = load_encoder(path, cfg.device, keys="raw")
    idf = token_idf(tokenizer, b, model.cfg.vocab_size) if cfg.pooling in WEIGHTED else None
    reads = RawKeys(cfg.layer, cfg.pooling, idf)
    attach(model, reads)  # the raw keys the head will read, checked against the model's layers
    encoder, texts = sha256_file(path), texts_hash(b, reads)
    raw = cached_raw(cfg.raw_cache, encoder, texts)
    if raw is None:
        with torch.no_grad():
            raw = encode_raw(model, tokenizer, b, reads)
        if cfg.raw_cache:
            np.savez(cfg.raw_cache, raw=raw, encoder=encoder, texts=texts)
    encode_s = time.perf_counter() - t0
    negatives = hard_negatives(b, list(range(len(b.rows)))) if cfg.hard_negatives else {}
    train, val, candidates, sources = pair_tables(b, negatives)
    head, report = fit_key_head(raw, train, val, candidates, cfg.fit, encoder, reads)
    with torch.no_grad():
        z = head(torch.from_numpy(raw))
        report["raw_by_source"] = per_source(
            torch.nn.functional.normalize(torch.from_numpy(raw), dim=-1), val, candidates, sources
        )
        report["head_by_source"] = per_source(z, val, candidates, sources)
    report.update(
        checkpoint=str(path),
        encoder_sha256=head.encoder_sha256,
        key_head=head.identity,
        n_train_pairs=len(train.a),
        n_val_pairs=len(val.a),
        n_val_candidates=len(candidates),
        n_hard_negatives=len(negatives),
        encode_seconds=round(encode_s, 1),
        median_cosine={"raw": median_cosine(raw), "head": median_cosine(z.numpy())},
        config={**asdict(cfg), "fit": asdict(cfg.fit)},
    )
    head.save(out, extra={k: v for k, v in report.items() if k != "epochs"})
    report["out"] = str(out)
    return report


def texts_hash(b: PairBuilder, reads: RawKeys | None = None) -> str:
    """What the raw keys were made from: the queries, the passages as the documents split them, and the
    layer and pooling (the last layer's mean adds nothing, so older caches stay valid; idf weights are
    counted from these passages, so the texts stand for them)."""
    h = hashlib.sha256()
    for part in (b.queries, *b.docs):
        h.update(json.dumps(part, ensure_ascii=False).encode())
    h.update((reads or RawKeys()).identity.encode())
    return h.hexdigest()


def token_idf(tokenizer, b: PairBuilder, vocab_size: int) -> np.ndarray:
    """[vocab] inverse document frequencies over the training passages, log((N + 1) / (df + 1)); the
    special tokens weigh 0, so the block and document tokens that open a segment never dominate its
    key (training passages are all OTHER: every other block token would otherwise weigh the most)."""
    texts = [t for t, val in zip(b.passages, b.passage_val, strict=True) if not val]
    df = np.zeros(vocab_size, dtype=np.float64)
    for ids in tokenizer.encode_batch(texts):
        df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
    idf = np.log((len(texts) + 1) / (df + 1)).astype(np.float32)
    idf[list(tokenizer.special_ids)] = 0.0
    return idf


def cached_raw(path: str | None, encoder: str, texts: str) -> np.ndarray | None:
    """The cached raw keys when this encoder made them from these texts (`texts_hash`), else None."""
    if not path or not Path(path).is_file():
        return None
    with np.load(path) as f:
        if "texts" not in f.files:  # a cache from before the texts were recorded
            return None
        raw, made_by, made_from = f["raw"], str(f["encoder"]), str(f["texts"])
    return raw if made_by == encoder and made_from == texts else None


def median_cosine(keys: np.ndarray, n: int = 2000) -> float:
    """Median cosine between distinct keys (of the first n): how anisotropic a key space is."""
    k = keys[:n] / np.linalg.norm(keys[:n], axis=1, keepdims=True)
    sims = k @ k.T
    return round(float(np.median(sims[~np.eye(len(k), dtype=bool)])), 4)
