"""Writes benchmarks/data/party_questions.json: questions a user asks of a corpus of civil judgments about
what a party asked for or argued (X的上诉请求是什么？X向一审法院提出了哪些诉讼请求？X的上诉理由是什么？X是如何答辩的？),
each naming its case by the title's parties and cause and the party as the judgment calls it, over every tenth
民事判决书 of CLCR (`zh/judgments/clcr_cases.jsonl.gz`) from the fifth on (the records of
benchmarks/data/outcome_questions.json are the ones from the first), the file's last 40 left out (read while
the answering rules of retrieval/party_questions.py were written).

    .venv/bin/python benchmarks/make_party_questions.py [--data ../shared/data]

The gold is read here from the record's own lines by this script's patterns, not by the parser: a party's
line opens with the party and its verb within its first 40 characters (X上诉请求：, X向一审法院起诉请求：,
X向本院提出诉讼请求：, X辩称，, X答辩称：); the party is what precedes the verb, its role (上诉人, 被上诉人,
原审原告 …) and what follows its name (向一审法院, 在一审中, 共同, 不服…) left out; a request is what follows
请求： up to 事实和理由 (or 事实与理由), a sentence opening with a court (一审法院认定事实：…), or the line's end;
the reasons are what follows 事实和理由： in the appeal's line, or opens the next line, up to the line's end,
and up to fifteen lines after it that do not open with another party's words (X辩称, X陈述, X请求：), the
evidence offered (证据, 质证) or the court's (本院…, 一审法院认定…, 某人民法院一审查明…, 二审期间…); a defence is
the rest of its line; a claim stated in an account (X诉称：…，故诉请法院判决：…) is what follows its first words
asking the court (请求判令, 诉请法院判决, 诉讼请求为) to the line's end, and the lines that go on with it, up to
another party's words (X反诉称, X辩称), asked when no line states the claim alone. Only the first line of
each kind in a record is asked about, and a party two lines of one kind name is left out. A question's gold
phrase is the whole request, reasons or defence (phrase@1: the answer holds it and is at most twice as
long). The printed set was read over by eye.
Each record falls in the dev or test half by the sha1 of its id (benchmarks.judgment_meta.half).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from judgment_meta import half
from make_outcome_questions import SOURCE, civil_cases, write_questions

ROOT = Path(__file__).resolve().parents[1]
ABOUT = (
    "Questions about what a party to a civil judgment asked for or argued (its appeal's requests and "
    "reasons, the first claim's requests, a defence), over every tenth 民事判决书 of the shared data "
    f"({SOURCE}) from the fifth on; written by benchmarks/make_party_questions.py (its docstring says "
    "where each gold answer comes from). phrase@1 is the figure: the answer holds the whole request, "
    "reasons or defence; each question's group is its record's half (dev or test, by the sha1 of its id) "
    "and what it asks."
)
_LINES = (
    ("appeal request", re.compile(r"^((?:(?!称).){0,40}?)上诉请求[：:]")),
    ("claim", re.compile(r"^((?:(?!称).){0,40}?)(?:向(?:一审法院|原审法院|本院)(?:起诉|提出诉讼)请求)[：:]")),
    ("defence", re.compile(r"^(.{0,40}?)(?:答辩|辩)称[：:，,]")),
    # an account (X诉称：…，故诉请法院判决：…), its request at its end: asked as the claim's
    ("account", re.compile(r"^((?:(?!称).){0,40}?)(?<![上申辩])(?:起)?诉称[：:，,]")),
)
# where an account's request begins
_ASKING = re.compile(
    r"(?:请求|诉请|要求)(?:人民法院|法院|本院|贵院)?(?:依法)?(?:判令|判决)|诉讼请求(?:为|是|如下)|请求[：:]"
)
# an account's opening words before its party (一审中，X诉称), and what follows the party (X于2015年7月8日起诉称)
_STAGE = re.compile(r"^(?:本院)?(?:一审|二审|再审|审理|诉讼)[^，]{0,4}(?:中|期间)，")
_AFTER = re.compile(r"(?:于|在|一审|起).*$")
# an account's request ends where another party's words begin in its line (…承担。捷讯公司于…反诉称，…)
_COUNTER = re.compile(r"(?<=。)[^。]{0,30}?(?:反诉称|辩称|答辩称)")
_ROLE = re.compile(r"^(?:原审原告|原审被告|原审第三人|被上诉人|上诉人|原告|被告|第三人|二|共同)+")
_REASONS = re.compile(r"事实(?:和|与)理由[：:]")
# a request ends where the judgment goes on to a court's findings (…承担诉讼费用。一审法院认定事实：…)
_COURT = re.compile(r"(?<=。)(?:一审法院|二审法院|原审法院|本院|一审|二审|再审)")
# where an appeal's reasons end: a line opening with another party's words or the court's
_OTHERS = re.compile(
    r"^.{0,30}?(?:辩称|答辩|述称|陈述|请求[：:]|上诉称|证据|质证)|^.{0,25}?法院(?:一审|二审|再审)?(?:查明|认定|认为|审理)"
    r"|^(?:本院|(?:一审|原审|二审)法院(?:认定|认为|查明|审理|经审理|判决)|(?:一审|原审|二审)查明|二审(?:中|期间)"
    r"|经审理|庭审|审理中|在二审|在本院)"
)
_ASK = {
    "appeal request": ["{c}中，{p}的上诉请求是什么？", "{c}中，{p}上诉请求什么？"],
    "claim": ["{c}中，{p}向一审法院提出了哪些诉讼请求？", "{c}中，{p}的诉讼请求是什么？"],
    "reasons": ["{c}中，{p}的上诉理由是什么？", "{c}中，{p}为什么提起上诉？"],
    "defence": ["{c}中，{p}是如何答辩的？", "{c}中，{p}的答辩意见是什么？"],
}


def party(opening: str) -> str:
    """The party a line opens with: its name, its role and what follows the name left out."""
    name = re.split(r"向|因|不服|在|对", re.sub(r"（[^（）]*）", "", opening))[0]
    return re.sub(r"(?:共同|均|都|的)+$", "", _ROLE.sub("", name)).strip()


def going_on(lines: list[str], at: int) -> str:
    """Up to fifteen lines after `at` that do not open with another party's words or the court's."""
    out = []
    for more in lines[at + 1 : at + 16]:
        if _OTHERS.search(more):
            break
        out.append(more)
    return "".join(out)


def reasons(lines: list[str], at: int, line: str) -> str:
    """The reasons after 事实和理由： in `line` (or opening the next), and up to fifteen lines after them that
    do not open with another party's words or the court's."""
    m = _REASONS.search(line)
    if m is None and at + 1 < len(lines) and _REASONS.match(lines[at + 1]):
        at, line, m = at + 1, lines[at + 1], _REASONS.match(lines[at + 1])
    if m is None:
        return ""
    return line[m.end() :] + going_on(lines, at)


def asked(text: str) -> list[tuple[str, str, str]]:
    """(kind, party, gold) of the first line of each kind in a judgment (a claim's from an account when no
    line states it alone), a party two lines of that kind name left out."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    found, seen = {}, Counter()  # kind -> (party, gold, the kind of line it was read from)
    for at, line in enumerate(lines):
        for kind, pattern in _LINES:
            m = pattern.match(line)
            if m is None:
                continue
            opening = _AFTER.sub("", _STAGE.sub("", m.group(1))) if kind == "account" else m.group(1)
            who, rest = party(opening), line[m.end() :]
            seen[(kind, who)] += 1
            if kind in found or len(who) < 2:
                continue
            if kind == "defence":
                found[kind] = (who, rest, kind)
            elif kind == "account":
                if "claim" not in found and (ask := _ASKING.search(rest)):
                    gold = rest[ask.end() :].lstrip("：:，, ") + going_on(lines, at)
                    gold = gold[: (cut.start() if (cut := _COUNTER.search(gold)) else len(gold))]
                    found["claim"] = (who, gold, kind)
            else:
                cuts = [m.start() for m in (_REASONS.search(rest), _COURT.search(rest)) if m]
                found[kind] = (who, rest[: min(cuts, default=len(rest))], kind)
            if kind == "appeal request" and (why := reasons(lines, at, line)):
                found.setdefault("reasons", (who, why, kind))
    return [(k, who, gold) for k, (who, gold, line) in found.items() if seen[(line, who)] == 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    documents, questions, turn = {}, [], 0
    for r, case in civil_cases(args.data, start=5):
        key = f"zh-clcr-{r['id'][:8]}"
        for kind, who, gold in asked(r["text"]):
            documents[key] = f"{SOURCE}#{r['id']}"
            forms = _ASK[kind]
            questions.append(
                {"id": f"{key}-{len(questions)}", "doc": key, "group": f"{half(r['id'])} {kind}"}
                | {
                    "question": forms[turn % len(forms)].format(c=case, p=who),
                    "answer": [gold],
                    "gold": [gold],
                }
            )
        turn += 1
    write_questions("party_questions.json", ABOUT, documents, questions)


if __name__ == "__main__":
    main()
