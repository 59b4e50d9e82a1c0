"""Provisos (但书) and the clause each one restricts, as character spans over a block's text.

A proviso is a connective with a scope: 但…的除外 / 但…不在此限 carve an exception out of the clause
before them in the same sentence; "provided that", "except where", "unless", "save that" do the same in
English, and a sentence-initial 除…外 / "Unless …," / "Subject to …," restricts the clause after it.
The plain adversatives (但是 with no closing 除外, however) are connectives, not provisos, and are left
to the segmenter's connective marks. Markers are found with the segmenter's lexicon
(`pipeline.connectives`, guards included: 但凡 is no 但); this module adds only the proviso structure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.connectives import find_connectives

# The closing words make 但… a proviso rather than a mere "but".
_ZH_CLOSER = re.compile(r"[^。！？；]*?(?:的除外|除外|不在此限)")
_ZH_OPENERS = {"但", "但是"}
_ZH_LEADING = re.compile(r"除([^。！？，；]{1,60}?)(?:以)?外[，,]")
# Connectives of the lexicon that open an exception rather than a contrast or a conclusion.
_EN_PROVISO = re.compile(r"^(provided|except|unless|save|subject to|notwithstanding)", re.IGNORECASE)
# The lexicon lists "provided however"; contracts punctuate it ("provided, however, that"), which is the
# same marker, so that spelling is matched here as part of the proviso structure.
_EN_PROVIDED = re.compile(r"\bprovided\s*,?\s*(?:however|always|further)?\s*,?\s*that\b", re.IGNORECASE)
_EN_LEADING = re.compile(
    r"^\s*(Unless|Subject to|Except (?:where|as|when)|Save (?:where|as)|Notwithstanding)\b"
)
_ZH_SENTENCE = re.compile(r"[^。！？]+[。！？]?")
_EN_SENTENCE = re.compile(
    r".+?(?:(?<!\b[A-Z])(?<!\bv)(?<!\bNo)(?<!\bs)[.!?](?=\s+[A-Z(“\"‘]|\s*$)|$)", re.DOTALL
)


@dataclass(frozen=True)
class Proviso:
    marker: str  # normalised: 但…除外, 除…外, provided that, unless …
    proviso: tuple[int, int]  # the exception, relative to the text given
    restricted: tuple[int, int]  # the clause it restricts


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a span past surrounding blanks and clause punctuation."""
    while start < end and (text[start].isspace() or text[start] in "，,；;：:"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in "，,；;：:。."):
        end -= 1
    return start, end


def _zh(text: str) -> list[Proviso]:
    out = []
    connectives = find_connectives(text)
    for sent in _ZH_SENTENCE.finditer(text):
        s0, s1 = sent.span()
        for a, b in connectives:
            if not (s0 <= a < s1) or text[a:b] not in _ZH_OPENERS:
                continue
            closer = _ZH_CLOSER.match(text, b, s1)
            restricted = _strip(text, s0, a)
            if closer and restricted[1] > restricted[0]:
                kind = "不在此限" if closer.group().endswith("不在此限") else "除外"
                out.append(Proviso(f"但…{kind}", (a, closer.end()), restricted))
        lead = _ZH_LEADING.match(text, s0) or _ZH_LEADING.match(text, _strip(text, s0, s1)[0])
        if lead:
            rest = _strip(text, lead.end(), s1)
            if rest[1] > rest[0]:
                out.append(Proviso("除…外", (lead.start(), lead.end() - 1), rest))
    return out


def _clause_end(text: str, start: int, stop: int) -> int:
    """End of the clause that opens at `start`: the next comma, semicolon or the sentence end."""
    m = re.compile(r"[;,]").search(text, start, stop)
    return m.start() if m else stop


def _en(text: str) -> list[Proviso]:
    out = []
    markers = {a: b for a, b in find_connectives(text) if _EN_PROVISO.match(text[a:b])}
    for m in _EN_PROVIDED.finditer(text):
        markers[m.start()] = m.end()
    previous = (0, 0)
    for sent in _EN_SENTENCE.finditer(text):
        s0, s1 = sent.span()
        lead = _EN_LEADING.match(text, s0)
        if lead:
            comma = text.find(",", lead.end(), s1)
            if comma > 0:
                rest = _strip(text, comma + 1, s1)
                if rest[1] > rest[0]:
                    out.append(Proviso(lead.group(1).lower(), _strip(text, lead.start(1), comma), rest))
        for a, b in sorted(markers.items()):
            if not (s0 <= a < s1) or (lead and a == lead.start(1)):
                continue
            marker = re.sub(r"\s+", " ", text[a:b].lower())
            if marker.startswith("provided"):
                if not _EN_PROVIDED.match(text, a):
                    continue  # "as provided in clause 3" restricts nothing
                marker, end = "provided that", s1  # a proviso governs the rest of its sentence
            else:
                end = _clause_end(text, b, s1)
            restricted = _strip(text, s0, a)
            if restricted[1] - restricted[0] < 3:
                # "Provided that …" opening its own sentence restricts the sentence before it
                if not marker.startswith("provided") or previous[1] <= previous[0]:
                    continue
                restricted = previous
            out.append(Proviso(marker, _strip(text, a, end), restricted))
        previous = _strip(text, s0, s1)
    return out


def find_provisos(text: str, language: str) -> list[Proviso]:
    """Every proviso in one block's text, in reading order."""
    found = _zh(text) if language == "zh" else _en(text)
    return sorted(found, key=lambda p: p.proviso)
