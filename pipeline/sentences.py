"""Sentence ends in Chinese and English legal text, as character spans that tile the text.

A sentence ends after 。！？； (with any closing quotes or brackets), after . ! ? ; followed by a space, a
line end or a Han character, at a blank line, at a line end after Chinese text, and before a line that
starts a numbered item. A period does not end a sentence after a legal abbreviation (v., No., s., para.,
Ltd., e.g. ...), after a single capital (initials: "J. Smith"), after a number that labels an item at
the start of a line ("1. The appeal ..."), or when the next word starts lower-case ("approx. five").
Whitespace after an end belongs to the sentence before it, so every sentence starts with its first word.
"""

from __future__ import annotations

import re

ABBREVIATIONS: frozenset[str] = frozenset(
    """
    v vs No Nos no nos s ss S SS Art Arts art arts para paras Para Paras p pp r rr reg regs Reg Regs
    Sch sch Sec sec Secs Ch ch Cl cl Pt pt Vol vol Fig Figs fig figs Ex Exh App Civ Crim Cr Supp Cir
    Mr Mrs Ms Dr Prof Hon Rev Jr Sr St Mt Ltd Co Corp Inc Bros Plc plc Pty LLP cf e.g i.e viz al etc
    approx Id id ibid Ibid op cit seq n nn Ord Ed ed eds Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec
    U.S U.K E.U U.S.C C.F.R
    """.split()
)

# A numbered item at the start of a line: 1.  1．  1、  (a)  （一）  一、  (iv)
_ITEM = r"(?:\d{1,3}[.．、)]|\(\w{1,4}\)|（[一二三四五六七八九十\d]{1,3}）|[一二三四五六七八九十]{1,3}、)"
_CLOSERS = "”’\"'」』）)】]"
_CLOSER_CLASS = "[" + re.escape(_CLOSERS) + "]"
_END = re.compile(
    rf"[。！？；]+{_CLOSER_CLASS}*"  # Chinese ends
    rf"|[.!?;]+{_CLOSER_CLASS}*(?=\s|$|[\u4e00-\u9fff])"  # Latin ends before a space, the end or Han
    r"|\n[ \t\u3000]*\n"  # a blank line
    r"|(?<=[\u4e00-\u9fff，：）】」』])\n"  # a line end after Chinese text
    rf"|\n(?=[ \t\u3000]*{_ITEM})"  # the line before a numbered item
)
_WORD_BEFORE_DOT = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_SPACE = re.compile(r"\s*")
# An item number ("1" of "1. The appeal"): at the text's or a line's start, or right after a sentence end.
_ITEM_NUMBER = re.compile(r"(?:^|\n|[.!?;:。；：]\s+)[ \t\u3000]*\(?\d{1,3}$")


def period_continues(text: str, start: int, end: int) -> bool:
    """Whether the period run text[start:end] sits inside a sentence rather than ending it."""
    if text[start:end].rstrip(_CLOSERS) != ".":
        return False  # "?!", "...", ";" end as written
    nxt = _SPACE.match(text, end).end()
    if nxt < len(text) and (text[nxt].islower() or text[nxt].isdigit()):
        return True
    word = _WORD_BEFORE_DOT.search(text, max(0, start - 24), start + 1)
    if word:
        w = word.group(1)
        return w in ABBREVIATIONS or (len(w) == 1 and w.isupper()) or "." in w
    return _ITEM_NUMBER.search(text, max(0, start - 12), start) is not None


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Consecutive (start, end) spans covering `text`; each ends at a sentence end or at the text's end."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        if m.group()[0] == "." and period_continues(text, m.start(), m.end()):
            continue
        end = _SPACE.match(text, m.end()).end()
        if end > start:
            spans.append((start, end))
            start = end
    if start < len(text):
        spans.append((start, len(text)))
    return spans
