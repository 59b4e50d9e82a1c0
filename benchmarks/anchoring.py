"""Semantic anchoring on vs off: the LM's per-token NLL over long held-apart judgments and contracts,
the share of segments whose memory was reset, and the paired difference with a document-bootstrap 95%
interval, at a few thresholds against the off baseline of the same run.

Documents: the records of Chinese criminal judgments and CLCR cases, English CUAD contracts and Court
of Appeal judgments that the LM held apart (`pipeline.tokenizer.is_held_out`, seed 0, 5%: the rule
txl/corpora.py trained with), parsed and segmented as the pipeline does, with at least --min-segments
segments (the first --max-segments of each are encoded). Tokens are scored within their segment (the
first token of each segment is not), the same tokens in every setting.

It also prints the median key cosine between a document's opening and the segments of other documents
of its corpus ("unrelated"), and within a document ("same document"): the default threshold is meant to
be the unrelated one (retrieval/config.py).

Run: `PYTHONPATH=. .venv/bin/python benchmarks/anchoring.py [--checkpoint CKPT] [--docs 12]
[--thresholds 0.0 0.1 0.2] [--threads 1]` (a trained checkpoint; the shipped one and its key head by
default). One JSON line per corpus and one over all of them.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import torch

import pipeline
from pipeline.errors import DocumentError
from pipeline.paths import SHARED_DATA
from pipeline.tokenizer import is_held_out
from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.inject import DocInput, EncodedSegment, encode_stream
from txl.corpora import DEFAULT_CORPORA, count_records, iter_records
from txl.keys import key_identity
from txl.lm_metrics import bootstrap_interval

CORPORA = ("zh_criminal", "zh_clcr", "en_cuad", "en_ewca")
HOLDOUT, SEED = 0.05, 0  # txl.corpora.prepare's defaults, which the shipped LM was trained with


def held_apart_docs(name: str, tok, n_docs: int, min_segments: int, max_segments: int) -> list[DocInput]:
    """Up to n_docs held-apart documents of a corpus with at least min_segments segments, in file order."""
    corpus = next(c for c in DEFAULT_CORPORA if c.name == name)
    held = {
        i
        for i in range(count_records(SHARED_DATA / corpus.path))
        if is_held_out(corpus.path, i, SEED, HOLDOUT)
    }
    docs: list[DocInput] = []
    for _, doc in iter_records(corpus, SHARED_DATA, [], held):
        try:
            segments = pipeline.segment(doc)
        except DocumentError:
            continue
        if len(segments) < min_segments:
            continue
        docs.append(DocInput.encoded(segments[:max_segments], tok))
        if len(docs) == n_docs:
            break
    return docs


@torch.no_grad()
def token_nll(model, doc: DocInput, encoded: list[EncodedSegment]) -> np.ndarray:
    """NLL of every token after the first of each segment, from the states the encoder gave it."""
    out = []
    for e, ids in zip(encoded, doc.token_ids, strict=True):
        if len(ids) < 2:
            continue
        logp = model.log_probs(e.hidden[None, :-1].float())[0]
        target = torch.tensor(ids[1:], device=logp.device)
        out.append(-logp.gather(1, target[:, None])[:, 0].double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def key_cosines(keys: list[np.ndarray]) -> dict[str, float | None]:
    """Median cosine of each document's opening key with the later segments of the same document and
    with the segments of the other documents (`keys`: one [segments, d] array per document)."""
    same, unrelated = [], []
    for i, doc in enumerate(keys):
        for j, other in enumerate(keys):
            cos = other[1:] @ doc[0] if i == j else other @ doc[0]
            (same if i == j else unrelated).extend(cos.tolist())
    return {
        "same_document": round(float(np.median(same)), 3) if same else None,
        "unrelated": round(float(np.median(unrelated)), 3) if unrelated else None,
    }


def run_setting(model, docs: list[DocInput], cfg: RetrievalConfig) -> dict:
    """Per document: token NLLs and keys; reset count and seconds. Each document's states are scored as
    it finishes and then dropped (all of them at once would take gigabytes)."""
    t0 = time.perf_counter()
    nll: list = [None] * len(docs)
    keys: list = [None] * len(docs)
    resets = 0
    for i, encoded in encode_stream(model, docs, None, cfg):
        nll[i] = token_nll(model, docs[i], encoded)
        keys[i] = np.stack([e.key for e in encoded])
        resets += sum(e.reset for e in encoded)
    return {"nll": nll, "keys": keys, "resets": resets, "seconds": time.perf_counter() - t0}


def merged(runs: list[dict]) -> dict:
    """Several corpora's runs of one setting as one."""
    return {
        "nll": [x for r in runs for x in r["nll"]],
        "keys": [x for r in runs for x in r["keys"]],
        "resets": sum(r["resets"] for r in runs),
        "seconds": sum(r["seconds"] for r in runs),
    }


