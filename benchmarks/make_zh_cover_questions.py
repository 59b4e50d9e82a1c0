"""Writes benchmarks/data/zh_cover_questions.json: questions a user asks of a corpus of 裁判文书 about a
judgment's head and signature (which court, the case number, 案由, the date, the presiding judge, a party
in a role), each naming its case as users do (by its number, by its parties, by the site's title), over
the 裁判文书网 records of the shared data that carry their text.

    .venv/bin/python benchmarks/make_zh_cover_questions.py [--data ../shared/data]

The gold comes from the court site's own fields where it has them (审理法院, 案由, 裁判日期, 当事人), never
from the parser: a court, cause or date the text does not print is left out (the site's date is now and
then a day after the one signed, or another year). The case number, the presiding
judge and a role's parties are read here from the text's own lines by patterns of this script (the line
under the title that is a number alone; the 审判长 line, else the one 审判员 of a judge sitting alone; the
site's party names on the lines that open with the role), and were checked by eye on the printed set.
Each record falls in the dev or test half by the sha1 of its docid (benchmarks.judgment_meta.half).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
from pathlib import Path

from judgment_meta import half

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "data" / "zh_cover_questions.json"
SOURCE = "zh/judgments/wenshu_mixed.jsonl"
ABOUT = (
    "Questions about a Chinese judgment's head and signature, each naming its case by number, parties or "
    "title, over the 裁判文书网 records of the shared data; written by benchmarks/make_zh_cover_questions.py "
    "(its docstring says where each gold answer comes from). Only phrase@1 is meaningful (no gold sentences "
    "are marked); each question's group is its record's half (dev or test, by the sha1 of its docid) and "
    "what it asks."
)
_NUMBER_LINE = re.compile(r"^\s*([（(]\d{4}[）)][^\s，。]{2,30}?号)\s*$", re.M)
_CN = "〇一二三四五六七八九"
_ROLES = ["原告", "被告", "上诉人", "被上诉人", "申请执行人", "被执行人", "被告人", "申请人", "被申请人"]
# phrasings a user might choose, rotated over the records ({n} names the case)
_ASK = {
    "court": ["{n}由哪个法院审理？", "{n}是哪家法院审理的？", "审理{n}的是什么法院？"],
    "number": ["{n}的案号是什么？", "{n}的案号是多少？"],
    "cause": ["{n}的案由是什么？", "{n}属于什么纠纷？"],
    "charge": ["{n}的罪名是什么？", "{n}涉及什么罪名？"],
    "date": ["{n}的裁判日期是哪一天？", "{n}是什么时候宣判的？", "{n}的{k}是哪一天作出的？"],
    "presiding": ["{n}的审判长是谁？"],
    "role": ["{n}的{r}是谁？", "{n}中{r}有哪些？"],
}


def _cn_year(n: int, zero: str) -> str:
    return "".join(_CN[int(d)] for d in str(n)).replace("〇", zero)


def _cn_small(n: int) -> str:
    tens, ones = divmod(n, 10)
    return ("" if tens < 2 else _CN[tens]) + ("十" if tens else "") + (_CN[ones] if ones or not tens else "")


def printed_dates(iso: str) -> list[str]:
    """The ways a judgment prints its date: 二〇一七年十二月二十五日 (with 〇, ○ or 零), 2017年12月25日."""
    d = dt.date.fromisoformat(iso)
    tail = f"年{_cn_small(d.month)}月{_cn_small(d.day)}日"
    return [_cn_year(d.year, z) + tail for z in "〇○零"] + [f"{d.year}年{d.month}月{d.day}日", iso]


def presiding(text: str) -> str | None:
    """The 审判长, else the one 审判员 of a judge sitting alone, as the signature names them."""
    for office in ("审判长", "审判员"):
        spaced = r"\s*".join(office)
        lines = re.findall(rf"^\s*{spaced}[：:\s]*(\S[^\n]{{0,40}})$", text, re.M)
        names = ["".join(x.split()) for x in lines]
        if names and (office == "审判长" or len(names) == 1) and len(names[0]) <= 6:
            return names[0]
    return None


def in_role(text: str, names: list[str], role: str) -> list[str]:
    """The site's party names on the parties' lines opening with `role` (原告：陈清立，…), in their order;
    a 被告人's line is not a 被告's."""
    longer = [r for r in (*_ROLES, "原告人") if r != role and r.startswith(role)]
    found: list[str] = []
    for line in text[:3000].splitlines():
        head = line.strip()
        if head.startswith(role) and not head.startswith((*longer, role + "的")):
            # the name right after the role and its status: 上诉人（原审原告）：乔雯，…
            rest = re.sub(r"^[（(][^）)]{0,20}[）)]|^[：:\s]+", "", head[len(role) :]).lstrip("：: ")
            found += [n for n in names if rest.startswith(n) and n not in found]
    return found


def questions_of(row: dict, turn: int) -> list[dict]:
    """The questions of one record (`turn` rotates the phrasings and the way the case is named)."""
    text, meta = row["text"], row["meta"]
    names = [n for n in (meta.get("当事人") or "").split(",") if n and n in text]
    number = m.group(1) if (m := _NUMBER_LINE.search(text[:600])) else None
    criminal = "刑事" in row["title"] or "被告人" in text[:600]
    cause = meta.get("案由") if meta.get("案由") not in (None, "", "其他案由") else None
    by_parties = (
        ("与".join(names[:2]) + "一案") if not criminal else f"{names[:1] and names[0]}{cause or ''}案"
    )
    namings = [n for n in (number and f"{number}案件", names and by_parties, row["title"]) if n]
    gold: dict[str, list[str]] = {}
    if (court := meta.get("审理法院")) and court in text:
        gold["court"] = [court]
    if number:
        gold["number"] = [number]
    if cause and cause in text and "：" not in cause:
        gold["charge" if criminal else "cause"] = [cause + "罪"] if criminal else [cause]
    days = printed_dates(meta["裁判日期"]) if meta.get("裁判日期") else []
    if any(d in text for d in days):
        gold["date"] = days
    if who := presiding(text):
        gold["presiding"] = [who]
    role = next((r for r in _ROLES if in_role(text, names, r)), None)
    if role:
        gold["role"] = ["、".join(in_role(text, names, role))]
    out = []
    for i, (part, answers) in enumerate(gold.items()):
        asks = _ASK[part]
        usable = [n for n in namings if not (part == "number" and n.startswith(number or "\0"))]
        if not usable:
            continue
        name = usable[(turn + i) % len(usable)]
        kind = m.group(0) if (m := re.search("判决书|裁定书|调解书", row["title"])) else "判决书"
        question = asks[(turn + i) % len(asks)].format(n=name, r=role, k=kind)
        out.append({"part": part, "question": question, "answer": answers})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    documents, questions = {}, []
    for turn, line in enumerate((args.data / SOURCE).read_text(encoding="utf-8").splitlines()):
        row = json.loads(line)
        if len(row["text"]) < 200 or not re.search("判决书|裁定书|调解书", row["title"]):
            continue  # withheld (the text is the title and a notice), or a notice or order of another kind
        key = f"zh-ws-{row['docid'][:8]}"
        documents[key] = f"{SOURCE}#{row['docid']}"
        for j, q in enumerate(questions_of(row, turn)):
            group = f"{half(row['docid'])} {q.pop('part')}"
            questions.append({"id": f"{key}-{j}", "doc": key, "group": group, **q, "gold": []})
    spec = {"about": ABOUT, "documents": documents, "questions": questions}
    OUT.write_text(json.dumps(spec, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(questions)} questions over {len(documents)} judgments")


if __name__ == "__main__":
    main()
