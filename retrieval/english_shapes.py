"""The shapes of English answers: a titled or capitalised name, a firm, a court, a place, a date, an amount
of money, a number of days, a measurement, a labelled number, a condition. `en_candidates(text, kind)` finds
the phrases of `text` that can answer a question of `kind` (retrieval/english_spans.py reads the kind and
chooses among them).
"""

from __future__ import annotations

import re

from retrieval.text import non_overlapping, stopwords

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan\.|Feb\.|Mar\.|Apr\.|Jun\.|Jul\.|Aug\.|Sept?\.|Oct\.|Nov\.|Dec\.|JANUARY|FEBRUARY|MARCH|APRIL|"
    r"MAY|JUNE|JULY|AUGUST|SEPTEMBER|OCTOBER|NOVEMBER|DECEMBER)"
)
_DATE = (
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?(?:\s+day\s+of)?\s+{_MONTH},?\s+\d{{4}}"
    rf"|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|{_MONTH}\s+\d{{4}}"
    r"|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b)"
)
_NUMWORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
    r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|"
    r"million|billion)"
)
_PAREN = (
    r"(?:\s*\(\s*(?:US)?[$£€]?\d[\d,.]*\s*%?\s*[A-Za-z]{0,3}\s*\))?"  # "five (5)", "thirty percent (30%)"
)
_NUM = (  # "some six and a half hours"
    rf"(?:\d[\d,]*(?:\.\d+)?|\b(?i:{_NUMWORD})(?:(?:[\s-]+|\s+and\s+)(?i:{_NUMWORD}))*\b)"
    rf"(?:\s+and\s+a\s+half\b)?{_PAREN}"
)
_SCALE = r"(?:\s+(?:million|billion|thousand|m|bn)\b|(?:m|bn|k)\b)?"  # £5 million, £67.05m
_QUALIFIER = (
    r"(?:(?:approximately|about|around|in the region of|some|at least|at most|not less than|not more than|"
    r"no less than|no more than|up to|over|just over|just under|more than|less than|a minimum of|"
    r"a maximum of|nearly|almost)\s+)?"
)
_CURRENCY = r"(?:US\$|USD\s?|\$|£|€|GBP\s?|EUR\s?)"
_UNIT_OF_TIME = (
    r"(?:(?:business|calendar|working|consecutive)\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?)"
)
# the defined date a contract counts a period from ("two years after the Closing Date")
_FROM_DATE = r"(?:\s+(?:after|following|from|before|prior to)\s+(?:the\s+)?(?:[A-Z][\w-]*\s+){0,2}Date\b)?"
_MEASURE_UNIT = (
    r"(?:[nµμu]m|mm|cm|km|m|[mµμk]?g|m[lL]|[lL]|°\s?[CF]|K|[kMG]?Hz|[mk]?V|m?A|[mkM]?W|[kMG]?Pa|bar|psi|ppm|"
    r"ppb|dB|rpm|m?s|inch(?:es)?|feet|foot|ft|miles?|(?:milli|centi|nano|kilo)?met(?:er|re)s?|"
    r"degrees?(?:\s+(?:C|F|Celsius|Fahrenheit))?|volts?|watts?|amperes?|hertz|(?:kilo|milli)?grams?|"
    r"lit(?:er|re)s?|percent|%)(?![\w°])"
)
# a patent's, an application's or a case's number: what follows its label ("Patent No.: US 12,345,678 B2",
# "Case No: CA-2023-001234", "Neutral Citation Number: [2024] EWCA Civ 9917")
_NUMBER_VALUE = r"(?:[A-Z]{1,4}[ -]?)?\[?\d[\w/,.\-\]]*(?: (?:[A-Z]{1,4}\d?|Civ|Crim|\d[\w/,.\-]*)(?![\w.]))*"
_SHAPES = {
    # a date without its year ("issued on March 18") where the text has left it out
    "date": [
        _DATE,
        rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?)\b(?!,?\s+\d)",
    ],
    "number": [rf"(?:(?<=No\.: )|(?<=No\. )|(?<=No: )|(?<=Number: )|(?<=Number )){_NUMBER_VALUE}"],
    "measure": [
        rf"{_QUALIFIER}(?:between\s+)?{_NUM}\s*(?:{_MEASURE_UNIT}\s*)?(?:(?:to|and|or|-|–)\s*{_NUM}\s*)?"
        rf"{_MEASURE_UNIT}"
    ],
    # a criminal sentence: "3 years’ imprisonment", "life imprisonment", "a community order"
    "penalty": [
        rf"{_QUALIFIER}{_NUM}[\s-]*{_UNIT_OF_TIME}[’']?\s+(?:imprisonment|detention|custody|in prison)",
        r"\blife imprisonment\b",
        r"\b(?:an? )?(?:suspended sentence|community order|conditional discharge|absolute discharge)\b",
    ],
    "duration": [
        rf"{_DATE}\s+(?:to|through|until)\s+{_DATE}",
        rf"{_QUALIFIER}{_NUM}(?:\s+(?:to|or|and)\s+{_NUM})?(?:[\s-]*){_UNIT_OF_TIME}{_PAREN}{_FROM_DATE}",
    ],
    "amount": [
        rf"{_QUALIFIER}{_CURRENCY}\d[\d,]*(?:\.\d+)?{_SCALE}{_PAREN}",
        rf"{_QUALIFIER}{_NUM}{_SCALE}\s+(?:US\s+)?(?:dollars|pounds|euros|rupees){_PAREN}",
        # "-0.75%", "90-95%"
        rf"{_QUALIFIER}(?<![\w.])[-−]?{_NUM}(?:\s*[-–]\s*{_NUM})?\s*(?:%|percent\b|per cent\b){_PAREN}",
    ],
    # "aged 7, 3 and 1½": the ages of several
    "age": [
        rf"{_NUM}[\s-]+years?[\s-]+old\b",
        r"\b(?:aged|age of)\s+\d{1,3}½?(?:(?:,\s*|\s+and\s+)\d{1,3}½?)*",
        rf"\b(?:aged|age of)\s+{_NUM}",
    ],
    # "35 hours", "seven thousand (7000) acres"; not "In 2019, requires"
    "count": [rf"{_QUALIFIER}{_NUM}(?<!,){_SCALE}\s+[a-z]+"],
    "condition": [
        r"\b(?i:if|when|where|whenever|once|upon|unless|provided that|in the event(?: that)?|so long as|"
        r"as long as|on condition that)\b.+?(?=,\s|;|:|\.(?:\s|$)|$)"
    ],
}
# "How many restaurants must be developed?" asks a count of things, never a sum of money
_COUNT_Q = re.compile(
    r"\bhow\s+many\s+(?!(?:dollars|pounds|euros|rupees|cents|percent)\b)([a-z]+(?:-[a-z]+)*)(?:\s+([a-z]+))?",
    re.I,
)
_MONEY = re.compile(rf"{_CURRENCY}\s*\d|\b(?:dollars|pounds|euros|rupees)\b", re.I)


