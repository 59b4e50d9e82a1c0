"""Writes benchmarks/data/outcome_questions.json: questions a user asks of a corpus of civil judgments about
what the court decided (判决结果是什么？), what the first instance decided (一审法院如何判决？) and the costs
(二审案件受理费是多少？由谁负担？), each naming its case by the title's parties and cause, over every tenth
民事判决书 of CLCR (`zh/judgments/clcr_cases.jsonl.gz`), the file's last 40 left out (read while the answering
rules of retrieval/outcome_questions.py were written).

    .venv/bin/python benchmarks/make_outcome_questions.py [--data ../shared/data]

The gold is read here from the record's own lines by this script's patterns, not by the parser: the ruling
is the lines after the last 判决如下 up to the first line about costs, interest for late payment, the right to
appeal or the signature; the first instance's ruling is what follows the first 判决： (or 判决如下：) of a
paragraph naming the first instance (一审法院, 原审法院, a 民初 case number; not a criminal judgment the case
cites), cut into clauses at 。 and ； outside brackets, up to its costs or a clause after a full stop that
opens with no item's number (一、 （二） 3.), the interest for late payment left out; a cost is a clause of
the ruling's closing lines that holds 受理费 and its sum, of the judgment's own instance (二审案件受理费… in a
second instance), else one naming none (案件受理费…); its payer is what follows 由 (and a second 由 after the
semicolon), notes in brackets, a closing 负担 and 共同 left out. A case two records hold is left out (a
question names one case). A question's gold phrase is the whole ruling or value (phrase@1: the answer holds
it and is at most twice as long), its gold sentences each item (of a cost, its clause). The printed set was
read over by eye. Each record falls in the dev or test half by the sha1 of its id
(benchmarks.judgment_meta.half).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from pathlib import Path

from judgment_meta import half

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "zh/judgments/clcr_cases.jsonl.gz"
SEEN = 40  # the last 民事判决书 of the file, read while writing the rules
ABOUT = (
    "Questions about what a court decided in a civil judgment (its ruling, the first instance's it reports, "
    f"the costs), over every tenth 民事判决书 of the shared data ({SOURCE}); written by "
    "benchmarks/make_outcome_questions.py (its docstring says where each gold answer comes from). phrase@1 "
    "is the figure: the answer holds the whole ruling or value; each question's group is its record's half "
    "(dev or test, by the sha1 of its id) and what it asks."
)
_CASE_NUMBER = re.compile(r"[（(]\d{4}[）)][^\s，。]{2,30}?号")
_INSTANCE = (
    ("一审", re.compile(r"民初|初字")),
    ("二审", re.compile(r"民终|终字")),
    ("再审", re.compile(r"民再|民申")),
)
_END = re.compile(r"受理费|诉讼费|迟延履行|如不服|终审|审\s*判\s*[长员]|书\s*记\s*员|人民陪审员|申请执行")
_ITEM = re.compile(r"[一二三四五六七八九十]{1,3}、|（[一二三四五六七八九十]{1,3}）|\d{1,2}[、.．]")
_FIRST = re.compile(r"一审法院|原审法院|民初|初字")
_FEE = re.compile(r"^(?:本案)?(一审|二审|再审)?案件受理费(?:为|人民币)?\s*([\d,，.]+\s*元)")
_ASK = {
    "ruling": ["{c}的判决结果是什么？", "{c}，法院是如何判决的？", "{c}{i}判决结果如何？"],
    "first instance": ["{c}一审法院如何判决？", "{c}的一审判决结果是什么？", "{c}原审法院是怎么判的？"],
    "fee amount": ["{c}{i}案件受理费是多少？", "{c}的{i}受理费为多少元？"],
    "fee payer": ["{c}{i}案件受理费由谁负担？", "{c}的{i}案件受理费由哪一方承担？"],
}


def ruling(text: str) -> tuple[list[str], list[str]]:
    """(items, the ruling's other lines) after the last 判决如下: items up to the first line that ends them."""
    at = text.rfind("判决如下")
    lines = [line.strip() for line in text[at:].split("\n")[1:]] if at >= 0 else []
    lines = [line for line in lines if line]
    items, rest = [], []
    for i, line in enumerate(lines):
        if _END.search(line):
            rest = lines[i : i + 4]
            break
        items.append(line)
    return items, rest


def first_instance(text: str) -> list[str]:
    """The first instance's ruling as the judgment reports it: its clauses up to its costs or interest, or
    a sentence after a full stop that opens with no item's number; a criminal judgment cited is not it."""
    for m in re.finditer(r"判决(?:如下)?[：:]", text[: text.rfind("判决如下")]):
        said = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]  # its paragraph: 一审法院认为，…判决：
        if not _FIRST.search(said) or "刑" in said[said.rfind("。") + 1 :]:
            continue
        kept, last = [], ""
        for clause in clauses(text[m.end() :].lstrip("\n").replace("\n", "")):
            if last and (
                re.search(r"受理费|诉讼费", clause) or last.endswith("。") and not _ITEM.match(clause)
            ):
                break
            if "迟延履行" not in clause:
                kept.append(clause)
            last = clause
        return kept
    return []


