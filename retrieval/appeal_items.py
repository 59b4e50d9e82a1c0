"""Questions asking which items of the judgment below a second instance or a retrial upheld, set aside or
changed (二审维持了一审判决的哪几项？一审判决哪几项被撤销？再审变更了原判决的哪一项？一审判决第三项是否被撤销？).

A later instance disposes of the judgment below item by item, each in an item of its own ruling: 一、维持…
（2017）辽0103民初16901号民事判决第一项、第三项；二、撤销…第二项、第四项；三、变更…第二项为：…；or of the whole
of it (驳回上诉，维持原判; 撤销…民事判决；). A retrial may dispose of two judgments at once (撤销 the second instance's, 维持
items of the first's); the case number tells them apart (民初 a first instance, 民终 a second). The
search-and-read path answered these with whichever item looked most like the question.
`items_answer(question, blocks)` reads the question's verb, the instance it names and the item it asks about,
and the VERDICT blocks of the judgment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.analysis.zh_numbers import cn_int
from retrieval.hybrid import Passage, sentences_of
from retrieval.text import ZH_WHETHER

_VERB = {"维持": "维持", "撤销": "撤销", "变更": "变更", "改判": "变更"}
_ASKED_VERB = re.compile("|".join(_VERB))
_WHICH = re.compile(r"哪(?:几|一|些)?(?:个|些)?(?:判项|项)|哪些(?:内容|部分)|第几项")
_ASKED_ITEM = re.compile(r"第([一二三四五六七八九十]{1,3})项")
# the judgment disposed of, as the question names it: 一审判决 (a first instance, 初), 二审判决 (终); 原判 either
_REFERENCED = re.compile(r"(一审|二审)(?:法院)?的?(?:民事|刑事)?(?:判决|裁定)")
_INSTANCE_MARK = {"一审": "初", "二审": "终"}
# an item of the ruling that disposes of the judgment below, and the case number it names
_DISPOSES = re.compile(r"^\s*(?:[一二三四五六七八九十]{1,3}[、.．])?\s*(维持|撤销|变更)")
_WHOLE_UPHELD = re.compile(r"驳回(?:上诉|抗诉)[^。；]{0,20}?维持(?:原|一审|原审)")
_CASE = re.compile(r"[（(]\d{4}[）)][^号；;。]{1,30}?号")
_NUMBER = r"[（(]?[一二三四五六七八九十]{1,3}[）)]?"
# 第一项、第三项 / 第一至第七项、第九项 / 第八、第十项 / 第一、二、四项 / 第（一）、（三）项
_LIST = re.compile(rf"第{_NUMBER}项?(?:(?:至|、|，|和|及|与)第?{_NUMBER}项?)*")
# where an item's own words end and what it quotes or the new wording begins (即…, ：…, 为：…)
_SCOPE_END = re.compile(r"即|[：:]|为")
_JUDGMENT = re.compile(r"判决|裁定|原判")


@dataclass(frozen=True)
class Disposal:
    """One item of a later instance's ruling disposing of the judgment below."""

    verb: str  # 维持 / 撤销 / 变更
    case: str  # the case number of the judgment disposed of, "" when the item names none (维持原判)
    items: str  # the items as printed (第一项、第三项; 对上诉人胡建华的量刑部分), "" for the whole judgment
    numbers: frozenset[int]
    unit: tuple[str, str]  # (segment_id, sentence)


@dataclass(frozen=True)
class ItemsAnswer:
    answer: str
    answer_type: str  # field / yes / no
    units: list[tuple[str, str]]


def asked_items(question: str) -> tuple[str, int | None, str | None] | None:
    """(verb, the item asked about for a yes-no question, the instance mark 初 / 终 of the judgment named)
    of a question about which items a later instance upheld, set aside or changed; None for any other."""
    verb = _ASKED_VERB.search(question)
    item = _ASKED_ITEM.search(question)
    polar = ZH_WHETHER.search(question) is not None and item is not None
    if verb is None or not (polar or _WHICH.search(question)):
        return None
    named = [m.group(1) for m in _REFERENCED.finditer(question)]  # the last: 二审判决撤销了一审判决的…
    return (
        _VERB[verb.group()],
        cn_int(item.group(1)) if polar else None,
        (_INSTANCE_MARK[named[-1]] if named else None),
    )


