"""Writes benchmarks/data/appeal_cover_questions.json: what a lawyer asks first of an England and Wales Court
of Appeal judgment's cover (its neutral citation, case number, the court and judge appealed from, counsel and
solicitors for each side, the hearing and hand-down dates), over every sixth judgment of
`en/judgments/uk_ewca_2020.jsonl.gz` from the third, each asked of its own document as `ldx run` reads it
from the LegalDocML file (`uk_ewca_2020_xml/`). Left out: judgments another question set uses, and the 30
read while the answering rules were written (every tenth file of `uk_ewca_2020_xml/` in name order from the
fourth).

    .venv/bin/python benchmarks/make_appeal_cover_questions.py [--data ../shared/data]

The gold is read here from the JSONL record's printed cover lines (`header_lines`), line by line, by this
script's patterns, not by the parser or the LegalDocML file: the citation is the record's `cite`, printed on
its "Neutral Citation Number" line; the case number what follows "Case No:" on its line; the court below the
lines after "ON APPEAL FROM" up to the first that names a judge (J, LJ, Judge, Justice, Recorder, Master,
QC, a judge of a tribunal), the judge below that line with any "(sitting as …)" left out, both only when the
court and the judge stand on lines of their own and the judge's line is no one's of two appeals ("(1)");
counsel for a side the names before "(instructed …)" on the line (or lines, when the line runs on) that
ends "for the Appellant" (or Respondent), only when one such line names that side; its solicitors the
words after "instructed by" in those brackets; the hearing date what follows "Hearing date(s):"; the
hand-down date the "Date:" line's value (in figures or words; the answer may give either). The question's
gold sentence is the line holding the value (for the court below, its "ON APPEAL FROM" line). Each judgment
falls in the dev or test half by the sha1 of its citation (benchmarks.judgment_meta.half). The printed set
was read over by eye.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import re
from pathlib import Path

from judgment_meta import half
from make_outcome_questions import write_questions

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "en/judgments/uk_ewca_2020.jsonl.gz"
XML = "en/judgments/uk_ewca_2020_xml"
ABOUT = (
    "Questions about an England and Wales Court of Appeal judgment's cover (citation, case number, court and "
    f"judge below, counsel, solicitors, dates), over every sixth judgment of {SOURCE}, each asked of its own "
    "document (the LegalDocML file); written by benchmarks/make_appeal_cover_questions.py (its docstring "
    "says where each gold answer comes from). phrase@1 is the figure; each question's group is its "
    "judgment's half (dev or test) and what it asks."
)
_I = re.IGNORECASE
_JUDGE = re.compile(
    r"\b(?:L?J|JJ|LJJ|QC|KC)\b|\b(?:judge|justice|recorder|master|honour|hhj|president|lord|lady|sir)\b", _I
)
_STOP = re.compile(r"^\s*(?:royal\s+courts|date|before|strand|neutral|case\s+no|hearing)", _I)
_REFERENCE = re.compile(r"\[\d{4}\]|\b[A-Z]{0,6}[/-]?\d{2,}|\bclaim\s+no", _I)
_ROLE = re.compile(r"\bfor\s+the\s+(?:[\w’'-]+\s+){0,2}?(appellants?|respondents?)\b", _I)
_MONTHS = "January February March April May June July August September October November December".split()
_ASK = {
    "citation": ["What is the neutral citation of this judgment?", "How is this judgment cited?"],
    "number": ["What is the case number?", "What is the case number of this appeal?"],
    "court below": ["Which court did the appeal come from?", "From which court was the appeal brought?"],
    "judge below": ["Who was the judge below?", "Which judge's decision was under appeal?"],
    "counsel": ["Who appeared for the {r}?", "Who was counsel for the {r}?", "Who represented the {r}?"],
    "solicitors": ["Which solicitors instructed counsel for the {r}?", "Who were the {r}'s solicitors?"],
    "heard": ["When was the appeal heard?", "What was the date of the hearing?"],
    "handed down": ["When was the judgment handed down?", "What is the date of the judgment?"],
}


def below(lines: list[str]) -> tuple[str, str, str, str] | None:
    """(court, judge, the court's first line, the judge's line) of a cover whose court below and judge stand
    on lines of their own."""
    at = next((i for i, line in enumerate(lines) if re.match(r"\s*on\s+appeal\s+from\b", line, _I)), None)
    if at is None:
        return None
    first = re.sub(r"^\s*on\s+appeal\s+from\s*:?\s*", "", lines[at], flags=_I)
    court: list[str] = [first] if first else []
    for line in lines[at + 1 : at + 8]:
        if _STOP.match(line):
            return None
        judge = re.sub(r"\(?\s*sitting\s+as\b.*$", "", line, flags=_I).strip(" ():,")
        if _JUDGE.search(_bare(judge)) and not re.search(r"\b(?:court|tribunal|division)\b", judge, _I):
            court_text = " ".join(court).strip(" ,")
            if _JUDGE.search(_bare(court_text)) or re.search(r"\(\d\)", line):
                return None  # a judge among the court's lines; one of two appeals' judges
            if re.fullmatch(r"(?:the\s+)?(?:judgment|decision|order)\s+of", court_text, _I):
                court_text = ""  # ON APPEAL FROM THE JUDGMENT OF / LANCE ASHWORTH QC names no court
            return court_text, judge, lines[at], line
        if not _REFERENCE.search(line):
            court.append(line.strip())
    return None


def _bare(text: str) -> str:
    """A line without the words "Court of Justice", whose "Justice" names no judge."""
    return re.sub(r"\bcourt\s+of\s+justice\b", "", text, flags=_I)


def counsel(lines: list[str]) -> dict[str, tuple[str, str | None, str]]:
    """role -> (names, solicitors, line) for each side one counsel line names."""
    found: dict[str, list[tuple[str, str | None, str]]] = {}
    joined = ""
    for line in lines:
        joined = f"{joined} {line}".strip() if joined else line
        if joined.count("(") > joined.count(")"):
            continue  # the brackets run on to the next line
        m = _ROLE.search(joined)
        if m and m.end() == len(joined.rstrip(" .")):
            names = re.split(r"\s*\(|\s+for\s+the\b", joined, flags=_I)[0].strip(" ,")
            sol = re.search(r"\(instructed\s+by\s+([^()]+)\)", joined, _I)
            role = m.group(1).lower().rstrip("s")
            found.setdefault(role, []).append((names, sol.group(1).strip() if sol else None, joined))
        joined = ""
    return {role: entries[0] for role, entries in found.items() if len(entries) == 1}


def value(lines: list[str], label: str) -> tuple[str, str] | None:
    """(what follows `label` on its line, the line)."""
    for line in lines:
        if m := re.search(rf"\b{label}\s*:\s*(.+)$", line, _I):
            return m.group(1).strip(), line
    return None


def date_forms(printed: str) -> list[str]:
    """The date as printed, and in words when printed in figures (12/03/2020 → 12 March 2020)."""
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})", printed)
    if not m:
        return [printed]
    day = dt.date(int(m.group(3)) % 100 + 2000, int(m.group(2)), int(m.group(1)))
    return [printed, f"{day.day} {_MONTHS[day.month - 1]} {day.year}"]


def asked(record: dict) -> list[tuple[str, str, list[str], list[str]]]:
    """(part, role, gold phrases, gold sentences) of every question the record's cover answers."""
    lines = [line for line in record["header_lines"] if line.strip()]
    out = []
    cite = next((line for line in lines if record["cite"] in line), None)
    if cite:
        out.append(("citation", "", [record["cite"]], [cite]))
    if found := value(lines, r"case\s+nos?\.?"):
        number = re.split(r"\s+in\s+the\b", found[0], flags=_I)[0]
        out.append(("number", "", [number], [found[1]]))
    if found := below(lines):
        court, judge, court_line, judge_line = found
        out += [("court below", "", [court], [court_line])] if court else []
        out.append(("judge below", "", [judge], [judge_line]))
    for role, (names, sol, line) in sorted(counsel(lines).items()):
        out.append(("counsel", role, [names], [line]))
        if sol:
            out.append(("solicitors", role, [sol], [line]))
    if found := value(lines, r"hearing\s+dates?"):
        out.append(("heard", "", [found[0]], [found[1]]))
    if found := value(lines, r"date"):
        printed = re.split(r"\s+before\b", found[0], flags=_I)[0].strip()
        out.append(("handed down", "", date_forms(printed), [found[1]]))
    return out


