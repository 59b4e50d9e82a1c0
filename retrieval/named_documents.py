"""The document a question names by what it is ("the sponsorship agreement", "the consulting agreement"),
a Chinese judgment named by its case number or its parties ("（2019）鄂0381刑初59号案", "陈清立与李红军一案"), or
an English one by the name it is cited by ("Mortimer v. Baca", "the Bordelon case").

    DocumentNames(passages, parties, titles).named(question) -> doc_id | None
    DocumentNames(passages, parties, titles).asked_of(question, doc_id, notes) -> (what to search for, doc_id)

A run of many contracts answers "What is the governing law of the consulting agreement?" from whichever
contract its search cites first, often another one's clause. A document whose head (its first passages:
the title, the preamble) holds the words the question names it by is the one asked about, when it is the
only such document of the run; a name that several documents share, or none, names no one document.
A corpus of 裁判文书 is asked about a case by its number or by the names of its parties, which every other
judgment's head lacks; the number must be the head's own, the parties' names (`parties`: the run's
`documents.meta.parties`, without their agents; Chinese names only) must be found whole in the question.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pipeline.parsing.kinds.zh_judgment import CASE_NO
from retrieval.hybrid import Passage
from retrieval.text import HAN

HEAD_PASSAGES = 3  # a contract's title and preamble stand in its first passages
# "the (Event) Sponsorship Agreement", "the Non-Competition and Non-Solicitation Agreement": up to five
# words before the kind of instrument, none of them a word that only joins ("the term of the agreement"
# names nothing) but an "and" between two of them
_JOINING = r"(?:of|the|this|that|to|in|for|and|or|under|by|a|an|its|their|any|each)\b"
_WORD = rf"(?!{_JOINING})[a-z][\w&'-]*"
_INSTRUMENT = r"(?:agreement|contract|licen[cs]e|lease|amendment)"
_NAMED = re.compile(
    rf"\b(?:the|this|that)\s+((?:{_WORD}\s+(?:and\s+)?){{1,5}}{_INSTRUMENT})\b", re.IGNORECASE
)
# the roles of those who act for a party: their names name no case (one lawyer acts in many)
AGENTS = re.compile(r"代理人|代表人|辩护人|负责人|经营者|投资人")
# an English case as a question names it: "Mortimer v. Baca", "the St. Pierre case", "In re Jagels"
_NAME = r"[A-Z][\w.'’&-]*"
_CASE_NAME = re.compile(
    rf"\b{_NAME}(?:\s+{_NAME}){{0,4}}\s+v\.?\s+{_NAME}(?:\s+{_NAME}){{0,4}}"
    rf"|\bthe\s+{_NAME}(?:\s+{_NAME}){{0,2}}\s+(?:case|opinion|judgment|decision|appeal)\b"
    rf"|\bIn\s+re\s+{_NAME}(?:\s+{_NAME}){{0,2}}"
)
# the words of a question that cannot name a case
_COMMON = re.compile(
    r"^(?:who|whom|which|what|when|where|why|how|the|this|that|in|re|of|for|and|is|was|were|are|did|does"
    r"|court|case|opinion|judgment|decision|appeal|judge|judges|panel|united|states|state|people"
    r"|commonwealth|america|v|vs|docket|number|filed|decided|wrote|parties|appellant|appellee|plaintiff"
    r"|defendant|petitioner|respondent)$",
    re.IGNORECASE,
)


def without_names(question: str) -> str:
    """The question with the names it gives documents cut out ("Which law governs the non-competition
    agreement?" asks about the law, not about competition)."""
    return _NAMED.sub(" ", question)


class DocumentNames:
    """The heads of a run's documents, lower-cased with their spacing folded, to find a named one in."""

    def __init__(
        self,
        passages: list[Passage],
        parties: dict[str, list[str]] | None = None,
        titles: dict[str, str] | None = None,
    ):
        heads: dict[str, list[str]] = defaultdict(list)
        for p in passages:
            if len(heads[p.doc_id]) < HEAD_PASSAGES:
                heads[p.doc_id].append(p.text)
        self.heads = {doc: " ".join(" ".join(texts).split()).lower() for doc, texts in heads.items()}
        self.titles = titles or {}  # an English judgment's short name: "Mortimer v. Baca"
        # Chinese names only: an English party ("United States", "State") is named in questions about others
        self.parties = {
            doc: [n for n in names if len(n) >= 2 and HAN.search(n)] for doc, names in (parties or {}).items()
        }

    def asked_of(self, question: str, doc_id: str | None, notes: list[str]) -> tuple[str, str | None]:
        """(what to search for, the document asked about): `doc_id`, else the one document the question
        names (noted); the question without the name once it is asked of the document it names (its words
        stand in every defined term of that contract: "Sponsorship Fee" outranked its arbitration clause)."""
        named = self.named(question)
        if doc_id is None and named is not None:
            notes.append(f"asked about {named}: the one document whose head names it as the question does")
            doc_id = named
        return (without_names(question) if named is not None and named == doc_id else question), doc_id

    def named(self, question: str) -> str | None:
        """The one document whose head holds a name the question gives it, else None."""
        for m in _NAMED.finditer(question):
            name = " ".join(m.group(1).split()).lower()
            found = [doc for doc, head in self.heads.items() if name in head]
            if len(found) == 1:
                return found[0]
        return self.numbered(question) or self.by_parties(question) or case_named(question, self.titles)

    def numbered(self, question: str) -> str | None:
        """The one judgment whose head prints the case number the question gives, brackets and spacing
        aside."""
        for m in CASE_NO.finditer("".join(question.split())):
            number = _plain_number(m.group(0))
            found = [doc for doc, head in self.heads.items() if number.lower() in _plain_number(head)]
            if len(found) == 1:
                return found[0]
        return None

    def by_parties(self, question: str) -> str | None:
        """The one judgment more of whose parties the question names than any other's ("黄某甲、黄某乙掩饰、
        隐瞒犯罪所得案"); a name shared by the best two (a bank in many suits) names neither."""
        held = {doc: sum(len(n) for n in set(names) if n in question) for doc, names in self.parties.items()}
        best = sorted(held.items(), key=lambda kv: -kv[1])[:2]
        if not best or best[0][1] == 0 or (len(best) > 1 and best[1][1] == best[0][1]):
            return None
        return best[0][0]


def case_named(question: str, titles: dict[str, str], loose: bool = False) -> str | None:
    """The one English judgment of `titles` whose short name holds the most of the names the question gives
    a case ("Mortimer v. Baca", "the Bordelon case"), or with `loose` of any of the question's capitalised
    words (a question about a cover names its case by whatever it calls it: "Who is the appellee in
    Calvary Chapel?")."""
    named = [question] if loose else _CASE_NAME.findall(question)
    found = (re.sub(r"['’]s$", "", w) for text in named for w in re.findall(r"[A-Z][\w'’\-]+", text))
    words = {w.lower() for w in found if not _COMMON.match(w)}  # the Chapel's appeal: Chapel
    if not words:
        return None
    scores = {doc: len(words & {w.lower() for w in re.findall(r"[\w'’\-]+", t)}) for doc, t in titles.items()}
    best = max(scores.values(), default=0)
    tied = [doc for doc, score in scores.items() if score == best]
    return tied[0] if best and len(tied) == 1 else None


def _plain_number(text: str) -> str:
    """A case number as compared: Chinese brackets as ASCII, no spaces ("（2016）皖1503执660-2号" ==
    "(2016)皖1503执660-2号")."""
    return "".join(text.translate(str.maketrans("（）〔〕[]", "()()()")).split())
