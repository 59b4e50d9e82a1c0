"""The language-model corpora: the shared judgments, patents and contracts, parsed into typed blocks,
segmented and tokenized once into per-corpus stream files (`txl.streams`).

Held-apart documents are chosen with the tokenizer's own rule (`pipeline.tokenizer.is_held_out`: a
seeded hash of the file name and record index, 5%), so the evaluation documents were seen neither by
the tokenizer's training nor by the model's.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from filelock import FileLock

import pipeline
from pipeline.config import ParseConfig
from pipeline.errors import DocumentError
from pipeline.parsing import build
from pipeline.parsing.text import jsonl_record
from pipeline.paths import TOKENIZER_FILE
from pipeline.records import BLOCK_TYPE_IDS, sha256_file
from pipeline.store import atomic_write_json
from pipeline.tokenizer import encode_segment, is_held_out, load_tokenizer
from txl.streams import EncodedDoc, save_corpus, stream_document


@dataclass(frozen=True)
class LMCorpus:
    name: str
    path: str  # relative to the shared data folder
    # the record's text (as the parser's jsonl_text_field); a record without it is read through its
    # structured layout (pipeline.parsing.layouts: the EWCA judgments, the PatentsView grants)
    text_field: str = "text"


DEFAULT_CORPORA: tuple[LMCorpus, ...] = (
    LMCorpus("zh_clcr", "zh/judgments/clcr_cases.jsonl.gz"),
    LMCorpus("zh_criminal", "zh/judgments/judge_criminal.jsonl.gz", text_field="fd"),
    LMCorpus("zh_wenshu", "zh/judgments/wenshu_mixed.jsonl"),
    LMCorpus("en_ewca", "en/judgments/uk_ewca_2020.jsonl.gz"),
    LMCorpus("en_cuad", "en/contracts/cuad_contracts.jsonl.gz"),
    LMCorpus("en_patents", "en/patents/uspto_grants_patentsview_fixtures/us_patents_parsed.jsonl.gz"),
)


def iter_records(
    corpus: LMCorpus, root: Path, errors: list, wanted: set[int] | None = None
) -> Iterator[tuple[int, object]]:
    """(record index among non-blank lines, Document) for every record the parser accepts (only the
    indices in `wanted`, when given). Each line goes through the parser's own JSONL record reader and
    typing (`jsonl_record`, `build`); reading the lines here lets unwanted records be skipped before
    any parsing."""
    path = root / corpus.path
    config = ParseConfig(jsonl_text_field=corpus.text_field)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        index = -1
        for line_no, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            index += 1
            if wanted is not None and index not in wanted:
                continue
            try:
                record = jsonl_record(raw.rstrip(b"\r\n"), f"{path}:{line_no}", config, path)
                doc = build(record.extracted, record.source, record.doc_id, config)
            except DocumentError as e:
                errors.append(e)
                continue
            yield index, doc


def count_records(path: Path) -> int:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def chosen_records(n: int, corpus: LMCorpus, holdout: float, seed: int, max_train: int | None) -> set[int]:
    """Every held-apart record, and at most `max_train` training records in a seeded order (a sample
    spread over the whole file, not its first lines)."""
    held = {i for i in range(n) if is_held_out(corpus.path, i, seed, holdout)}
    train = sorted(
        set(range(n)) - held, key=lambda i: hashlib.sha256(f"{seed}:{corpus.name}:{i}".encode()).digest()
    )
    return held | set(train[:max_train] if max_train is not None else train)


def encode_corpus(
    corpus: LMCorpus,
    root: Path,
    tokenizer,
    holdout: float,
    seed: int,
    max_docs: int | None = None,
    max_train_docs: int | None = None,
) -> tuple[list[EncodedDoc], list[bool], list]:
    """The corpus's documents as token streams, their held-apart flags, and the records that failed."""
    wanted = None
    if max_train_docs is not None:
        wanted = chosen_records(count_records(root / corpus.path), corpus, holdout, seed, max_train_docs)
    docs, held, errors = [], [], []
    for index, doc in iter_records(corpus, root, errors, wanted):
        if max_docs is not None and len(docs) >= max_docs:
            break
        try:
            segments = pipeline.segment(doc)
        except DocumentError as e:
            errors.append(e)
            continue
        enc = stream_document(doc, segments, lambda s: encode_segment(s, tokenizer), corpus.name)
        if len(enc.ids) > 1:
            docs.append(enc)
            held.append(is_held_out(corpus.path, index, seed, holdout))
    return docs, held, errors


