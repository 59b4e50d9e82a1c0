"""What a judgment's cover says, as `documents.meta` and `title` hold it: court, case number, date,
parties, judges, the short case name (English) and the cause (案由, Chinese), against gold the sources'
publishers wrote.

    .venv/bin/python benchmarks/judgment_meta.py [--data ../shared/data] [--sets fastcase pdf wenshu ewca]
        [--json FILE]

Sets (gold, and the text the parser is given):
- fastcase: the 34 US appellate opinions of `en/judgments/us_opinions_fastcase_xml`; gold from the
  publisher's own fields (CourtName, DocketNumber, DecisionDate, PartyHeader, ShortName); the parser reads
  the plain text of the printed header (HeaderHtml) and opinion (CaseHtml), as a user's text export would be.
- pdf: the shared US opinion PDFs, gold written by hand from their covers
  (`benchmarks/data/judgment_meta_pdf.json`).
- wenshu: the 103 裁判文书网 documents of `zh/judgments/wenshu_mixed.jsonl`; gold from the site's own
  fields (审理法院, 案由, 裁判日期, 当事人), counted only where the document's text states the value (a
  withheld document's text is its title alone).
- ewca: the 315 EWCA 2020 judgments as `ldx run` reads the JSONL; gold the case number and judges marked up
  in the National Archives' XML of the same judgment.
Each set is split in two halves fixed by a hash of the document's id (`half`): "dev" is what the reading
rules were written against, "test" was not read. Printed per set, half and field: right / stated (the
values the gold states), and for parties precision and recall over names.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from pipeline.config import ParseConfig
from pipeline.parsing import build, iter_documents, parse_file
from pipeline.parsing.text import from_text
from pipeline.records import Document

GOLD_PDF = Path(__file__).resolve().parent / "data" / "judgment_meta_pdf.json"
FIELDS = ("court", "case_number", "date", "title", "parties", "roles", "judges", "cause")


def half(key: str) -> str:
    return "dev" if hashlib.sha1(key.encode()).digest()[0] % 2 == 0 else "test"


def _norm(s: str | None) -> str:
    return re.sub(r"[^0-9a-z\u4e00-\u9fff]", "", (s or "").lower())


def _case_no(s: str | None) -> str:
    s = html.unescape(s or "").replace("\u2013", "-").replace("\u2014", "-")
    s = re.sub(
        r"^(?:misc\.?\s+)?(?:docket|record|case|appeal)?\s*(?:ag\s+)?no[s]?\.?\s*:?",
        "",
        s.strip(),
        flags=re.I,
    )
    return _norm(s)


def _court(s: str | None) -> str:
    return _norm((s or "").split(",")[0].removeprefix("The ").removeprefix("the "))


def _name_match(a: str, b: str) -> bool:
    a, b = _norm(a), _norm(b)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return short in long and len(short) >= 0.6 * len(long)


def _same_title(have: str, want: str) -> bool:
    """A short case name: each side a few words, holding the last word of the gold's side (publishers
    abbreviate differently: "Hansen Trust" for "Robert A. Hansen Family Trust")."""
    sides = [re.split(r"\s+v\.?\s+", t, maxsplit=1) for t in (have, want)]
    if len(sides[0]) != len(sides[1]):
        return False
    for h, w in zip(*sides, strict=True):
        words = [_norm(x) for x in h.split()]
        if len(words) > 8 or not any(_abbreviates(x, _norm(w.split()[-1])) for x in words):
            return False
    return True


def _abbreviates(a: str, b: str) -> bool:
    """One word the other's abbreviation ("res" and "resources", "commn" and "commission"): same first
    letter, the shorter's letters in order within the longer."""
    short, long = sorted((a, b), key=len)
    if not short or short[0] != long[0]:
        return False
    rest = iter(long)
    return all(c in rest for c in short)


# ---- the sets -------------------------------------------------------------------------------------


def _plain(fragment: str) -> str:
    """The text of an HTML fragment stored escaped inside XML, a line per paragraph or break."""
    s = html.unescape(fragment)
    s = re.sub(r"(?i)<\s*(?:/p|br\s*/?|p)\s*>", "\n", s)
    s = re.sub(r"(?i)<sup>.*?</sup>", "", s)
    s = html.unescape(re.sub(r"<[^>]+>", "", s))
    lines = (re.sub(r"[ \t\u00a0]+", " ", ln).strip() for ln in s.split("\n"))
    return "\n".join(ln for ln in lines if ln)


