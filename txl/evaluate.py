"""Language-model evaluation: perplexity and bits per character of documents read in order.

Three settings on the same weights:
- "none": every window alone (no memory);
- "memory": the Transformer-XL memory carried from window to window within a document;
- "retrieved": memory plus retrieved memory — the states of the document's own earlier windows that
  have already left the memory, chosen by similarity to the previous window (an in-memory search
  over the lane's past windows; the query never looks at the window being predicted).

Bits per character count the characters of the segments' text, so they compare across tokenizers;
structural tokens (<doc>, block tokens) are read but never scored. Tokens right after a connective
(the first token following a connective mark) are also reported separately.
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import pipeline
from pipeline.errors import DocumentError
from pipeline.tokenizer import encode_segment
from txl.keys import model_key
from txl.memory import Memory
from txl.recurrence import memory_for, run_batch
from txl.streams import IGNORE, EncodedDoc, LaneStream, stream_document
from txl.windows import PastWindows, remember_windows, retrieve_windows

SETTINGS = ("none", "memory", "retrieved")


@dataclass
class _Sums:
    tokens: int = 0
    nll: float = 0.0
    chars: int = 0
    conn_tokens: int = 0
    conn_nll: float = 0.0

    def result(self) -> dict:
        mean = self.nll / max(self.tokens, 1)
        conn = self.conn_nll / max(self.conn_tokens, 1)
        return {
            "tokens": self.tokens,
            "chars": self.chars,
            "nll": mean,
            "ppl": math.exp(mean),
            "bpc": self.nll / math.log(2) / max(self.chars, 1),
            "after_connective": {"tokens": self.conn_tokens, "nll": conn, "ppl": math.exp(conn)},
        }


@contextlib.contextmanager
def _overrides(model, **values):
    """Temporarily change fields of the model's config (eval mem_len, clamp_len)."""
    cfg = model.cfg
    old = {k: getattr(cfg, k) for k, v in values.items() if v is not None}
    for k in old:
        setattr(cfg, k, values[k])
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(cfg, k, v)


@torch.no_grad()
def evaluate_lm(
    model,
    docs: list[EncodedDoc],
    seg_len: int,
    settings: Iterable[str] = SETTINGS,
    special: torch.Tensor | None = None,
    n_lanes: int = 8,
    device: torch.device | str = "cpu",
    mem_len: int | None = None,
    clamp_len: int | None = None,
    retrieve_k: int = 2,
    past_windows=PastWindows,
    tags: bool = True,
    connectives: bool = True,
    progress=None,
    token_nll: dict | None = None,
    window_keys: str = "mean",
) -> dict:
    """{setting: {corpus: metrics, "all": metrics}} over `docs` read whole, in order.

    `window_keys`: how the "retrieved" setting keys past windows and asks for them: "mean", their mean
    top-layer state (as training does), or "head", the key head attached to the model (as `ldx run`'s
    injection looks segments up: txl.keys.model_key).

    `token_nll`, when given, is filled with {setting: one float32 array per document}: the NLL of the
    document's token i at index i, NaN where it is not scored (what `txl.lm_metrics` works from)."""
    device = torch.device(device)
    special = torch.zeros(0, dtype=torch.long) if special is None else special.cpu()
    was_training = model.training
    model.eval()
    if window_keys not in ("mean", "head"):
        raise ValueError(f"window_keys must be 'mean' or 'head', not {window_keys!r}")
    key_of = _head_key(model) if window_keys == "head" else None
    results = {}
    try:
        with _overrides(model, mem_len=mem_len, clamp_len=clamp_len):
            for setting in settings:
                if setting not in SETTINGS:
                    raise ValueError(f"unknown setting {setting!r}; choose from {', '.join(SETTINGS)}")
                per_token = [np.full(len(d.ids), np.nan, dtype=np.float32) for d in docs]
                results[setting] = _run_setting(
                    model,
                    docs,
                    seg_len,
                    setting,
                    special,
                    n_lanes,
                    device,
                    retrieve_k,
                    past_windows,
                    progress,
                    {"tags": tags, "connectives": connectives},
                    per_token,
                    key_of,
                )
                if token_nll is not None:
                    token_nll[setting] = per_token
    finally:
        model.train(was_training)
    return results


