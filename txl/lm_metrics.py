"""Long-range and connective figures of a language-model evaluation, computed from per-token NLLs.

`txl.evaluate.evaluate_lm(token_nll=...)` hands back, per setting, one float array per document: the
NLL of the document's token i at index i, NaN where the token is not scored (the first token,
structural tokens). Everything here works from those arrays and the documents' token ids:

- distant recall: tokens whose trigram (the preceding bigram and the token) last occurred in the same
  document more than `threshold` tokens back, and never nearer. With threshold n_layer x mem_len no
  memory path of the Transformer-XL reaches the earlier occurrence, so only retrieval can help there
  (names, amounts, article numbers, defined terms coming back after pages).
- after a connective: every token of the clause a connective opens, from the first token ending past
  the connective (where the causal connective flag sits) up to the clause's closing punctuation
  (`pipeline.connectives.clause_spans`).
- paired differences between two settings, token by token on the same tokens, with a 95% interval
  from a document bootstrap (documents resampled with replacement, fixed seed): tokens of one
  document are not independent, documents are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pipeline.connectives import find_connectives, token_mask
from txl.streams import EncodedDoc

SUBSETS = ("overall", "distant_recall", "after_connective")
_ID_BITS = 21  # three token ids packed in one int64 trigram key


def distant_threshold(model, mem_len: int | None = None) -> int:
    """n_layer x mem_len: the farthest back any memory path of the model reaches (eval mem_len if given)."""
    return model.cfg.n_layer * (mem_len if mem_len is not None else model.cfg.mem_len)


def distant_mask(ids: np.ndarray, threshold: int) -> np.ndarray:
    """bool [N]: token i ends a trigram whose previous occurrence in `ids` ended more than `threshold`
    tokens before i. Causal: position i depends on ids[: i + 1] only."""
    ids = np.asarray(ids, dtype=np.int64)
    out = np.zeros(len(ids), dtype=bool)
    if len(ids) < 3:
        return out
    if ids.min() < 0 or ids.max() >= 1 << _ID_BITS:
        raise ValueError(f"token ids must lie in [0, 2**{_ID_BITS}) to form trigram keys")
    key = (ids[:-2] << (2 * _ID_BITS)) | (ids[1:-1] << _ID_BITS) | ids[2:]
    order = np.argsort(key, kind="stable")  # equal keys stay in position order
    same = key[order[1:]] == key[order[:-1]]
    gap = order[1:] - order[:-1]  # within a key: distance to the previous occurrence
    out[order[1:][same] + 2] = gap[same] > threshold
    return out


def clause_mask(ids: np.ndarray, special_ids, tokenizer, lexicon: Sequence[str] | None = None) -> np.ndarray:
    """bool [N]: the tokens of the clauses that connectives open, found in the text the ids spell.

    Segments are the runs between structural tokens (each segment starts with its block token), so
    each run is decoded and re-encoded for its character offsets; `tokenizer` is a
    `pipeline.tokenizer.LegalTokenizer`, `lexicon` the connective lexicon (None = built-in)."""
    ids = np.asarray(ids, dtype=np.int64)
    out = np.zeros(len(ids), dtype=bool)
    special = np.isin(ids, np.asarray(sorted(special_ids), dtype=np.int64))
    lex = tuple(lexicon) if lexicon is not None else None
    bounds = np.flatnonzero(np.diff(np.concatenate([[True], special, [True]]).astype(np.int8)))
    for start, stop in zip(bounds[::2], bounds[1::2], strict=True):  # runs of non-special tokens
        run = ids[start:stop].tolist()
        text = tokenizer.decode(run)
        enc = tokenizer.hf.encode(text, add_special_tokens=False)
        if enc.ids != run:
            raise ValueError(
                f"tokens {start}..{stop} do not re-encode to themselves: not this tokenizer's ids"
            )
        out[start:stop] = token_mask(text, find_connectives(text, lex), enc.offsets, clause=True)
    return out


def subset_masks(
    docs: list[EncodedDoc], threshold: int, special_ids, tokenizer, lexicon: Sequence[str] | None = None
) -> list[dict[str, np.ndarray]]:
    """Per document, {subset: bool [N]} for each of SUBSETS (overall: every token)."""
    return [
        {
            "overall": np.ones(len(d.ids), dtype=bool),
            "distant_recall": distant_mask(d.ids, threshold),
            "after_connective": clause_mask(d.ids, special_ids, tokenizer, lexicon),
        }
        for d in docs
    ]


def _figures(nll_sum: float, tokens: int) -> dict:
    if tokens == 0:
        return {"tokens": 0, "nll": None, "ppl": None}
    mean = nll_sum / tokens
    return {"tokens": tokens, "nll": mean, "ppl": math.exp(mean)}


def _groups(docs: list[EncodedDoc]) -> dict[str, list[int]]:
    """Document indices per corpus, sorted by name, then "all"."""
    groups: dict[str, list[int]] = {}
    for i, d in enumerate(docs):
        groups.setdefault(d.corpus, []).append(i)
    return {**dict(sorted(groups.items())), "all": list(range(len(docs)))}


def subset_table(docs: list[EncodedDoc], nll: list[np.ndarray], masks: list[dict[str, np.ndarray]]) -> dict:
    """{corpus | "all": {subset: {"tokens", "nll", "ppl"}}} of one setting's per-token NLLs."""
    sums = np.zeros((len(docs), len(SUBSETS)))
    counts = np.zeros((len(docs), len(SUBSETS)), dtype=np.int64)
    for i, (x, m) in enumerate(zip(nll, masks, strict=True)):
        scored = ~np.isnan(x)
        for j, s in enumerate(SUBSETS):
            sel = scored & m[s]
            sums[i, j], counts[i, j] = float(x[sel].sum(dtype=np.float64)), int(sel.sum())
    return {
        group: {
            s: _figures(float(sums[idx, j].sum()), int(counts[idx, j].sum())) for j, s in enumerate(SUBSETS)
        }
        for group, idx in _groups(docs).items()
    }


