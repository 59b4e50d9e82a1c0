"""Real judgments from ../shared/data as Documents with paragraph blocks, built without the parser so
the tokenizer and segmenter tests do not depend on it."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from pathlib import Path

from pipeline.records import Block, BlockType, DocKind, Document

# Cycled over the paragraphs so segments of many block types are exercised.
_TYPES = [
    BlockType.HEADER,
    BlockType.PARTIES,
    BlockType.FACTS,
    BlockType.FACTS,
    BlockType.OPINION,
    BlockType.VERDICT,
]


def _records(path: Path, limit: int) -> list[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, limit)]


def _document(doc_id: str, text: str, paragraph: str, kind: DocKind, language: str) -> Document:
    blocks = [
        Block(doc_id, i, _TYPES[i % len(_TYPES)], m.group(), m.start(), m.end())
        for i, m in enumerate(re.finditer(paragraph, text))
    ]
    return Document(doc_id, f"{doc_id}.txt", kind, language, text, blocks=blocks)


def zh_judgments(shared_data: Path, limit: int) -> list[Document]:
    """Complete 刑事判决书 (`fd`); their paragraphs are separated by spaces."""
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    return [
        _document(f"zh{i}", r["fd"], r"\S+", DocKind.ZH_JUDGMENT, "zh")
        for i, r in enumerate(_records(path, limit))
    ]


def en_judgments(shared_data: Path, limit: int) -> list[Document]:
    """Court of Appeal judgments: numbered paragraphs, one block each."""
    path = shared_data / "en/judgments/uk_ewca_2020.jsonl.gz"
    docs = []
    for i, r in enumerate(_records(path, limit)):
        text = "\n\n".join(f"{p['num']} {p['text']}" for p in r["paragraphs"])
        docs.append(_document(f"en{i}", text, r"[^\n]+", DocKind.EN_JUDGMENT, "en"))
    return docs