def disposals(blocks: list[Passage]) -> list[Disposal]:
    """The items of the VERDICT blocks that dispose of a judgment below, in the ruling's order; 上述…判决 is
    the one the item before named."""
    out: list[Disposal] = []
    for _, segment_id, sentence in sentences_of([b for b in blocks if b.block_type == "VERDICT"]):
        if _WHOLE_UPHELD.search(sentence):
            out.append(Disposal("维持", "", "", frozenset(), (segment_id, sentence)))
            continue
        m = _DISPOSES.match(sentence)
        if m is None:
            continue
        case = _CASE.search(sentence, m.end())
        previous = out[-1].case if out and "上述" in sentence[m.end() : m.end() + 4] else ""
        scope_start = case.end() if case else m.end()
        end = _SCOPE_END.search(sentence, scope_start)
        scope = sentence[scope_start : end.start() if end else len(sentence)]
        if not _JUDGMENT.search(sentence, m.end(), scope_start + len(scope)):
            continue  # 撤销…股东会决议: what the case is about, not a judgment below
        lists = [x.group() for x in _LIST.finditer(scope) if "项" in x.group()]
        items = "、".join(lists) or _part(scope)
        numbers = frozenset(n for x in lists for n in _numbers(x))
        unit = (segment_id, sentence)
        out.append(Disposal(m.group(1), case.group() if case else previous, items, numbers, unit))
    return out


def _part(scope: str) -> str:
    """The part of a judgment an item disposes of, when it names one: 刑事判决中对上诉人胡建华的量刑部分 → 对上诉人胡建华的
    量刑部分; "" for the whole."""
    at = scope.rfind("部分")
    if at < 0:
        return ""
    start = max(scope.rfind("判决", 0, at), scope.rfind("裁定", 0, at))
    return scope[start + 2 if start >= 0 else 0 : at + 2].lstrip("中的")


def _numbers(listed: str) -> list[int]:
    """The item numbers a printed list names: 第一至第三项、第五项 → 1, 2, 3, 5."""
    out: list[int] = []
    for part in re.split(r"[、，和及与]", listed):
        ends = [cn_int(x) for x in re.findall(r"[一二三四五六七八九十]{1,3}", part)]
        ends = [x for x in ends if x]
        if len(ends) == 2 and "至" in part:
            out.extend(range(ends[0], ends[1] + 1))
        else:
            out.extend(ends)
    return out


def items_answer(question: str, blocks: list[Passage]) -> ItemsAnswer | None:
    """The answer from the judgment's ruling, or None when the question asks no such thing or the ruling
    disposes of no judgment below."""
    asked = asked_items(question)
    found = disposals(blocks) if asked else []
    if not found:
        return None
    verb, item, mark = asked
    named = [d for d in found if not mark or not d.case or mark in d.case] or found
    whole = [d for d in named if d.verb == "维持" and not d.case]  # 驳回上诉，维持原判
    doing = [d for d in named if d.verb == verb]
    if item is not None:
        said = [d for d in named if item in d.numbers or not d.items]  # a whole judgment holds every item
        if not said:
            return None  # the ruling does not say what became of that item
        yes = said[0].verb == verb
        return ItemsAnswer("YES" if yes else "NO", "yes" if yes else "no", [said[0].unit])
    if whole and not [d for d in named if d.case]:
        return ItemsAnswer(
            "全部（维持原判）" if verb == "维持" else "无（维持原判）", "field", [whole[0].unit]
        )
    if not doing:
        return ItemsAnswer("无", "field", [d.unit for d in named[:3]])
    return ItemsAnswer("、".join(d.items or "全部" for d in doing), "field", [d.unit for d in doing])