def asks_count(question: str) -> bool:
    return _COUNT_Q.search(question) is not None


def counted_words(question: str) -> tuple[str, ...]:
    """The words after "how many" that may name what is counted ("restaurants", "additional years")."""
    m = _COUNT_Q.search(question)
    return tuple(w.lower() for w in m.groups() if w) if m else ()


def is_money(span: str) -> bool:
    return _MONEY.search(span) is not None


_SP = r"[^\S\n]+"  # spaces within a line: a name never runs on into the next line
_SP0 = r"[^\S\n]*"
# a capitalised word (never cut inside one: "McLean", not "Mc"), hyphenated ("T-Mobile"), or an initial
_NAME = r"(?:(?:Mc|O')[A-Z][a-z]+|[A-Z](?:[a-z'’]+|(?=-))(?:-[A-Z]?[a-z'’]+)*(?![A-Za-z])|[A-Z]\.)"
_CAPS = r"[A-Z][A-Z'’\-]+"
_TITLE = (
    r"(?:Mr|Mrs|Ms|Miss|Dr|Sir|Dame|Lord|Lady|Judge|Justice|Professor|Hon\.|Honorable|Lord Justice|"
    r"Lady Justice|Mr Justice|Mrs Justice|Chief Justice|Master|HHJ|His Honour Judge|Her Honour Judge|"
    r"HH Judge|"
    # the tribunals' and the lower courts' judges: "EJ Kolanko", "DDJ Ackland", "Deputy Upper Tribunal Judge"
    r"(?:Deputy )?(?:District|Employment|Upper Tribunal|First-tier Tribunal) Judge|EJ|DJ|DDJ|UTJ|Recorder)\.?"
)
_ORG_END = (
    r"(?:Inc\.?|Ltd\.?|Limited|LLP|LLC|L\.L\.C\.|L\.L\.P\.|PLC|plc|Corporation|Corp\.?|Company|Co\.|Bank|"
    r"Council|Authority|N\.V\.|B\.V\.|S\.A\.|S\.L\.|S\.p\.A\.|GmbH|AG|L\.P\.|LP|Pty|INC\.?|LTD\.?|LIMITED|"
    r"CORPORATION)(?!\w)"
)
_SHAPES["person"] = [
    rf"\b{_TITLE}{_SP}{_NAME}(?:{_SP}{_NAME}){{0,3}}(?:,?{_SP}(?:QC|KC))?",
    rf"\b(?:LORD|LADY|MR|MRS) JUSTICE{_SP}{_CAPS}(?:{_SP}{_CAPS})?|\bSIR{_SP}{_CAPS}{_SP}{_CAPS}",
    # an English judge as judgments name one: "Teare J", "Elisabeth Laing J", "Males LJ" (not "John J. Smith")
    rf"\b{_NAME}(?:{_SP}{_NAME}){{0,2}}{_SP}(?:J|LJ|JJ|LJJ|MR)\b(?!\.?[^\S\n]*[A-Z][a-z])",
    rf"\b(?:{_CAPS}|{_NAME})(?:{_SP}(?:{_CAPS}|{_NAME})){{0,2}}(?:,?{_SP}(?:and{_SP})?{_CAPS}){{0,4}},{_SP}"
    rf"(?:Chief{_SP}|Senior{_SP})?(?:Circuit|District|Magistrate|Bankruptcy)?{_SP0}Judges?",
]
# capitalised words without a title: a name, or a firm's ("Coldharbour Partners")
_SHAPES["name"] = [rf"\b{_NAME}(?:{_SP}{_NAME}){{1,3}}(?:,?{_SP}(?:QC|KC|Esq\.?|Jr\.?))?"]
_SHAPES["organisation"] = [
    # never opened by a joining word in capitals ("BETWEEN X INC. AND HARVEST GOLD FARMS INC.")
    rf"\b(?!(?:AND|OR|OF|THE|BETWEEN|WITH)\b)(?:{_NAME}|{_CAPS})"
    rf"(?:(?:{_SP}|{_SP0},{_SP0}|{_SP}&{_SP}|{_SP}and{_SP}|{_SP}of{_SP})(?:{_NAME}|{_CAPS}))*,?{_SP}{_ORG_END}",
    rf"\b(?:the{_SP})?(?:{_NAME}{_SP})*Court(?:{_SP}(?:of|for|at|in){_SP}(?:the{_SP})?{_NAME}(?:{_SP}{_NAME})?)*",
    rf"\b(?:(?!(?:ON|FROM|THE|IN|OF|AT|TO|AND|APPEAL)\b){_CAPS}{_SP}){{0,3}}COURT(?:{_SP}(?:OF|FOR|AT|IN){_SP}(?:THE{_SP})?{_CAPS}(?:{_SP}{_CAPS})?)*",
]
_STREET = (
    r"(?:Road|Street|Avenue|Lane|Drive|Way|Place|Close|Court|Gardens|Square|Terrace|Crescent|Grove|Row|Mews|"
    r"Boulevard|Highway|Parkway|Rd\.|St\.|Ave\.|Blvd\.)"
)
_POSTCODE = r"(?:[A-Z]{1,2}\d[A-Z\d]?[^\S\n]+\d[A-Z]{2}|\d{5}(?:-\d{4})?)"  # E5 9LE, 54919-0001
# an address: "47, Moresby Road, London E5 9LE", "4321 North Ballard Road, Appleton, WI 54919-0001"
_ADDRESS = (
    rf"\b\d{{1,5}}[A-Za-z]?,?{_SP}(?:{_NAME}{_SP}){{0,3}}{_STREET}"
    rf"(?:,{_SP}(?:{_NAME}|[A-Z]{{2}})(?:{_SP}{_NAME}){{0,2}}){{0,3}}(?:,?{_SP}{_POSTCODE})?"
)
_SHAPES["address"] = [_ADDRESS]
_SHAPES["place"] = [
    _ADDRESS,
    rf"(?:(?<=\b(?:in|at|to|of) )|(?<=\bfrom )|(?<=—)|(?<=– ))"
    rf"(?:the{_SP})?{_NAME}(?:{_SP}(?:of{_SP})?{_NAME}){{0,3}}"
    rf"(?:,{_SP}{_NAME}(?:{_SP}{_NAME}){{0,2}}){{0,2}}(?:{_SP}\([A-Z]{{2,4}}\))?",
]
# a party may be a company: who-questions take organisations too, a person first where a line has both
_TAKES = {
    "person": ("person", "name", "organisation"),
    "organisation": ("organisation", "name"),  # "Bradford Royal Infirmary": a body without a suffix
    "amount": ("amount", "count"),  # money and shares first, then a number of anything
    "measure": ("measure", "amount"),
    "address": ("address", "place"),  # a town where no street is named
}
_PATTERNS = {kind: [re.compile(p) for p in ps] for kind, ps in _SHAPES.items()}
_DETERMINER = re.compile(r"\b(the|this|that|such|any|each|its|their|our|your|a|an)[^\S\n]+$", re.I)
_TIME = re.compile(rf"\b{_UNIT_OF_TIME}$")
_PRONOUNS = frozenset("i me my we us our you your he him his she her hers it its they them their".split())
_OPENERS = frozenset("the this that these those in on at for of by and or but a an it if when where".split())
# words a name may follow on its line ("Appellant Ms X", "Before Sir Y"), cut from a person's front
_LEADERS = _OPENERS | frozenset(
    "appellant appellants respondent respondents claimant claimants defendant defendants plaintiff "
    "plaintiffs petitioner petitioners counsel before between judgment opinion".split()
)
# capitalised words that start sentences or name roles, not people
NOT_NAMES = frozenset(
    "the this that these those in on at for of by and or but a an it its he she they we i if when where "
    "court appeal appellant respondent claimant defendant plaintiff judge justice lord lady agreement party "
    "parties section article clause schedule act state states united district circuit supreme high secretary "
    "company judgment order government department tribunal council board county city law courts assistant "
    "deputy federal public defender attorney general prosecutor solicitor counsel chief senior associate".split()
)


