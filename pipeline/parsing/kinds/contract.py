"""Contracts: title, parties ("by and between …"), recitals (WHEREAS), definitions, numbered clauses,
the signature block (IN WITNESS WHEREOF, By:/Name:/Title:) and schedules or exhibits after it."""

from __future__ import annotations

import re

from pipeline.parsing.kinds.dates import parse_date
from pipeline.parsing.kinds.en_caption import opens_with_caption
from pipeline.parsing.spans import Span
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

KIND = DocKind.CONTRACT
_I = re.IGNORECASE

_SCORE_CUES = re.compile(
    r"\b(?:agreement|parties|party|hereby|hereto|hereunder|hereof|whereas|shall|witness\s+whereof|effective\s+date"
    r"|terms\s+and\s+conditions|indemnif\w+|governing\s+law|terminat\w+|confidential\w*)\b",
    _I,
)
_PARTIES = re.compile(
    r"\b(?:by\s+and\s+between|between\s*:?$|entered\s+into|is\s+made\s+(?:and\s+entered\s+)?(?:as\s+of|on|this)"
    r"|made\s+this|dated\s+as\s+of)\b",
    _I,
)
_RECITALS = re.compile(r"^(?:recitals?|background|preamble|whereas\b|now,?\s+therefore)", _I)
_DEFINITIONS_HEAD = re.compile(
    r"^(?:(?:article|section)\s+[\dIVX]+\.?\s*[-–:]?\s*|\d+(?:\.\d+)*\.?\s*)?definitions?\b", _I
)
_DEFINITION = re.compile(
    r"^[\"“”'‘]?[A-Z][\w\s\-’']{0,60}[\"“”'’]\s*(?:shall\s+)?(?:mean|means|has\s+the\s+meaning|refers?\s+to|includes?)\b"
)
_CLAUSE = re.compile(
    r"^(?:(?:article|section|clause)\s+[\dIVXLC]+|\d{1,2}(?:\.\d{1,2})*\.?\s+\S|\([a-z0-9]{1,4}\)\s|[A-Z]\.\s)",
    _I,
)
_SIGNATURE_START = re.compile(
    r"^(?:in\s+witness\s+whereof|signed\s+(?:by|for)|executed\s+(?:by|as\s+of)|yours\s+(?:very\s+)?truly|sincerely"
    r"|agreed\s+and\s+accepted|accepted\s+and\s+agreed|\[signature\s+page)",
    _I,
)
_SIGNATURE_LINE = re.compile(
    r"^(?:by|name|title|date|its|signature|print\s+name|witness)\s*:|^_{3,}|^/s/", _I
)
_APPENDIX = re.compile(r"^(?:schedule|exhibit|annex|appendix|attachment|addendum)\s+[\dA-Z]{1,4}\b", _I)


def score(text: str, language: str) -> float:
    if language != "en":
        return 0.0
    head = text[:12000]
    hits = len(_SCORE_CUES.findall(head))
    named = bool(re.search(r"\bagreement\b", text[:3000], _I))
    judged = opens_with_caption(text)  # a judgment about an agreement
    return min(1.0, hits / 20) * (1.0 if named else 0.5) * (0.5 if judged else 1.0)


def type_spans(text: str, spans: list[Span]) -> list[Span]:
    state = T.HEADER
    for s in spans:
        if s.type is not None:
            state = s.type if s.type is not T.APPENDIX else state  # a footnote does not open a section
            continue
        piece = text[s.start : s.end]
        s.type = state = _classify(piece, state)
    return spans


def _classify(piece: str, state: T) -> T:
    if state is T.APPENDIX:
        return state
    if state in (T.SIGNATURE,) and _APPENDIX.match(piece):
        return T.APPENDIX
    if _SIGNATURE_START.match(piece) or (state is not T.HEADER and _SIGNATURE_LINE.match(piece)):
        return T.SIGNATURE
    if state is T.SIGNATURE:
        if _APPENDIX.match(piece):
            return T.APPENDIX
        # a counterpart signature page can sit mid-document; long prose after it is contract again
        return T.CLAUSE if len(piece) > 400 and not _SIGNATURE_LINE.search(piece) else T.SIGNATURE
    if state in (T.HEADER, T.PARTIES) and _PARTIES.search(piece[:400]):
        return T.PARTIES
    if _RECITALS.match(piece):
        return T.FACTS
    if _DEFINITIONS_HEAD.match(piece) and len(piece) < 120:
        return T.DEFINITIONS
    if _DEFINITION.match(piece):
        return T.DEFINITIONS
    if state is T.HEADER:
        return T.CLAUSE if len(piece) > 300 or _CLAUSE.match(piece) else T.HEADER
    if _CLAUSE.match(piece):
        return T.CLAUSE if state is not T.DEFINITIONS or not re.match(r"^\(", piece) else T.DEFINITIONS
    if (
        state in (T.PARTIES, T.FACTS)
        and len(piece) < 200
        and re.search(r"\b(?:address|attention|located|corporation|company)\b", piece, _I)
    ):
        return state
    if state is T.FACTS or state is T.PARTIES:
        return T.CLAUSE if len(piece) > 300 else state
    return state if state is not T.OTHER else T.CLAUSE


_PARTY_NAMES = re.compile(
    r"between\s+(.{3,160}?)(?:\s*\((?:the\s+)?[“\"]?([A-Za-z ]{2,30})[”\"]?\))?,?\s+and\s+(.{3,160}?)(?:\s*\((?:the\s+)?[“\"]?([A-Za-z ]{2,30})[”\"]?\))?[,.;]",
    _I | re.DOTALL,
)


def extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]:
    meta = DocMeta(doc_type="contract")
    header = [text[s.start : s.end] for s in spans if s.type is T.HEADER]
    parties = " ".join(text[s.start : s.end] for s in spans if s.type is T.PARTIES)
    title = next(
        (h for h in header if re.search(r"\bagreement|contract|lease|license\b", h, _I) and len(h) < 150),
        None,
    )
    if m := _PARTY_NAMES.search(parties):
        for name, role in ((m.group(1), m.group(2)), (m.group(3), m.group(4))):
            meta.parties.append(
                Party(name=re.sub(r"\s+", " ", name).strip(" ,"), role=(role or "party").strip())
            )
    meta.date = parse_date(parties) or parse_date(" ".join(header))
    return meta, title
