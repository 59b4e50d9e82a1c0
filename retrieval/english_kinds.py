"""What an English question asks for (`en_span_kind`): a person, an organisation, a date, a sum, a length
of time, a criminal sentence, an address, a place, a measure, a labelled number or a condition, read from
its wording; the table is tried in order and the first match wins. retrieval.english_spans finds the phrase
of that kind."""

from __future__ import annotations

import re

ASKS_NUMBER = re.compile(
    r"\b(?:what|which) (?:is|was|are|were) the (?:\w+ )?(patent|case|application|publication|serial|docket|"
    r"citation|registration|file) (?:numbers?|no\.?)(?!\w)",
    re.I,
)
# "What did Judge Parfitt decide?" asks what a judge did, not which judge
_NOT_AUX = r"(?!(did|does|do|was|were|is|are|has|have|had|should|must|can|could|would|will|may)\b)"
# --- what a question asks for; tried in order, the first match wins ---------------------------------------
_Q = [
    ("condition", r"^\s*(in (what|which) (case|cases|event)|on what conditions?|subject to what)\b"),
    (
        "date",
        r"^\s*(on |by )?(what|which) (date|day|year)\b|^\s*in what year\b|\bwhat date\b|"
        r"\bdate of (birth|death)\b",
    ),
    ("date", r"^\s*((until|by|since) )?when (was|were|did|is|are|has|had)\b"),
    ("date", r"^\s*when\b.*\b(end|ends|expire|expires|begin|begins|start|starts|commence|commences|due)\b"),
    # "When the Act was passed, what was the time limit?" asks what follows its leading clause
    ("condition", r"^\s*when\b(?![^?]*,\s*(what|which|how|who|where)\b)"),
    (
        "duration",
        r"\bhow long\b|\bhow many (days|weeks|months|years|hours|minutes)\b|"
        r"\bhow much (\w+ )?(notice|time)\b",
    ),
    # "What sentence did he receive?", "What is the maximum penalty for contempt of court?"
    (
        "penalty",
        r"^\s*what (prison |custodial )?sentences?\b|\b(what|which) (is|was) the (maximum |minimum )?"
        r"(penalty|sentence)\b|^\s*what (\w+ )?penalt(y|ies)\b",
    ),
    (
        "duration",
        r"\b(what|which) (\w+ )?(period|term|length|duration)\b|\bwithin what (time|period)\b|"
        r"\b(what|which)\b[^?]*\btime limits?\b",
    ),
    ("number", ASKS_NUMBER.pattern),
    ("age", r"^\s*how old\b|\b(at )?what age\b"),
    (
        "measure",
        r"^\s*how (wide|high|tall|thick|deep|heavy|hot|cold|far|fast|big|large|small)\b|"
        r"\b(what|which) (\w+ )?"
        r"(wavelengths?|temperatures?|frequenc(y|ies)|voltages?|currents?|pressures?|weights?|mass|length|"
        r"width|height|thickness|diameter|depth|speed|velocity|concentrations?|doses?|dosage|distance|size|"
        r"power|resistance|capacity|energy|range)\b",
    ),
    (
        "amount",
        r"(^|[,;:]\s*|^\s*(in|on|at|for|by|to|from|with) )how (much|many)\b|"
        r"\b(what|which) ((is|was|are|were) the )?(\w+ ){0,2}"
        r"(amount|sum|share|percentage|proportion|fraction|fees?|price|rate|cost|fine|salary|compensation|"
        r"consideration|damages|deposit|rent|royalt(y|ies)|premium|wages?|value|bail|figures?)\b|"
        # "what did the policing cost?", "What was the property said to be worth?"
        r"^\s*what (did|does|do|would|will)\b[^?]*\bcost\b|"
        r"^\s*(what|how much)\b[^?]*\bworth\b(?=\s*(\?|$|(at|in|on|now|today|then|to)\b))",
    ),
    (
        "address",
        r"\b(what|which) (is|was|are|were) (the|its|his|her|their) (\w+ )?address(es)?\b|\bwhat address\b",
    ),
    (
        "place",
        # "Where did the judge go wrong?" asks a reason, not a place
        r"^\s*where\b(?!.*\b(go|goes|went|gone) wrong\b|.*\berr(ed|s)?\b)|"
        r"\b(what|which) (city|town|state|country|county|location|venue)\b|"
        # "What place, if any, does a best-interests assessment have …?" asks a role, not a place
        r"\b(what|which) place\b(?!.*\b(have|has|play|plays)\b)|"
        r"\b(what|which|whose) (country's |state's )?laws?\b(?! firm)",
    ),
    (
        "organisation",
        rf"\b(what|which) ({_NOT_AUX}\w+ )?"
        r"(company|firm|court|tribunal|bank|insurer|entity|corporation|employer|"
        r"hospital|agency|authority|university|school|publication|newspaper|magazine|charity|"
        r"(business|trading|trade) name)\b|^\s*(who|whom) (did|does|do)\b.*\bwork for\b",
    ),
    ("person", r"^\s*(who|whom|whose)\b|\bwho\b"),
    (
        "person",
        rf"\b(what|which) ({_NOT_AUX}\w+ )?"
        r"(judges?|justices?|lawyers?|attorneys?|barristers?|counsel|solicitors?|persons?|"
        r"officers?|arbitrators?|witness|signator(y|ies)|prosecutors?|defenders?|trustees?|part(y|ies))\b",
    ),
]
_QUESTION_KINDS = [(kind, re.compile(p, re.I)) for kind, p in _Q]


def en_span_kind(question: str) -> str | None:
    """The kind of phrase an English question asks for, or None (a what-is question, a yes/no one)."""
    return next((kind for kind, pattern in _QUESTION_KINDS if pattern.search(question)), None)
