"""Document-ordered language-model streams.

Documents are tokenized once (segment by segment, so block types and connective marks come along)
into flat arrays. Batch lanes then read them window by window in document order: the model's memory
of a lane always holds the previous window of the *same* document, and the batch flags the lanes that
have just moved to a new document so their memory is reset. Documents are dealt to lanes from a queue
that is shuffled once per epoch; a lane takes the next document the moment its current one ends, so no
lane idles and every window of an epoch is read exactly once.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from pipeline.connectives import clause_spans
from pipeline.records import BLOCK_TYPE_IDS, BlockType, Document, Segment, sha256_file
from pipeline.store import atomic_write_bytes, atomic_write_json
from pipeline.tokenizer import LegalTokenizer, load_tokenizer

IGNORE = -100  # target id that the loss skips (padding past a document's end)


@dataclass
class EncodedDoc:
    """One document as token arrays: ids, the block type of every token, its connective flag."""

    doc_id: str
    corpus: str
    ids: np.ndarray  # int32 [N]
    types: np.ndarray  # int8 [N]
    connective: np.ndarray  # bool [N]
    n_chars: int  # characters of text the tokens cover (for bits per character)
    scope: np.ndarray | None = None  # bool [N]: inside a connective's clause (clause_scope); None = nowhere

    def n_windows(self, seg_len: int) -> int:
        return math.ceil((len(self.ids) - 1) / seg_len) if len(self.ids) > 1 else 0


def stream_document(
    doc: Document,
    segments: Iterable[Segment],
    encode: Callable[[Segment], tuple[list[int], list[bool]]],
    corpus: str = "",
) -> EncodedDoc:
    """A document's segments encoded one after another (each with the prefix tokens `encode` gives it)."""
    ids: list[int] = []
    types: list[int] = []
    conn: list[bool] = []
    n_chars = 0
    for seg in segments:
        seg_ids, seg_conn = encode(seg)
        ids.extend(seg_ids)
        types.extend([BLOCK_TYPE_IDS[BlockType(seg.type)]] * len(seg_ids))
        conn.extend(bool(c) for c in seg_conn)
        n_chars += len(seg.text)
    return EncodedDoc(
        doc_id=doc.doc_id,
        corpus=corpus,
        ids=np.asarray(ids, dtype=np.int32),
        types=np.asarray(types, dtype=np.int8),
        connective=np.asarray(conn, dtype=bool),
        n_chars=n_chars,
    )


# ---- on-disk corpus files ---------------------------------------------------------------------------


def save_corpus(path: Path, docs: list[EncodedDoc], heldout: list[bool], meta: dict) -> None:
    """One corpus as a single .npz of concatenated arrays (+ offsets) and a .json of its facts."""
    offsets = np.cumsum([0] + [len(d.ids) for d in docs]).astype(np.int64)
    buf = io.BytesIO()
    np.savez(
        buf,
        ids=np.concatenate([d.ids for d in docs]) if docs else np.zeros(0, np.int32),
        types=np.concatenate([d.types for d in docs]) if docs else np.zeros(0, np.int8),
        connective=np.concatenate([d.connective for d in docs]) if docs else np.zeros(0, bool),
        offsets=offsets,
        n_chars=np.asarray([d.n_chars for d in docs], dtype=np.int64),
        heldout=np.asarray(heldout, dtype=bool),
        doc_ids=np.asarray([d.doc_id for d in docs], dtype=str),
    )
    atomic_write_bytes(path.with_suffix(".npz"), buf.getvalue())
    atomic_write_json(path.with_suffix(".json"), meta)


def load_corpus(path: Path, split: str) -> list[EncodedDoc]:
    """The documents of one split ("train", "heldout" or "all") of a corpus file."""
    path = Path(path).with_suffix(".npz")
    corpus = path.stem
    with np.load(path) as z:
        ids, types, conn = z["ids"], z["types"], z["connective"]
        offsets, n_chars, heldout, doc_ids = z["offsets"], z["n_chars"], z["heldout"], z["doc_ids"]
    docs = []
    for i, doc_id in enumerate(doc_ids):
        if (split == "train" and heldout[i]) or (split == "heldout" and not heldout[i]):
            continue
        a, b = int(offsets[i]), int(offsets[i + 1])
        if b - a > 1:
            docs.append(EncodedDoc(str(doc_id), corpus, ids[a:b], types[a:b], conn[a:b], int(n_chars[i])))
    return docs


def load_split(data_dir: Path, split: str, corpora: list[str] | None = None) -> list[EncodedDoc]:
    data_dir = Path(data_dir)
    names = corpora or json.loads((data_dir / "manifest.json").read_text())["corpora"]
    return [d for name in names for d in load_corpus(data_dir / name, split)]


# ---- stream variants: block tokens left out, connective clause scopes -------------------------------


