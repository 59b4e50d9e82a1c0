"""English-language judgments (UK, US, Indian courts).

Less formulaic than Chinese judgments, so each paragraph is typed by the strongest cue it carries
(who is speaking — counsel for a side, the court below, this court — and what it does: recite facts,
construe a statute, dispose of the appeal); a paragraph without a cue continues the section before it.
The cover page (court, citation, parties, judges, counsel) is typed by its own line patterns.
"""

from __future__ import annotations

import re

from pipeline.parsing.kinds.dates import parse_date
from pipeline.parsing.kinds.en_caption import REPORTER_CITATION, opens_with_caption, read_caption
from pipeline.parsing.spans import Span
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

KIND = DocKind.EN_JUDGMENT

_I = re.IGNORECASE
CITATION = re.compile(
    r"\[(?:19|20)\d\d\]\s+(?:UKSC|UKHL|UKPC|EWCA\s+(?:Civ|Crim)|EWHC|EWFC|EWCOP|UKUT|UKFTT)\s+\d+(?:\s*\([A-Za-z]+\))?"
)
_COURT = re.compile(
    r"\b(?:in\s+the\s+)?(?:supreme\s+court|court\s+of\s+appeals?|high\s+court|united\s+states\s+(?:court|district|tax)"
    r"|circuit\s+court|district\s+court|tax\s+court|court\s+of\s+(?:federal\s+claims|chancery|criminal\s+appeals)"
    r"|crown\s+court|family\s+court|tribunal)\b[^\n]{0,80}",
    _I,
)
_SCORE_CUES = re.compile(
    r"\b(?:appellants?|respondents?|petitioners?|plaintiffs?|defendants?|court\s+of\s+appeal|supreme\s+court"
    r"|high\s+court|district\s+court|judgment|affirmed|reversed|remanded|appeal\s+(?:is\s+)?(?:allowed|dismissed)"
    r"|learned\s+(?:counsel|judge)|lord\s+justice|circuit\s+judge|opinion\s+of\s+the\s+court|j\.|lj|held\s+that"
    r"|court|judge|hearing|counsel|testimony|findings\s+of\s+fact|conclusions\s+of\s+law|petition|ruling|v\.)\b",
    _I,
)

_HEADER_LINE = re.compile(
    r"^(?:neutral\s+citation|case\s+no|claim\s+no|appeal\s+no|no\.\s|docket|date[d:]?\b|before\s*:?|royal\s+courts"
    r"|strand,|on\s+appeal\s+from|in\s+the\b|the\s+(?:supreme|high)\s+court|united\s+states|judgment\s*$"
    r"|hearing\s+dates?|approved\s+judgment|\[\d{4}\]|\(?\d{1,2}\s+\w+\s+\d{4}\)?$|-\s*-+|_{3,}|\*{3,})",
    _I,
)
_JUDGE_LINE = re.compile(
    r"^(?:(?:the\s+)?(?:right\s+)?(?:hon(?:ou)?rable\s+)?(?:lord|lady|mr|mrs|ms|sir|dame)?\s*(?:justice|president)\b"
    r"|(?:lord|lady)\s+justice\s+\w+|sir\s+\w+|[A-Z][A-Za-z'\-]+\s+(?:LJ|J|MR|P|VP)\b"
    r"|THE\s+(?:MASTER\s+OF\s+THE\s+ROLLS|CHANCELLOR|PRESIDENT))",
)
_PARTY_LINE = re.compile(
    r"^(?:between\b|-?\s*and\s*-?$|v\.?$|vs\.?$|versus$|.{2,120}?\b(?:appellants?|appellees?|respondents?|claimants?|defendants?"
    r"|petitioners?|plaintiffs?|applicants?|interveners?)\b\)?\.?\s*$|.{2,200}?\b(?:for\s+(?:the\s+)?(?:appellants?|appellees?"
    r"|respondents?|claimants?|defendants?|petitioners?|plaintiffs?|applicants?|state|government|united\s+states)"
    r"|\(instructed\s+by)\b)",
    _I,
)
# The line naming who delivers the opinion closes the cover page: "E. GRADY JOLLY, Circuit Judge:", "PER CURIAM."
_AUTHOR = re.compile(
    r"(?:(?:per\s+curiam|circuit\s+judge|district\s+judge|justice|judge|j\.)\s*[:.]"
    r"|,\s*(?:[cp]\.\s?)?j(?:\.a\.d)?\.)\s*\*?\s*$",
    _I,
)
_BODY_START = re.compile(
    r"^(?:\d{1,3}\.?\s+\S|\(\d{1,3}\)\s+\S|judgment\b.*:|[A-Z][a-z]+(?:\s+\w+){0,3}\s*(?:LJ|J|MR)\s*:)"
)

