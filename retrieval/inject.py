"""Memory injection: while a document is encoded segment by segment, the most similar segments that
have left the model's memory (same document, and optionally other documents) come back as retrieved
memory slots, from the compact states of the segment-state store.

The query for segment n is the key of segment n-1: segment n's own states do not exist before it is
encoded, and neighbouring segments are the best cheap guess of what it will need. Each encoded segment
is added to the store at once (uncommitted), so later segments of the same document can retrieve it.
What may be injected is the lane's `Injector` (retrieval/store_windows.py: txl.windows.PastWindows over
the store, so the rule of what has left the memory is the one training and evaluation use).

`encode_stream` runs many documents this way at once (retrieval/lanes.py: one forward call per step
over several documents' next segments, each with its own memory) and encodes a prefix that several
documents share once (retrieval/prefix.py). A call takes several consecutive segments of a document
(packed, `encode_pack_tokens`) wherever nothing can be injected into the later ones: always without a
store, and with one until the document's first segment leaves the memory. With anchoring on
(retrieval/anchoring.py) the memory is emptied before a segment whose predecessor's key drifted from the
opening's; a pack is cut at such a reset and its later segments are encoded again after it.
With a store, each document's MinHash signature goes into it as the document starts, and injection
across documents never draws on a near-duplicate (retrieval/store_dedup.py).
`encode_documents` and `encode_document` gather its output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from pipeline.records import BLOCK_TYPE_IDS, BlockType, Segment
from pipeline.tokenizer import encode_segment
from retrieval.anchoring import reset_due
from retrieval.config import RetrievalConfig
from retrieval.lanes import Lane, pick
from retrieval.predict.config import PredictConfig
from retrieval.prefix import Pack, PrefixCache, Reused, chain_hashes
from retrieval.stages import Waiting
from retrieval.store import SegmentEntry, SegmentStore
from retrieval.store_dedup import StoreDuplicates
from retrieval.store_windows import Injector, choose_all, retrieved_inputs
from txl.keys import model_key
from txl.memory import Memory, Packing
from txl.pooling import pool_states
from txl.retrieved import Retrieved


@dataclass
class EncodedSegment:
    segment_id: str
    key: np.ndarray  # [d] unit vector
    hidden: torch.Tensor | None  # [T, d] last layer, on the model's device; None: keys asked for alone
    retrieved: list[str] = field(default_factory=list)  # segment_ids injected while encoding it
    reset: bool = False  # anchoring emptied the memory before it


@dataclass
class DocInput:
    """One document for the encoder: its segments in order with their token ids (and connective flags)."""

    segments: list[Segment]
    token_ids: list[list[int]]
    connective_masks: list[list[bool]] | None = None

    @classmethod
    def encoded(cls, segments: list[Segment], tokenizer) -> DocInput:
        """The segments with the token ids and connective flags `pipeline.tokenizer.encode_segment` gives."""
        pairs = [encode_segment(s, tokenizer) for s in segments]
        return cls(segments, [ids for ids, _ in pairs], [mask for _, mask in pairs])


def _batch_retrieved(
    store: SegmentStore | None, picks: list[list[str]], device: torch.device
) -> Retrieved | None:
    """Each lane's injected segments as retrieved slots, padded on the right with masked slots to the
    longest (a lane with none gets only masked slots)."""
    if store is None or not any(picks):
        return None
    return Retrieved.stack([retrieved_inputs(store, p, device) for p in picks])


@torch.no_grad()
def encode_stream(
    model,
    docs: Iterable[DocInput | Waiting],
    store: SegmentStore | None = None,
    config: RetrievalConfig | None = None,
    stats: dict | None = None,
    duplicates: StoreDuplicates | None = None,
    keep_hidden: bool = True,
    layers: int | None = None,
) -> Iterator[tuple[int, list[EncodedSegment]]]:
    """Encode many documents at once, each segment by segment with its own recurrence memory (and, with a
    store, injection); yields (input index, the document's EncodedSegments) as each document finishes.
    A `Waiting` among `docs` (counted by the indices) says a live feed has nothing ready yet.

    Up to `config.encode_lanes` documents share one forward call (retrieval.lanes), and consecutive
    segments one call where nothing can be injected into them (`encode_pack_tokens`): the states equal
    those of one document and segment at a time. Prefixes shared by documents are encoded once
    (retrieval.prefix) unless injection reaches across documents. Keys and states go into the store.
    `stats` receives the counts of encoded and reused segments and tokens (encoded: every token of a
    forward call, also of a pack an anchoring reset cut short). `duplicates`: the store's signatures
    (None: made here, with the predict stage's threshold), made only where injection reaches across
    documents. `keep_hidden=False`: hidden None (else 128 KB per segment of each document in flight);
    only then may `layers` run the first layers alone (txl.model), for keys and states read below them."""
    cfg = config or RetrievalConfig()
    if keep_hidden and layers is not None:
        raise ValueError("an encoding cut at a layer has no last-layer states to keep")
    if store is not None and duplicates is None:
        duplicates = StoreDuplicates(store, PredictConfig().duplicate_doc_threshold)
    device = next(model.parameters()).device
    prefixes = (
        PrefixCache(cfg.prefix_cache_bytes) if cfg.reuse_prefixes and not cfg.inject_cross_document else None
    )
    counts = stats if stats is not None else {}
    counts.update(encoded_segments=0, encoded_tokens=0, reused_segments=0, reused_tokens=0)
    pending = iter(enumerate(docs))
    active: list[Lane] = []
    try:
        while True:
            yield from _take_in(pending, active, model, store, cfg, prefixes, duplicates)
            if prefixes is not None:
                for lane in [lane for lane in active if _advance(lane, prefixes)]:
                    active.remove(lane)
                    yield lane.index, lane.out
            if not active:
                break
            step = pick(
                _distinct(active) if prefixes is not None else active,
                cfg.encode_lanes,
                cfg.encode_batch_tokens,
            )
            segments, tokens = _step(model, step, store, cfg, device, prefixes, keep_hidden, layers)
            counts["encoded_segments"] += segments
            counts["encoded_tokens"] += tokens
            for lane in step:
                if lane.done:
                    active.remove(lane)
                    yield lane.index, lane.out
    finally:
        if prefixes is not None:
            counts.update(reused_segments=prefixes.reused_segments, reused_tokens=prefixes.reused_tokens)


def _take_in(
    pending: Iterator,
    active: list[Lane],
    model,
    store,
    cfg: RetrievalConfig,
    prefixes,
    duplicates: StoreDuplicates | None,
) -> Iterator[tuple[int, list[EncodedSegment]]]:
    """Start lanes for the next documents until `cfg.encode_window` are active or the source has none
    ready; yields the documents that finish as soon as they start (nothing left to encode)."""
    while len(active) < cfg.encode_window:
        nxt = next(pending, None)
        if nxt is None:
            break
        if isinstance(nxt[1], Waiting):  # nothing ready: work on what is here, else wait
            if active:
                break
            continue
        lane = _start(nxt[0], nxt[1], model, store, cfg, prefixes, duplicates)
        if lane.done:
            yield lane.index, lane.out
        else:
            active.append(lane)


def _start(
    index: int,
    doc: DocInput,
    model,
    store: SegmentStore | None,
    cfg: RetrievalConfig,
    prefixes: PrefixCache | None,
    duplicates: StoreDuplicates | None,
) -> Lane:
    segments = doc.segments
    injector = None
    if store is not None and segments:
        if cfg.inject_cross_document:
            # before any of its segments is stored: a document that may draw on them knows its signature
            duplicates.enter(segments[0].doc_id, segments)
        injector = Injector(store, segments[0].doc_id, cfg, model.cfg.mem_len, duplicates)
    chain = None
    if prefixes is not None:
        chain = chain_hashes([str(s.type) for s in segments], doc.token_ids, doc.connective_masks)
        prefixes.admit(chain)
    anchoring = cfg.anchoring_threshold if cfg.anchoring else None
    return Lane(index, doc, injector, chain, cfg.encode_pack_tokens, anchoring)


def _span_key(lane: Lane) -> Pack:
    """The lane's next pack, named by the chain hash of its last segment (that hash covers the whole
    prefix, and where a pack starts and ends is decided by the prefix alone) and where it starts (the
    rest of a pack that a reset cut short may end where the pack did)."""
    return lane.chain[lane.next_span()[0] - 1], lane.pos


def _distinct(lanes: list[Lane]) -> list[Lane]:
    """One lane per next pack: lanes that reached the same pack of a shared prefix wait for the first."""
    seen: set[Pack] = set()
    out = []
    for lane in lanes:
        if (key := _span_key(lane)) not in seen:
            seen.add(key)
            out.append(lane)
    return out


def _advance(lane: Lane, prefixes: PrefixCache) -> bool:
    """Move a lane over the kept packs of a shared prefix, its segments getting the prefix's outputs
    under their own ids; True when that finished the document."""
    segs = lane.doc.segments
    while not lane.done and (hit := prefixes.get(_span_key(lane))) is not None:
        items, memory = hit
        lane.memory = memory
        for item in items:
            _finish_segment(
                lane,
                item.key,
                item.hidden,
                item.states,
                item.n_tokens,
                [segs[j].segment_id for j in item.retrieved],
            )
    return lane.done


def _reset_if_due(lane: Lane) -> bool:
    """Anchoring (retrieval.anchoring) says the key just computed drifted from the opening's: the lane's
    next segment starts with empty memory. True when it reset."""
    if lane.anchoring is None or lane.done:
        return False
    if not reset_due(lane.out[0].key, lane.out[-1].key, lane.pos, lane.anchoring):
        return False
    lane.memory = None
    lane.reset_at = lane.pos
    if lane.injector is not None:
        lane.injector.reset_memory()
    return True


def _finish_segment(
    lane: Lane,
    key: np.ndarray,
    hidden: torch.Tensor | None,
    states: np.ndarray | None,
    n_tokens: int,
    retrieved: list[str],
) -> bool:
    """The lane's current segment is encoded (or reused): store it, let later segments retrieve it, move
    on; True when anchoring emptied the memory before the next segment."""
    seg = lane.doc.segments[lane.pos]
    if lane.injector is not None:  # with a store: the segment goes into it, for later ones to retrieve
        lane.injector.keep(
            SegmentEntry(seg.segment_id, seg.doc_id, seg.seg_idx, str(seg.type)), key, states, n_tokens
        )
    lane.query = key
    lane.out.append(EncodedSegment(seg.segment_id, key, hidden, retrieved, lane.reset_at == lane.pos))
    lane.pos += 1
    return _reset_if_due(lane)


def _store_states(out, b: int, at: int, n: int, store: SegmentStore, cfg: RetrievalConfig) -> np.ndarray:
    """The compact states the store keeps of lane b's segment at tokens at..at+n of a forward call: its
    layers' inputs (`state_layers`, else every layer), pooled to the store's P."""
    kept = store.state_layers or range(len(out.layer_inputs))
    layers = torch.stack([out.layer_inputs[i][b, at : at + n] for i in kept])
    p = store.state_shape[1] if store.state_shape else cfg.states_per_layer  # the store's P wins
    return pool_states(layers.float().cpu().numpy(), p)


def _step_inputs(lanes: list[Lane], spans: list[tuple[int, int]]) -> tuple[torch.Tensor, ...]:
    """[B, T] token ids, block types, positions within each packed segment, and connective flags (None
    unless every lane has them) of the lanes' next spans, right-padded to the longest."""
    b_size, t = len(lanes), max(n for _, n in spans)
    ids, types, starts = (torch.zeros(b_size, t, dtype=torch.long) for _ in range(3))
    with_conn = all(lane.doc.connective_masks is not None for lane in lanes)
    conn = torch.zeros(b_size, t, dtype=torch.bool)
    for b, (lane, (end, _)) in enumerate(zip(lanes, spans, strict=True)):
        at = 0
        for s in range(lane.pos, end):
            n = len(lane.doc.token_ids[s])
            ids[b, at : at + n] = torch.tensor(lane.doc.token_ids[s])
            types[b, at : at + n] = BLOCK_TYPE_IDS[BlockType(lane.doc.segments[s].type)]
            starts[b, at : at + n] = at
            if with_conn:
                conn[b, at : at + n] = torch.tensor(lane.doc.connective_masks[s], dtype=torch.bool)
            at += n
    return ids, types, starts, conn if with_conn else None


def _step(
    model,
    lanes: list[Lane],
    store,
    cfg: RetrievalConfig,
    device,
    prefixes: PrefixCache | None,
    keep_hidden: bool = True,
    layers: int | None = None,
) -> tuple[int, int]:
    """One forward call over the next segment (or packed segments) of each lane; updates the lanes in
    place and returns (segments, tokens) encoded."""
    spans = [lane.next_span() for lane in lanes]
    lens = [n for _, n in spans]
    ids, types, starts, conn = _step_inputs(lanes, spans)
    packed = any(end - lane.pos > 1 for lane, (end, _) in zip(lanes, spans, strict=True))
    picks = choose_all([lane.injector for lane in lanes], [lane.query for lane in lanes])
    memory = Memory.stack([lane.memory for lane in lanes])
    out = model(
        ids.to(device),
        memory,
        _batch_retrieved(store, picks, device),
        block_types=types.to(device),
        connective_mask=conn.to(device) if conn is not None else None,
        packing=Packing(torch.tensor(lens), starts.to(device) if packed else None),
        layers=layers,
    )
    segments = 0
    for b, (lane, (end, total)) in enumerate(zip(lanes, spans, strict=True)):
        key_of_pack = _span_key(lane) if prefixes is not None else None
        keep = key_of_pack is not None and prefixes.wanted(key_of_pack)
        index = {s.segment_id: i for i, s in enumerate(lane.doc.segments)} if keep else {}
        lane.memory = after = out.memory.lane(b, min(model.cfg.mem_len, lane.mem_width + total))
        kept: list[Reused] = []
        at, cut = 0, False
        while lane.pos < end and not cut:
            seg_ids = lane.doc.token_ids[lane.pos]
            n = len(seg_ids)
            key = model_key(model, out, b, slice(at, at + n), seg_ids, cfg.pooling)
            hidden = out.hidden[b, at : at + n].clone() if keep_hidden else None
            states = _store_states(out, b, at, n, store, cfg) if store is not None else None
            injected = picks[b] if at == 0 else []  # a pack's later segments have nothing injected
            if keep:
                kept.append(Reused(key, hidden, states, n, [index[s] for s in injected]))
            # a reset inside the pack: the segments after it read memory they must not; encoded again later
            cut = _finish_segment(lane, key, hidden, states, n, injected) and lane.pos < end
            at += n
            segments += 1
        if kept:  # a cut pack is kept up to its reset, under the name of the pack as planned
            prefixes.put(key_of_pack, kept, None if cut else after)
    return segments, sum(lens)


def encode_documents(
    model, docs: list[DocInput], store: SegmentStore | None = None, config: RetrievalConfig | None = None
) -> list[list[EncodedSegment]]:
    """`encode_stream` gathered in input order."""
    out: list[list[EncodedSegment]] = [[] for _ in docs]
    for i, encoded in encode_stream(model, docs, store, config):
        out[i] = encoded
    return out


def encode_document(
    model,
    segments: list[Segment],
    token_ids: list[list[int]],
    store: SegmentStore | None = None,
    config: RetrievalConfig | None = None,
    connective_masks: list[list[bool]] | None = None,
) -> list[EncodedSegment]:
    """Encode one document's segments in order with recurrence memory and, when a store is given,
    injection; each segment's key and compact states are added to the store (commit is the caller's)."""
    return encode_documents(model, [DocInput(segments, token_ids, connective_masks)], store, config)[0]