@dataclass(frozen=True)
class ClauseEnds:
    """Per vocabulary id, what a token says about the clause it sits in (see clause_scope)."""

    closes: np.ndarray  # bool [V]: its text holds a clause-ending mark (as pipeline.connectives.clause_spans)
    inside: np.ndarray  # bool [V]: with text before that mark, which still belongs to the clause
    special: np.ndarray  # bool [V]: a structural token (<doc>, block tokens), which no clause crosses


def clause_ends(tokenizer: LegalTokenizer) -> ClauseEnds:
    n = tokenizer.vocab_size
    closes, inside = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    special = np.zeros(n, dtype=bool)
    special[sorted(tokenizer.special_ids)] = True
    for i in np.flatnonzero(~special).tolist():
        text = tokenizer.decode([i])
        ((_, stop),) = clause_spans(text, [(0, 0)])  # the first clause end in the token's text
        closes[i], inside[i] = stop < len(text), stop > 0
    return ClauseEnds(closes, inside, special)


def clause_scope(ids: np.ndarray, connective: np.ndarray, ends: ClauseEnds) -> np.ndarray:
    """bool [N]: the tokens inside the clause a connective opens, from the token carrying the (causal)
    connective flag up to the token holding the clause's closing punctuation (inside only when text
    precedes the mark in that token), as txl.lm_metrics.clause_mask finds them from the text. Causal:
    position i depends on ids[: i + 1] and connective[: i + 1] only, since each token's own id says
    whether it ends the clause."""
    ids = np.asarray(ids, dtype=np.int64)
    connective = np.asarray(connective, dtype=bool)
    pos = np.arange(len(ids))
    closer = ends.closes[ids] | ends.special[ids]
    keeps = ~closer | (ends.inside[ids] & ~ends.special[ids])  # the token itself is still in its clause
    last_flag = np.maximum.accumulate(np.where(connective, pos, -1))
    last_close = np.maximum.accumulate(np.where(closer, pos, -1))
    # open before token i: a flag since the last closer (a flag on a closer closes its own clause)
    open_before = np.concatenate([[False], last_flag[:-1] > last_close[:-1]]) if len(ids) else connective
    return connective | (open_before & keeps)


def strip_tokens(doc: EncodedDoc, drop: np.ndarray) -> EncodedDoc:
    """The document without the tokens whose ids are in `drop`; every other token keeps its type,
    connective flag and scope, and the characters covered stay the same."""
    keep = ~np.isin(doc.ids, drop)
    scope = doc.scope[keep] if doc.scope is not None else None
    return EncodedDoc(
        doc.doc_id, doc.corpus, doc.ids[keep], doc.types[keep], doc.connective[keep], doc.n_chars, scope
    )


def stream_variant(
    docs: list[EncodedDoc], data_dir: Path, scope: bool = False, strip_blocks: bool = False
) -> list[EncodedDoc]:
    """The prepared documents of `data_dir` as a variant stream: with clause scopes (`clause_scope`,
    from the stored connective flags and the punctuation of the tokens) and/or without the <blk_X>
    tokens (their block types stay on the tokens). Scopes are found before stripping, where every
    segment still opens with its block token."""
    if not (scope or strip_blocks):
        return docs
    tokenizer = manifest_tokenizer(Path(data_dir))
    ends = clause_ends(tokenizer) if scope else None
    drop = np.asarray(sorted(tokenizer.block_ids.values()), dtype=np.int64)
    out = []
    for d in docs:
        if ends is not None:
            d = replace(d, scope=clause_scope(d.ids, d.connective, ends))
        out.append(strip_tokens(d, drop) if strip_blocks else d)
    return out


def manifest_tokenizer(data_dir: Path) -> LegalTokenizer:
    """The tokenizer that prepared `data_dir` (its manifest names it and its hash)."""
    manifest = json.loads((data_dir / "manifest.json").read_text())
    path, want = Path(manifest["tokenizer"]), manifest.get("tokenizer_sha256")
    if want and path.is_file() and sha256_file(path) != want:
        raise ValueError(f"{path}: not the tokenizer that prepared {data_dir} (its sha256 differs)")
    return load_tokenizer(path)


# ---- lanes ------------------------------------------------------------------------------------------


@dataclass
class Batch:
    input_ids: torch.Tensor  # [B, T] long
    targets: torch.Tensor  # [B, T] long, IGNORE past a document's end
    block_types: torch.Tensor  # [B, T] long
    connective: torch.Tensor  # [B, T] bool, of each input token
    target_connective: torch.Tensor  # [B, T] bool, of each target token
    scope: torch.Tensor  # [B, T] bool, of each input token: inside a connective's clause
    new_doc: torch.Tensor  # [B] bool: the lane starts a document here; its memory must be dropped
    doc: torch.Tensor  # [B] long: index into the stream's documents, -1 for an idle lane
    window: torch.Tensor  # [B] long: window index inside the document
    epoch: torch.Tensor  # [B] long

    @property
    def n_targets(self) -> int:
        return int((self.targets != IGNORE).sum())

    def lanes(self, start: int, stop: int) -> Batch:
        """The sub-batch of lanes [start, stop) (a gradient-accumulation chunk or a DDP rank's share)."""
        return Batch(**{k: v[start:stop] for k, v in self.__dict__.items()})


