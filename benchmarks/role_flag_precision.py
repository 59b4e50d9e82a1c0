"""Block-role flags (`block_role_disagrees`): the score above which a disagreement with the rule type is
worth an analyst's time, chosen so that at least 80% of the flags are right on documents whose types
are known (on each set below and on both together), and compared in the same run with today's flagging rule (every document kind, score ≥ 0.7).

Known types, each parsed again *blind* so the rules can be wrong and a flag can be right:
- held-apart Chinese criminal judgments (retrieval.predict.train.is_held_apart) with their section
  markers (本院认为, 经审理查明, 判决如下 … train.ZH_MARKERS) cut out of the text before parsing; the truth of a
  segment is the rule type of the marked text at the same words;
- held-apart Indian judgments (india_sc_roles.jsonl), one paragraph per labelled sentence, parsed as
  English judgments; the truth is the sentence's label (layouts.INDIA_ROLES: Argument is CLAIMS or DEFENSE).
A flag is right when the head's type is the truth (the rule type disagrees with it by construction).
Recall is over the segments whose blind rule type is wrong. The demo's patent (data/samples/patent.pdf)
counts too: its types are the rules' and none is a judgment role, so any flag there is wrong.

    nice -n 19 .venv/bin/python benchmarks/role_flag_precision.py [--zh-docs 60] [--text-only]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch

import pipeline
from pipeline.config import ParseConfig
from pipeline.parsing import build
from pipeline.parsing.layouts import INDIA_ROLES
from pipeline.parsing.text import from_text
from pipeline.paths import DATA_DIR, SHARED_DATA
from pipeline.records import BlockType, DocKind, Document, Segment
from retrieval.predict.config import PredictConfig
from retrieval.predict.role_states import unit_states
from retrieval.predict.stage import ROLE_KINDS, load_heads
from retrieval.predict.train import ZH_MARKERS, is_held_apart, read_jsonl

GRID = [round(t, 3) for t in (*np.arange(0.5, 0.96, 0.05), 0.97, 0.98, 0.99, 0.995, 0.999)]
TARGET = 0.8


@dataclass
class Unit:
    kind: DocKind
    predicted: BlockType
    score: float
    rule: BlockType
    truth: set[BlockType]  # empty: any judgment role is wrong here (a patent)


def _blind(text: str) -> tuple[str, np.ndarray]:
    """The text with the markers cut out, and the original offset of each character left."""
    keep = np.ones(len(text), bool)
    for m in ZH_MARKERS.finditer(text):
        keep[m.start() : m.end()] = False
    return "".join(c for c, k in zip(text, keep, strict=True) if k), np.flatnonzero(keep)


def _type_at(doc: Document, offset: int) -> BlockType:
    starts = [b.char_start for b in doc.blocks]
    i = max(0, int(np.searchsorted(starts, offset, "right")) - 1)
    return doc.blocks[i].type


def zh_cases(n: int) -> list[tuple[Document, list[Segment], list[set[BlockType]]]]:
    out = []
    path = SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz"
    for doc in pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")):
        if not doc.blocks or not is_held_apart(doc.doc_id):
            continue
        text, origin = _blind(doc.text)
        blind = build(from_text(text, doc.source), doc.source, doc.doc_id, ParseConfig(kind="zh_judgment"))
        segs = pipeline.segment(blind)
        truth = [
            {_type_at(doc, int(origin[min((s.char_start + s.char_end) // 2, len(origin) - 1)]))} for s in segs
        ]
        out.append((blind, segs, truth))
        if len(out) >= n:
            break
    return out


def india_cases() -> list[tuple[Document, list[Segment], list[set[BlockType]]]]:
    out = []
    for row in read_jsonl(SHARED_DATA / "en/judgments/india_sc_roles.jsonl"):
        if not is_held_apart(str(row["doc_id"])):
            continue
        sents = [(s["text"].strip(), s["label"]) for s in row["sentences"] if s["text"].strip()]
        text = "\n\n".join(t for t, _ in sents)
        ends = np.cumsum([len(t) + 2 for t, _ in sents])
        source = f"india_sc_roles:{row['doc_id']}"
        doc = build(from_text(text, source), source, str(row["doc_id"]), ParseConfig(kind="en_judgment"))
        segs = pipeline.segment(doc)
        truth = [
            INDIA_ROLES[sents[int(np.searchsorted(ends, (s.char_start + s.char_end) // 2, "right"))][1]]
            for s in segs
        ]
        out.append((doc, segs, truth))
    return out


def patent_case() -> list[tuple[Document, list[Segment], list[set[BlockType]]]]:
    doc = pipeline.parse(DATA_DIR / "samples/patent.pdf")
    segs = pipeline.segment(doc)
    return [(doc, segs, [set() for _ in segs])]


def score_units(cases, heads) -> list[Unit]:
    """The role head on every segment, as the predict stage runs it (but on every kind)."""
    texts = [[s.text for s in segs] for _, segs, _ in cases]
    states = None
    if heads.roles.reads_txl:
        model, tokenizer = heads.role_encoder
        states = unit_states(model, tokenizer, texts, heads.roles.decay)
    units = []
    for (doc, segs, truth), predicted in zip(cases, heads.roles.predict(texts, states), strict=True):
        for s, (role, score), t in zip(segs, predicted, truth, strict=True):
            units.append(Unit(doc.kind, role, score, s.type, t))
    return units


def flag_figures(units: list[Unit], threshold: float, kinds=None) -> dict:
    flags = [
        u
        for u in units
        if u.predicted != u.rule and u.score >= threshold and (kinds is None or u.kind in kinds)
    ]
    right = sum(u.predicted in u.truth for u in flags)
    catchable = sum(bool(u.truth) and u.rule not in u.truth for u in units)
    return {
        "flags": len(flags),
        "right": right,
        "precision": right / len(flags) if flags else float("nan"),
        "recall": right / catchable if catchable else float("nan"),
        "catchable": catchable,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zh-docs", type=int, default=60, help="held-apart criminal judgments")
    ap.add_argument(
        "--text-only", action="store_true", help="the text-only twin (predict.role_encoder=false)"
    )
    args = ap.parse_args()
    torch.set_num_threads(1)
    heads = load_heads(None, not args.text_only)
    if heads.roles is None:
        raise SystemExit("no role head (data/models/heads/roles*.npz, or its encoder) to measure")
    t0 = time.process_time()
    sets = {
        "zh markers removed": zh_cases(args.zh_docs),
        "india held apart": india_cases(),
        "demo patent": patent_case(),
    }
    units = {name: score_units(cases, heads) for name, cases in sets.items()}
    print(
        f"head {heads.roles_id}; "
        + ", ".join(f"{k}: {len(v)} docs / {len(units[k])} segments" for k, v in sets.items())
        + f"; {time.process_time() - t0:.0f} s CPU"
    )
    known = units["zh markers removed"] + units["india held apart"]
    everything = known + units["demo patent"]
    print(
        f"{'threshold':>9} {'flags':>6} {'right':>6} {'precision':>9} {'recall':>7} {'zh precision':>12} "
        f"{'india precision':>15}"
    )
    chosen = None
    for t in GRID:
        f = flag_figures(known, t)
        each = [flag_figures(units[k], t)["precision"] for k in ("zh markers removed", "india held apart")]
        print(
            f"{t:9.3f} {f['flags']:6d} {f['right']:6d} {f['precision']:9.3f} {f['recall']:7.3f} {each[0]:12.3f} "
            f"{each[1]:15.3f}"
        )
        if chosen is None and all(p >= TARGET for p in [f["precision"], *each]):
            chosen = t
    if chosen is None:
        print(f"no threshold of the grid reaches precision {TARGET}")
        return
    config = PredictConfig()
    now = (
        config.role_disagreement_min_score
        if heads.roles.reads_txl
        else config.text_role_disagreement_min_score
    )
    rows = {
        "today: every kind, score >= 0.7": flag_figures(everything, 0.7),
        f"chosen: judgments only, score >= {chosen}": flag_figures(everything, chosen, ROLE_KINDS),
    }
    for name in sets:
        rows[f"  chosen on {name}"] = flag_figures(units[name], chosen, ROLE_KINDS)
    print(
        f"\nthreshold chosen: {chosen} (smallest of the grid with flag precision >= {TARGET} on each set of "
        f"known types and on both together; PredictConfig has {now} for this head)"
    )
    for name, f in rows.items():
        print(
            f"{name:45s} flags {f['flags']:4d}  precision {f['precision']:.3f}  recall {f['recall']:.3f} "
            f"({f['right']} of {f['catchable']} rule errors caught)"
        )


if __name__ == "__main__":
    main()
