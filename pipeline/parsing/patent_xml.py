"""Patent XML of every era into typed spans: USPTO v4.x (2005–), USPTO v2.5 "PATDOC" (2001–2004),
USPTO pre-grant publications v1.x (2001–2004) and EP publication XML. The eras differ in element names,
not in shape (abstract, description of headings and paragraphs, claims that reference other claims),
so one walker reads them all through a per-era `Schema`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pipeline.parsing.kinds.patent import parse_yyyymmdd, section_for_heading
from pipeline.parsing.spans import Extracted, TextBuilder
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

_WS = re.compile(r"\s+")
_LEADING_NUMBER = re.compile(r"^\s*\d{1,3}\s*[.)]")


@dataclass(frozen=True)
class Schema:
    abstract: frozenset[str]
    description: frozenset[str]
    heading: frozenset[str]
    para: frozenset[str]
    claims: frozenset[str]
    claim: str
    claim_refs: dict[str, str]  # element → attribute naming the claim it refers to
    # description containers whose name already says the section (v2.5: BRFSUM, DRWDESC, DETDESC)
    containers: dict[str, T] = field(default_factory=dict)


V4 = Schema(
    abstract=frozenset({"abstract"}),
    description=frozenset({"description"}),
    heading=frozenset({"heading"}),
    para=frozenset({"p"}),
    claims=frozenset({"claims"}),
    claim="claim",
    claim_refs={"claim-ref": "idref"},
    containers={"description-of-drawings": T.DRAWINGS},
)
V25 = Schema(
    abstract=frozenset({"SDOAB"}),
    description=frozenset({"SDODE"}),
    heading=frozenset({"H"}),
    para=frozenset({"PARA"}),
    claims=frozenset({"SDOCL"}),
    claim="CLM",
    claim_refs={"CLREF": "ID"},
    containers={"BRFSUM": T.SUMMARY, "DRWDESC": T.DRAWINGS, "DETDESC": T.DESCRIPTION, "RELAPP": T.OTHER},
)
PAP = Schema(
    abstract=frozenset({"subdoc-abstract"}),
    description=frozenset({"subdoc-description"}),
    heading=frozenset({"heading"}),
    para=frozenset({"paragraph"}),
    claims=frozenset({"subdoc-claims"}),
    claim="claim",
    claim_refs={"dependent-claim-reference": "depends_on"},
    containers={
        "brief-description-of-drawings": T.DRAWINGS,
        "detailed-description": T.DESCRIPTION,
        "summary-of-invention": T.SUMMARY,
        "background-of-invention": T.BACKGROUND,
        "cross-reference-to-related-applications": T.OTHER,
    },
)
EP = Schema(
    abstract=frozenset({"abstract"}),
    description=frozenset({"description"}),
    heading=frozenset({"heading"}),
    para=frozenset({"p"}),
    claims=frozenset({"claims"}),
    claim="claim",
    claim_refs={"claim-ref": "idref"},
)
SCHEMAS = {
    "us-patent-grant": V4,
    "us-patent-application": V4,
    "PATDOC": V25,
    "patent-application-publication": PAP,
    "ep-patent-document": EP,
}


def text_of(el) -> str:
    return _WS.sub(" ", "".join(el.itertext())).strip()


def _pick(root, names: frozenset[str], language: str | None = "en"):
    """The first element named in `names`, preferring the English one where several languages exist."""
    found = list(root.iter(*names))
    english = [el for el in found if (el.get("lang") or "").lower() == language]
    return (english or found or [None])[0]


def claim_number(el, fallback: int) -> int:
    for raw in (el.get("num"), el.get("id"), el.get("ID")):
        if raw and (digits := re.sub(r"\D", "", raw)):
            return int(digits)
    return fallback


def claim_refs(claim, schema: Schema) -> list[int]:
    """The claims a claim's XML markup says it depends on."""
    refs = set()
    for el in claim.iter(*schema.claim_refs):
        attr = schema.claim_refs[el.tag]
        if raw := el.get(attr):
            for part in raw.split():
                if digits := re.sub(r"\D", "", part):
                    refs.add(int(digits))
    return sorted(refs)


def claims_of(root, schema: Schema) -> list:
    box = _pick(root, schema.claims)
    return [] if box is None else list(box.iter(schema.claim))


def read_patent(root, schema: Schema) -> Extracted:
    b = TextBuilder("\n")
    meta, title = _meta(root, schema)
    if title:
        b.add(title, T.HEADER)
    parties = ", ".join(f"{p.name} ({p.role})" for p in meta.parties)
    if parties:
        b.add(parties, T.PARTIES)
    abstract = _pick(root, schema.abstract)
    if abstract is not None:
        paras = list(abstract.iter(*schema.para)) or [abstract]
        for el in paras:
            b.add(text_of(el), T.ABSTRACT)
    description = _pick(root, schema.description)
    if description is not None:
        _walk_description(description, schema, b)
    for i, claim in enumerate(claims_of(root, schema), start=1):
        text = text_of(claim)
        if not _LEADING_NUMBER.match(text):
            text = f"{claim_number(claim, i)}. {text}"
        b.add(text, T.CLAIM)
    return Extracted(text=b.text(), spans=b.spans, title=title, meta=meta, kind=DocKind.PATENT, language="en")