def _parties_of_header(header: str) -> list[dict]:
    text = _plain(header).replace("\n", " ")
    sides = re.split(r"\s*\bv(?:s)?\.\s*", text)
    out = []
    for side in sides:
        for piece in re.split(r";|\band\b(?=\s+[A-Z][A-Z])", side):
            name = re.split(
                r",\s*(?:an?\s|individually|as\s|d/b/a|et\s+al)|\s*,\s*(?:[A-Z][a-z]+[-/–])*"
                r"(?:[Pp]laintiffs?|[Dd]efendants?|[Aa]ppell\w+|[Rr]espondents?|[Pp]etitioners?)",
                piece,
            )[0].strip(" ,.")
            if len(_norm(name)) > 1:
                out.append({"name": name, "role": None})
    return out


def fastcase(data: Path) -> Iterator[tuple[str, dict, Document]]:
    for path in sorted((data / "en/judgments/us_opinions_fastcase_xml").rglob("*.xml")):
        root = ET.parse(path).getroot()
        got = {
            k: (root.findtext(f".//{k}") or "").strip()
            for k in (
                "ShortName",
                "CourtName",
                "DocketNumber",
                "DecisionDate",
                "PartyHeader",
                "HeaderHtml",
                "CaseHtml",
            )
        }
        text = _plain(got["HeaderHtml"]) + "\n" + _plain(got["CaseHtml"])
        parts = [int(x) for x in re.findall(r"\d+", got["DecisionDate"])[:3]]
        y, m, d = parts if parts[0] > 31 else (parts[2], parts[0], parts[1])
        gold = {
            "court": got["CourtName"],
            "case_number": got["DocketNumber"] if re.search(r"\d{2}", got["DocketNumber"]) else None,
            "date": dt.date(y, m, d),
            "title": html.unescape(got["ShortName"]),
            "parties": _parties_of_header(got["PartyHeader"]),
        }
        key = str(path.relative_to(data))
        yield key, gold, build(from_text(text, key), key, key[:16], ParseConfig())


def pdfs(data: Path) -> Iterator[tuple[str, dict, Document]]:
    folder = data / "en/judgments/us_opinions_pdf"
    for row in json.loads(GOLD_PDF.read_text(encoding="utf-8")):
        gold = dict(row)
        gold["date"] = dt.date.fromisoformat(row["date"]) if row.get("date") else None
        yield row["file"], gold, parse_file(folder / row["file"])


def _stated(value: str | None, text: str) -> str | None:
    return value if value and _norm(value) in _norm(text) else None


