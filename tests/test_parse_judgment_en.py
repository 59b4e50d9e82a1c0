"""English judgments: block typing against the hand-labelled Indian Supreme Court roles, and the UK
LegalDocML cover page (citation, date, judges, parties) against the files' own metadata."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re

from lxml import etree

from pipeline.config import ParseConfig
from pipeline.parsing import build, parse_file
from pipeline.parsing.legaldocml import AKN
from pipeline.parsing.text import from_text
from pipeline.records import BlockType as T
from pipeline.records import DocKind

# DESIGN.md's mapping of the seven rhetorical roles onto block types (Argument → CLAIMS or DEFENSE).
ROLE_TO_CLASS = {
    "Facts": "FACTS",
    "Argument": "ARGUMENT",
    "Statute": "OPINION",
    "Precedent": "OPINION",
    "Ratio of the decision": "OPINION",
    "Ruling by Lower Court": "PROCEDURE",
    "Ruling by Present Court": "VERDICT",
}
TYPE_TO_CLASS = {
    T.FACTS: "FACTS",
    T.CLAIMS: "ARGUMENT",
    T.DEFENSE: "ARGUMENT",
    T.OPINION: "OPINION",
    T.PROCEDURE: "PROCEDURE",
    T.VERDICT: "VERDICT",
}


def _macro_f1(gold: list[str], pred: list[str]) -> float:
    scores = []
    for label in sorted(set(gold)):
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        n_pred, n_gold = pred.count(label), gold.count(label)
        scores.append(2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0)
    return sum(scores) / len(scores)


def test_india_sc_roles_sentence_accuracy(shared_data):
    gold: list[str] = []
    pred: list[str] = []
    config = ParseConfig(kind="en_judgment")
    with open(shared_data / "en/judgments/india_sc_roles.jsonl", encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            sentences = [s["text"].strip() for s in record["sentences"]]
            # The corpus keeps sentences, not paragraphs: each sentence is a paragraph of the text.
            doc = build(from_text("\n".join(sentences), record["doc_id"]), record["doc_id"], "0" * 16, config)
            starts = []
            pos = 0
            for s in sentences:
                pos = doc.text.index(s, pos) if s else pos
                starts.append(pos)
                pos += len(s)
            blocks = iter(doc.blocks)
            block = next(blocks)
            for s, start in zip(record["sentences"], starts, strict=True):
                while block.char_end <= start:
                    block = next(blocks)
                gold.append(ROLE_TO_CLASS[s["label"]])
                pred.append(TYPE_TO_CLASS.get(block.type, "OTHER"))
    accuracy = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
    macro = _macro_f1(gold, pred)
    print(f"\nindia_sc_roles: {len(gold)} sentences; accuracy {accuracy:.3f}, macro-F1 {macro:.3f}")
    assert len(gold) > 7000
    assert accuracy >= 0.55 and macro >= 0.35


def test_uk_legaldocml_header(shared_data):
    """Every fifth UK judgment: the cover page gives the citation, date, judges and both sides."""
    reference = {}
    with gzip.open(shared_data / "en/judgments/uk_ewca_2020.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            reference[r["source_file"]] = r
    paths = sorted((shared_data / "en/judgments/uk_ewca_2020_xml").glob("*.xml.gz"))[::5]
    n = judged = two_parties = tagged_found = tagged = body = reasoning = 0
    for path in paths:
        doc = parse_file(path)
        ref = reference[path.name.removesuffix(".gz")]
        assert doc.kind is DocKind.EN_JUDGMENT
        assert doc.meta.citation == ref["cite"] and doc.meta.date.isoformat() == ref["date"]
        assert doc.meta.court and "Court of Appeal" in doc.meta.court
        header = " ".join(ref["header_lines"])
        n += 1
        # (a few reference records lost their header lines; there the judges are only counted)
        judged += bool(doc.meta.judges) and all(j.split()[-1] in header for j in doc.meta.judges if header)
        two_parties += len(doc.meta.parties) >= 2
        # a separator line ("and -") is no party; a case number holds a digit ("Case Nos:" is no "s")
        assert all(p.name.strip(" -–").lower() != "and" for p in doc.meta.parties), path.name
        assert doc.meta.case_number is None or re.search(r"\d", doc.meta.case_number), path.name
        names = " ".join(p.name for p in doc.meta.parties)
        root = etree.fromstring(gzip.decompress(path.read_bytes()))
        for el in root.iter(f"{AKN}party"):
            tagged += 1
            tagged_found += " ".join("".join(el.itertext()).split()) in " ".join(names.split())
        types = [b.type for b in doc.blocks]
        assert types[0] is T.HEADER and T.PARTIES in types
        body += len(types)
        reasoning += types.count(T.OPINION) + types.count(T.FACTS)
    print(
        f"\nUK LegalDocML: {n} judgments; judges found {judged / n:.1%}, two or more parties {two_parties / n:.1%}, "
        f"tagged parties recovered {tagged_found}/{tagged}"
    )
    assert judged / n >= 0.95
    assert two_parties / n >= 0.8
    assert tagged_found / tagged >= 0.9
    assert reasoning / body >= 0.5  # the body of an appeal judgment is mostly facts and reasoning


def _cover_parties(shared_data, *numbers: int) -> dict[int, list[tuple[str, str]]]:
    """(name, role) of the parties each 2020 EWCA Civ judgment's cover names, by its number."""
    folder = shared_data / "en/judgments/uk_ewca_2020_xml"
    return {
        n: [(p.name, p.role) for p in parse_file(folder / f"2020-ewca-{n}-civ.xml.gz").meta.parties]
        for n in numbers
    }


