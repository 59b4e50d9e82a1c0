"""Training the key head (txl/keys.py) on frozen states of an encoder, with positives from the data itself.

Pairs (a should find b), each side a raw key of the encoder (`retrieval.encoder`: a document's passages
read in order with memory, as the index stage reads them; a query encoded alone, as `ldx ask` does):
- CLCR cases: neighbouring passages of a case; the case's title (alone) and its second passage; a
  sentence of its 本院认为 reasoning (alone) and its first passage (title, header, parties);
- CJRC: a question (alone) and the passage of its context holding the answer;
- CUAD: a clause category (alone, as benchmarks/cuad_segment_recall.py asks) and the passage of the
  contract holding the answer.
Hard negatives: for every pair, the passage BM25 ranks highest for a's text among other documents.

The split is fixed in code. Validation: the records the tokenizer's rule holds apart
(`pipeline.tokenizer.is_held_out`, seed 0, 5%), so neither the LM nor the head saw them. Never used:
the contexts and contracts that the QA and CUAD evaluations hold apart (`retrieval.eval.qa.held_apart`)
and CLCR's queries and relevance labels (only the case texts are read).
"""

from __future__ import annotations

import gzip
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
from pipeline.tokenizer import encode_segment, is_held_out
from retrieval.encoder import checkpoint_file, encode_query, load_encoder
from retrieval.eval.qa import held_apart
from retrieval.eval.search import split_passages
from retrieval.inject import DocInput, encode_documents
from retrieval.text import terms
from txl.keys import KEYS_FILE, FitConfig, PairTable, fit_key_head, rank_metrics

DATA = SHARED_DATA
CLCR = "zh/judgments/clcr_cases.jsonl.gz"
CJRC = "zh/qa/cjrc_dev.json"
CUAD = "en/contracts/cuad_contracts.jsonl.gz"
CUAD_QA = "en/contracts/cuad_qa.jsonl.gz"
SOURCES = ("clcr", "cjrc", "cuad")


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
    device: str = "cpu"
    # raw keys saved here after encoding (.npy) and read back when their row count fits the pairs: a
    # retraining of the head on the same encoder and data skips the encoding
    raw_cache: str | None = None  # .npz
    fit: FitConfig = field(default_factory=FitConfig)


class PairBuilder:
    """Texts to encode and the pairs between them, before encoding: refs are ("q", i) for a query
    encoded alone, ("p", j) for passage j of the documents encoded in order."""

    def __init__(self):
        self.queries: list[str] = []
        self.docs: list[list[str]] = []
        self.passages: list[str] = []
        self.passage_group: list[int] = []
        self.passage_val: list[bool] = []
        self.rows: list[tuple[tuple[str, int], tuple[str, int], int, bool, str]] = []

    def doc(self, passages: list[str], val: bool) -> tuple[int, list[tuple[str, int]]]:
        group, first = len(self.docs), len(self.passages)
        self.docs.append(passages)
        self.passages.extend(passages)
        self.passage_group.extend([group] * len(passages))
        self.passage_val.extend([val] * len(passages))
        return group, [("p", first + i) for i in range(len(passages))]

    def query(self, text: str) -> tuple[str, int]:
        self.queries.append(text)
        return ("q", len(self.queries) - 1)

    def pair(self, a, b, group: int, val: bool, source: str) -> None:
        self.rows.append((a, b, group, val, source))

    def text(self, ref: tuple[str, int]) -> str:
        return self.queries[ref[1]] if ref[0] == "q" else self.passages[ref[1]]


def _lines(path: Path):
    with (
        gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8")
    ) as f:
        yield from (json.loads(line) for line in f if line.strip())


def _kept(n_train: list[int], val: bool, cfg: KeyTrainConfig) -> bool:
    """Validation records always; training records up to the cap (counted in n_train[0])."""
    if val:
        return True
    if cfg.max_train_docs is not None and n_train[0] >= cfg.max_train_docs:
        return False
    n_train[0] += 1
    return True


def add_clcr(b: PairBuilder, cfg: KeyTrainConfig) -> None:
    n_train = [0]
    for i, case in enumerate(_lines(Path(cfg.data) / CLCR)):
        val = is_held_out(CLCR, i, cfg.seed, cfg.holdout)
        ps = split_passages(str(case["id"]), case.get("title") or "", case["text"], cfg.passage_chars)
        if len(ps) < 2 or not _kept(n_train, val, cfg):
            continue
        group, refs = b.doc([p.text for p in ps[: cfg.case_passages]], val)
        for x, y in zip(refs, refs[1:], strict=False):
            b.pair(x, y, group, val, "clcr_next")
        if case.get("title"):
            b.pair(b.query(case["title"]), refs[1], group, val, "clcr_title")
        reasoning = next((line for line in case["text"].splitlines() if "本院认为" in line), "")
        if reasoning:
            b.pair(b.query(reasoning.strip()[:160]), refs[0], group, val, "clcr_reasoning")