def wenshu(data: Path) -> Iterator[tuple[str, dict, Document]]:
    for line in (data / "zh/judgments/wenshu_mixed.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        meta, text = row["meta"], row["text"]
        if len(text) < 200:
            continue  # withheld: the text is the title and a notice
        cause = meta.get("案由")
        gold = {
            "court": _stated(meta.get("审理法院"), text),
            "date": dt.date.fromisoformat(meta["裁判日期"]) if meta.get("裁判日期") else None,
            "cause": _stated(cause, text) if cause and "：" not in cause and cause != "其他案由" else None,
            "parties": [
                {"name": n, "role": None} for n in (meta.get("当事人") or "").split(",") if n and n in text
            ],
        }
        doc = build(
            from_text(text, row["docid"], row["title"]), row["docid"], row["docid"][:16], ParseConfig()
        )
        yield row["docid"], gold, doc


def ewca(data: Path) -> Iterator[tuple[str, dict, Document]]:
    folder = data / "en/judgments/uk_ewca_2020_xml"
    ns = {"a": "http://docs.oasis-open.org/legaldocml/ns/akn/3.0"}
    for doc in iter_documents(data / "en/judgments/uk_ewca_2020.jsonl.gz"):
        uri = doc.source.rsplit("#", 1)[-1]
        cite = doc.meta.citation or ""
        m = re.search(r"Civ\s+(\d+)", cite)
        xml_path = folder / f"2020-ewca-{m.group(1)}-civ.xml.gz" if m else None
        if xml_path is None or not xml_path.exists():
            continue
        root = ET.fromstring(gzip.decompress(xml_path.read_bytes()))
        gold = {
            "case_number": (root.findtext(".//a:docketNumber", namespaces=ns) or "").strip() or None,
            "judges": [j.text.strip() for j in root.iterfind(".//a:judge", ns) if j.text and j.text.strip()],
        }
        yield uri or cite, gold, doc


SETS = {"fastcase": fastcase, "pdf": pdfs, "wenshu": wenshu, "ewca": ewca}


# ---- scoring --------------------------------------------------------------------------------------


def score(gold: dict, doc: Document) -> dict[str, list[int]]:
    """Per field [right, stated]; parties [names found right, names predicted, names stated]."""
    meta, out = doc.meta, {}
    if gold.get("court"):
        out["court"] = [
            int(
                bool(meta.court)
                and (
                    _court(meta.court) == _court(gold["court"])
                    or _norm(meta.court).endswith(_norm(gold["court"]))
                )
            ),
            1,
        ]
    if gold.get("case_number"):
        want = gold["case_number"] if isinstance(gold["case_number"], list) else [gold["case_number"]]
        out["case_number"] = [int(_case_no(meta.case_number) in {_case_no(w) for w in want}), 1]
    if gold.get("date"):
        out["date"] = [int(meta.date == gold["date"]), 1]
    if gold.get("cause"):
        out["cause"] = [int(_norm(meta.cause) == _norm(gold["cause"])), 1]
    if gold.get("title"):
        out["title"] = [int(_same_title(doc.title or "", gold["title"])), 1]
    if gold.get("parties"):
        names = [p.name for p in meta.parties if not re.search(r"代理人|代表人|负责人|辩护人", p.role)]
        right = sum(any(_name_match(g["name"], n) for n in names) for g in gold["parties"])
        found = sum(any(_name_match(g["name"], n) for g in gold["parties"]) for n in names)
        out["parties"] = [right, found, len(names), len(gold["parties"])]
        roled = [g for g in gold["parties"] if g.get("role")]
        if roled:
            role_of = {_norm(p.name): _norm(p.role) for p in meta.parties}
            out["roles"] = [sum(role_of.get(_norm(g["name"])) == _norm(g["role"]) for g in roled), len(roled)]
    if gold.get("judges"):
        have = _norm(" ".join(meta.judges))
        surnames = [_norm(g.split()[-1]) for g in gold["judges"]]
        out["judges"] = [sum(s in have for s in surnames), len(surnames)]
    return out


def run(name: str, data: Path, show: bool) -> dict:
    totals: dict[str, dict[str, list[int]]] = {}
    for key, gold, doc in SETS[name](data):
        part = "all" if name == "pdf" else half(key)
        for field, counts in score(gold, doc).items():
            acc = totals.setdefault(part, {}).setdefault(field, [0] * len(counts))
            acc[:] = [a + c for a, c in zip(acc, counts, strict=True)]
            if show and part != "test" and counts[0] < counts[-1]:
                have = {
                    "roles": [(p.name, p.role) for p in doc.meta.parties],
                    "court": doc.meta.court,
                    "case_number": doc.meta.case_number,
                    "date": doc.meta.date,
                    "cause": doc.meta.cause,
                    "title": doc.title,
                    "judges": doc.meta.judges,
                    "parties": [(p.name, p.role) for p in doc.meta.parties],
                }[field]
                want = {
                    "parties": [g["name"] for g in gold.get("parties", [])],
                    "roles": [(g["name"], g.get("role")) for g in gold.get("parties", [])],
                }.get(field) or gold[field]
                print(f"  {name}/{key[-40:]} {field}: want {want!r} got {have!r}")
    return totals


def report(name: str, totals: dict) -> None:
    for part, fields in sorted(totals.items()):
        cells = []
        for field in FIELDS:
            if field not in fields:
                continue
            c = fields[field]
            if field == "parties":
                p = c[1] / c[2] if c[2] else 0.0
                r = c[0] / c[3] if c[3] else 0.0
                cells.append(f"parties P {p:.3f} R {r:.3f} ({c[0]}/{c[3]})")
            else:
                cells.append(f"{field} {c[0]}/{c[1]}")
        print(f"{name:8s} {part:4s} " + " · ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--sets", nargs="+", choices=sorted(SETS), default=list(SETS))
    ap.add_argument("--show", action="store_true", help="print each miss outside the test halves")
    ap.add_argument("--json", type=Path, help="write the counts here")
    args = ap.parse_args()
    results = {}
    for name in args.sets:
        results[name] = run(name, args.data, args.show)
        report(name, results[name])
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
