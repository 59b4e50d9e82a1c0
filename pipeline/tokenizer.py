"""The domain tokenizer: one byte-fallback BPE vocabulary for Chinese and English legal text.

Design
- Trained with the `tokenizers` library. The pre-tokenizer splits text into runs of Han characters,
  runs of other letters (with one leading space, GPT-2 style), digit groups of at most three, punctuation
  runs and whitespace. Han runs are *not* split per character, so BPE learns frequent legal terms
  (被告人, 本院认为, 有期徒刑 ...) as single tokens.
- The base alphabet is the most frequent characters of the corpus; any other character falls back to
  its UTF-8 bytes (<0x00>..<0xFF>), so there is no unknown token and no normalisation:
  `decode(encode(text)) == text` for every string.
- Special tokens: <pad> (id 0), <doc> (id 1), then one block token per BlockType in BLOCK_TYPE_IDS
  order (<blk_HEADER>, <blk_PARTIES>, ...). Special tokens are never produced from text: a literal
  "<doc>" in a document is tokenized as ordinary characters.

Segment encoding (`encode_segment`): every segment starts with the token of its block type, and the first
segment of a document (seg_idx 0) starts with <doc> before it. Segments never cross blocks, so a block
token always sits at a block start or at the start of a continuation piece of the same block; a segment
encoded on its own (retrieval, injected memory) still says which kind of text it holds. `Segment.n_tokens`
counts these prefix tokens, so `len(ids) == n_tokens <= max_tokens`.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Encoding, Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from pipeline.connectives import token_mask
from pipeline.errors import DocumentError
from pipeline.paths import TOKENIZER_FILE
from pipeline.records import BLOCK_TYPE_IDS, BlockType, Segment, sha256_file
from pipeline.store import atomic_write_json, atomic_write_text

PAD = "<pad>"
DOC = "<doc>"
BLOCK_TOKENS: dict[BlockType, str] = {t: f"<blk_{t}>" for t in BLOCK_TYPE_IDS}
SPECIAL_TOKENS: list[str] = [PAD, DOC, *BLOCK_TOKENS.values()]
BYTE_TOKENS: list[str] = [f"<0x{b:02X}>" for b in range(256)]

# Han runs whole; other letters with one leading space; digits in groups of <= 3 so numbers do not eat the
# vocabulary; punctuation runs; the GPT-2 whitespace rule leaves one space for the next word.
PRETOKENIZE_PATTERN = r"\p{Han}+| ?[^\s\p{Han}\p{N}\p{P}\p{S}]+| ?\p{N}{1,3}| ?[\p{P}\p{S}]+|\s+(?!\S)|\s+"


@dataclass
class TrainOptions:
    vocab_size: int = 16384  # total, including special and byte tokens
    min_frequency: int = 3
    limit_alphabet: int = 4000  # base characters; rarer ones are spelled in bytes
    max_token_length: int = 16  # characters; stops BPE from learning whole boilerplate clauses


class LegalTokenizer:
    """A trained `tokenizers.Tokenizer` with the ids of the project's special tokens."""

    def __init__(self, tokenizer: Tokenizer):
        self.hf = tokenizer
        # Special tokens in text are ordinary characters; only the pipeline inserts the real ones.
        self.hf.encode_special_tokens = True
        self.hf.no_padding()
        self.hf.no_truncation()
        ids = {tok: tokenizer.token_to_id(tok) for tok in SPECIAL_TOKENS}
        missing = [tok for tok, i in ids.items() if i is None]
        if missing:
            raise ValueError(f"tokenizer lacks the special tokens {missing}")
        self.pad_id: int = ids[PAD]
        self.doc_id: int = ids[DOC]
        self.block_ids: dict[BlockType, int] = {t: ids[tok] for t, tok in BLOCK_TOKENS.items()}
        self.special_ids: frozenset[int] = frozenset(ids.values())

    @property
    def vocab_size(self) -> int:
        return self.hf.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self.hf.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.hf.encode_batch(texts, add_special_tokens=False)]

    def count(self, texts: list[str]) -> list[int]:
        # The fast path skips the character offsets, which a count does not need.
        return [len(e.ids) for e in self.hf.encode_batch_fast(texts, add_special_tokens=False)]

    def decode(self, ids: list[int]) -> str:
        return self.hf.decode(ids, skip_special_tokens=True)

    def prefix_ids(self, block_type: BlockType, first_in_document: bool) -> list[int]:
        """The special tokens a segment starts with (see the module docstring)."""
        block = self.block_ids[BlockType(block_type)]
        return [self.doc_id, block] if first_in_document else [block]

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.hf.to_str(pretty=False))