def add_cjrc(b: PairBuilder, cfg: KeyTrainConfig) -> None:
    n_train, index = [0], 0
    data = json.loads((Path(cfg.data) / CJRC).read_text(encoding="utf-8"))["data"]
    for article in data:
        for par in article["paragraphs"]:
            context, index = par["context"], index + 1
            val = is_held_out(CJRC, index - 1, cfg.seed, cfg.holdout)
            if held_apart(context):
                continue
            ps = [p.text for p in split_passages(f"cjrc{index}", "", context, cfg.passage_chars)]
            qas = [q for q in par["qas"] if q.get("is_impossible") not in (True, "true") and q["answers"]]
            hits = [
                (q["question"], next((j for j, p in enumerate(ps) if q["answers"][0]["text"] in p), -1))
                for q in qas
            ]
            hits = [(q, j) for q, j in hits if j >= 0][: cfg.questions_per_context]
            if not ps or not hits or not _kept(n_train, val, cfg):
                continue
            group, refs = b.doc(ps, val)
            for question, j in hits:
                b.pair(b.query(question), refs[j], group, val, "cjrc")


def add_cuad(b: PairBuilder, cfg: KeyTrainConfig) -> None:
    questions = defaultdict(list)
    for q in _lines(Path(cfg.data) / CUAD_QA):
        if not q["is_impossible"] and q["answers"]:
            questions[q["doc_id"]].append(q)
    n_train = [0]
    for i, row in enumerate(_lines(Path(cfg.data) / CUAD)):
        val = is_held_out(CUAD, i, cfg.seed, cfg.holdout)
        if held_apart(row["doc_id"]) or not questions[row["doc_id"]]:
            continue
        ps = [p.text for p in split_passages(row["doc_id"], "", row["text"], 600)][: cfg.contract_passages]
        hits = [
            (q["category"], next((j for j, p in enumerate(ps) if q["answers"][0]["text"] in p), -1))
            for q in questions[row["doc_id"]]
        ]
        hits = [(c, j) for c, j in hits if j >= 0]
        if not hits or not _kept(n_train, val, cfg):
            continue
        group, refs = b.doc(ps, val)
        for category, j in hits:
            b.pair(b.query(category), refs[j], group, val, "cuad")


def encode_raw(model, tokenizer, b: PairBuilder) -> np.ndarray:
    """Raw keys [n_queries + n_passages, d]: queries first, then every passage in builder order."""
    docs = []
    for d, texts in enumerate(b.docs):
        segs = [Segment(f"k{d}", i, 0, BlockType.OTHER, t, 0, 0, 0) for i, t in enumerate(texts)]
        encoded = [encode_segment(s, tokenizer) for s in segs]
        docs.append(DocInput(segs, [ids for ids, _ in encoded], [m for _, m in encoded]))
    passages = [e.key for doc in encode_documents(model, docs) for e in doc]
    queries = [encode_query(model, tokenizer, q) for q in b.queries]
    return np.stack(queries + passages).astype(np.float32)


def hard_negatives(b: PairBuilder, rows: list[int]) -> dict[int, int]:
    """Pair row -> the passage (of the same split, another document) BM25 ranks first for a's text."""
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
            other = [pool[h] for h in hits if b.passage_group[pool[h]] != b.rows[r][2]]
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
        )
    candidates = np.array([nq + j for j, v in enumerate(b.passage_val) if v], dtype=np.int64)
    sources = [x[4] for x in b.rows if x[3]]
    return tables[False], tables[True], candidates, sources


ADDERS = {"clcr": add_clcr, "cjrc": add_cjrc, "cuad": add_cuad}


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
    torch.manual_seed(cfg.seed)
    t0 = time.perf_counter()
    b = PairBuilder()
    for name in cfg.sources:
        if name not in ADDERS:
            raise ValueError(f"key-training source must be one of {SOURCES}, not {name!r}")
        ADDERS[name](b, cfg)
    encoder = sha256_file(path)
    raw = cached_raw(cfg.raw_cache, len(b.queries) + len(b.passages), encoder)
    if raw is None:
        model, tokenizer = load_encoder(path, cfg.device, keys="raw")
        with torch.no_grad():
            raw = encode_raw(model, tokenizer, b)
        if cfg.raw_cache:
            np.savez(cfg.raw_cache, raw=raw, encoder=encoder)
    encode_s = time.perf_counter() - t0
    negatives = hard_negatives(b, list(range(len(b.rows)))) if cfg.hard_negatives else {}
    train, val, candidates, sources = pair_tables(b, negatives)
    head, report = fit_key_head(raw, train, val, candidates, cfg.fit, encoder)
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


def cached_raw(path: str | None, rows: int, encoder: str) -> np.ndarray | None:
    """The cached raw keys when they were made by this encoder for this many rows, else None."""
    if not path or not Path(path).is_file():
        return None
    with np.load(path) as f:
        raw, made_by = f["raw"], str(f["encoder"])
    return raw if raw.shape[0] == rows and made_by == encoder else None


def median_cosine(keys: np.ndarray, n: int = 2000) -> float:
    """Median cosine between distinct keys (of the first n): how anisotropic a key space is."""
    k = keys[:n] / np.linalg.norm(keys[:n], axis=1, keepdims=True)
    sims = k @ k.T
    return round(float(np.median(sims[~np.eye(len(k), dtype=bool)])), 4)
