"""English factual questions answered with a phrase (who, when, where, how much, how long, on what
condition): `ldx ask` with its typed English spans (retrieval/english_spans.py) against the same Asker
without them (the reader alone), in one run.

    nice -n 5 .venv/bin/python benchmarks/english_spans.py [--set dev test test2 …] [--out OUT_DIR] [--json FILE]

The questions are benchmarks/data/english_spans_{dev,test,test2}.json (42 each, over 6 shared documents
each: 2 EWCA judgments, 2 US opinions, 2 CUAD contracts; benchmarks/data/README.md says how they were made);
several sets are read as one. The typed spans were written against dev and revised against test (read once
before); test2 is held out. Each question is asked of its own document (`--doc`). Per question: `f1`, the
best word F1 of the answer against a gold span (SQuAD's measure, retrieval.eval.cuad.word_f1; "none"
scores 0); `holds`, the answer holds a gold span and is at most three times its length in words; and
`answered`. The F1 difference gets a 95%
bootstrap interval over documents. A third arm answers from every line, whatever its relevance; from its
confidences the benchmark chooses the relevance bar that maximises F1 of answer-vs-abstain on the questions
read (`retrieval.typed_min_relevance` is the bar chosen on dev + test).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from benchmarks.ask_questions import questions_run
from retrieval.ask import Asker
from retrieval.config import RetrievalConfig
from retrieval.eval.cuad import answer_words, word_f1
from retrieval.eval.metrics import choose_threshold
from txl.lm_metrics import bootstrap_interval

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "benchmarks" / "data" / "english_spans_{}.json"
# "typed, every line": no relevance bar, the confidences the bar is chosen from
ARMS = {
    "reader": RetrievalConfig(typed_spans=False),
    "typed": RetrievalConfig(),
    "typed, every line": RetrievalConfig(typed_min_relevance=0.0),
}


def score(answer: str, answer_type: str, gold: list[str]) -> dict:
    if answer_type == "none":
        return {"f1": 0.0, "holds": False, "answered": False}
    got = answer_words(answer)
    holds = any(
        " ".join(answer_words(g)) in " ".join(got) and len(got) <= 3 * max(len(answer_words(g)), 1)
        for g in gold
    )
    return {"f1": max(word_f1(answer, g) for g in gold), "holds": holds, "answered": True}


def evaluate(out: Path, questions: list[dict], docs: dict[str, str]) -> dict:
    results: dict[str, dict] = {}
    for arm, config in ARMS.items():
        asker = Asker(out, config)
        rows, times = [], []
        for q in questions:
            t = time.perf_counter()
            a = asker.ask(q["question"], doc_id=docs[q["doc"]])
            times.append(time.perf_counter() - t)
            rows.append(
                {
                    "id": q["id"],
                    "doc": q["doc"],
                    "type": q["type"],
                    **score(a.answer, a.answer_type, q["gold"]),
                    "answer_type": a.answer_type,
                    "confidence": a.confidence,
                    "answer": a.answer[:200],
                }
            )
        results[arm] = {"rows": rows, "p50_s": round(float(np.median(times)), 3)}
    return results


def summary(rows: list[dict]) -> dict:
    metrics = ("f1", "holds", "answered")
    out = {m: round(float(np.mean([r[m] for r in rows])), 3) for m in metrics}
    out["by type"] = {
        t: {"n": len(part), "f1": round(float(np.mean([r["f1"] for r in part])), 3)}
        for t in sorted({r["type"] for r in rows})
        for part in [[r for r in rows if r["type"] == t]]
    }
    return out


def chosen_bar(rows: list[dict]) -> dict:
    """The relevance bar that maximises F1 of answer-vs-abstain over these rows (an answer counting as right
    when it holds a gold span; every question has one), by retrieval.eval.metrics.choose_threshold."""
    confidence = [r["confidence"] if r["answer_type"] == "span" else 0.0 for r in rows]
    bar, f1 = choose_threshold(confidence, [r["holds"] for r in rows], [True] * len(rows))
    return {"typed_min_relevance": round(bar, 4), "answer-vs-abstain F1": round(f1, 3)}


def paired_f1(results: dict) -> dict:
    """Typed minus reader F1, with its 95% interval resampling documents."""
    docs = sorted({r["doc"] for r in results["typed"]["rows"]})
    diff = {d: [] for d in docs}
    for a, b in zip(results["typed"]["rows"], results["reader"]["rows"], strict=True):
        diff[a["doc"]].append(a["f1"] - b["f1"])
    sums = np.array([sum(diff[d]) for d in docs])
    counts = np.array([len(diff[d]) for d in docs])
    lo, hi = bootstrap_interval(sums, counts, 2000)
    return {"mean": round(float(sums.sum() / counts.sum()), 3), "95% interval": [round(lo, 3), round(hi, 3)]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="The shared corpora.")
    ap.add_argument("--set", nargs="+", choices=("dev", "test", "test2"), default=["test2"])
    ap.add_argument("--out", type=Path, help="An OUT_DIR of `ldx run` over the set's documents.")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, help="Write every question's result here.")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    spec: dict = {"documents": {}, "questions": []}
    for name in args.set:  # several sets are read as one (their document keys differ)
        part = json.loads(Path(str(QUESTIONS).format(name)).read_text(encoding="utf-8"))
        spec["documents"].update(part["documents"])
        spec["questions"] += part["questions"]
    questions = spec["questions"]
    with questions_run(spec, questions, args.data, args.out) as (out, docs):
        results = evaluate(out, questions, docs)
    report = {
        "set": args.set,
        "questions": len(questions),
        **{arm: {"p50_s": r["p50_s"], **summary(r["rows"])} for arm, r in results.items()},
        "f1 typed - reader": paired_f1(results),
        "bar chosen on these questions": chosen_bar(results["typed, every line"]["rows"]),
    }
    print(json.dumps(report, indent=1))
    if args.json:
        rows = {arm: r["rows"] for arm, r in results.items()}
        args.json.write_text(json.dumps({**report, "rows": rows}, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
