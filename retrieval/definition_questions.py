"""Questions asking what a term a contract or a patent defines means ("What does 'Business Day' mean in the
gas transportation agreement?", "How is a 'fitting' defined?", "What is the Development Term?").

A search finds a defined term wherever it is used, and a contract uses its defined terms on every page;
the sentence that defines one has a few shapes: a definitions list ('"Affiliate" shall mean …'), a
patent's glossary ('As used herein, the term "fitting" means …', 'By the term "X" we mean …'), or a term
defined where it is first used, in parentheses after what it names ('as of February 1, 2019 (the
"Effective Date")'). `asked_term(question)` reads the term asked about; `definition_answer(question,
passages)` answers with the definition as printed (what follows "means", or what the parenthesis names)
and the sentences stating it. A definition that only points elsewhere ('"Term" has the meaning given in
Section 3') is answered from where the term is defined in parentheses, when the document does so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.hybrid import Passage, sentences_of

_OPEN, _CLOSE = "“\"‘'", "”\"’'"
# a quoted term: in double quotes, which may hold an apostrophe ("Agents’ Fee"), or in single ones
_QUOTED = re.compile(r"(?<![A-Za-z0-9])(?:[“\"]([^“”\"]{1,80}?)[”\"]|[‘']([^‘’'“”\"]{1,80}?)[’'])(?![a-z])")
_TERM = r"[“\"‘']?(?P<term>[^?“”\"‘]{1,80}?)[”\"’']?"
_TAIL = (
    r"(?:\s+(?:in|under|of|for|within|by|according\s+to|as\s+used\s+in)\s+(?:the|this|that|its)\b.*)?"
    r"\s*\??\s*$"
)
# "the term", "the defined term" (in lower case: "the Term" is the term asked about)
_KIND = (
    r"(?:(?:the|a|an)\s+)?"
    r"(?:(?-i:(?:defined\s+)?(?:term|terms|word|phrase|expression|abbreviation|acronym))\s+)?"
)
_ASKS = [
    re.compile(
        rf"^\s*what\s+(?:does|do|did)\s+{_KIND}{_TERM}\s+(?:mean|refer\s+to|stand\s+for|denote)\b(?!\s+by\b)",
        re.I,
    ),
    re.compile(rf"^\s*what\s+is\s+(?:meant|understood|intended)\s+by\s+{_KIND}{_TERM}{_TAIL}", re.I),
    re.compile(rf"^\s*how\s+(?:is|are|was|were)\s+{_KIND}{_TERM}\s+defined\b", re.I),
    re.compile(
        rf"^\s*how\s+does\s+(?:the|this|that)\s+[\w\s-]{{1,40}}?\s+define\s+{_KIND}{_TERM}{_TAIL}", re.I
    ),
    re.compile(
        rf"^\s*(?:what\s+is\s+|give\s+)?the\s+(?:definition|meaning)\s+of\s+{_KIND}{_TERM}{_TAIL}", re.I
    ),
    re.compile(rf"^\s*define\s+{_KIND}{_TERM}{_TAIL}", re.I),
    re.compile(rf"^\s*what\s+(?:is|are)\s+{_KIND}{_TERM}\s*,?\s+as\s+(?:defined|used)\b", re.I),
]
# "What is the Development Term under the agreement?", "Who is SpinCo?": a definition question only where
# the term is quoted
# or capitalised and the document defines it
_WHAT_IS = re.compile(rf"^\s*(?:what|who)\s+(?:is|are)\s+(?:(?:the|a|an)\s+)?{_TERM}{_TAIL}", re.I)
_CAPITALISED = re.compile(r"(?:[A-Z][\w&/-]*|of|and|for|to)(?:\s+(?:[A-Z][\w&/-]*|of|and|for|to))*$")

# after a quoted term, what makes the sentence its definition: the verb, its definiens after it
_AS_USED = r"(?:,?\s*(?:as\s+used\s+(?:herein|in\s+this\s+\w+)|when\s+used\s+herein|herein)\s*,?)?"
_ALSO_QUOTED = r"(?:\s*(?:,|or|and|and/or)\s*(?:the\s+terms?\s+)?[“\"‘'][^“”\"‘’]{1,80}[”\"’'])*"
_VERB = re.compile(
    rf"^[”\"’']?{_ALSO_QUOTED}{_AS_USED}\s*(?:\([^()]{{0,200}}\)\s*)?{_AS_USED}\s*"
    r"(?P<verb>(?:shall|will|should|is|are|as|can|may)?\s*(?:be\s+)?(?:"
    r"means?|refers?\s+to|(?:has|have)\s+the\s+meanings?|includes?|"
    r"(?:is|are)\s+defined(?:\s+as)?|defined\s+(?:as|to\s+include)|"
    r"(?:is|are)\s+used\s+(?:herein\s+)?to\s+(?:refer(?:\s+to)?|mean|denote|describe|include)|denotes?|"
    r"describes?|encompass(?:es)?|embraces?|identifies|(?:(?:is|are)\s+synonymous\s+and\s+)?mean|"
    r"(?:is|are)\s+synonymous\s+with|"
    r"(?:is|are)\s+(?:usually\s+|generally\s+|herein\s+)?intended\s+to\s+(?:mean|include|refer\s+to|embrace)"
    r"|(?:is|are)\s+understood\s+to\s+(?:mean|refer\s+to)|(?:broadly\s+)?interpreted\s+as\s+referring\s+to)"
    r"|:)(?=[\s,:])[\s,:]*",
    re.I,
)
# 'By the term "X" we mean …', 'By "X" is meant …'
_BY_TERM = re.compile(r"\bby\s+(?:the\s+terms?\s+)?$", re.I)
_WE_MEAN = re.compile(r"^[”\"’']?,?\s*(?:we\s+mean|is\s+meant|are\s+meant|it\s+is\s+meant)\s*", re.I)
# a definition that points elsewhere: "has the meaning given in Section 3"
_POINTER = re.compile(
    r"\bmeanings?\s+(?:given|set\s+forth|ascribed|assigned|specified|provided)|\bas\s+defined\s+in", re.I
)
# inside the parentheses before the quote ("(the “Effective Date”)", "(collectively, “Inventions”)")
_INLINE_LEAD = re.compile(r"\(([^()]{0,120})$")
_INLINE_REF = re.compile(
    r"(?:such\s+\w+(?:\s+\w+)?\s*,\s*)?"
    r"(?:hereinafter|herein|also|sometimes|jointly|collectively|individually|each|together)?[\s,:]*"
    r"(?:(?:referred\s+to|known|called|termed)\s+(?:herein\s+)?(?:jointly\s+|collectively\s+)?as\b\s*)?"
    r"(?:the|this|a|an)?\s*$",
    re.I,
)
# where what the parenthesis names begins, walking back from it: a comma ends it, but not one before a
# company's form or a year ("Acme, Inc.", "May 1, 2019")
_COMMA = (
    r",(?!\s*(?:Inc|Incorporated|LLC|L\.L\.C|Ltd|Limited|Corp|Corporation|N\.A|S\.A|S\.A\.S|B\.V|GmbH|"
    r"L\.P|LP|plc|PLC|\d{4})\b)"
)
_WORDS = (
    r"\b(?:between|among|by|with|as\s+of|dated|is|are|was|were|be|been|means|into|that|which|who|whereby|"
    r"hereby|shall|will|may|than|under|within|called|named|to|at|during|including)\b"
)
_STOP_WORDS = re.compile(rf"(?:^|[;:(]|{_COMMA}|{_WORDS})\s*")
# a list named collectively ("employees, agents … and contractors (collectively, the “Representatives”)")
# runs on over its commas
_LIST_STOP_WORDS = re.compile(rf"(?:^|[;:(]|{_WORDS})\s*")
# a preposition or conjunction the phrase named opens with ("During the period …", "and Allied …")
_LEADING = re.compile(r"^(?:and|or|during|for|from|in|on|at|upon|within|of)\s+", re.I)
# a phrase that opens with a word in lower case before its determiner opens with a verb ("maintain such
# offices", "buy the products listed …"): what is named begins at the determiner
_DETERMINERS = r"(?:the|a|an|such|this|these|those|any|all|each|its|their|certain)"
_AFTER_VERB = re.compile(
    rf"^(?!{_DETERMINERS}\b)[a-z][\w-]*(?:\s+(?:and|or)\s+[a-z][\w-]*)?\s+(?={_DETERMINERS}\s)"
)
_APPOSITIVE = re.compile(
    r"^(?:a|an)\s.*\b(?:corporation|company|partnership|entity|organization|bank|association|organized|"
    r"incorporated|LLC|limited)\b",
    re.I,
)


@dataclass
class Definition:
    """A sentence defining a term: what it says the term means, and whether it only points elsewhere."""

    segment_id: str
    sentence: str
    meaning: str
    inline: bool
    pointer: bool


def asked_term(question: str) -> str | None:
    """The term a question asks the definition of, or None; a bare "What is the X?" or "Who is X?" names its
    term quoted or capitalised ("What is the Development Term?", "Who is “SpinCo”?"), and is a definition
    question only where X is defined."""
    for rx in _ASKS:
        if m := rx.match(question):
            return _clean(m.group("term"))
    m = _WHAT_IS.match(question)
    if m is None:
        return None
    raw = m.group("term").strip()
    quoted = question[m.start("term") - 1 : m.start("term")] in _OPEN
    return _clean(raw) if quoted or _CAPITALISED.match(raw) else None


def _clean(term: str) -> str | None:
    term = term.strip().strip(_OPEN + _CLOSE).strip(" ,.;:")
    return term or None


def _norm(term: str) -> str:
    """A term as compared: lower case, one space, "Non- Compete" as "non-compete", no closing stop, no
    optional plural ("Merchant(s)", "Tax(es)")."""
    term = re.sub(r"(?<=\w)-\s+(?=\w)", "-", " ".join(term.split())).lower()
    return re.sub(r"\(e?s\)$", "", term.replace("’", "'").strip(" ,.;:"))


def _variants(term: str) -> list[str]:
    """The term, then its singulars or plural (a question's "Affiliates" for a defined "Affiliate")."""
    t = _norm(term)
    return [t, t[:-2], t[:-1]] if t.endswith("es") else [t, t[:-1] if t.endswith("s") else t + "s"]


def definitions(passages: list[Passage], term: str) -> list[Definition]:
    """Every sentence of the passages that defines `term`, in the text's order; only where the term as asked
    is defined nowhere, those defining its singular or plural ("PCD" is not "PCDs")."""
    # each sentence's quoted terms, read once for all the forms tried
    units = [
        (segment_id, sentence, [(_norm(m.group(1) or m.group(2)), m) for m in _QUOTED.finditer(sentence)])
        for _, segment_id, sentence in sentences_of(passages)
    ]
    for form in _variants(term):
        unquoted = _unquoted_term(form)
        found = []
        for segment_id, sentence, quoted in units:
            at = (_defined_at(sentence, m.start(), m.end(), segment_id) for q, m in quoted if q == form)
            d = next(filter(None, at), None)
            if d is not None or (d := _unquoted(sentence, unquoted, segment_id)) is not None:
                found.append(d)
        if found:
            return found
    return []


def _defined_at(sentence: str, a: int, b: int, segment_id: str) -> Definition | None:
    """The definition the quoted term at [a, b) of the sentence opens or closes, or None."""
    before, after = sentence[:a], sentence[b:]
    if _BY_TERM.search(before) and (m := _WE_MEAN.match(after)):
        return Definition(segment_id, sentence, _meaning(after[m.end() :]), False, False)
    if m := _VERB.match(after):
        meaning = after[m.start("verb") :] if _POINTER.search(after[: m.end() + 40]) else after[m.end() :]
        pointer = _POINTER.search(meaning[:60]) is not None
        return Definition(segment_id, sentence, _meaning(meaning), False, pointer)
    lead = _INLINE_LEAD.search(before)
    closes = re.match(r"[”\"’']?\s*\)", after)
    if lead and closes and _INLINE_REF.fullmatch(_QUOTED.sub("", lead.group(1)).strip(" ,")):
        listed = re.search(r"\b(?:collectively|together)\b", lead.group(1), re.I) is not None
        named = _named(before[: lead.start()], listed, _QUOTED.match(sentence, a)[0].strip(_OPEN + _CLOSE))
        return Definition(segment_id, sentence, named, True, False)
    if cue := re.search(
        r"(?<!-)\b(?:hereinafter|referred\s+to|known|called|termed)\b[\w\s,:]{0,40}$", before, re.I
    ):
        return Definition(segment_id, sentence, _named(before[: cue.start()]), True, False)
    return None


def _unquoted_term(term: str) -> re.Pattern[str]:
    """A sentence opening with `term` unquoted, after its number or "the term"."""
    words = r"\s+".join(re.escape(w) for w in term.split())
    return re.compile(
        rf"^\s*(?:(?:\d+(?:\.\d+)*\.?|\([a-z0-9]+\))\s*)?"
        rf"(?:(?:as\s+used\s+herein,?\s*)?the\s+terms?\s+)?{words}\b",
        re.I,
    )


def _unquoted(sentence: str, term: re.Pattern[str], segment_id: str) -> Definition | None:
    """'The term antisense refers to …', '1.1 Affiliate means …': a definition whose term (`_unquoted_term`)
    is not quoted."""
    m = term.match(sentence)
    verb = _VERB.match(sentence[m.end() :]) if m else None
    if verb is None or verb.group("verb").strip() in (":", ""):
        return None
    return Definition(segment_id, sentence, _meaning(sentence[m.end() + verb.end() :]), False, False)


def _meaning(text: str) -> str:
    """A definiens as printed, without the sentence's closing stop (nor a sentence after a quotation's stop
    that the sentence cut left on: '… is synonymous with “die swell.” The processability …')."""
    text = re.split(r"(?<=[.!?][”\"])\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]
    return text.strip(":").strip().rstrip(".;").strip()


def _named(before: str, listed: bool = False, term: str = "") -> str:
    """What a parenthesis names: the words an acronym `term` spells ("the guaranteed minimum pension
    (“GMP”)"), else the text before it back to where its phrase begins (over the commas of a list named
    collectively); an appositive ("… Allied Esports International, Inc., a Nevada corporation (“Allied”)")
    gives way to the name before it."""
    text = before.rstrip(" ,")
    if amended := re.search(r",?\s*as\s+amended$", text):  # "the Investment Company Act of 1940, as amended"
        return _named(text[: amended.start()], listed, term) + text[amended.start() :]
    if spelled := spelled_out(text, term):
        return spelled
    stops = _LIST_STOP_WORDS if listed else _STOP_WORDS
    # a parenthesis inside the phrase ("using dextrose (defined as glucose) and/or sucrose") holds no stop
    masked = re.sub(r"\([^()]*\)", lambda m: "#" * len(m.group()), text)
    starts = [m.end() for m in stops.finditer(masked) if m.end() < len(text)]
    start = starts[-1] if starts else 0
    named = _LEADING.sub("", text[start:].strip(" ,"))
    if _APPOSITIVE.match(named) and start > 0:
        return _named(text[:start].rstrip(" ,")) or named
    if not listed and (m := _AFTER_VERB.match(named)):
        return named[m.end() :]
    return named


_MINOR = frozenset("of and the for on in to de dei del della delle di e".split())


def spelled_out(text: str, term: str) -> str | None:
    """The words ending `text` whose initials spell the acronym `term` ("the Securities and Exchange
    Commission" for "SEC", "European Union (Withdrawal) Act 2018" for "EUWA"), minor words between them and a
    "the" before them kept; None when `term` is no acronym or they spell none."""
    letters = "".join(ch for ch in term if ch.isupper()).lower()
    if len(letters) < 2 or not re.fullmatch(r"[A-Z][A-Za-z&]{1,7}", term):
        return None
    start, i = None, len(letters) - 1
    for m in reversed(list(re.finditer(r"[A-Za-z][\w'’-]*", text))):
        word = m.group(0)
        if i < len(letters) - 1 and word.lower() in _MINOR:
            continue
        if word[0].lower() != letters[i]:
            return None
        start, i = m.start(), i - 1
        if i < 0:
            the = re.search(r"\bthe\s+$", text[:start], re.I)
            return text[the.start() if the else start :].strip()
    return None


def definition_answer(
    question: str, passages: list[Passage]
) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(definition, "span", the sentences stating it) of the term the question asks about, from the
    document's passages; None when the question asks no definition or the document defines no such term."""
    term = asked_term(question)
    found = definitions(passages, term) if term else []
    if not found:
        return None
    stated = [d for d in found if not d.inline and not d.pointer]
    inline = [d for d in found if d.inline]
    pointers = [d for d in found if d.pointer]
    best = (stated or inline or pointers)[0]
    shown = [best, *(pointers[:1] if best.inline and pointers else [])]
    return best.meaning or best.sentence, "span", [(d.segment_id, d.sentence) for d in shown]