def _untrained() -> Tokenizer:
    tok = Tokenizer(models.BPE(byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(PRETOKENIZE_PATTERN), behavior="isolated")
    tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
    return tok


def train(texts: Iterable[str], options: TrainOptions | None = None) -> LegalTokenizer:
    """Train the vocabulary on `texts`. Deterministic for the same texts in the same order."""
    options = options or TrainOptions()
    n_reserved = len(SPECIAL_TOKENS) + len(BYTE_TOKENS)
    if options.vocab_size < 2 * n_reserved:
        raise ValueError(f"vocab_size {options.vocab_size} is too small (at least {2 * n_reserved})")
    texts = list(texts)
    # A small vocabulary keeps room for merges: the alphabet takes at most half of what is left.
    alphabet = _alphabet(texts, min(options.limit_alphabet, (options.vocab_size - n_reserved) // 2))
    tok = _untrained()
    trainer = trainers.BpeTrainer(
        vocab_size=options.vocab_size - len(BYTE_TOKENS),
        min_frequency=options.min_frequency,
        # The trainer breaks count ties at its alphabet cut-off in hash order; a fixed alphabet keeps
        # training reproducible.
        initial_alphabet=alphabet,
        limit_alphabet=len(alphabet),
        max_token_length=options.max_token_length,
        special_tokens=SPECIAL_TOKENS,
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return LegalTokenizer(_with_byte_tokens(tok))


def _alphabet(texts: list[str], size: int) -> list[str]:
    """The `size` most frequent characters, ties broken by code point."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(text)
    return sorted(counts, key=lambda c: (-counts[c], c))[:size]


def _with_byte_tokens(tok: Tokenizer) -> Tokenizer:
    """Append the 256 byte tokens to the model vocabulary.

    The BPE trainer does not add them itself, and they must be ordinary vocabulary entries (not added
    tokens), or a literal "<0x41>" in a document would be matched as a token.
    """
    data = json.loads(tok.to_str())
    vocab: dict[str, int] = data["model"]["vocab"]
    for byte_token in BYTE_TOKENS:
        if byte_token not in vocab:
            vocab[byte_token] = len(vocab)
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


@functools.lru_cache(maxsize=4)
def _load_cached(path: str) -> LegalTokenizer:
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as e:  # the Rust side raises a bare Exception for any unreadable file
        raise ValueError(f"{path}: not a tokenizer.json ({e})") from None
    try:
        return LegalTokenizer(tokenizer)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def load_tokenizer(path: str | Path | None = None) -> LegalTokenizer:
    """The tokenizer at `path` (a tokenizer.json or its folder); None = the shipped one. Cached."""
    path = Path(path) if path is not None else TOKENIZER_FILE
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no tokenizer.json there")
    return _load_cached(str(path.resolve()))


def encode_segment(
    segment: Segment, tokenizer: LegalTokenizer, clause: bool = False
) -> tuple[list[int], list[bool]]:
    """Token ids of a segment (with its prefix tokens) and the connective mask aligned with them."""
    return _with_prefix(
        segment, tokenizer.hf.encode(segment.text, add_special_tokens=False), tokenizer, clause
    )


def encode_segments(
    segments: list[Segment], tokenizer: LegalTokenizer, clause: bool = False
) -> list[tuple[list[int], list[bool]]]:
    """`encode_segment` for many segments, tokenized in one batch."""
    encodings = tokenizer.hf.encode_batch([s.text for s in segments], add_special_tokens=False)
    return [_with_prefix(s, e, tokenizer, clause) for s, e in zip(segments, encodings, strict=True)]


def _with_prefix(
    segment: Segment, enc: Encoding, tokenizer: LegalTokenizer, clause: bool
) -> tuple[list[int], list[bool]]:
    prefix = tokenizer.prefix_ids(segment.type, segment.seg_idx == 0)
    mask = token_mask(segment.text, segment.connectives, enc.offsets, clause=clause)
    return prefix + enc.ids, [False] * len(prefix) + mask


# ---- training corpora ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CorpusSpec:
    """A corpus file and, for JSONL, the fields holding its text: `path[:field,field.sub,...]`.

    A dotted field walks into nested objects and maps over lists (`paragraphs.text`); string leaves found
    under a field are joined with newlines. Without fields a JSONL record's `text` is used.
    """

    path: Path
    fields: tuple[str, ...] = ("text",)

    @classmethod
    def parse(cls, spec: str) -> CorpusSpec:
        path, sep, fields = spec.rpartition(":")
        if sep and path and not Path(spec).exists() and "/" not in fields:
            return cls(Path(path), tuple(f for f in fields.split(",") if f))
        return cls(Path(spec))

    @property
    def is_jsonl(self) -> bool:
        return any(self.path.name.endswith(s) for s in (".jsonl", ".jsonl.gz", ".json.gz"))

    def __str__(self) -> str:
        return f"{self.path}:{','.join(self.fields)}" if self.is_jsonl else str(self.path)


def _leaves(value, path: list[str]) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item, path)
    elif path:
        if isinstance(value, dict):
            yield from _leaves(value.get(path[0]), path[1:])
    elif isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item, [])


def record_text(record: dict, fields: tuple[str, ...]) -> str:
    return "\n".join(s for f in fields for s in _leaves(record, f.split(".")) if s)


def iter_corpus(spec: CorpusSpec) -> Iterator[str]:
    """The documents' texts of one corpus file (JSONL record by record; other formats via the parser)."""
    if spec.is_jsonl:
        opener = gzip.open if spec.path.name.endswith(".gz") else open
        with opener(spec.path, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield record_text(json.loads(line), spec.fields)
    elif spec.path.suffix.lower() in (".txt", ".md"):
        yield spec.path.read_text(encoding="utf-8", errors="replace")
    else:
        # only this branch parses; the segmenter and the encoder import this module and never need it
        # lazy, a start-up cost: pipeline.parsing doubles `import pipeline.tokenizer`, 0.2 -> 0.4 s (measured)
        from pipeline.parsing import iter_documents

        for doc in iter_documents(spec.path):
            yield doc.text


def is_held_out(corpus: str, index: int, seed: int, fraction: float) -> bool:
    """Whether record `index` of `corpus` is held apart from training (a seeded hash, stable across runs)."""
    digest = hashlib.sha256(f"{seed}:{Path(corpus).name}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def split_corpus(
    spec: CorpusSpec, seed: int, holdout: float, max_chars: int | None
) -> tuple[list[str], list[str]]:
    """(training texts, held-out texts) of one corpus; training is capped at `max_chars` characters,
    taking records in a seeded order so the sample spreads over the whole file."""
    train_texts, held = [], []
    for i, text in enumerate(iter_corpus(spec)):
        (held if is_held_out(str(spec.path), i, seed, holdout) else train_texts).append(text)
    if max_chars is not None:
        order = sorted(
            range(len(train_texts)),
            key=lambda i: hashlib.sha256(f"{seed}:order:{i}".encode()).digest(),
        )
        kept, total = [], 0
        for i in order:
            if total >= max_chars:
                break
            kept.append(train_texts[i][: max_chars - total])
            total += len(kept[-1])
        train_texts = kept
    return train_texts, held


def compression(tokenizer: LegalTokenizer, texts: list[str]) -> dict[str, float]:
    """Tokens per character of `texts`, beside the character (1.0) and UTF-8 byte baselines."""
    n_chars = sum(len(t) for t in texts)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_tokens = 0
    for start in range(0, len(texts), 64):
        n_tokens += sum(tokenizer.count(texts[start : start + 64]))
    per_char = n_tokens / max(n_chars, 1)
    return {
        "chars": n_chars,
        "tokens_per_char": round(per_char, 4),
        "bytes_per_char": round(n_bytes / max(n_chars, 1), 4),
        "ratio_to_char_baseline": round(per_char / 1.0, 4),
        "ratio_to_byte_baseline": round(n_tokens / max(n_bytes, 1), 4),
    }


def _language(texts: list[str]) -> str:
    sample = "".join(t[:2000] for t in texts[:50])
    han = sum("\u4e00" <= c <= "\u9fff" for c in sample)
    return "zh" if han > 0.2 * max(len(sample), 1) else "en"


def held_out_report(tokenizer: LegalTokenizer, held: dict[str, list[str]]) -> dict[str, dict]:
    """`compression` of each corpus's held-out texts, then of all corpora of one language together
    (rows "all zh", "all en"); the language of a corpus is told by its share of Han characters."""
    report: dict[str, dict] = {}
    by_language: dict[str, list[str]] = {}
    for name, texts in held.items():
        if texts:
            language = _language(texts)
            by_language.setdefault(language, []).extend(texts)
            report[name] = {"language": language, "records": len(texts), **compression(tokenizer, texts)}
    for language, texts in sorted(by_language.items()):
        report[f"all {language}"] = {
            "language": language,
            "records": len(texts),
            **compression(tokenizer, texts),
        }
    return report


def train_from_corpora(
    specs: list[CorpusSpec],
    out: Path,
    options: TrainOptions,
    seed: int = 0,
    holdout: float = 0.05,
    max_chars: int | None = 2_000_000,
) -> dict:
    """Train on the corpora's records outside the held-out split and write `out`/tokenizer.json beside
    `out`/training.json (the options, the tokenizer's sha256 and `held_out_report`), which it returns.
    Bad input raises ValueError naming the corpus and the reason."""
    if not 0 <= holdout < 1:
        raise ValueError(f"holdout must be in [0, 1), got {holdout}")
    texts: list[str] = []
    held: dict[str, list[str]] = {}
    for spec in specs:
        if not spec.path.is_file():
            raise ValueError(f"{spec.path}: no such corpus file")
        try:
            train_texts, held_texts = split_corpus(spec, seed, holdout, max_chars)
        except (OSError, ValueError, DocumentError) as e:
            raise ValueError(f"{spec.path}: cannot read ({e})") from e
        if not any(t.strip() for t in train_texts + held_texts):
            raise ValueError(f"{spec}: no text found (for JSONL, name the text fields: PATH:field,...)")
        texts.extend(train_texts)
        held[str(spec)] = held_texts
    if not any(t.strip() for t in texts):
        raise ValueError("every record was held out; lower the holdout or add corpora")
    tokenizer = train(texts, options)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(out / "tokenizer.json")
    record = {
        "corpora": [str(s) for s in specs],
        "vocab_size": tokenizer.vocab_size,
        "seed": seed,
        "holdout": holdout,
        "max_chars_per_corpus": max_chars,
        "min_frequency": options.min_frequency,
        "training_chars": sum(map(len, texts)),
        "tokenizer_sha256": sha256_file(out / "tokenizer.json"),
        "held_out": held_out_report(tokenizer, held),
    }
    atomic_write_json(out / "training.json", record)
    return record
