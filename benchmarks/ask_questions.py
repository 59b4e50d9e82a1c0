"""Sentence-level accuracy of `ldx ask` on a hand-marked question set, against a BM25-only baseline in the
same run.

    nice -n 19 .venv/bin/python benchmarks/ask_questions.py [--questions tests/data/chinese_questions.json]
        [--data ../shared/data] [--out OUT_DIR] [--limit N] [--k 10] [--threads 2] [--json RESULTS.json]

The questions and their gold sentences are tests/data/english_questions.json by default (40 questions over 3
UK Court of Appeal judgments, 3 US opinions and 2 CUAD contracts) or tests/data/chinese_questions.json (31
questions over the 4 裁定书 and 4 人民法院案例库 case PDFs of the shared data); tests/data/README.md says how
they were made; tests/data/chinese_phrases_wenshu.json (20 questions over 3 裁判文书网 judgments, records of
`zh/judgments/wenshu_mixed.jsonl` named `path#docid`) holds apart the rules of retrieval/chinese_spans.py.
The documents the kept questions need are copied into a temporary folder and run through `ldx run` with the
shipped model (--out reuses a run of them instead). Every question is asked about its own document
(`--doc`), by two Askers over that one run:

- "full": what `ldx ask` does: BM25 + the sentence model (MiniLM) + the Transformer-XL keys, fused, and the
  sentence model in the evidence-sentence ranker;
- "no_sides": the same without the prior for the side a question asks about (`side_prior=0`,
  retrieval/sides.py);
- "no_typed": the same without typed phrases (`typed_spans=false`: retrieval/english_spans.py and
  retrieval/chinese_spans.py), the reader alone answering who, which court, when and how long;
- "bm25": BM25 retrieval and term-overlap sentence ranking only (`dense=false`, `sentence_model=false`).

All use the same reader. Reported for each: `answer@1`, the share of questions whose answer's evidence
sentence is a gold sentence (for a sentence answer the answer itself; for "none" the best evidence shown);
`top3`, a gold sentence among the evidence and the two next-best sentences (`Answer.more_evidence`);
`cited`, a gold sentence inside one of the k cited segments; `answered`, the share not answered "none";
`phrase@1`, over the questions with an `answer` (the phrase that answers them), the share whose answer
holds one (every one, for a question marked `parts` that asks several things) and is not much longer
(`same_phrase`); `polar@1` and `polar_wrong`, over the yes-no questions marked with their answer (`polar`),
the share answered YES or NO rightly and wrongly (the rest are answered "none" or with a sentence); and the
same split by source (UK, US, CUAD; ZH doc, ZH pdf and ZH judgments). `--limit 3` checks the whole path at
tiny size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import torch

from flows.run import run_flow
from pipeline.records import segment_place
from pipeline.store import open_duckdb
from retrieval.ask import Answer, Asker
from retrieval.config import RetrievalConfig
from retrieval.text import HAN

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "data" / "english_questions.json"
CONFIGS = {
    "full": RetrievalConfig(),
    "no_sides": RetrievalConfig(side_prior=0.0),
    "no_typed": RetrievalConfig(typed_spans=False),
    "bm25": RetrievalConfig(dense=False, sentence_model=False),
}


def group(doc_key: str, path: str) -> str:
    """UK (EWCA judgments), CUAD (contracts), patent (USPTO grants), US (US opinions), or for a Chinese
    document (key zh-…) its shared folder: "ZH doc" (裁定书), "ZH pdf" (case PDFs) or "ZH judgments" (裁判文书网
    records)."""
    prefix = doc_key.split("-")[0]
    if prefix == "zh":
        return f"ZH {Path(path).parent.name}"
    return {"ewca": "UK", "cuad": "CUAD", "pat": "patent"}.get(prefix, "US")


def _words(text: str) -> list[str]:
    """Words, lower-cased; for Chinese, which has no spaces between words, its characters."""
    if HAN.search(text):
        return [ch for ch in text if not ch.isspace()]
    return " ".join(text.split()).lower().split()


def same_sentence(gold: str, got: str) -> bool:
    """The same sentence up to spacing and case; or one holds the other and is at most 3x as long (a
    paragraph number, a split that joined two sentences); or, in English, word F1 >= 0.6 (a line break read
    differently). Chinese has no such reading differences, and sentences of one case share most of their
    characters (its court, parties and case numbers), so there only the first two count."""
    g, s = _words(gold), _words(got)
    if not g or not s:
        return False
    short, long_ = sorted((" ".join(g), " ".join(s)), key=len)
    if short in long_ and len(long_) <= 3 * len(short):
        return True
    if HAN.search(gold):
        return False
    common = sum((Counter(g) & Counter(s)).values())
    return 2 * common / (len(g) + len(s)) >= 0.6


def same_phrase(golds: list[str], got: str, parts: bool = False) -> bool:
    """The answer holds a gold phrase and is not much longer (at most twice its length and four more
    characters: 人民币 before a sum, 审判长 before a name), up to spacing; for a question asking several
    things (`parts`: 审判员是谁，判决日期是哪天？), it holds every phrase and is at most twice as long as they
    are together, four more characters each."""
    text = "".join(got.split())
    phrases = ["".join(p.split()) for p in golds]
    if parts:
        return all(p in text for p in phrases) and len(text) <= sum(2 * len(p) + 4 for p in phrases)
    return any(g in text and len(text) <= 2 * len(g) + 4 for g in phrases)


def score(
    answer: Answer,
    gold: list[str],
    phrases: list[str] | None = None,
    doc_id: str | None = None,
    parts: bool = False,
    polar: str | None = None,
) -> dict:
    """The question's figures; with `doc_id`, a sentence of another document is no hit, however like the
    gold (two contracts' governing-law clauses), and neither is a phrase read from one; for a yes-no
    question marked with its answer (`polar`: yes or no), whether the answer is that one and whether it is
    the other."""
    shown = ([answer.evidence] if answer.evidence else []) + list(answer.more_evidence)
    own = [doc_id is None or segment_place(e.segment_id)[0] == doc_id for e in shown]
    hit = [
        ok and any(same_sentence(g, e.sentence) for g in gold) for e, ok in zip(shown[:3], own, strict=False)
    ]
    cited = [" ".join(_words(c.text)) for c in answer.citations]
    return {
        "answer@1": bool(hit[:1] and hit[0]),
        "top3": any(hit),
        "cited": any(" ".join(_words(g)) in c for g in gold for c in cited),
        "answered": answer.answer_type != "none",
        **({"phrase@1": own[:1] == [True] and same_phrase(phrases, answer.answer, parts)} if phrases else {}),
        **(
            {
                "polar@1": answer.answer_type == polar,
                "polar_wrong": answer.answer_type in {"yes", "no"} - {polar},
            }
            if polar
            else {}
        ),
    }


def prepare_run(spec: dict, keep: list[dict], data: Path, out: Path | None, work: Path) -> Path:
    """OUT_DIR holding the documents the kept questions need: --out as given, else a fresh `ldx run`."""
    if out is not None:
        return out
    inputs = work / "input"
    inputs.mkdir()
    for key in sorted({q["doc"] for q in keep}):
        input_file(data, spec["documents"][key], inputs)
    run_flow(str(inputs), str(work / "out"), {})
    return work / "out"


@cache
def _lines(src: Path) -> tuple[str, ...]:
    """The lines of a JSONL file, gzipped or not, read once however many of its records a set asks about."""
    raw = gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes()
    return tuple(raw.decode("utf-8").splitlines())


def input_file(data: Path, document: str, folder: Path) -> Path:
    """The question set's document (a path under `data`, or `path#docid` for one record of a JSONL file,
    gzipped or not) as a file in `folder`, as `ldx run` is to read it: a copy, or a one-record JSONL file
    `docid.jsonl`."""
    path, _, record = document.partition("#")
    src = data / path
    if not src.is_file():
        raise SystemExit(f"{src}: missing from the shared data (see ../shared/data/README.md)")
    if not record:
        return Path(shutil.copy(src, folder / src.name))
    lines = [line for line in _lines(src) if record in line[:80]]
    found = json.loads(lines[0]) if lines else {}
    if record not in (found.get("docid"), found.get("text_id"), found.get("id"), found.get("doc_number")):
        raise SystemExit(f"{src}: no record with docid {record}")
    if "fd" in found:  # a judge_criminal record: its whole judgment is `fd`, `text` only the facts
        lines[0] = json.dumps({"text_id": record, "text": found["fd"]}, ensure_ascii=False)
    out = folder / f"{record}.jsonl"
    out.write_text(lines[0] + "\n", encoding="utf-8")
    return out


@contextmanager
def questions_run(
    spec: dict, questions: list[dict], data: Path, out: Path | None
) -> Iterator[tuple[Path, dict]]:
    """(OUT_DIR, document key -> doc_id) of a run holding every document the questions need: --out as given,
    else a fresh `ldx run` in a temporary folder that lasts as long as the context."""
    with tempfile.TemporaryDirectory() as tmp:
        run = prepare_run(spec, questions, data, out, Path(tmp))
        docs = doc_ids(run, spec)
        missing = sorted({q["doc"] for q in questions} - set(docs))
        if missing:
            raise SystemExit(f"{run}: the run holds no document for {', '.join(missing)}")
        yield run, docs


def doc_ids(out: Path, spec: dict) -> dict[str, str]:
    """Question document key -> doc_id of the run, matched on the source file's name (for a record of a
    JSONL file, `path#docid`, the one-line file prepare_run wrote: `docid.jsonl:1`)."""
    con = open_duckdb(out)
    by_name = {Path(src).name: d for d, src in con.execute("SELECT doc_id, source FROM documents").fetchall()}
    names = {
        key: f"{p.partition('#')[2]}.jsonl:1" if "#" in p else Path(p).name
        for key, p in spec["documents"].items()
    }
    return {key: by_name[name] for key, name in names.items() if name in by_name}


def evaluate(out: Path, spec: dict, keep: list[dict], docs: dict[str, str], k: int, whole_run: bool) -> dict:
    """Every question asked by each of CONFIGS' Askers: of its own document (`--doc`), or with `whole_run`
    of the whole run, its answer then counted only from its own document."""
    results = {}
    for name, cfg in CONFIGS.items():
        asker = Asker(out, cfg)
        rows, times = [], []
        for q in keep:
            t = time.perf_counter()
            doc = docs[q["doc"]]
            answer = asker.ask(q["question"], k=k, doc_id=None if whole_run else doc)
            times.append(time.perf_counter() - t)
            rows.append(
                {
                    "id": q["id"],
                    "group": q.get("group") or group(q["doc"], spec["documents"][q["doc"]]),
                    **score(
                        answer,
                        q["gold"],
                        q.get("answer"),
                        doc if whole_run else None,
                        q.get("parts", False),
                        q.get("polar"),
                    ),
                    "answer_type": answer.answer_type,
                    "answer": answer.answer[:200],
                }
            )
        results[name] = {"arms": asker.search_index.arms, "rows": rows, "p50_s": float(np.median(times))}
    return results


def summary(rows: list[dict]) -> dict:
    metrics = ("answer@1", "top3", "cited", "answered")
    out = {m: round(float(np.mean([r[m] for r in rows])), 3) for m in metrics}
    phrased = [r["phrase@1"] for r in rows if "phrase@1" in r]
    if phrased:
        out["phrase@1"] = round(float(np.mean(phrased)), 3)
        out["phrase_questions"] = len(phrased)
    if polar := [r for r in rows if "polar@1" in r]:
        out["polar@1"] = round(float(np.mean([r["polar@1"] for r in polar])), 3)
        out["polar_wrong"] = round(float(np.mean([r["polar_wrong"] for r in polar])), 3)
        out["polar_questions"] = len(polar)
    for group in sorted({r["group"] for r in rows}):
        part = [r for r in rows if r["group"] == group]
        phrases = [r["phrase@1"] for r in part if "phrase@1" in r]
        out[group] = {
            "n": len(part),
            **{m: round(float(np.mean([r[m] for r in part])), 3) for m in metrics[:2]},
            **({"phrase@1": round(float(np.mean(phrases)), 3)} if phrases else {}),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="The question set (JSON).")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="The shared corpora.")
    ap.add_argument("--out", type=Path, help="An OUT_DIR of `ldx run` over the questions' documents.")
    ap.add_argument("--limit", type=int, help="Only the first N questions (and only their documents).")
    ap.add_argument("--k", type=int, default=10, help="Segments retrieved and cited per question.")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path, help="Write every question's result here.")
    ap.add_argument(
        "--whole-run",
        action="store_true",
        help="Ask each question of the whole run, as a user asks a corpus (no --doc); an answer counts "
        "only from the question's own document.",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    spec = json.loads(args.questions.read_text(encoding="utf-8"))
    keep = spec["questions"][: args.limit]
    with questions_run(spec, keep, args.data, args.out) as (out, docs):
        results = evaluate(out, spec, keep, docs, args.k, args.whole_run)
    report = {
        "questions": len(keep),
        "asked_of": "the whole run" if args.whole_run else "each question's own document",
        "documents": len({q["doc"] for q in keep}),
        "k": args.k,
        **{
            name: {"arms": r["arms"], "p50_s": round(r["p50_s"], 3), **summary(r["rows"])}
            for name, r in results.items()
        },
    }
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(
            json.dumps({**report, "rows": {n: r["rows"] for n, r in results.items()}}, indent=1)
        )


if __name__ == "__main__":
    main()
