"""An American opinion's cover read whole: the court, the docket number, the date of decision, the caption's
parties with their roles, the panel, and the short name the case is cited by.

A US cover states these in a caption ("CALVARY CHAPEL OF BANGOR, Plaintiff, Appellant, v. JANET T. MILLS, in
her official capacity …, Defendant, Appellee."), around labelled lines ("No. 20-1507", "Filed February 5,
2010", "Before: …, Circuit Judges."). A PDF's text layer often runs the caption's two columns together
("No. 07-55393 DEANE DANA; DON KNABE,", "D.C. No. Plaintiffs-Appellants, CV-00-13002-DDP v."), so the numbers,
lower-court references and stray column words are taken out of the caption before its names are read.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from pipeline.parsing.kinds.case_names import short_title, titled
from pipeline.parsing.kinds.dates import dates
from pipeline.records import Party

_I = re.IGNORECASE
_ROLE_WORD = (
    r"(?:cross[\s\-–—]*)?(?:plaintiffs?|defendants?|petitioners?|respondents?|appellants?|appellees?|movants?"
    r"|claimants?|interven[eo]rs?|relators?|complainants?|garnishees?|creditors?|debtors?"
    r"|counter[\s\-–—]*(?:plaintiffs?|defendants?))"
)
# "Plaintiff, Appellant", "Plaintiffs-Appellants/Cross-Respondents", "Petitioner - Appellant", "(defendant)"
_ROLE = re.compile(rf"\b{_ROLE_WORD}(?:\s*(?:[\-–—/,]|\s-\s|\band\b)\s*{_ROLE_WORD})*\b\.?", _I)
_VERSUS = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=[,.A-Z]))(?:v|vs|versus)\.?(?=\s|$|[A-Z])", re.M)
_VERSUS_LINE = re.compile(r"(?:v|vs|versus)\.?", _I)
_ROLE_VERSUS = re.compile(rf"\b{_ROLE_WORD}\W{{0,12}}(?:v|vs|versus)\.?$", _I)
_COURT = re.compile(r"^(?:in\s+the\s+)?(?P<c>(?:[A-Z][\w.’']*\s+){0,6}?(?:court|tribunal|board)\b.*)$", _I)
_COURT_TAIL = re.compile(
    r"^(?:for\s+the\s+[\w\s.]{3,40}|(?:\w+\s+){0,2}(?:circuit|district|division))\.?$", _I
)
# the lines around the caption: headings of the cover, never a party
# a reporter's citation or page mark heading the text: "100 A.3d 1004", "[153 Conn.App. 267]",
# "2018 IL App (1st) 152522"
_REPORTER = (
    r"\[?\d{1,4}\s+[A-Z][\w.\s’']{0,20}\s+\d{1,5}\]?(?:\s*\(mem\))?$|\d{4}\s+[A-Z][\w.\s()]{1,20}\s+\d+$"
)
REPORTER_CITATION = re.compile(_REPORTER, _I)
_NOT_CAPTION = re.compile(
    r"^(?:(?:in\s+the\s+)?(?:\w+\s+){0,6}?(?:court|tribunal)\b|for\s+the\s+\w+\s+circuit|(?:\w+\s+)?circuit$"
    r"|for\s+publication|not\s+for\s+publication|\[?unpublished\]?|(?:non-?)?precedential|file\s+name"
    r"|recommended\s+for"
    rf"|{_REPORTER}|(?:docket|record|case|misc\.)?\s*(?:ag\s+)?nos?\.\s*\S+\.?$|division\s+\w+$"
    rf"|t\.c\.\s+memo)",
    _I,
)
_NUMBERED = re.compile(r"(?:¶\s*)?\d{1,3}\.?\s+[A-Z]")  # the opinion's first numbered paragraph
_ONE_SIDED = re.compile(r"(?:in\s+re|in\s+the\s+(?:matter|interest)\s+of)\b", _I)
_COUNSEL = re.compile(
    r"\bfor\s+(?:the\s+)?(?:appellants?|appellees?|respondents?|petitioners?|plaintiffs?|defendants?|people"
    r"|state|claimant)"
    r"\b|\bon\s+(?:the\s+)?briefs?\b|\bof\s+counsel\b|^present\s*:|^\(?\w+\.?\s+\d{1,2},\s+\d{4}\.?\)?$",
    _I,
)
# the first line after the caption: where the cover goes on to the appeal, the panel, the dates, counsel
_AFTER_CAPTION = re.compile(
    r"^(?:appeals?\s+from|on\s+(?:appeal|petition|writ|review|discretionary|certiorari|remand|motion)"
    r"|petitions?\s+for"
    r"|before\b|argued|submitted|(?:opinion\s+|date\s+)?filed|decided|date\b|counsel|(?:order|opinion"
    r"|judgment|memorandum"
    r"|syllabus)\b|per\s+curiam|honorable|appearances)",
    _I,
)
_NUMBER = re.compile(
    r"\b(?:docket|record|case|misc\.\s+docket\s+ag)?\s*nos?\.\s*:?\s*"
    r"(?P<n>(?:MDL\s+)?[A-Z]{0,6}[\-–]?\d[\w\-–—:./]*(?:\s+[A-Z]{2,4}\s+\d{4}|(?:\s*,\s*|\s+(?:&"
    r"|and)\s+)\d[\w\-–—:./]*\d)*)",
    _I,
)
_LOWER_NUMBER = re.compile(
    r"(?:\b(?:D\.\s?C\.|USDC|BAP|Agency|Tax\s+Ct\.|Lower|Trial)\s+|\()N[o0]s?\.(?:\s*[\w:\-–]*\d[\w:\-–]*)?",
    _I,
)
_DOCKETISH = re.compile(
    r"(?<![\w\-–—:])(?=[\w:\-–—]*\d)(?=[\w:\-–—]*[\-–—:])[\w:\-–—]{5,}|\(\s*[A-Z][\w.\s]{1,14}\.\s*\)"
    r"|[\ue000-\uf8ff*]"
)
_DECIDED = re.compile(
    r"\b(?:decided(?:\s+and\s+filed)?|(?:opinion\s+|date\s+)?filed|entered|issued|dated?"
    r"|decision\s+date)\s*:?\s*$",
    _I,
)
_HEARD = re.compile(r"\b(?:argued|submitted|heard|reconsideration|rehearing|calendared)\b[^.]{0,40}$", _I)
_BEFORE = re.compile(
    r"(?:^|(?<=[\s(]))before\s*:?\s*(?:judges\s+)?(?P<j>.{3,300}?(?:judges?|justices?|JJ|Js)\.)", _I
)
_AFTER_PANEL = re.compile(r"(?i:judges?|JJ)\.\*?\s+")
_JUDGE_LIST = re.compile(r"\b(?:[PC]\.J\.|J\.)(?:,|\s+and|$)")
_PANEL = re.compile(
    r"^(?P<j>[A-Z].{0,200}\band\b.{0,60}?,?\s+(?:JJ|Js)\.)$"
)  # "LAVINE, PRESCOTT and WEST, Js."
_AUTHOR = re.compile(
    r"(?:opinion\s+(?:of\s+the\s+court\s+)?by\s+(?:chief\s+)?(?:judge|justice)?\s*(?P<a>[A-Z][\w’'\-]+)"
    r"|(?:chief\s+)?justice\s+(?P<c>[A-Z][\w’'\-]+)\s+delivered"
    r"|(?P<b>[A-Z][\w’'\-.]*(?:\s+[A-Z][\w’'\-.]*){0,3}),\s+(?:(?:chief|senior|circuit|district"
    r"|associate)\s+)*"
    r"(?:(?:judge|justice)\s*(?:[:.]|,\s+delivered)|(?:j|c\.j|p\.j|j\.a\.d)\.(?=[\s:,]|$)))",
    _I,
)
_JUDGE_TITLES = re.compile(
    r"\b(?:(?:chief|senior|circuit|district|associate|presiding|magistrate|bankruptcy|u\.s\.)\s+)*"
    r"(?:judges?|justices?)\b|\b(?:JJ|Js|C\.\s?J|P\.\s?J|J\.A\.D|J)\.|\bhonorable\b|\bthe\b|[*\d]",
    _I,
)
_DESCRIPTOR = re.compile(
    r",\s*(?:in\s+(?:his|her|their|its)\s|individually|as\s|an?\s|by\s+and\s+through|on\s+behalf|d/b/a"
    r"|doing\s+business"
    r"|also\s+known|a/k/a|f/k/a|formerly|et\s+al|(?i:(?:acting\s+|former\s+)?(?:chair(?:man|person)?|director"
    r"|secretary|commissioner|warden|governor|sheriff|superintendent|administrator|executor|trustee"
    r"|president|mayor"
    r"|attorney\s+general))\b)|\s+(?i:also\s+known\s+as|a/k/a|d/b/a|et\s+al\b)|,\s*[A-Z][a-z]+\s*$",
)
_COMPANY = re.compile(r",\s*(?:Inc|LLC|L\.L\.C|Ltd|Co|Corp|P\.C|N\.A|LLP|L\.P|P\.A|PLLC)\.?(?=\W|$)", _I)
_PERSON = re.compile(r"^[A-Z][\w.'’\-]*(?:\s+[A-Z][\w.'’\-]*){1,3}$")


@dataclass
class Caption:
    court: str | None = None
    number: str | None = None
    date: dt.date | None = None
    parties: list[Party] = field(default_factory=list)
    judges: list[str] = field(default_factory=list)
    title: str | None = None


def opens_with_caption(text: str) -> bool:
    """A court's name and a caption ("v." standing alone, or a party's role before it) in the opening
    lines: a judgment, whatever else its text speaks of (a divorce's "agreement")."""
    lines = [line.strip() for line in text[:2000].split("\n") if line.strip()][:25]
    court = any(_COURT.match(line) for line in lines)
    return court and any(_VERSUS_LINE.fullmatch(line) or _ROLE_VERSUS.search(line) for line in lines)


def read_caption(lines: list[str], openings: list[str]) -> Caption:
    """The cover's facts from its lines (the document's first lines, up to where the opinion begins); the
    author from the `openings` of the paragraphs after them ("SELYA, Circuit Judge.", "JUSTICE X
    delivered")."""
    cap = Caption()
    cap.court = _court(lines)
    cap.number = docket_number(lines)
    cap.date = _decided(lines)
    cap.judges = _judges(lines, openings)
    cap.parties = _parties(_caption_text(lines))
    sides = [p for p in cap.parties if p.role != "_versus"]
    cap.title = short_title(cap.parties)
    cap.parties = sides
    return cap


def _court(lines: list[str]) -> str | None:
    for i, line in enumerate(lines[:12]):
        if re.match(
            r"(?:appeals?|on\s+appeal)\s+from|.*\bfor\s+(?:the\s+)?(?:appellant|respondent)", line, _I
        ):
            continue
        if m := _COURT.match(line.strip()):
            court = titled(re.sub(r"\s+\d{4}-[A-Z]+-\d+$|[\s.,]+$", "", m["c"]))
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _COURT_TAIL.match(nxt) and not re.search(r"\bcourt\b", nxt, _I):
                court = f"{court} {titled(nxt)}".rstrip(" .,")
            court = re.sub(r"\bfor\s+the\b", "for the", court, flags=_I)
            if "for the" not in court:  # "UNITED STATES COURT OF APPEALS TENTH CIRCUIT"
                court = re.sub(r"\s+(\w+\s+circuit)$", r" for the \1", court, flags=_I)
            return court if len(court) <= 120 else None
    return None


def docket_number(lines: list[str]) -> str | None:
    """This court's docket number in the cover's lines, never the court below's."""
    for line in lines[:25]:
        if re.match(r"(?:appeals?|on\s+appeal|petitions?)\s+(?:from|for)", line, _I):
            continue
        cleaned = _LOWER_NUMBER.sub(" ", line)
        if m := _NUMBER.search(cleaned):
            return m["n"].rstrip(".,:").replace("–", "-").replace("—", "-")
    return None


def _decided(lines: list[str]) -> dt.date | None:
    """The date of decision: labelled (Filed, Decided, Date), else a date standing alone; never the
    argument's or a rehearing's."""
    text = "\n".join(lines)
    alone = None
    for at, _, d in dates(text):
        before = text[max(0, at - 40) : at]
        line_start = text.rfind("\n", 0, at) + 1
        if _DECIDED.search(before):
            return d
        if alone is None and not _HEARD.search(before) and not text[line_start:at].strip(" ([:"):
            alone = d
    return alone


def _judges(lines: list[str], openings: list[str]) -> list[str]:
    """The panel ("Before: …, Circuit Judges.", "LAVINE, PRESCOTT and WEST, Js.") and the opinion's author."""
    cover = " ".join(lines)
    m = _BEFORE.search(cover) or next(filter(None, map(_PANEL.match, lines)), None)
    if m is None:  # "Angela T. Quigless, P.J., Kurt S. Odenwald, J., and James M. Dowd, J."
        m = next(
            (re.match(r"(?P<j>.+)", x) for x in lines if _JUDGE_LIST.search(x) and x.count(",") >= 2), None
        )
    names = _names(m["j"]) if m else []
    author = author_of(openings)
    if author and not any(author.split()[-1].lower() in n.lower() for n in names):
        names.append(author)
    return names


def author_of(openings: list[str]) -> str | None:
    """Who wrote the opinion, from the openings of its first paragraphs ("SELYA, Circuit Judge. This …",
    "JUSTICE SOTOMAYOR delivered the opinion of the Court.", "Opinion by Judge Callahan")."""
    for opening in openings:
        # at the paragraph's start, or after the panel in the same line ("…, District Judge.* E. GRADY JOLLY,
        # Circuit Judge:")
        for start in [0, *(m.end() for m in _AFTER_PANEL.finditer(opening))]:
            if a := _AUTHOR.match(opening, start):
                return titled(a["a"] or a["b"] or a["c"])
    return None


def _names(panel: str) -> list[str]:
    out = []
    for piece in re.split(r",|;|\b(?i:and)\b", _JUDGE_TITLES.sub(" ", panel)):
        name = re.sub(r"\s+", " ", piece).strip(" .:*")
        if re.match(r"[A-Z]", name) and 1 <= len(name.split()) <= 4 and len(name) > 2:
            out.append(titled(name))
    return out


def _caption_text(lines: list[str]) -> str:
    """The caption's words with the cover's numbers and column strays taken out, one line per line."""
    out: list[str] = []
    for line in lines[:30]:
        line = _LOWER_NUMBER.sub(" ", line)
        line = re.sub(
            r"\b(?:(?:misc\.\s+)?(?:docket|record"
            r"|case)\s+)?(?:ag\s+)?nos?\.\s*\S+(?:,?\s+\w+\.?\s+term,\s+\d{4})?"
            r"|^\s*(?:opinion|division\s+\w+)\b",
            " ",
            line,
            flags=_I,
        )
        if re.match(r"\s*(?:appeals?\s+from|honorable)\b", line, _I) and _VERSUS.search(line[-6:]):
            line = " v."  # a column's "vs." set beside the appeal line
        elif re.match(r"\s*\[?\s*hon(?:orable|\.)\s", line, _I):
            continue  # the judge below, set in the caption's other column
        line = re.sub(r"(?<=[A-Za-z.]),\d{1,2}(?=\s)", ",", _DOCKETISH.sub(" ", line)).strip()
        if not line:
            continue
        if _ends_caption(line):
            if any(_VERSUS.search(x) or _ROLE.search(x) or _ONE_SIDED.match(x) for x in out):
                break
            out = []  # what came before was not the caption (a citation, a heading)
            continue
        out.append(line)
    return "\n".join(out)


def _ends_caption(line: str) -> bool:
    """A heading, number or date line, counsel, or prose: the caption is over (or not yet begun)."""
    if (
        _AFTER_CAPTION.match(line)
        or _NOT_CAPTION.match(line)
        or _COUNSEL.search(line)
        or _NUMBERED.match(line)
    ):
        return True
    lower = sum(c.islower() for c in line)
    return len(line.split()) > 30 and not _ROLE.search(line) and lower > sum(c.isupper() for c in line)


def _parties(caption: str) -> list[Party]:
    """Each side's names with the role after them; a '_versus' marker between the sides."""
    sides = _VERSUS.split(caption)
    if len(sides) < 2 and (one := _ONE_SIDED.match(caption)):  # "IN RE: Bard IVC Filters …, SUGGESTION OF …"
        name = caption[one.end() :].replace("\n", " ").split(",")[0].strip(" .:")
        return [
            Party(name=f"In re {name}" if re.match(r"in\s+re", one[0], _I) else f"{one[0]} {name}", role="")
        ]
    if len(sides) < 2 and not _ROLE.search(caption):
        return []
    out: list[Party] = []
    for k, side in enumerate(sides):
        if k:
            out.append(Party(name="", role="_versus"))
        text = " ".join(side.split())
        start = 0
        for m in _ROLE.finditer(text):
            out += _named(text[start : m.start()], _role(m[0]))
            start = m.end()
        out += _named(text[start:], None)
    return out


def _role(phrase: str) -> str:
    words = re.findall(rf"{_ROLE_WORD}", phrase, _I)
    return "-".join(re.sub(r"[\s\-–—]+", "-", w.lower()) for w in words)


def _named(text: str, role: str | None) -> list[Party]:
    text = re.sub(r"^(?:and|between)\b|[,;:(]+\s*$", "", text.strip(" ,;.")).strip(" ,;.")
    if not text or not re.search(r"[A-Za-z]{2}", text):
        return []
    many = role is not None and role.split("-")[0].endswith("s")
    pieces = re.split(r";|,\s*(?i:and)\s+|\s+(?i:and)\s+(?=[A-Z])" if many else r";", text)
    if many and all(_PERSON.match(p.strip()) for q in pieces for p in q.split(",")):
        pieces = [p for q in pieces for p in q.split(",")]  # "James COOK, Zachary Luckett and Quincle Cook"
    out = []
    for piece in pieces:
        name = _name(piece)
        if name:
            out.append(Party(name=name, role=role or ""))
    return out


def _name(piece: str) -> str:
    piece = piece.strip(" ,.;")
    kept = _COMPANY.search(piece)
    cut = _DESCRIPTOR.search(piece, kept.end() if kept else 0)
    name = piece[: cut.start()] if cut else piece
    return re.sub(r"\s+", " ", name).strip(" ,.;")