def compare(off: dict, on: dict, segments: int) -> dict:
    """One threshold against the off baseline on the same tokens: NLL, reset share, paired difference."""
    diff = np.array([float((a - b).sum()) for a, b in zip(on["nll"], off["nll"], strict=True)])
    counts = np.array([len(a) for a in on["nll"]])
    tokens = int(counts.sum())
    mean = float(diff.sum()) / tokens
    lo, hi = bootstrap_interval(diff, counts)
    nll_on = sum(float(x.sum()) for x in on["nll"]) / tokens
    return {
        "nll": round(nll_on, 4),
        "ppl": round(math.exp(nll_on), 3),
        "reset_share": round(on["resets"] / segments, 3),
        "nll_diff": round(mean, 4),
        "ci95": [round(lo, 4), round(hi, 4)],
        "ppl_ratio": round(math.exp(mean), 4),
        "seconds": round(on["seconds"], 1),
    }


def report(name: str, docs: list[DocInput], runs: dict[str, dict]) -> dict:
    off = runs["off"]
    segments = sum(len(d.segments) for d in docs)
    tokens = sum(len(x) for x in off["nll"])
    nll_off = sum(float(x.sum()) for x in off["nll"]) / tokens
    return {
        "corpus": name,
        "docs": len(docs),
        "segments": segments,
        "tokens_scored": tokens,
        "key_cosine_median": key_cosines(off["keys"]),
        "off": {
            "nll": round(nll_off, 4),
            "ppl": round(math.exp(nll_off), 3),
            "seconds": round(off["seconds"], 1),
        },
        **{k: compare(off, run, segments) for k, run in runs.items() if k != "off"},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--docs", type=int, default=12, help="held-apart documents per corpus, at most")
    ap.add_argument("--min-segments", type=int, default=16)
    ap.add_argument("--max-segments", type=int, default=64)
    ap.add_argument(
        "--thresholds", type=float, nargs="+", default=[0.0, RetrievalConfig().anchoring_threshold, 0.2]
    )
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    # beside other work two threads stall on each other (data/models/README.md); alone, 2 is faster
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    path = checkpoint_file(args.checkpoint)
    if path is None or not path.is_file():
        raise SystemExit("needs a trained checkpoint (--checkpoint or data/models/txl_lm.pt)")
    model, tok = load_encoder(path, "cpu")
    print(json.dumps({"checkpoint": str(path), "keys": key_identity(model) or "raw (no key head)"}))
    settings = {"off": RetrievalConfig()}
    settings.update(
        {f"on@{t:g}": RetrievalConfig(anchoring=True, anchoring_threshold=t) for t in args.thresholds}
    )
    all_docs: list[DocInput] = []
    all_runs: dict[str, list[dict]] = {k: [] for k in settings}
    for name in args.corpora:
        docs = held_apart_docs(name, tok, args.docs, args.min_segments, args.max_segments)
        if not docs:
            print(
                json.dumps(
                    {
                        "corpus": name,
                        "docs": 0,
                        "note": f"no held-apart document of {args.min_segments}+ segments",
                    }
                )
            )
            continue
        runs = {k: run_setting(model, docs, cfg) for k, cfg in settings.items()}
        print(json.dumps(report(name, docs, runs)), flush=True)
        all_docs += docs
        for k, run in runs.items():
            all_runs[k].append(run)
    if len(all_runs["off"]) > 1:  # "unrelated" key cosines here mix the corpora (and languages)
        print(json.dumps(report("all", all_docs, {k: merged(v) for k, v in all_runs.items()})))


if __name__ == "__main__":
    main()