def test_uk_cover_parties_are_neither_counsel_nor_separators(shared_data):
    """Counsel whose "(instructed by …)" opens the next line, and "and Interested Party", are no parties; a
    role on the line under a party's is its second ("Defendant" / "Appellant")."""
    parties = _cover_parties(shared_data, 1046, 578)
    assert parties[1046] == [
        ("INDEPENDENT WORKERS UNION OF GREAT Appellant BRITAIN", "respondent"),
        ("THE MAYOR OF LONDON", "respondent"),
        ("TRANSPORT FOR LONDON", "interested party"),
    ]
    assert parties[578] == [
        ("BORWICK DEVELOPMENT SOLUTIONS LIMITED", "claimant/respondent"),
        ("CLEAR WATER FISHERIES LIMITED", "defendant/appellant"),
    ]


def test_uk_cover_parties_listed_a_line_each_are_parties_each(shared_data):
    """A table row listing a side's parties a line each gives each its row's role ("Claimants / Appellants" is
    one side's two roles), a name run on over two lines stays whole, and a transcriber's notice under the
    parties is none of them."""
    parties = _cover_parties(shared_data, 1400, 42, 551, 1058)
    assert parties[1400] == [
        ("MR ABDIRAHIM ALI DIRIYE", "appellant"),
        ("MS KALTRINA BOJAJ", "respondents"),
        ("QUICK-SURE INSURANCE LIMTED", "respondents"),
    ]
    assert parties[42] == [
        ("CHRISTOPHER HUGH GOSDEN", "claimants/appellants"),
        ("JANE SHIRLEY KAYE", "claimants/appellants"),
        ("HALLIWELL LANDAU (a firm)", "defendants/respondents"),
        ("PHILIP LAIDLOW", "defendants/respondents"),
    ]
    assert parties[551] == [("MS K KILRAINE", "appellant"), ("LION ACADEMY TRUST", "respondent")]
    assert ("THE SECRETARY OF STATE FOR THE HOME DEPARTMENT", "respondent/defendant") in parties[1058]


def test_us_opinion_cover(shared_data):
    doc = parse_file(
        shared_data / "en/judgments/us_opinions_pdf/ca1_20-1507_opinion.pdf", ParseConfig(ocr=False)
    )
    assert doc.kind is DocKind.EN_JUDGMENT
    # the caption read whole: the circuit on the next line, the roles as printed, the panel, the short name
    assert doc.meta.court == "United States Court of Appeals for the First Circuit"
    assert doc.meta.case_number == "20-1507" and doc.meta.date == dt.date(2020, 12, 22)
    assert [(p.name, p.role) for p in doc.meta.parties] == [
        ("CALVARY CHAPEL OF BANGOR", "plaintiff-appellant"),
        ("JANET T. MILLS", "defendant-appellee"),
    ]
    assert doc.meta.judges == ["Howard", "Selya", "Barron"]
    assert doc.title == "Calvary Chapel of Bangor v. Mills"
    assert doc.blocks[0].type is T.HEADER
    # footnotes (set tighter than the double-spaced body, under it, opened by their number) are APPENDIX
    note = next(b for b in doc.blocks if b.text.startswith("1 The Chapel claimed violations"))
    assert note.type is T.APPENDIX and note.page == 5
    assert sum(b.type is T.APPENDIX for b in doc.blocks) <= 5