def _walk_description(description, schema: Schema, b: TextBuilder) -> None:
    state = T.DESCRIPTION
    for el in description.iter(*schema.containers, *schema.heading, *schema.para):
        tag = el.tag
        if tag in schema.containers:
            state = schema.containers[tag]
        elif tag in schema.heading:
            heading = text_of(el)
            state = section_for_heading(heading) or state
            if state is T.CLAIM:
                state = T.DESCRIPTION
            b.add(heading, state)
        elif tag in schema.para and next(el.iterancestors(*schema.para), None) is None:
            b.add(text_of(el), state)


# ---- bibliographic data --------------------------------------------------------------------------


def _first(root, *paths: str) -> str | None:
    for path in paths:
        el = root.find(path)
        if el is not None and (text := text_of(el)):
            return text
    return None


def _meta(root, schema: Schema) -> tuple[DocMeta, str | None]:
    tag = root.tag
    meta = DocMeta(
        doc_type="patent application"
        if "application" in tag or root.get("kind", "").startswith("A")
        else "patent grant"
    )
    if schema is V4:
        bib = root.find("us-bibliographic-data-grant")
        if bib is None:
            bib = root.find("us-bibliographic-data-application")
        bib = bib if bib is not None else root
        meta.patent_number = _first(bib, "publication-reference/document-id/doc-number")
        meta.date = parse_yyyymmdd(_first(bib, "publication-reference/document-id/date"))
        meta.filing_date = parse_yyyymmdd(_first(bib, "application-reference/document-id/date"))
        title = _first(bib, "invention-title")
        meta.classes = [_ipcr(el) for el in bib.iter("classification-ipcr")]
        meta.classes += [text_of(el) for el in bib.iterfind(".//classification-national/main-classification")]
        for el in bib.iter("inventor", "applicant", "us-applicant"):
            role = (
                "inventor"
                if el.tag == "inventor" or el.get("app-type") == "applicant-inventor"
                else "applicant"
            )
            if name := _person(el):
                meta.parties.append(Party(name=name, role=role))
        for el in bib.iter("assignee"):
            if name := _first(el, ".//orgname") or _person(el):
                meta.parties.append(Party(name=name, role="assignee"))
    elif schema is PAP:
        meta.patent_number = _first(root, ".//document-id/doc-number")
        meta.date = parse_yyyymmdd(_first(root, ".//document-id/document-date"))
        meta.filing_date = parse_yyyymmdd(_first(root, ".//domestic-filing-data/filing-date"))
        title = _first(root, ".//title-of-invention")
        meta.classes = [text_of(el) for el in root.iterfind(".//classification-ipc//ipc")]
        for el in root.iterfind(".//inventors/*"):
            if name := _person(el):
                meta.parties.append(Party(name=name, role="inventor"))
        for el in root.iterfind(".//assignee"):
            if name := _first(el, ".//organization-name") or _person(el):
                meta.parties.append(Party(name=name, role="assignee"))
    else:  # USPTO v2.5 and EP share the ST.32/ST.36 B-codes
        meta.patent_number = _first(root, ".//B110/DNUM", ".//B110") or root.get("doc-number")
        meta.date = parse_yyyymmdd(_first(root, ".//B140/DATE", ".//B140/date") or root.get("date-publ"))
        meta.filing_date = parse_yyyymmdd(_first(root, ".//B220/DATE", ".//B220/date"))
        title = _ep_title(root) or _first(root, ".//B540")
        meta.classes = [text_of(el).split("  ")[0].strip() for el in root.iterfind(".//B511")]
        meta.classes += [
            text_of(el).split("  ")[0] for el in root.iterfind(".//B510EP/classification-ipcr/text")
        ]
        for el in root.iterfind(".//B721"):
            if name := _person(el):
                meta.parties.append(Party(name=name, role="inventor"))
        for el in root.iterfind(".//B731"):
            if name := _first(el, ".//ONM", ".//snm") or _person(el):
                meta.parties.append(Party(name=name, role="assignee"))
    meta.classes = list(dict.fromkeys(c for c in meta.classes if c))
    return meta, title


def _ipcr(el) -> str:
    parts = [_first(el, p) or "" for p in ("section", "class", "subclass", "main-group", "subgroup")]
    return f"{''.join(parts[:3])} {parts[3]}/{parts[4]}".strip() if parts[3] else "".join(parts[:3])


def _person(el) -> str | None:
    given = _first(el, ".//first-name", ".//given-name", ".//FNM")
    family = _first(el, ".//last-name", ".//family-name", ".//SNM", ".//snm")
    name = " ".join(p for p in (given, family) if p)
    return name or _first(el, ".//orgname", ".//name", ".//NAM")


def _ep_title(root) -> str | None:
    box = root.find(".//B540")
    if box is None:
        return None
    children = list(box)
    for lang, title in zip(children[::2], children[1::2], strict=False):
        if text_of(lang) == "en":
            return text_of(title)
    return None