def _is_name(span: str) -> bool:
    """Not a run of capitalised common words ("The Court", "United States"), nor one a sentence opens."""
    words = [w.strip(".,'’").lower() for w in span.split()]
    return words[0] not in _OPENERS and any(len(w) > 1 and w not in NOT_NAMES for w in words)


def is_proper(span: str, lower_words: set[str]) -> bool:
    """Holds a proper noun: a word the passages never write in lower case ("Approved Judgment", "Generic
    Product" are common words capitalised; "Stanley L. Myers" is not), and no title opens it (a place)."""
    words = [w for w in re.findall(r"[A-Za-z][\w’'-]*", span) if w.lower() not in _OPENERS]
    return bool(words) and not re.match(_TITLE, span) and any(w.lower() not in lower_words for w in words)


def en_candidates(text: str, kind: str) -> list[tuple[int, int, str]]:
    """(start, end, shape) of the English phrases of `text` that can answer a `kind` question, longest first
    where they overlap."""
    found = []
    for shape in _TAKES.get(kind, (kind,)):
        for pattern in _PATTERNS[shape]:
            for m in pattern.finditer(text):
                a, b = m.span()
                while b > a and text[b - 1] in " ,":
                    b -= 1
                if shape in ("person", "name"):
                    while (lead := re.match(r"(\S+)[^\S\n]+", text[a:b])) and lead[1].lower() in _LEADERS:
                        a += lead.end()
                    if not _is_name(text[a:b]) or (shape == "name" and len(text[a:b].split()) < 2):
                        continue  # common words, or one word left once "In" is cut ("In August")
                    if shape == "name" and _DETERMINER.search(text[:a]):
                        continue  # "the Effective Date", "the United Kingdom": a defined term or a place
                if shape == "place" and re.fullmatch(_MONTH, text[a:b]):
                    continue  # "in March 2021": a date's month
                last = text[a:b].split()[-1] if shape == "count" else ""
                if shape == "count" and (last in stopwords() or last in _PRONOUNS or _TIME.search(text[a:b])):
                    continue  # "2 of", "paragraph 71 he": a number, not a count; "12 years" is a duration
                if shape == "organisation" and len(text[a:b].split()) <= 2 and _DETERMINER.search(text[:a]):
                    continue  # "an Affiliated Company", "the Bank": a defined term, not a name
                found.append((a, b, shape))
    return non_overlapping(found)
