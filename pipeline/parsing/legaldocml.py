"""UK judgments in LegalDocML (Akoma Ntoso), as published by The National Archives.

The metadata block states the citation, court and date outright; the cover page (`<header>`) is the
judgment's own first page, whose markup is uneven (a party may or may not be tagged), so its lines are
read like the printed page: Before → judges, Between → parties with their roles, counsel after them.
The numbered paragraphs of `<judgmentBody>` are left to the English-judgment rules to type.
"""

from __future__ import annotations

import datetime as dt
import re

from pipeline.parsing.patent_xml import text_of
from pipeline.parsing.spans import Extracted, TextBuilder
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

AKN = "{http://docs.oasis-open.org/legaldocml/ns/akn/3.0}"
UK = "{https:/judgments.gov.uk/}"
_I = re.IGNORECASE
ROLES = r"appellants?|respondents?|claimants?|defendants?|applicants?|interveners?|petitioners?|interested\s+part(?:y|ies)"
_ROLE = re.compile(rf"\b({ROLES})\b\.?\s*$", _I)
_ONLY_ROLE = re.compile(
    rf"^\(?(?:(?:first|second|third|\d+(?:st|nd|rd|th)?)\s+)?({ROLES})\)?(?:\s*/\s*\w+)?$", _I
)
_AND = re.compile(r"^[-–—\s]*and[-–—\s]*$", _I)
_COUNSEL = re.compile(
    r"\(instructed\s+by|\bfor\s+the\s+(?:\w+\s+)?(?:appellants?|respondents?|claimants?|defendants?"
    r"|applicants?|interveners?|secretar|intervener)",
    _I,
)
# who appeared, on a line of its own ("The Appellant appeared in person"), or counsel whose "(instructed by"
# opens the next line
_APPEARED = re.compile(r"\bappear(?:ed|ing)\b|\bin\s+person\b|\bpro\s+bono\b", _I)
INSTRUCTED = re.compile(r"^\W*instructed\b", _I)
_RULE = re.compile(r"^[-–—_=\s]{3,}$")
_LEAD_RULE = re.compile(r"^(?:[-–—_]\s*){3,}")


def _lines(header) -> list[tuple[str, str]]:
    """(text, role cell) per printed line: a paragraph, or a row of the parties table."""
    out: list[tuple[str, str]] = []
    for el in header.iter(f"{AKN}p", f"{AKN}tr"):
        if el.tag == f"{AKN}p":
            if next(el.iterancestors(f"{AKN}tr"), None) is None and (text := text_of(el)):
                out.append((text, ""))
        else:
            cells = list(el.iter(f"{AKN}td"))
            if not cells:
                continue
            lines = [t for p in cells[0].iter(f"{AKN}p") if (t := text_of(p))] or [text_of(cells[0])]
            left = _joined_lines(lines)
            role = " ".join(text_of(td) for td in cells[1:]).strip()
            if len(left) > 1 and not role:
                out += [(t, "") for t in left]  # a cell laid out as several printed lines
            elif any(left) or role:  # a party a line, all of the row's role, unless it holds both sides
                sides = any(re.search(_AND_BETWEEN, t, _I) for t in left)
                out.append(((" " if sides else "\n").join(left), role))
    return out


def _joined_lines(lines: list[str]) -> list[str]:
    """A cell's printed lines, a name run on over two of them joined: after a bracket left open or a joining
    word ("THE SECRETARY OF STATE FOR THE HOME" / "DEPARTMENT", "R (on the application of BRITISH" /
    "TELECOMMUNICATIONS PLC)"), before a bracket or words that go on ("(a firm)", "On the application of
    PN"); a line opening with a number in brackets is a party of its own ("(1) KOZA LIMITED")."""
    out: list[str] = []
    for line in lines:
        prev = out[-1] if out else ""
        if out and (prev.count("(") > prev.count(")") or _RUNS_ON.search(prev) or _GOES_ON.match(line)):
            out[-1] = f"{prev} {line}"
        else:
            out.append(line)
    return out