_VERDICT = re.compile(
    r"\b(?:appeals?\s+(?:is|are|must\s+be|should\s+be|will\s+be|stands?)\s+(?:accordingly\s+|therefore\s+|partly\s+|partially\s+)?"
    r"(?:allowed|dismissed|disposed\s+of|rejected|granted)|(?:we|i)\s+(?:would\s+)?(?:therefore\s+)?(?:allow|dismiss)"
    r"\s+(?:the|this)\s+(?:appeal|petition)|^(?:we|i)\s+(?:therefore\s+|accordingly\s+)?(?:affirm|reverse|vacate)\b|(?:is|are)\s+(?:hereby\s+)?(?:affirmed|reversed|vacated|remanded|set\s+aside|quashed)"
    r"|\bit\s+is\s+(?:so\s+)?ordered\b|ordered\s+and\s+adjudged|this\s+cause\s+having\s+been\s+heard|^(?:affirmed|reversed|vacated|remanded|so\s+ordered|order)\b|no\s+order\s+as\s+to\s+costs"
    r"|(?:parties|each\s+party)\s+(?:shall|to)\s+bear\s+(?:their|its)\s+own\s+costs|petition\s+(?:is|stands)\s+dismissed)",
    _I,
)
_BELOW = (
    r"(?:high\s+court|trial\s+(?:court|judge)|district\s+(?:court|judge)|sessions\s+(?:court|judge)|lower\s+court"
    r"|courts?\s+below|division\s+bench|(?:learned\s+)?single\s+judge|learned\s+(?:trial\s+|district\s+)?judge|tribunal"
    r"|appellate\s+(?:court|authority)|the\s+judge|magistrate|bankruptcy\s+court|commission|board|collector)"
)
_PROCEDURE = re.compile(
    rf"\b{_BELOW}\s+(?:has\s+|had\s+)?(?:held|found|observed|dismissed|allowed|decreed|came\s+to|was\s+of|rejected|accepted"
    r"|set\s+aside|confirmed|reversed|affirmed|concluded|decided|granted|refused|convicted|acquitted|passed|recorded|took)"
    r"|\b(?:impugned\s+(?:judgment|order)|judgment\s+(?:and\s+order\s+)?(?:of|passed\s+by)\s+the\s+(?:high|trial)"
    r"|(?:leave|permission)\s+to\s+appeal\s+was|special\s+leave\s+(?:was\s+)?granted|aggrieved\s+by|feeling\s+aggrieved)",
    _I,
)
_CLAIMS = re.compile(
    r"\b(?:counsel\s+(?:for|appearing\s+for|on\s+behalf\s+of)\s+the\s+(?:appellants?|petitioners?|plaintiffs?|claimants?|applicants?)"
    r"|on\s+behalf\s+of\s+the\s+(?:appellants?|petitioners?|plaintiffs?|claimants?)|(?:appellants?|petitioners?|plaintiffs?"
    r"|claimants?)(?:'s?|’s?)?\s+(?:contends?|contended|submits?|submitted|argues?|argued|case\s+is|submission)"
    r"|it\s+was\s+(?:contended|urged|argued|submitted)|(?:learned\s+)?counsel\s+(?:contended|submitted|argued|urged))",
    _I,
)
_DEFENSE = re.compile(
    r"\b(?:counsel\s+(?:for|appearing\s+for|on\s+behalf\s+of)\s+the\s+(?:respondents?|defendants?|state|union|government)"
    r"|on\s+behalf\s+of\s+the\s+(?:respondents?|defendants?|state)|(?:respondents?|defendants?|the\s+state)(?:'s?|’s?)?\s+"
    r"(?:contends?|contended|submits?|submitted|argues?|argued|case\s+is|submission)|in\s+reply|per\s+contra)",
    _I,
)
_OPINION = re.compile(
    r"\b(?:(?:in\s+)?(?:our|my)\s+(?:view|opinion|judgment)|we\s+(?:are\s+(?:of\s+the\s+)?(?:view|opinion|satisfied|unable)"
    r"|hold|find|agree|think|consider|see\s+no)|i\s+(?:would\s+)?(?:hold|agree|think|consider|accept|reject)"
    r"|section\s+\d+|article\s+\d+|sub-section|clause\s+\(|rule\s+\d+|\bact\b|statute|provision|held\s+that|observed\s+that"
    r"|laid\s+down|ratio|precedent|\bv\.\s|\bvs?\.\s|air\s+\d{4}|\d{4}\)?\s+\d+\s+scc|u\.s\.c\.|f\.\d?d|\bu\.s\.\s+\d)",
    _I,
)
_FACTS = re.compile(
    r"\b(?:facts|background|on\s+(?:or\s+about\s+)?\d{1,2}(?:st|nd|rd|th)?\s+\w+,?\s+\d{4}|on\s+\w+\s+\d{1,2},\s+\d{4}"
    r"|in\s+(?:the\s+year\s+)?(?:19|20)\d\d|was\s+(?:born|employed|appointed|arrested|married|charged)|f\.i\.r|fir\b"
    r"|complaint\s+was\s+lodged|lodged\s+a\s+complaint|executed\s+a|entered\s+into)",
    _I,
)
_HEADING = re.compile(
    r"^(?:(?:[IVX]+|[A-Z]|\d+)[.)]\s+)?(?P<h>[A-Z][A-Za-z ,’'&\-]{2,60})$",
)
_HEADING_TYPES = (
    (re.compile(r"fact|background|introduction|the\s+parties|history", _I), T.FACTS),
    (
        re.compile(
            r"procedur|proceedings\s+below|judgment\s+below|decision\s+below|the\s+judgment\s+of|first\s+instance",
            _I,
        ),
        T.PROCEDURE,
    ),
    (
        re.compile(r"submission|argument|contention|grounds?\s+of\s+appeal|the\s+appeal$|appellant", _I),
        T.CLAIMS,
    ),
    (re.compile(r"respondent", _I), T.DEFENSE),
    (
        re.compile(
            r"discussion|analysis|reasoning|the\s+law|legal\s+framework|conclusion|issues?|decision|standard",
            _I,
        ),
        T.OPINION,
    ),
    (re.compile(r"disposition|order|result|outcome", _I), T.VERDICT),
    (re.compile(r"appendix|annex|schedule|footnotes?", _I), T.APPENDIX),
)
_SIGNATURE = re.compile(
    r"^(?:\.{0,3}\s*[A-Z][A-Za-z. ]{1,40},?\s*(?:J|CJ|JJ|LJ|C\.?J\.?I?)\.?|new\s+delhi|dated\b.{0,30}|judge)$",
    _I,
)


