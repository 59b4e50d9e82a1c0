"""Blocks → segments of at most `max_tokens` tokens (prefix tokens included; see pipeline.tokenizer).

A segment never crosses a block (unless `pack_tiny` joins consecutive tiny blocks of one type). A block
that fits is one segment, however small: block boundaries matter more than filling segments. A longer
block is cut at sentence ends (pipeline.sentences), packing whole sentences greedily; only a sentence
longer than the limit is cut inside, preferably after a comma or before a space. The pieces of a block,
concatenated, give back its text exactly, and `document.text[char_start:char_end]` is a segment's text.
Blocks of whitespace only give no segment. Each segment carries the spans of its connectives
(pipeline.connectives, with `segment.connectives` as the lexicon).

Token counts are exact and cost about two encodings of the text: whole blocks and the sentences of long
blocks are counted in one batch each, and the pieces cut from long blocks are encoded once more (BPE may
tokenize a piece's edges differently from its sentences). The rare piece that comes out over the limit
is split again, at the sentence end nearest its middle if it holds several sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.config import SegmentConfig
from pipeline.connectives import find_connectives
from pipeline.errors import SegmentError
from pipeline.records import Block, Document, Segment
from pipeline.sentences import sentence_spans
from pipeline.tokenizer import LegalTokenizer, load_tokenizer

# An over-long sentence is best cut after one of these, or else before a space.
_SOFT_CUT_AFTER = frozenset("，、：；,:;）)】」』")
MIN_MAX_TOKENS = 16


@dataclass
class _Piece:
    """A planned segment: text [start, end) of `block`, or whole blocks `block`..`last` when packed."""

    block: Block
    start: int
    end: int
    n_tokens: int | None = None  # exact count, when known without encoding the piece again
    last: Block | None = None

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end == len(self.block.text)


def segment_document(document: Document, config: SegmentConfig | None = None) -> list[Segment]:
    """The segments of a parsed document, in reading order."""
    config = config or SegmentConfig()
    if config.max_tokens < MIN_MAX_TOKENS:
        raise ValueError(f"segment.max_tokens must be at least {MIN_MAX_TOKENS}, got {config.max_tokens}")
    tokenizer = load_tokenizer(config.tokenizer)
    blocks = [b for b in document.blocks if b.text.strip()]
    if not blocks:
        raise SegmentError(document.source, "no block with text to segment")

    # Planning reserves two prefix tokens (<doc> and the block token) for every segment.
    budget = config.max_tokens - 2
    counts = tokenizer.count([b.text for b in blocks])
    long_blocks = [b for b, n in zip(blocks, counts, strict=True) if n > budget]
    cuts = _cut_blocks(long_blocks, tokenizer, budget)
    pieces: list[_Piece] = []
    for block, n in zip(blocks, counts, strict=True):
        pieces.extend(cuts[block.block_idx] if n > budget else [_Piece(block, 0, len(block.text), n)])
    if config.pack_tiny:
        pieces = _pack_tiny(document, pieces, config)
    return _to_segments(document, pieces, tokenizer, config)


def _cut_blocks(blocks: list[Block], tokenizer: LegalTokenizer, budget: int) -> dict[int, list[_Piece]]:
    """Each long block as pieces of at most `budget` planned tokens, cut at sentence ends."""
    per_block = [sentence_spans(b.text) for b in blocks]
    texts = [b.text[s:e] for b, spans in zip(blocks, per_block, strict=True) for s, e in spans]
    encodings = iter(tokenizer.hf.encode_batch(texts, add_special_tokens=False))
    out = {}
    for block, spans in zip(blocks, per_block, strict=True):
        units: list[tuple[int, int, int]] = []  # (start, end, tokens), tiling the block
        for (s, e), enc in zip(spans, encodings, strict=False):  # encodings runs on across blocks
            if len(enc.ids) <= budget:
                units.append((s, e, len(enc.ids)))
            else:
                units.extend(_cut_sentence(s, block.text[s:e], enc.offsets, budget))
        pieces, start, used = [], 0, 0
        for s, _, n in units:
            if used and used + n > budget:
                pieces.append(_Piece(block, start, s))
                start, used = s, 0
            used += n
        pieces.append(_Piece(block, start, len(block.text)))
        out[block.block_idx] = pieces
    return out


def _cut_sentence(
    base: int, text: str, offsets: list[tuple[int, int]], budget: int
) -> list[tuple[int, int, int]]:
    """An over-long sentence (at `base` in its block) as consecutive (start, end, tokens) units."""
    # BPE may tokenize the edges of a cut piece differently; the margin keeps the piece in budget.
    window = budget - 4
    units, first, start = [], 0, base
    while len(offsets) - first > window:
        cut = first + window
        for i in range(first + window, first + window // 2, -1):
            if text[offsets[i - 1][1] - 1] in _SOFT_CUT_AFTER or text[offsets[i][0]].isspace():
                cut = i
                break
        end = base + offsets[cut][0]
        if end > start:
            units.append((start, end, cut - first))
            start = end
        first = cut
    units.append((start, base + len(text), len(offsets) - first))
    return units


def _pack_tiny(document: Document, pieces: list[_Piece], config: SegmentConfig) -> list[_Piece]:
    """Join runs of whole tiny blocks of one type, separated by whitespace only, while they fit."""

    def tiny(p: _Piece) -> bool:
        return p.whole and p.n_tokens is not None and p.n_tokens <= config.tiny_tokens

    out: list[_Piece] = []
    used = 0
    for piece in pieces:
        prev = out[-1] if out else None
        if (
            prev is not None
            and tiny(piece)
            and (prev.last is not None or tiny(prev))
            and prev.block.type == piece.block.type
            and not document.text[(prev.last or prev.block).char_end : piece.block.char_start].strip()
            and used + piece.n_tokens + 2 <= config.max_tokens
        ):
            prev.last, prev.n_tokens = piece.block, None
            used += piece.n_tokens
            continue
        out.append(piece)
        used = piece.n_tokens or 0
    return out


def _span(piece: _Piece) -> tuple[int, int]:
    """Document character offsets of a piece."""
    if piece.last is not None:
        return piece.block.char_start, piece.last.char_end
    return piece.block.char_start + piece.start, piece.block.char_start + piece.end


def _text(document: Document, piece: _Piece) -> str:
    if piece.last is not None:
        start, end = _span(piece)
        return document.text[start:end]
    return piece.block.text[piece.start : piece.end]


def _to_segments(
    document: Document, pieces: list[_Piece], tokenizer: LegalTokenizer, config: SegmentConfig
) -> list[Segment]:
    unknown = [p for p in pieces if p.n_tokens is None]
    for piece, n in zip(unknown, tokenizer.count([_text(document, p) for p in unknown]), strict=True):
        piece.n_tokens = n
    segments: list[Segment] = []
    for piece in pieces:
        parts = [piece]
        if piece.n_tokens + (1 if segments else 2) > config.max_tokens:
            parts = _recut(document, piece, tokenizer, config.max_tokens - 2)
        for part in parts:
            text = _text(document, part)
            start, end = _span(part)
            prefix = 1 if segments else 2
            segments.append(
                Segment(
                    doc_id=document.doc_id,
                    seg_idx=len(segments),
                    block_idx=part.block.block_idx,
                    type=part.block.type,
                    text=text,
                    n_tokens=part.n_tokens + prefix,
                    char_start=start,
                    char_end=end,
                    connectives=find_connectives(text, config.connectives),
                )
            )
    return segments


def _recut(document: Document, piece: _Piece, tokenizer: LegalTokenizer, budget: int) -> list[_Piece]:
    """A piece that came out over budget, split again until every part fits: packed blocks back into
    single blocks, several sentences at the sentence end nearest their middle, one sentence inside."""
    if piece.last is not None:
        blocks = [b for b in document.blocks if piece.block.block_idx <= b.block_idx <= piece.last.block_idx]
        pending = [_Piece(b, 0, len(b.text)) for b in blocks if b.text.strip()]
    else:
        pending = [piece]
    done = []
    while pending:
        part = pending.pop(0)
        text = part.block.text[part.start : part.end]
        enc = tokenizer.hf.encode(text, add_special_tokens=False)
        if len(enc.ids) <= budget:
            part.n_tokens = len(enc.ids)
            done.append(part)
            continue
        ends = [part.start + e for _, e in sentence_spans(text)[:-1]]
        if ends:
            middle = min(ends, key=lambda e: abs(2 * e - part.start - part.end))
            halves = [(part.start, middle), (middle, part.end)]
        else:
            halves = [(s, e) for s, e, _ in _cut_sentence(part.start, text, enc.offsets, budget)]
        pending = [_Piece(part.block, s, e) for s, e in halves] + pending
    return done