@dataclass
class LaneStream:
    """Windows of `seg_len` tokens from documents read in order, one document per lane at a time.

    With `shuffle`, the document queue is a fresh seeded permutation every epoch and runs forever
    (training); without it, documents are read once in the given order and the stream then ends
    (evaluation; lanes with nothing left idle with all-IGNORE targets).
    """

    docs: list[EncodedDoc]
    n_lanes: int
    seg_len: int
    seed: int = 0
    shuffle: bool = True
    pad_id: int = 0
    cursor: int = 0  # position in the queue of all epochs laid end to end
    lanes: list[tuple[int, int, int] | None] = field(default_factory=list)  # (epoch, doc, window)
    _order_cache: tuple[int, list[int]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.n_windows = [d.n_windows(self.seg_len) for d in self.docs]
        if not any(self.n_windows):
            raise ValueError("no document has two tokens or more; nothing to stream")
        if not self.lanes:
            self.lanes = [None] * self.n_lanes

    def _order(self, epoch: int) -> list[int]:
        if self._order_cache is None or self._order_cache[0] != epoch:
            n = len(self.docs)
            if self.shuffle:
                g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
                order = torch.randperm(n, generator=g).tolist()
            else:
                order = list(range(n))
            self._order_cache = (epoch, [i for i in order if self.n_windows[i] > 0])
        return self._order_cache[1]

    def _next_doc(self) -> tuple[int, int] | None:
        n = len(self._order(0))
        epoch, i = divmod(self.cursor, n)
        if not self.shuffle and epoch > 0:
            return None
        self.cursor += 1
        return epoch, self._order(epoch)[i]

    def advance(self) -> list[bool]:
        """Move every lane one window on; returns which lanes started a new document."""
        new = []
        for k, lane in enumerate(self.lanes):
            if lane is not None and lane[2] + 1 < self.n_windows[lane[1]]:
                self.lanes[k] = (lane[0], lane[1], lane[2] + 1)
                new.append(False)
            else:
                nxt = self._next_doc()
                self.lanes[k] = None if nxt is None else (nxt[0], nxt[1], 0)
                new.append(True)
        return new

    def next_batch(self) -> Batch | None:
        new = self.advance()
        if all(lane is None for lane in self.lanes):
            return None
        B, T = self.n_lanes, self.seg_len
        x = np.full((B, T), self.pad_id, dtype=np.int64)
        y = np.full((B, T), IGNORE, dtype=np.int64)
        ty = np.zeros((B, T), dtype=np.int64)
        cn = np.zeros((B, T), dtype=bool)
        tcn = np.zeros((B, T), dtype=bool)
        sc = np.zeros((B, T), dtype=bool)
        doc = np.full(B, -1, dtype=np.int64)
        win = np.zeros(B, dtype=np.int64)
        ep = np.zeros(B, dtype=np.int64)
        for k, lane in enumerate(self.lanes):
            if lane is None:
                continue
            ep[k], doc[k], win[k] = lane
            d = self.docs[lane[1]]
            s = lane[2] * T
            n = min(T, len(d.ids) - 1 - s)
            x[k, :n] = d.ids[s : s + n]
            y[k, :n] = d.ids[s + 1 : s + n + 1]
            ty[k, :n] = d.types[s : s + n]
            cn[k, :n] = d.connective[s : s + n]
            tcn[k, :n] = d.connective[s + 1 : s + n + 1]
            if d.scope is not None:
                sc[k, :n] = d.scope[s : s + n]
        return Batch(
            input_ids=torch.from_numpy(x),
            targets=torch.from_numpy(y),
            block_types=torch.from_numpy(ty),
            connective=torch.from_numpy(cn),
            target_connective=torch.from_numpy(tcn),
            scope=torch.from_numpy(sc),
            new_doc=torch.tensor(new),
            doc=torch.from_numpy(doc),
            window=torch.from_numpy(win),
            epoch=torch.from_numpy(ep),
        )

    def __iter__(self) -> Iterator[Batch]:
        while (batch := self.next_batch()) is not None:
            yield batch

    def windows_per_epoch(self) -> int:
        return sum(self.n_windows)

    # The data position of a checkpoint: enough to continue the exact same sequence of batches.
    def state_dict(self) -> dict:
        lanes = [list(lane) if lane is not None else [-1, -1, -1] for lane in self.lanes]
        return {"cursor": self.cursor, "lanes": torch.tensor(lanes, dtype=torch.long), "seed": self.seed}

    def load_state_dict(self, state: dict) -> None:
        if int(state["seed"]) != self.seed or len(state["lanes"]) != self.n_lanes:
            raise ValueError("stream state is from a different seed or lane count")
        self.cursor = int(state["cursor"])
        self.lanes = [None if row[1] < 0 else (row[0], row[1], row[2]) for row in state["lanes"].tolist()]