_CAPTIONED = 0.6  # the least a document opening with a court and a caption scores


def score(text: str, language: str) -> float:
    if language != "en":
        return 0.0
    cues = [m.group(0).lower() for m in _SCORE_CUES.finditer(text[:12000])]
    found = min(1.0, len(cues) / 16) * min(1.0, len(set(cues)) / 5)
    return max(found, _CAPTIONED) if opens_with_caption(text) else found


_CUE_ORDER = (
    (T.VERDICT, _VERDICT),
    (T.DEFENSE, _DEFENSE),
    (T.CLAIMS, _CLAIMS),
    (T.PROCEDURE, _PROCEDURE),
    (T.OPINION, _OPINION),
    (T.FACTS, _FACTS),
)
# One pass over a lower-cased paragraph finds every cue (six case-insensitive searches cost ~6x more).
_CUES = re.compile("|".join(f"(?P<{t.name}>{rx.pattern})" for t, rx in _CUE_ORDER))


def _cue(piece: str) -> T | None:
    """The strongest cue of one body paragraph: disposition > who argues > the court below > law > facts."""
    # Who speaks and what is done show at a paragraph's start or end; scanning the middle of long
    # paragraphs costs most of the typing time and changes little.
    window = piece if len(piece) <= 600 else f"{piece[:400]}\n{piece[-200:]}"
    found = {m.lastgroup for m in _CUES.finditer(window.lower())}
    return next((t for t, _ in _CUE_ORDER if t.name in found), None)