def bootstrap_interval(
    doc_sums: np.ndarray, doc_counts: np.ndarray, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the per-token mean sum(doc_sums) / sum(doc_counts) over documents
    resampled with replacement. Only documents with tokens take part (a resample is then never empty)."""
    keep = doc_counts > 0
    sums, counts = np.asarray(doc_sums, dtype=np.float64)[keep], np.asarray(doc_counts)[keep]
    if len(sums) == 0:
        raise ValueError("no document has a token to resample")
    pick = np.random.default_rng(seed).integers(0, len(sums), size=(resamples, len(sums)))
    means = sums[pick].sum(1) / counts[pick].sum(1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def paired(
    docs: list[EncodedDoc],
    nll_a: list[np.ndarray],
    nll_b: list[np.ndarray],
    masks: list[dict[str, np.ndarray]],
    resamples: int = 1000,
    seed: int = 0,
) -> dict:
    """{corpus | "all": {subset: difference}} of setting a minus setting b on the tokens both score.

    A difference holds the tokens and documents it covers, the mean per-token NLL difference, its
    document-bootstrap 95% interval, and both as perplexity ratios (exp of the NLL difference)."""
    sums = np.zeros((len(docs), len(SUBSETS)))
    counts = np.zeros((len(docs), len(SUBSETS)), dtype=np.int64)
    for i, (a, b, m) in enumerate(zip(nll_a, nll_b, masks, strict=True)):
        both = ~np.isnan(a) & ~np.isnan(b)
        for j, s in enumerate(SUBSETS):
            sel = both & m[s]
            diff = a[sel].astype(np.float64) - b[sel]
            sums[i, j], counts[i, j] = float(diff.sum()), int(sel.sum())
    out: dict = {}
    for group, idx in _groups(docs).items():
        out[group] = {}
        for j, s in enumerate(SUBSETS):
            n = int(counts[idx, j].sum())
            if n == 0:
                out[group][s] = {
                    "tokens": 0,
                    "docs": 0,
                    "nll_diff": None,
                    "ci95": None,
                    "ppl_ratio": None,
                    "ppl_ratio_ci95": None,
                }
                continue
            mean = float(sums[idx, j].sum()) / n
            lo, hi = bootstrap_interval(sums[idx, j], counts[idx, j], resamples, seed)
            out[group][s] = {"tokens": n, "docs": int((counts[idx, j] > 0).sum()), "nll_diff": mean,
                             "ci95": [lo, hi], "ppl_ratio": math.exp(mean),
                             "ppl_ratio_ci95": [math.exp(lo), math.exp(hi)]}  # fmt: skip
    return out


def long_range_report(
    docs: list[EncodedDoc],
    token_nll: dict[str, list[np.ndarray]],
    masks: list[dict[str, np.ndarray]],
    pairs: Sequence[tuple[str, str]],
    resamples: int = 1000,
    seed: int = 0,
) -> dict:
    """{"settings": {name: subset_table}, "paired": {"a - b": paired}} for the named settings' NLLs
    (`token_nll`: {name: per-document arrays}) and the (a, b) pairs to compare."""
    return {
        "settings": {name: subset_table(docs, nll, masks) for name, nll in token_nll.items()},
        "paired": {
            f"{a} - {b}": paired(docs, token_nll[a], token_nll[b], masks, resamples, seed) for a, b in pairs
        },
    }


def add_subsets(rows: dict, table: dict) -> dict:
    """One setting's evaluate_lm rows ({corpus: metrics}) with the distant-recall figures added and the
    after-connective figures taken over whole clauses (`subset_table` of the same setting)."""
    for corpus, metrics in rows.items():
        metrics["distant_recall"] = table[corpus]["distant_recall"]
        metrics["after_connective"] = table[corpus]["after_connective"]
    return rows


def format_figures(f: dict) -> str:
    """ "ppl (tokens)" of one subset's figures, "- (0)" when it has no token."""
    return f"{f['ppl']:.2f} ({f['tokens']})" if f["tokens"] else "- (0)"


def format_difference(d: dict) -> str:
    """ "+0.123 [+0.100, +0.150]": the mean NLL difference per token and its 95% interval."""
    if not d["tokens"]:
        return "- (0 tokens)"
    lo, hi = d["ci95"]
    return f"{d['nll_diff']:+.3f} [{lo:+.3f}, {hi:+.3f}] ({d['tokens']} tok)"
