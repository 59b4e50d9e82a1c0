"""The short name an American case is cited by, made from its caption's parties the way citation manuals
(the Bluebook's rule 10.2 and its tables of abbreviations) make it: a person by surname, a government by its
one word ("United States", "State", "People", "Commonwealth"), an organisation by its name with the usual
words abbreviated ("Mutual Insurance Company" → "Mut. Ins. Co.", "of Maryland" → "of Md."), "In re X" for a
caption with one side."""

from __future__ import annotations

import re

from pipeline.records import Party

_I = re.IGNORECASE
_GOVERNMENT = (
    (re.compile(r"^united\s+states(?:\s+of\s+america)?$", _I), "United States"),
    (re.compile(r"^(?:the\s+)?people\b", _I), "People"),
    (re.compile(r"^(?:the\s+)?state\b(?!\s+(?:farm|bank|street))", _I), "State"),
    (re.compile(r"^(?:the\s+)?commonwealth\b", _I), "Commonwealth"),
    (re.compile(r"^commissioner\s+of\s+internal\s+revenue$", _I), "Commissioner"),
)
_WORDS = dict(
    pair.split("=")
    for pair in (
        "Association=Ass'n Associates=Assocs. Company=Co. Corporation=Corp. Incorporated=Inc. Insurance=Ins. "
        "Mutual=Mut. Laboratories=Labs. Commission=Comm'n Commissioner=Comm'r Department=Dep't "
        "University=Univ. "
        "Street=St. Properties=Props. Industries=Indus. Services=Servs. National=Nat'l International=Int'l "
        "Manufacturing=Mfg. Limited=Ltd. Brothers=Bros. Hospital=Hosp. Government=Gov't Board=Bd. "
        "County=Cnty. "
        "Authority=Auth. Education=Educ. Development=Dev. Federal=Fed. Financial=Fin. Management=Mgmt. "
        "Medical=Med. Transportation=Transp. Secretary=Sec'y Administration=Admin. Technology=Tech. "
        "Equipment=Equip. Enterprises=Enters. Partnership=P'ship American=Am. America=Am. Center=Ctr. "
        "Litigation=Litig. Products=Prods. Liability=Liab. District=Dist. Division=Div. Engineering=Eng'g "
        "Public=Pub. Regional=Reg'l Resources=Res. "
        "Alabama=Ala. Arizona=Ariz. Arkansas=Ark. California=Cal. Colorado=Colo. Connecticut=Conn. "
        "Delaware=Del. Florida=Fla. Georgia=Ga. Illinois=Ill. Indiana=Ind. Kansas=Kan. Kentucky=Ky. "
        "Louisiana=La. Maryland=Md. Massachusetts=Mass. Michigan=Mich. Minnesota=Minn. Mississippi=Miss. "
        "Missouri=Mo. Montana=Mont. Nebraska=Neb. Nevada=Nev. Oklahoma=Okla. Oregon=Or. Pennsylvania=Pa. "
        "Tennessee=Tenn. Texas=Tex. Vermont=Vt. Virginia=Va. Washington=Wash. Wisconsin=Wis. Wyoming=Wyo."
    ).split()
)
_ABBREVIABLE = re.compile(r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", _I)
_EX_REL = re.compile(r",?\s+ex\s+rel\.\s*", _I)
_PERSON_SUFFIX = re.compile(r",?\s+(?:jr|sr|ii|iii|iv|m\.d|esq)\.?$", _I)
_ORGANISATION = re.compile(
    r"\b(?:inc|llc|ltd|co|corp|corporation|company|bank|association|commission|department|board|university"
    r"|trust"
    r"|county|city|town|village|district|authority|agency|society|church|chapel|services?|insurance|group"
    r"|partners"
    r"|committee|council|school|hospital|office|bureau|union|laboratories|properties|industries|l\.?l\.?c)\b",
    _I,
)
# kept in capitals; the last six are an English judge's or counsel's postnominals ("HODGE QC")
_UPPER = frozenset("llc l.l.c llp plc lp n.a p.c p.a usa u.s ii iii iv d.c qc kc dbe cbe obe mbe".split())
_PARTICLES = {
    "st.",
    "de",
    "del",
    "della",
    "di",
    "da",
    "du",
    "la",
    "le",
    "van",
    "von",
    "der",
    "den",
    "ten",
    "mac",
}
_SMALL = {"of", "the", "and", "for", "in", "on", "at", "to", "by", "ex", "rel."}


def titled(s: str) -> str:
    """Capitals as a reader writes the name ("JERROLD MARTIN" → "Jerrold Martin"); mixed case kept."""
    if s.upper() != s:
        return s
    words = s.lower().split()
    out = [
        w.upper()
        if w.strip(",.;") in _UPPER
        else w
        if i and w in _SMALL
        else re.sub(r"[a-z]", lambda m: m[0].upper(), w, count=1)
        for i, w in enumerate(words)
    ]
    return re.sub(r"(?<=[’'\-])([a-z])", lambda m: m[1].upper(), " ".join(out))


def short_title(parties: list[Party]) -> str | None:
    """ "First v. Second" from a caption's parties, the sides parted by a party whose role is '_versus'."""
    if not parties:
        return None
    first = parties[0]
    other = next((p for i, p in enumerate(parties) if i and parties[i - 1].role == "_versus"), None)
    if other is None:
        m = re.match(r"(?:in\s+re|in\s+the\s+(?:matter|interest)\s+of)\s*:?\s*(.+)", first.name, _I)
        if m is None:
            return None
        name = m[1] if len(m[1].split()) <= 2 else short_name(f"the {m[1]}")  # never reduced to a surname
        return f"In re {name}"
    return f"{short_name(first.name)} v. {short_name(other.name)}"


def short_name(name: str) -> str:
    if rel := _EX_REL.search(name):  # "State ex rel. Cooper"
        return f"{short_name(name[: rel.start()])} ex rel. {short_name(name[rel.end() :])}"
    name = name.strip(" ,.")
    for rx, short in _GOVERNMENT:
        if rx.match(name):
            return short
    if _ORGANISATION.search(name) or re.match(r"the\s|.*\sof\s", name, _I) or len(name.split()) > 4:
        name = re.sub(r"^the\s+", "", titled(name), flags=_I)
        return _ABBREVIABLE.sub(lambda m: _WORDS[m[1].capitalize()], name).replace("..", ".")
    words = _PERSON_SUFFIX.sub("", name).split()
    if len(words) >= 3 and words[-2].lower() in _PARTICLES:  # "Vanessa St. Pierre", "Anna van Dijk"
        return titled(" ".join(words[-2:]))
    return titled(words[-1]) if words else titled(name)