def _heading_type(piece: str) -> T | None:
    m = _HEADING.match(piece)
    if not m:
        return None
    return next((t for rx, t in _HEADING_TYPES if rx.search(m.group("h"))), None)


_ARGUMENT_RUN = 3  # paragraphs an argument runs on without a new cue before the court's voice resumes


def type_spans(text: str, spans: list[Span]) -> list[Span]:
    # A structured source (LegalDocML) types its own cover page; its body then starts untyped.
    in_cover = not any(s.type in (T.HEADER, T.PARTIES) for s in spans)
    state = T.FACTS
    since = 0
    n = len(spans)
    for i, s in enumerate(spans):
        piece = text[s.start : s.end]
        if s.type is not None:
            continue
        if in_cover:
            # A cover page is recognised by its first line; after that its short lines (names, dates,
            # courts below) default to HEADER until the first body paragraph.
            kind = _cover_type(piece)
            if _VERDICT.search(piece):
                kind = T.VERDICT  # a judgment form: the order follows the caption directly
            elif kind is None and _heading_type(piece) in (T.FACTS, T.OPINION, T.PROCEDURE):
                kind = None  # "Introduction", "Background": the body has begun
            elif kind is None and i > 0 and i < 60 and len(piece) < 250 and not _BODY_START.match(piece):
                kind = T.HEADER
            if kind is not None:
                s.type = kind
                in_cover = kind is not T.VERDICT and not _AUTHOR.search(piece)
                continue
            in_cover = False
        if len(piece) <= 60 and (head := _heading_type(piece)) is not None:
            s.type = state = head
            continue
        if i >= n - 6 and len(piece) <= 60 and _SIGNATURE.match(piece):
            s.type = T.SIGNATURE
            continue
        if state is T.APPENDIX:
            s.type = state
            continue
        cue = _cue(piece)
        s.type = cue or state
        # Arguments run over several paragraphs; a ruling below is usually reported in one.
        if cue is not None and cue is not T.PROCEDURE:
            state, since = cue, 0
        elif state in (T.CLAIMS, T.DEFENSE, T.VERDICT):
            since += 1
            if since >= _ARGUMENT_RUN:
                state = T.OPINION  # a submission is reported in a few paragraphs; the court then speaks
    return spans


def _cover_type(piece: str) -> T | None:
    """HEADER/PARTIES for the lines of a cover page; None once the body begins."""
    if REPORTER_CITATION.match(piece):
        return T.HEADER  # "100 A.3d 1004" opens a reporter's text; no numbered paragraph
    if len(piece) > 300 or _BODY_START.match(piece):
        return None
    if _PARTY_LINE.match(piece):
        return T.PARTIES
    if _HEADER_LINE.match(piece) or _JUDGE_LINE.match(piece) or CITATION.search(piece) or _COURT.match(piece):
        return T.HEADER
    if len(piece) <= 80 and piece.upper() == piece:  # names of parties and courts set in capitals
        return (
            T.PARTIES
            if re.search(r"\b(?:LTD|LIMITED|PLC|INC|LLC|COUNCIL|SECRETARY|MINISTER)\b", piece)
            else T.HEADER
        )
    return None


# ---- metadata ------------------------------------------------------------------------------------

# a number holds a digit ("Case Nos: C3/2020/0619 C3/2020/0625", not the "s"); a line may print one spaced
# ("Case No:A3 2020 0784") or several, joined by "&", "," or "and", or one after another, each perhaps
# numbered "(1)"
_NUMBER = r"(?=[\w/.\-]*\d)[A-Z0-9][\w/.\-]*(?:[ \t]*\([A-Z0-9]{1,2}\))?"
_CASE_NO = re.compile(
    rf"\b(?:case|claim|appeal|docket)\s+no(?:s|\(s\))?\.?\s*:?\s*({_NUMBER}"
    rf"(?:(?:[ \t]*[,&][ \t]*|[ \t]+and[ \t]+|[ \t]+(?=[A-Z]{{0,3}}\d)){_NUMBER})*)",
    _I,
)
_ROLE = re.compile(
    r"\b(appellants?|appellees?|respondents?|claimants?|defendants?|petitioners?|plaintiffs?|applicants?|interveners?)\b",
    _I,
)
_COUNSEL = re.compile(
    r"\bfor\s+(?:the\s+)?(?:appellant|appellee|respondent|petitioner|plaintiff|defendant|amic|state|united)"
    r"|instructed\s+by|on\s+(?:the\s+)?brief|with\s+whom|argued\b",
    _I,
)
_JUDGE_NAME = re.compile(
    r"\b(?:(?:LORD|LADY)\s+JUSTICE\s+[A-Z][A-Za-z\-’']+(?:\s+[A-Z][A-Za-z\-’']+)?|SIR\s+[A-Z][A-Za-z\-’']+(?:\s+[A-Z][A-Za-z\-’']+)*"
    r"|[A-Z][a-z]+\s+(?:LJ|J|MR)\b|THE\s+MASTER\s+OF\s+THE\s+ROLLS|(?:Circuit|District|Chief)\s+Judge\s+[A-Z][a-z]+)"
)


def extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]:
    meta = DocMeta(doc_type="judgment")
    header = [text[s.start : s.end] for s in spans if s.type is T.HEADER]
    cover = [text[s.start : s.end] for s in spans if s.type in (T.HEADER, T.PARTIES)]
    head_text = "\n".join(header) or text[:2000]
    if m := CITATION.search(head_text):
        meta.citation = m.group(0)
    if m := _COURT.search(head_text):
        court = re.sub(r"^in\s+the\s+", "", m.group(0).strip(), flags=_I)
        meta.court = re.split(r"\s+(?:on\s+appeal|appeal\s+from|from\s+the)\b", court, flags=_I)[0]
    if m := _CASE_NO.search(head_text):
        meta.case_number = m.group(1)
    for line in header:
        if line.lower().startswith("date") and (d := parse_date(line)):
            meta.date = d
            break
    else:
        meta.date = parse_date(head_text)
    meta.judges = list(
        dict.fromkeys(m.group(0).strip() for line in header for m in _JUDGE_NAME.finditer(line))
    )
    meta.parties = _parties(cover)
    title = f"{meta.parties[0].name} v {meta.parties[-1].name}" if len(meta.parties) >= 2 else None
    lines = _cover_lines(text, spans)
    if meta.citation or any(_ENGLISH_COVER.match(line) for line in lines):
        return meta, title  # an English cover: "Between :", each name over its role
    openings = [text[sp.start : sp.start + 120] for sp in spans[:80]]
    cap = read_caption(lines, openings)
    meta.court = cap.court or meta.court
    meta.case_number = cap.number or meta.case_number
    meta.date = cap.date or meta.date
    meta.judges = cap.judges or meta.judges
    meta.parties = cap.parties or meta.parties
    return meta, cap.title or title


_COVER_CHARS = 6000
_ENGLISH_COVER = re.compile(r"between\b|neutral\s+citation|royal\s+courts|case\s+no\s*:|-\s-\s-\s-", _I)
_CAPS_START = re.compile(r"[A-Z][A-Z.,'’&\- ]{20}")  # a caption's list of parties, not the opinion


def _cover_lines(text: str, spans: list[Span]) -> list[str]:
    """The document's opening lines up to the opinion's first paragraph (kept cut short: it may open with
    the author's name)."""
    lines: list[str] = []
    for s in spans[:60]:
        piece = text[s.start : s.end]
        if len(piece) > 400 and not _COUNSEL.search(piece[:300]) and not _CAPS_START.match(piece):
            lines.append(piece[:200])
            break
        lines += [line.strip() for line in piece.split("\n") if line.strip()]
        if sum(map(len, lines)) > _COVER_CHARS:
            break
    return lines


def _parties(lines: list[str]) -> list[Party]:
    """Cover-page party lines: a name line, then (often on the next line) its role."""
    out: list[Party] = []
    pending: list[str] = []
    for line in lines:
        clean = line.strip(" -–—\t")
        if re.fullmatch(r"(?:between|and|v\.?|vs\.?|versus)", clean, _I) or _COUNSEL.search(clean):
            continue
        roles = _ROLE.findall(clean)
        name = _ROLE.sub("", clean).strip(" ,.;:()-–—") if roles else clean.strip(" ,;")
        if roles and not name:
            out.extend(Party(name=p, role=roles[-1].lower()) for p in pending)
            pending = []
        elif roles:
            out.append(Party(name=name, role=roles[-1].lower()))
        elif name and len(name) < 150:
            pending = [name]  # only the line just above a role line is the party it names
        else:
            pending = []
    return out
