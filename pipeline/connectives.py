"""Logical connectives and proviso markers (zh + en): character spans, and the per-token mask the model
uses to boost attention on them.

A lexicon entry is a word or phrase. English entries (Latin letters) match case-insensitively as whole
words, so "but" never matches inside "butter". Chinese has no word boundaries, so some entries carry
guards: 但 is not the 但 of 但凡 / 但书 / 但愿 / 不但 / 非但, and 不过 / 可是 only count at the start of a
clause and 不过 not before a number (不过三日 means "only three days"). Guards belong to the word, so a custom
lexicon that lists 但 gets the same guards.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

ZH_CONNECTIVES: tuple[str, ...] = (
    "但是", "但", "然而", "可是", "不过", "除外", "除非", "否则", "即使", "即便", "尽管", "虽然", "虽",
    "反之", "相反", "因此", "据此", "鉴于", "综上所述", "综上",
)  # fmt: skip
EN_CONNECTIVES: tuple[str, ...] = (
    "however", "but", "provided that", "provided always that", "provided however", "provided further that",
    "except", "except that", "except where", "unless", "notwithstanding", "save that", "save where",
    "save as", "save for", "subject to", "whereas", "nevertheless", "nonetheless", "although", "though",
    "even if", "even though", "otherwise", "despite", "in spite of", "on the other hand", "by contrast",
    "conversely", "therefore", "thus", "hence", "accordingly", "consequently",
)  # fmt: skip
DEFAULT_LEXICON: tuple[str, ...] = ZH_CONNECTIVES + EN_CONNECTIVES

# At the start of the text or right after whitespace or punctuation.
_CLAUSE_START = r"(?<![^\s，。；：！？、,.;:!?“”\"'‘’（）()《》【】])"
_GUARDS: dict[str, tuple[str, str]] = {
    "但": (r"(?<![不非])", r"(?![凡书愿])"),
    "不过": (_CLAUSE_START, r"(?![0-9０-９一二三四五六七八九十百千万两几半])"),
    "可是": (_CLAUSE_START, ""),
}
# A clause runs from its connective up to the next punctuation mark or line break.
_CLAUSE_END = re.compile(r"[，。；：！？、,.;:!?\n]")


def _entry_pattern(entry: str) -> str:
    words = [re.escape(w) for w in entry.split()]
    body = r"\s+".join(words)
    if entry.isascii():
        return rf"(?<![A-Za-z]){body}(?![A-Za-z])"
    before, after = _GUARDS.get(entry, ("", ""))
    return before + body + after


@dataclass(frozen=True)
class _Entry:
    head: str  # the lower-cased first word, found by plain substring search
    pattern: re.Pattern[str]  # the whole entry with its guards, matched where the head was found


@functools.lru_cache(maxsize=8)
def _compiled(lexicon: tuple[str, ...]) -> tuple[_Entry, ...]:
    words = sorted({e.strip() for e in lexicon if e.strip()})
    return tuple(_Entry(w.split()[0].lower(), re.compile(_entry_pattern(w), re.IGNORECASE)) for w in words)


def find_connectives(text: str, lexicon: tuple[str, ...] | list[str] | None = None) -> list[tuple[int, int]]:
    """Character spans of the connectives in `text`, in order, longest first where two overlap
    ("provided that" over "provided", 但是 over 但); None = the built-in lexicon."""
    entries = _compiled(tuple(lexicon) if lexicon is not None else DEFAULT_LEXICON)
    # One big alternation regex is ~10x slower on long judgments than a substring search per entry.
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters change length when lower-cased
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    found = []
    for entry in entries:
        pos = lowered.find(entry.head)
        while pos >= 0:
            m = entry.pattern.match(text, pos)
            if m:
                found.append(m.span())
            pos = lowered.find(entry.head, pos + 1)
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0], -span[1])):
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    return spans


def clause_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each connective span widened to the end of the clause it opens."""
    out = []
    for start, end in spans:
        stop = _CLAUSE_END.search(text, end)
        out.append((start, stop.start() if stop else len(text)))
    return out


def token_mask(
    text: str, spans: list[tuple[int, int]], offsets: list[tuple[int, int]], clause: bool = False
) -> list[bool]:
    """The per-token connective flags (tokens given by their character offsets), causal: a flag sits on
    the first token that ends past a connective, because only there is it settled that the connective
    is complete (that "subject" is "subject to", that 但 is not 但是 or 但书, that "but" is not "butter").
    A flag on the connective itself would tell the model the token that follows it. With `clause`, every
    later token of the clause is flagged too, up to its closing punctuation."""
    mask = np.zeros(len(offsets), dtype=bool)
    if not spans or not offsets:
        return mask.tolist()
    ends = np.asarray(offsets, dtype=np.int64)[:, 1]
    starts = np.asarray(offsets, dtype=np.int64)[:, 0]
    stops = clause_spans(text, spans) if clause else spans
    for (_, done), (_, stop) in zip(spans, stops, strict=True):
        first = int(np.searchsorted(ends, done, side="right"))  # the first token ending past the connective
        if first < len(offsets):
            mask[first] = True
            if clause:
                mask[first:] |= starts[first:] < stop
    return mask.tolist()
