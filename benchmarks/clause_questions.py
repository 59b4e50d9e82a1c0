"""Clause questions in `ldx ask`: which CUAD category an English question asks about, and what `ldx ask`
answers on held-apart contracts with the clause head (routed) and without it (the reader and the
evidence-sentence ranker), in the same run.

    nice -n 19 .venv/bin/python benchmarks/clause_questions.py [--data ../shared/data] [--contracts 10]
        [--out OUT_DIR] [--questions FILE] [--json RESULTS.json]

The questions are benchmarks/data/clause_questions_test2.json: 123 questions, three per CUAD category, 40
contract questions that ask about none of them and 20 about judgments, written by a helper session that
read neither the routing code nor the earlier sets (the file's "about" says how). The cues were written
against clause_questions_dev.json and revised once against clause_questions_test.json (two per category,
20 other contract and 10 judgment questions each, from another helper session); test2 came after both
and was read once, for the figures.

1. Routing (`retrieval.clause_questions.clause_category`): of the category questions, how many are sent
   to their category, to another, or to none; of the others, how many are sent anywhere.
2. Answers: the first `--contracts` contracts of CUAD's held-apart split (`retrieval.eval.qa.held_apart`,
   never read by the clause head's training) are written as text files and read by one `ldx run`; every
   category question is asked about every contract (`--doc`) by two Askers over that run, with and without
   `clause_answers`. Per arm, over the questions whose contract holds a gold clause of the category:
   `evidence@1` (the answer's evidence sentence holds a gold clause), `right` (an answer other than "none"
   that holds one) and `answered`; over the others, `abstained` (the answer is "none"). A sentence holds a
   gold clause when one holds the other (spacing, case and punctuation aside) or they share at least half
   of the shorter one's words. The paired difference in evidence@1 gets a 95% bootstrap interval over
   contracts.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from flows.run import run_flow
from pipeline.paths import SHARED_DATA
from pipeline.store import open_duckdb
from retrieval.ask import Answer, Asker
from retrieval.clause_questions import clause_category
from retrieval.config import RetrievalConfig
from retrieval.eval.cuad import answer_words, load_cuad
from txl.lm_metrics import bootstrap_interval

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "benchmarks" / "data" / "clause_questions_test2.json"
ARMS = {"routed": RetrievalConfig(), "reader": RetrievalConfig(clause_answers=False)}


def routing(questions: list[dict]) -> dict:
    """Counts of where `clause_category` sends the questions, with the misses listed."""
    out = Counter()
    misses = []
    for q in questions:
        got = clause_category(q["question"])
        if q["category"] is None:
            out[f"{q['about']} questions"] += 1
            out[f"{q['about']} questions routed"] += got is not None
            if got is not None:
                misses.append(f"{q['question']} -> {got}")
        else:
            out["category questions"] += 1
            key = "right" if got == q["category"] else "none" if got is None else "wrong"
            out[f"category {key}"] += 1
            if key != "right":
                misses.append(f"{q['question']} ({q['category']}) -> {got}")
    return {**dict(sorted(out.items())), "misses": misses}


def holds(sentence: str, gold: str) -> bool:
    s, g = answer_words(sentence), answer_words(gold)
    if not s or not g:
        return False
    if " ".join(g) in " ".join(s) or " ".join(s) in " ".join(g):
        return True
    return sum((Counter(s) & Counter(g)).values()) >= 0.5 * min(len(s), len(g))


def score(answer: Answer, golds: list[str]) -> dict:
    if not golds:
        return {"abstained": answer.answer_type == "none"}
    ev = answer.evidence.sentence if answer.evidence else ""
    given = answer.answer_type != "none"
    return {
        "evidence@1": any(holds(ev, g) for g in golds),
        "right": given and any(holds(answer.answer, g) for g in golds),
        "answered": given,
    }


def run_contracts(data: Path, n: int, out: Path | None, work: Path) -> tuple[Path, dict[str, object]]:
    """(OUT_DIR, run doc_id -> its CUAD contract): --out as given, else a fresh `ldx run` of the texts."""
    contracts = load_cuad(data / "en" / "contracts", "heldout", limit=n)
    by_file = {f"c{i:03d}.txt": c for i, c in enumerate(contracts)}
    if out is None:
        inputs = work / "input"
        inputs.mkdir()
        for name, c in by_file.items():
            (inputs / name).write_text(c.text, encoding="utf-8")
        out = work / "out"
        run_flow(str(inputs), str(out), {})
    con = open_duckdb(out)
    rows = con.execute("SELECT doc_id, source, kind FROM documents").fetchall()
    kinds = Counter(kind for _, _, kind in rows)
    print(f"{len(rows)} documents read, kinds {dict(kinds)}")
    return out, {d: by_file[Path(src).name] for d, src, _ in rows if Path(src).name in by_file}


def answers(out: Path, docs: dict[str, object], questions: list[dict]) -> dict:
    asked = [q for q in questions if q["category"] is not None]
    results: dict[str, dict] = {}
    per_doc: dict[str, dict[str, list]] = {arm: {d: [] for d in docs} for arm in ARMS}
    for arm, config in ARMS.items():
        asker = Asker(out, config=config)
        t0 = time.perf_counter()
        tally: dict[str, list] = {}
        for doc_id, contract in docs.items():
            golds = {q.category: q.golds for q in contract.questions}
            for q in asked:
                got = score(asker.ask(q["question"], doc_id=doc_id), golds.get(q["category"], []))
                for key, value in got.items():
                    tally.setdefault(key, []).append(value)
                if "evidence@1" in got:
                    per_doc[arm][doc_id].append(float(got["evidence@1"]))
        results[arm] = {key: round(float(np.mean(v)), 4) for key, v in tally.items()}
        results[arm]["questions"] = {
            "answerable": len(tally.get("right", [])),
            "unanswerable": len(tally.get("abstained", [])),
        }
        results[arm]["seconds per question"] = round((time.perf_counter() - t0) / (len(asked) * len(docs)), 3)
        print(arm, results[arm], flush=True)
    # per contract, the sum and count of the paired differences: the interval resamples contracts
    diffs = [np.subtract(per_doc["routed"][d], per_doc["reader"][d]) for d in docs]
    sums, counts = np.array([d.sum() for d in diffs]), np.array([len(d) for d in diffs])
    results["evidence@1 routed - reader"] = {
        "mean": round(float(sums.sum() / counts.sum()), 4),
        "95% interval over contracts": [round(v, 4) for v in bootstrap_interval(sums, counts, 2000)],
    }
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=SHARED_DATA)
    ap.add_argument("--contracts", type=int, default=10)
    ap.add_argument("--out", type=Path, help="reuse this run of the contracts instead of a fresh one")
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    questions = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    english = json.loads((ROOT / "tests" / "data" / "english_questions.json").read_text(encoding="utf-8"))
    result = {
        "routing": routing(questions),
        "english_questions.json routed": {
            q["id"]: c for q in english["questions"] if (c := clause_category(q["question"]))
        },
    }
    print(json.dumps(result, indent=1))
    with tempfile.TemporaryDirectory() as tmp:
        out, docs = run_contracts(args.data, args.contracts, args.out, Path(tmp))
        result["answers"] = {"contracts": len(docs), **answers(out, docs, questions)}
    print(json.dumps(result["answers"], indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