def used(root: Path) -> set[str]:
    """The LegalDocML files another question set names, and the files read while writing the rules."""
    names = set()
    for path in [*root.glob("benchmarks/data/*.json"), *root.glob("tests/data/*.json")]:
        body = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(body, dict) and path.name != "appeal_cover_questions.json":
            names |= {Path(p).name for p in body.get("documents", {}).values()}
    return names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args()
    seen = {p.name for p in sorted((args.data / XML).glob("*.xml.gz"))[3::10]} | used(ROOT)
    with gzip.open(args.data / SOURCE, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    documents, questions, turn = {}, [], 0
    for r in records[2::6]:
        name = f"{r['source_file']}.gz"
        if name in seen or not (args.data / XML / name).is_file():
            continue
        key = "ewca-" + re.sub(r"\D", "", r["cite"].split("Civ")[-1])
        for part, role, phrases, gold in asked(r):
            documents[key] = f"{XML}/{name}"
            forms = _ASK[part]
            questions.append(
                {"id": f"{key}-{len(questions)}", "doc": key, "group": f"{half(r['cite'])} {part}"}
                | {"question": forms[turn % len(forms)].format(r=role), "answer": phrases, "gold": gold}
            )
            turn += 1
    write_questions("appeal_cover_questions.json", ABOUT, documents, questions)


if __name__ == "__main__":
    main()