def clauses(line: str) -> list[str]:
    """A line cut after each 。 and ；, not inside brackets (…利息（其中第一笔…止；第二笔…）；)."""
    out = []
    for piece in re.split(r"(?<=[。；])", line):
        if out and out[-1].count("（") > out[-1].count("）"):
            out[-1] += piece
        elif piece:
            out.append(piece)
    return out


def fee(lines: list[str], own: str | None) -> tuple[str, str, str, str] | None:
    """(instance word, sum, payer, clause) of the judgment's own cost clause, else of one naming no
    instance."""
    found, last = {}, None
    for clause in (c for line in lines for c in clauses(line)):
        m = _FEE.match(clause)
        if m and "由" in clause:
            last = m.group(1)
            found.setdefault(last, (last or "", m.group(2), [clause[clause.index("由") + 1 :]], clause))
        elif last in found and clause.startswith("由"):  # 由甲负担…；由乙负担…: the second payer
            found[last][2].append(clause[1:])
        else:
            last = "none"
    chosen = found.get(own) or found.get(None)
    if chosen is None:
        return None
    payers = [re.sub(r"（[^（）]*）", "", p).rstrip("。；") for p in chosen[2]]
    payer = "；".join(re.sub(r"(?:共同|各自|分别)?(?:负担|承担)$", "", p) for p in payers)
    return chosen[0], chosen[1], payer, chosen[3]


def civil_cases(data: Path, start: int) -> list[tuple[dict, str]]:
    """(record, the case's name) of every tenth 民事判决书 of CLCR from the `start`th, the file's last SEEN
    left out, and of them those a question can name: a case two records hold is left out, and one whose
    title names no cause (纠纷) once or an instance or role among its parties; the name is the title's
    parties and cause (许磊、王巍合同纠纷案)."""
    with gzip.open(data / SOURCE, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    civil = [r for r in records if re.search(r"民事[^\s]{0,6}判决书", r["text"][:300])]
    titles = Counter(r["title"] for r in civil)
    out = []
    for r in civil[:-SEEN][start::10]:
        title = re.sub(r"^\d+", "", r["title"])
        parties = title.split("纠纷")[0]
        if (
            titles[r["title"]] == 1
            and title.count("纠纷") == 1
            and not re.search(r"[（）()]|[一二再]审", parties)
        ):
            out.append((r, title[: title.rindex("纠纷") + 2].removesuffix("一案") + "案"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    documents, questions, turn = {}, [], 0
    for r, case in civil_cases(args.data, start=0):
        number = _CASE_NUMBER.search(r["text"][:600])
        own = next((w for w, p in _INSTANCE if number and p.search(number.group(0))), None)
        items, rest = ruling(r["text"])
        asked = []
        if items:
            asked.append(("ruling", items, "".join(items), own or ""))
        below = first_instance(r["text"]) if own == "二审" else []
        if below:
            asked.append(("first instance", below, "".join(below), ""))
        cost = fee(rest, own)
        if cost:
            asked += [("fee amount", [cost[3]], cost[1], cost[0]), ("fee payer", [cost[3]], cost[2], cost[0])]
        key = f"zh-clcr-{r['id'][:8]}"
        for part, gold, phrase, instance in asked:
            documents[key] = f"{SOURCE}#{r['id']}"
            forms = _ASK[part]
            question = forms[turn % len(forms)].format(c=case, i=instance)
            questions.append(
                {"id": f"{key}-{len(questions)}", "doc": key, "group": f"{half(r['id'])} {part}"}
                | {"question": question, "answer": [phrase], "gold": gold}
            )
        turn += 1
    write_questions("outcome_questions.json", ABOUT, documents, questions)


def write_questions(name: str, about: str, documents: dict, questions: list[dict]) -> None:
    """Writes a question set under benchmarks/data and says what it holds."""
    out = ROOT / "benchmarks" / "data" / name
    body = {"about": about, "documents": documents, "questions": questions}
    out.write_text(json.dumps(body, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(questions)} questions over {len(documents)} judgments")
    print(Counter(q["group"] for q in questions))


if __name__ == "__main__":
    main()