def _run_setting(
    model,
    docs,
    seg_len,
    setting,
    special,
    n_lanes,
    device,
    retrieve_k,
    past_windows,
    progress,
    features,
    per_token,
    key_of=None,
):
    sums: dict[str, _Sums] = defaultdict(_Sums)
    for d in docs:
        sums[d.corpus].chars += d.n_chars
    stream = LaneStream(docs, n_lanes, seg_len, shuffle=False)
    memory: Memory | None = None
    stores = [past_windows() for _ in range(n_lanes)] if setting == "retrieved" else []
    query: list[torch.Tensor | None] = [None] * n_lanes
    if setting == "retrieved" and model.cfg.mem_len < seg_len:
        raise ValueError("retrieved memory needs mem_len >= seg_len (a window's states come from the memory)")
    task = (
        progress.add_task(setting, total=math.ceil(stream.windows_per_epoch() / n_lanes))
        if progress
        else None
    )
    for batch in stream:
        for k in torch.nonzero(batch.new_doc).flatten().tolist():
            if stores:
                stores[k].clear()
            query[k] = None
        mem = memory_for(memory, batch) if setting != "none" else None
        retrieved = retrieve_windows(stores, query, model.cfg.mem_len, retrieve_k, device) if stores else None
        out = run_batch(model, batch, device, mem, retrieved, **features)
        if setting != "none":
            memory = out.memory
        _score_batch(sums, docs, batch, out.nll.float().cpu(), special, seg_len, per_token)
        if setting == "retrieved":
            remember_windows(stores, query, out, batch, key_of)
        if progress is not None:
            progress.advance(task)
    total = _Sums()
    for s in sums.values():
        for f in ("tokens", "nll", "chars", "conn_tokens", "conn_nll"):
            setattr(total, f, getattr(total, f) + getattr(s, f))
    return {**{c: s.result() for c, s in sorted(sums.items())}, "all": total.result()}


def _head_key(model):
    """A window's key as `ldx run` keys a segment: the model's key head (txl.keys) over its tokens."""

    def key_of(out, lane: int, n: int, ids: torch.Tensor) -> torch.Tensor:
        key = model_key(model, out, lane, slice(0, n), ids.tolist())
        return torch.from_numpy(key).to(out.hidden.device)

    return key_of


def _score_batch(sums, docs, batch, nll, special, seg_len, per_token) -> None:
    """Add one batch's nll [B, T] to its documents' corpus sums and per-token arrays."""
    scored = (batch.targets != IGNORE) & ~torch.isin(batch.targets, special)
    after_conn = scored & batch.connective & ~batch.target_connective
    for k, doc_index in enumerate(batch.doc.tolist()):
        if doc_index < 0:
            continue
        s = sums[docs[doc_index].corpus]
        s.tokens += int(scored[k].sum())
        s.nll += float(nll[k][scored[k]].sum())
        s.conn_tokens += int(after_conn[k].sum())
        s.conn_nll += float(nll[k][after_conn[k]].sum())
        # window w's target t is the document's token w * seg_len + t + 1
        first = int(batch.window[k]) * seg_len + 1
        n = int((batch.targets[k] != IGNORE).sum())
        per_token[doc_index][first : first + n] = torch.where(scored[k, :n], nll[k, :n], math.nan).numpy()


def pick_docs(
    docs: list[EncodedDoc], per_corpus: int | None, tokens_per_corpus: int | None
) -> list[EncodedDoc]:
    """The first documents of each corpus, whole, while the corpus is under both budgets."""
    picked, used = [], {}
    for d in docs:
        n, k = used.get(d.corpus, (0, 0))
        if (per_corpus is None or k < per_corpus) and (tokens_per_corpus is None or n < tokens_per_corpus):
            picked.append(d)
            used[d.corpus] = (n + len(d.ids), k + 1)
    return picked


# ---- documents from files (what `ldx eval lm` reads) -------------------------------------------------


def encode_paths(
    paths: list[Path], tokenizer, parse_config=None, segment_config=None, max_docs: int | None = None
):
    """Parse, segment and encode the documents in `paths` (any input the pipeline reads), at most
    `max_docs` of them.

    Returns (documents, errors); a document that fails is reported as (source, message) and skipped.
    The corpus name of a document is its file's name.
    """
    clause = bool(segment_config and segment_config.connective_clause)
    docs, errors = [], []
    for path in paths:
        try:
            for doc in pipeline.load_documents(path, parse_config):
                if max_docs is not None and len(docs) >= max_docs:
                    return docs, errors
                segs = pipeline.segment(doc, segment_config)
                enc = stream_document(
                    doc, segs, lambda s: encode_segment(s, tokenizer, clause), corpus=path.name
                )
                if len(enc.ids) > 1:
                    docs.append(enc)
        except DocumentError as e:
            errors.append((str(path), str(e)))
    return docs, errors
