"""Questions asking a civil judgment's focus of dispute (争议焦点): "本案的争议焦点是什么？", "二审的争议焦点有哪些？",
"一审法院归纳的争议焦点是什么？".

The court states it once, in set words, where its reasoning begins: 本案的争议焦点为：1、…；2、…, 本案二审争议焦点为：…,
本院归纳本案争议焦点为…, 争议焦点主要在于…, or "… 是本案的争议焦点". A judgment of a later instance also reports the focus
the court below drew (一审法院认为：…本案争议焦点为…), and a party may name one in its grounds (上诉称…争议焦点在于…).
`asks_focus(question)` reads whether a question asks it; `focus_answer(question, passages)` answers with the
focus as printed, its numbered items together, stated by the court the question names (by default the
judgment's own, else the only one stated), and shows the sentences stating it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.analysis.zh_numbers import cn_int
from retrieval.hybrid import Passage, sentences_of

_ASKS = re.compile(r"争议(?:的)?焦点|焦点问题")
# the court whose focus a question asks: the first instance's, the second's (of a retrial), or the judgment's
# own
_FIRST = re.compile(r"一审|原审")
_SECOND = re.compile(r"二审法院|原二审|二审判决")
# a statement of the focus: 争议焦点(问题)(主要)(归纳)为：… / 是 / 在于 / 有
_STATES = re.compile(
    r"争议(?:的)?焦点(?:问题)?(?:主要)?(?:归纳|确定|概括|总结)?(?:为|是|在于|即在于|有|包括)"
    r"(?:如下)?(?:[一二两三四五六七八九十\d]{1,2}(?:个)?(?:方面|点|项))?\s*[:：]?|争议焦点\s*[:：]"
)
# a statement that names the first instance's focus itself: 本案一审的争议焦点为, 一审中本案的争议焦点为
_OF_FIRST = re.compile(r"(?:一审|原审)[^，。；]{0,6}争议")
# "… 是本案的争议焦点": the focus before its name
_NAMED_AFTER = re.compile(r"^(?:因此|故|综上)?[，,]?(.{6,}?)(?:是|为)本案(?:二审)?(?:的)?争议焦点")
# what follows a focus's name that is no focus: 并评析如下, 问题发表了意见
_NO_FOCUS = re.compile(r"^(?:并|如下|评析|进行|发表|问题发表|已进行|判定)")
# who speaks in a paragraph: a court below, or a party
_FIRST_COURT = re.compile(r"^\s*(?:一审法院|原审法院|一审判决|原判决|一审)(?:认为|查明|经审理)")
_SECOND_COURT = re.compile(r"^\s*(?:二审法院|原二审法院)(?:认为|经审理)")
_PARTY = re.compile(r"^\s*[^，。]{0,40}?(?:上诉称|诉称|辩称|申请再审称|答辩称)")
# the court below named as 该院 ("该院认为", "故该院确定本案案由为…"): its words, reported
_THAT_COURT = re.compile(r"该院(?:认为|确定|经审理)")
# an item of a list of focuses: 1、 2． 二、 （二）
_ITEM = re.compile(
    r"^\s*(?:\d{1,2}\s*[、．.]|[一二三四五六七八九十]{1,3}\s*、|[（(][一二三四五六七八九十\d]{1,3}[)）])"
)


@dataclass(frozen=True)
class Focus:
    """What `focus_answer` read: the focus as printed, and the sentences stating it."""

    answer: str
    answer_type: str
    units: list[tuple[str, str]]


def asks_focus(question: str) -> bool:
    return _ASKS.search(question) is not None


def _court_asked(question: str) -> str:
    """ "first" (一审 / 原审), "second" (二审法院 of a retrial) or "own"."""
    if _SECOND.search(question):
        return "second"
    return "first" if _FIRST.search(question) else "own"


def _speaker(paragraph: str) -> str:
    """Whose words a paragraph holds: "first", "second", "party" or "own"."""
    if _FIRST_COURT.match(paragraph) or _THAT_COURT.search(paragraph):
        return "first"
    if _SECOND_COURT.match(paragraph):
        return "second"
    return "party" if _PARTY.match(paragraph) else "own"


def _item_number(text: str) -> tuple[str, int] | None:
    """(style, number) of the item a sentence opens: 2、 is ("digit", 2), 二、 ("numeral", 2)."""
    m = _ITEM.match(text)
    if m is None:
        return None
    mark = m.group(0).strip("（()）、．. ")
    if mark.isdigit():
        return "digit", int(mark)
    number = cn_int(mark)
    return ("numeral", number) if number else None


def _continues(first: str, last: str, nxt: str) -> bool:
    """The next sentence goes on with a focus that opened with `first`: after an item's "；", the next item
    of its list (even after a full stop: "1、…问题。2、…问题。"), or one more question after a question
    ("涉案决议是否成立？一审判决是否同案不同判？", "1、原告主体是否适格？原告是否…？2、…")."""
    opened, last_item, item = _item_number(first), _item_number(last), _item_number(nxt)
    if opened and item and item[0] == opened[0] and item[1] == (last_item or opened)[1] + 1:
        return True
    if last.endswith("。"):
        return False
    return (
        last.endswith("；") or item is not None or (last.endswith(("？", "?")) and nxt.endswith(("？", "?")))
    )


def _statements(passages: list[Passage]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(speaker, focus, its sentences) of every statement of a focus in the judgment, in the text's order."""
    units = sentences_of(passages)
    found = []
    for n, (i, segment_id, sentence) in enumerate(units):
        m = _STATES.search(sentence)
        if m and not _NO_FOCUS.match(sentence[m.end() :]) and sentence[m.end() :].strip("。；："):
            text, shown = sentence[m.end() :], [(segment_id, sentence)]
            first = text.lstrip("：: ")
            for j, seg, nxt in units[n + 1 :]:  # its items the sentence cut left in the sentences after it
                if j != i or not _continues(first, shown[-1][1] if len(shown) > 1 else first, nxt):
                    break
                text += nxt
                shown.append((seg, nxt))
        elif named := _NAMED_AFTER.match(sentence):
            text, shown = named.group(1), [(segment_id, sentence)]
        else:
            continue
        speaker = "first" if _OF_FIRST.search(shown[0][1]) else _speaker(passages[i].text)
        found.append((speaker, text.strip().lstrip("：:").rstrip("。；").strip(), shown))
    return found


def focus_answer(question: str, passages: list[Passage]) -> Focus | None:
    """The focus of dispute the question asks for, from the judgment's passages (one per block): stated by
    the court the question names, else, for the judgment's own, the only court's focus stated; None when
    it asks none or no court states it."""
    if not asks_focus(question):
        return None
    stated = [s for s in _statements(passages) if s[0] != "party"]
    court = _court_asked(question)
    chosen = [s for s in stated if s[0] == court]
    if not chosen and court == "own" and len({s[0] for s in stated}) == 1:
        chosen = stated
    if not chosen:
        return None
    _, text, shown = chosen[-1] if court == "own" else chosen[0]
    return Focus(text, "sentence", shown)