_NOTICE = re.compile(
    r"^\W*(?:transcript\s+of|tel(?:ephone)?\.?\s*(?:no|:)|this\s+transcript|warning\s*:|official\s+shorthand|"
    r"digital\s+transcript|crown\s+copyright)",
    _I,
)
_RUNS_ON = re.compile(r"(?:\b(?:of|for|the|and|in|on|at|to)(?:\s+\S+)?|[,&-])\s*$", _I)
_GOES_ON = re.compile(r"[a-z]|\((?!\d)|(?i:(?:for|of|and|on\s+(?:the\s+application|behalf))\b)")
_AND_BETWEEN = r"\s*[-–—]\s*and\s*[-–—]?\s*|^\s*(?:and|v\.?|versus)\s*$"


def read_akn(root) -> Extracted:
    judgment = next(root.iter(f"{AKN}judgment"), root)
    meta = DocMeta(doc_type="judgment")
    meta.citation = root.findtext(f".//{UK}cite") or _text(root, f".//{AKN}neutralCitation")
    meta.case_number = _text(root, f".//{AKN}docketNumber")
    court = root.find(f".//{AKN}TLCOrganization")
    meta.court = (court.get("showAs") if court is not None else None) or _text(root, f".//{AKN}courtType")
    for el in root.iter(f"{AKN}FRBRdate"):
        if el.get("name") == "judgment" and (d := _date(el.get("date"))):
            meta.date = d
            break
    name = root.find(f".//{AKN}FRBRWork/{AKN}FRBRname")
    title = name.get("value") if name is not None else None

    b = TextBuilder("\n")
    header = judgment.find(f"{AKN}header")
    if header is not None:
        read_cover(_lines(header), meta, b)
    body = judgment.find(f"{AKN}judgmentBody")
    if body is not None:
        for el in body.iter(f"{AKN}paragraph", f"{AKN}p"):
            if next(el.iterancestors(f"{AKN}paragraph"), None) is not None:
                continue  # inside a numbered paragraph, read with it
            b.add(text_of(el))
    return Extracted(
        text=b.text(), spans=b.spans, title=title, meta=meta, kind=DocKind.EN_JUDGMENT, language="en"
    )


class _PartyReader:
    """The Between block line by line: a role (in the line or in the table's role column) names the
    party on that line and those still waiting; a name under a named party shares its role until the
    next "- and -"."""

    def __init__(self, meta: DocMeta):
        self.meta = meta
        self.waiting: list[str] = []
        self.last_role: str | None = None
        self.side = 0  # where the parties of the side being read begin in meta.parties

    def line(self, text: str, role_cell: str) -> None:
        if "\n" in text:  # a table row's cell of one side's parties, each on its line: all wait for its role
            self.waiting += [name for line in text.split("\n") if (name := line.strip(" ,-–—"))]
            text = ""
        for i, chunk in enumerate(re.split(_AND_BETWEEN, text, flags=_I)):
            if i > 0:
                self._next_side()  # "- and -" separates the sides
            chunk = (chunk or "").strip(" ,-–—")
            if chunk and not _AND.match(chunk):  # "and -" with its first dash lost is no name
                self._chunk(chunk)
        if _AND.match(text):
            self._next_side()
        roles = [m.group(1) for m in re.finditer(rf"\b({ROLES})\b", role_cell, _I)]
        # one role per name, in order; "Claimants / Appellants" is one side's roles at first instance and on
        # appeal
        if len(roles) > 1 and len(roles) == len(self.waiting) and "/" not in role_cell:
            self.meta.parties += [
                Party(name=n, role=r.lower()) for n, r in zip(self.waiting, roles, strict=True)
            ]
            self.waiting, self.last_role = [], roles[-1].lower()
            return
        for role in roles:
            self._role(role)

    def _chunk(self, chunk: str) -> None:
        if opened := re.match(r"and\s+", chunk, _I):  # "and Interested Party": another side, its role first
            self._next_side()
            chunk = chunk[opened.end() :]
        if only := _ONLY_ROLE.match(chunk):
            self._role(only.group(1))
        elif m := _ROLE.search(chunk):
            if base := chunk[: m.start()].strip(" ,"):
                self.waiting.append(base)
            self._role(m.group(1))
        elif self.last_role:
            self.meta.parties.append(Party(name=chunk, role=self.last_role))
        else:
            self.waiting.append(chunk)

    def finish(self) -> None:
        """Names the cover never gave a role to are still parties."""
        if self.waiting:
            self._role("party")

    def _next_side(self) -> None:
        self.last_role, self.side = None, len(self.meta.parties)

    def _role(self, role: str) -> None:
        role = role.lower()
        if not self.waiting and _second_role(self.last_role, role):
            # a side's role on appeal after its role at first instance, on the line below ("CLEAR WATER
            # FISHERIES LIMITED Defendant" / "Appellant") or after a slash in the role column
            for party in self.meta.parties[self.side :]:
                if party.role == self.last_role:
                    party.role = f"{self.last_role}/{role}"
            self.last_role = f"{self.last_role}/{role}"
            return
        self.meta.parties += [Party(name=n, role=role) for n in self.waiting]
        self.waiting = []
        self.last_role = role


