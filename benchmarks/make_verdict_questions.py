"""Writes benchmarks/data/verdict_questions.json (with `--corpus clcr`, verdict_questions_clcr.json):
questions a user asks of a corpus of criminal judgments about what the verdict imposed on a defendant (the
charges, the penalty, a term's length, the fine, probation, the days a term runs), each naming the
defendant, over complete 刑事判决书 of the shared data
(`zh/judgments/judge_criminal.jsonl.gz`, the whole judgment in `fd`; with `--corpus clcr`, every fourth
刑事判决书 of `zh/judgments/clcr_cases.jsonl.gz`, a source the answering rules were not written reading).

    .venv/bin/python benchmarks/make_verdict_questions.py [--data ../shared/data] [--corpus clcr]

The judge_criminal records are every third of the file's first 330 (the last 60 were read while the answering
rules of retrieval/verdict_questions.py were written). The gold is read here from the judgment's own text by
this script's patterns, not by the parser: the verdict is the text after the last 判决如下 up to 如不服; a
defendant's item runs from 被告人X犯 to the next defendant's (the last item naming them); the charges are each 犯…罪
of the item (犯罪 inside a name kept: 掩饰、隐瞒犯罪所得罪); the penalty is what follows 决定执行, else the first 判处, up to
the item's note in brackets or the end of its sentence, a fine after a semicolon or a note (；并处罚金…) included
and when to pay it left out; the fine is the sum after 罚金, probation the term after 缓刑, the days a term runs
the 自…起至…止 of the item. A defendant whose name is masked (张某, 朱×) or shared by two of the records is left out:
a question cannot name them. The printed set was read over by eye. Each record falls in the dev or test half
by the sha1 of its id (benchmarks.judgment_meta.half).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judgment_meta import half

ROOT = Path(__file__).resolve().parents[1]
SEEN = 60  # judge_criminal's last records, read while writing the rules


@dataclass(frozen=True)
class Corpus:
    source: str
    id_field: str
    text_field: str
    key: str  # the question documents' key prefix
    out: str  # the question file under benchmarks/data
    chosen: Callable[[list[dict]], list[dict]]


CORPORA = {
    "judge_criminal": Corpus(
        "zh/judgments/judge_criminal.jsonl.gz",
        "text_id",
        "fd",
        "zh-jc",
        "verdict_questions.json",
        lambda records: records[: len(records) - SEEN][::3],
    ),
    # the 刑事判决书 of CLCR, a source the rules were not written reading: every fourth
    "clcr": Corpus(
        "zh/judgments/clcr_cases.jsonl.gz",
        "id",
        "text",
        "zh-clcr",
        "verdict_questions_clcr.json",
        lambda records: [r for r in records if "刑事判决书" in r["title"]][::4],
    ),
}
ABOUT = (
    "Questions about what a criminal verdict imposed on a defendant named in the question, over complete "
    "刑事判决书 of the shared data ({source}); written by benchmarks/make_verdict_questions.py (its docstring "
    "says where each gold answer comes from). Only phrase@1 is meaningful (no gold sentences are marked); "
    "each question's group is its record's half (dev or test, by the sha1 of its {id_field}) and what it "
    "asks."
)
_ITEM = re.compile(r"被告人[）)]?([\u4e00-\u9fff·]{2,8}?)犯")  # 上诉人（原审被告人）吴传忠犯
_NAME_CHAR = r"(?:犯罪|[^，。；（）：\s罪])"  # 掩饰、隐瞒犯罪所得罪 holds 犯罪
_CHARGES = re.compile(rf"犯({_NAME_CHAR}+罪)((?:、{_NAME_CHAR}+罪)*)")
_PRINCIPAL = re.compile(
    r"^(有期徒刑|拘役|管制)([〇零一二三四五六七八九十两]+(?:年|个月)(?:[零又]?[一二三四五六七八九十]+个月)?)"
)
_FINE = re.compile(r"罚金(?:人民币)?\s*([\d,，.]+\s*万?元|[〇零一二三四五六七八九十百千万两]+元)")
_PROBATION = re.compile(r"缓刑([〇零一二三四五六七八九十两]+(?:年|个月))")
_DAYS = re.compile(r"自(\d{4}年\d{1,2}月\d{1,2}日)起至(\d{4}年\d{1,2}月\d{1,2}日)止")
_MASKED = re.compile(r"某|×|＊|\*|X")
# phrasings a user might choose, rotated over the defendants ({n} names them)
_ASK = {
    "charges": ["{n}犯什么罪？", "{n}犯了什么罪？", "法院认定{n}构成什么罪？"],
    "penalty": ["{n}被判处什么刑罚？", "对{n}判处了什么刑罚？", "被告人{n}被判了什么刑？"],
    "length": ["{n}被判处{k}多久？", "{n}的{k}是多长时间？"],
    "fine": ["{n}被判处罚金多少？", "{n}的罚金是多少？"],
    "probation": ["{n}是否被宣告缓刑？", "{n}有没有被判处缓刑？"],
    "probation term": ["{n}的缓刑考验期是多长？"],
    "days": ["{n}的刑期自何时起至何时止？", "被告人{n}的刑期从哪天起到哪天止？"],
}


def items(fd: str) -> dict[str, str]:
    """Defendant -> their item of the verdict (the last one naming them)."""
    at = fd.rfind("判决如下")
    verdict = fd[at:] if at >= 0 else ""
    verdict = verdict[: verdict.find("如不服")] if "如不服" in verdict else verdict
    found = list(_ITEM.finditer(verdict))
    out = {}
    for i, m in enumerate(found):
        out.pop(m.group(1), None)
        out[m.group(1)] = verdict[m.start() : found[i + 1].start() if i + 1 < len(found) else len(verdict)]
    return out


def penalty(item: str) -> str:
    """The penalty as printed (see the module's docstring)."""
    at = item.rfind("决定执行")
    text = item[at + 4 :] if at >= 0 else item[item.find("判处") + 2 :] if "判处" in item else ""
    parts = []
    while text:
        m = re.search(r"[（(；;。”]", text)
        parts.append(text[: m.start()] if m else text)
        rest = text[m.end() :] if m and m.group(0) != "。" else ""
        if m and m.group(0) in "（(":  # a note inside the penalty, the fine after it
            rest = rest[rest.find("）") + 1 :].lstrip("，") if "）" in rest else ""
        text = rest if rest.startswith("并处") else ""
    joined = "，".join(p.strip() for p in parts if p.strip())
    return re.sub(r"[，,](?:罚金)?(?:限|于|自)[^，,]*缴纳", "", joined)


def questions_of(name: str, item: str, turn: int) -> list[tuple[str, str, str]]:
    """(part, question, gold answer) about one defendant."""
    out = []
    charges = [c for m in _CHARGES.finditer(item) for c in [m.group(1), *m.group(2).split("、")] if c]
    if charges:  # each 犯…罪 of the item: one defendant may be convicted of several, each with its penalty
        out.append(("charges", "、".join(dict.fromkeys(charges))))
    shown = penalty(item)
    if shown:
        out.append(("penalty", shown))
        if (p := _PRINCIPAL.match(shown)) is not None:
            out.append(("length", p.group(2), p.group(1)))
        fine = _FINE.search(shown)
        if fine:
            out.append(("fine", fine.group(1)))
        probation = _PROBATION.search(shown)
        out.append(("probation", "YES" if probation else "NO"))
        if probation:
            out.append(("probation term", probation.group(1)))
    days = _DAYS.search(item)
    if days:
        out.append(("days", f"自{days.group(1)}起至{days.group(2)}止"))
    asked = []
    for part, gold, *kind in out:
        forms = _ASK[part]
        asked.append((part, forms[turn % len(forms)].format(n=name, k=kind[0] if kind else ""), gold))
    return asked


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="judge_criminal")
    args = ap.parse_args()
    corpus = CORPORA[args.corpus]
    with gzip.open(args.data / corpus.source, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    by_record = {r[corpus.id_field]: items(r[corpus.text_field]) for r in corpus.chosen(records)}
    shared = Counter(name for found in by_record.values() for name in found)
    documents, questions, turn = {}, [], 0
    for record, found in by_record.items():
        key = f"{corpus.key}-{record[:8]}"
        for name, item in list(found.items())[:2]:
            if _MASKED.search(name) or shared[name] > 1:
                continue
            for part, question, gold in questions_of(name, item, turn):
                documents[key] = f"{corpus.source}#{record}"
                group = f"{half(record)} {part}"
                questions.append(
                    {"id": f"{key}-{len(questions)}", "doc": key, "group": group, "question": question}
                    | {"answer": [gold], "gold": []}
                )
            turn += 1
    about = ABOUT.format(source=corpus.source, id_field=corpus.id_field)
    out = ROOT / "benchmarks" / "data" / corpus.out
    out.write_text(
        json.dumps(
            {"about": about, "documents": documents, "questions": questions}, ensure_ascii=False, indent=1
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{out}: {len(questions)} questions over {len(documents)} judgments")
    print(Counter(q["group"] for q in questions))


if __name__ == "__main__":
    main()