def prepare(
    out_dir: Path,
    root: Path,
    corpora: tuple[LMCorpus, ...] = DEFAULT_CORPORA,
    tokenizer_path: Path | None = None,
    holdout: float = 0.05,
    seed: int = 0,
    max_docs: int | None = None,
    max_train_docs: dict[str, int] | None = None,
    log=print,
) -> dict:
    """Write one stream file per corpus and a manifest.json under `out_dir`; returns the manifest."""
    tok_path = Path(tokenizer_path or TOKENIZER_FILE)
    if tok_path.is_dir():
        tok_path = tok_path / "tokenizer.json"
    tok = load_tokenizer(tok_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = {}
    for corpus in corpora:
        t0 = time.time()
        cap = (max_train_docs or {}).get(corpus.name)
        docs, held, errors = encode_corpus(corpus, root, tok, holdout, seed, max_docs, cap)
        facts = {
            **asdict(corpus),
            "documents": len(docs),
            "heldout_documents": sum(held),
            "tokens": int(sum(len(d.ids) for d in docs)),
            "heldout_tokens": int(sum(len(d.ids) for d, h in zip(docs, held, strict=True) if h)),
            "chars": int(sum(d.n_chars for d in docs)),
            "max_train_docs": cap,
            "block_types": _type_counts(docs),
            "failed_records": len(errors),
            "first_errors": [str(e) for e in errors[:3]],
            "seconds": round(time.time() - t0, 1),
        }
        save_corpus(out_dir / corpus.name, docs, held, facts)
        stats[corpus.name] = facts
        log(json.dumps({k: v for k, v in facts.items() if k != "block_types"}, ensure_ascii=False))
    manifest = _merge_manifest(
        out_dir / "manifest.json",
        {
            "corpora": [c.name for c in corpora],
            "vocab_size": tok.vocab_size,
            "pad_id": tok.pad_id,
            "special_ids": sorted(tok.special_ids),
            "tokenizer": str(tok_path),
            "tokenizer_sha256": sha256_file(tok_path),
            "holdout": holdout,
            "seed": seed,
            "stats": stats,
        },
    )
    return manifest


def _merge_manifest(path: Path, new: dict) -> dict:
    """Add these corpora to the folder's manifest (several prepare processes may share a folder)."""
    with FileLock(path.with_suffix(".lock")):  # O_NOFOLLOW: a symlinked lock file is refused
        old = json.loads(path.read_text()) if path.exists() else {}
        if old and old.get("tokenizer_sha256") != new["tokenizer_sha256"]:
            old = {}  # another tokenizer: the old streams are not comparable
        stats = {**old.get("stats", {}), **new["stats"]}
        order = [c.name for c in DEFAULT_CORPORA]
        names = sorted(stats, key=lambda n: order.index(n) if n in order else len(order))
        merged = {**new, "corpora": names, "stats": stats}
        atomic_write_json(path, merged)
    return merged


def _type_counts(docs: list[EncodedDoc]) -> dict[str, int]:
    """Tokens per block type: how much of the corpus the parser typed (OTHER = untyped)."""
    counts = np.bincount(
        np.concatenate([d.types for d in docs]).astype(np.int64), minlength=len(BLOCK_TYPE_IDS)
    )
    return {str(t): int(counts[i]) for t, i in BLOCK_TYPE_IDS.items() if counts[i]}