_FIRST_INSTANCE = re.compile(r"^(?:claimant|defendant|applicant|petitioner|plaintiff)s?$")
_ON_APPEAL = re.compile(r"^(?:appellant|respondent)s?$")


def _second_role(last: str | None, role: str) -> bool:
    """Whether `role` is the other half of a side's role `last`: its role on appeal and at first instance
    ("defendant" and "appellant"), in either order; two roles of one kind belong to two sides."""
    if last is None or "/" in last:
        return False
    return {_stage(last), _stage(role)} == {"first instance", "appeal"}


def _stage(role: str) -> str | None:
    if _FIRST_INSTANCE.match(role):
        return "first instance"
    return "appeal" if _ON_APPEAL.match(role) else None


def read_cover(lines: list[tuple[str, str]], meta: DocMeta, b: TextBuilder) -> None:
    """The cover page's printed lines (text, role cell) into HEADER/PARTIES spans of `b`, and the judges
    and parties they name into `meta` (also read for the JSONL packaging of these judgments)."""
    section = "head"
    parties = _PartyReader(meta)
    for i, (text, role_cell) in enumerate(lines):
        ruled = bool(_LEAD_RULE.match(text))
        text = _LEAD_RULE.sub("", text)
        low = text.lower().rstrip(" :")
        if low.startswith("before"):
            section = "judges"
            text = re.sub(r"^before\s*:?\s*", "", text, flags=_I)
        elif low.startswith("between"):
            section = "parties"
            text = re.sub(r"^between\s*:?\s*", "", text, flags=_I)
        elif ruled and section == "judges":
            section = "parties"  # some covers go from the judges to the parties without "Between"
        elif section == "parties" and _NOTICE.match(text):
            section = "head"  # a transcriber's notice under the parties is none of them
        if not text.strip() or _RULE.match(text):
            continue
        following = lines[i + 1][0] if i + 1 < len(lines) else ""
        if _COUNSEL.search(text) or _APPEARED.search(text) or INSTRUCTED.match(following):
            section = "counsel"
            b.add(text, T.PARTIES)
        elif section == "judges":
            names = re.split(r"\s+and\s+(?=(?:LORD|LADY|SIR|DAME|MR|MRS|MS|THE)\b)|^and\s+", text, flags=_I)
            names = [re.sub(r"\s+and$", "", j.strip(" ,"), flags=_I) for j in names if j]
            meta.judges += [j for j in names if j and not _AND.match(j)]
            b.add(text, T.HEADER)
        elif section == "parties" and not low.startswith(("judgment", "hearing", "approved")):
            b.add(f"{text} ({role_cell})" if role_cell else text, T.PARTIES)
            parties.line(text, role_cell)
        else:
            b.add(text, T.HEADER)
    parties.finish()


def _text(root, path: str) -> str | None:
    el = root.find(path)
    return text_of(el) or None if el is not None else None


def _date(s: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(s) if s else None
    except ValueError:
        return None
