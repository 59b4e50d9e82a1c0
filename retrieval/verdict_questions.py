"""Questions about what a Chinese criminal verdict imposed on a defendant (张某犯什么罪？被判处什么刑罚？罚金多少？
是否宣告缓刑？刑期自何时起至何时止？数罪并罚决定执行什么刑罚？), answered from the verdict's item for the
defendant the question names (被告人赵高银犯强奸罪，判处有期徒刑四年（…即自…起至…止）), else the only one;
where the judgment's own verdict has no item (a case report, a second instance upholding the first), from the
ruling its facts report (…作出…刑事判决：一、被告人王某犯抢劫罪，…).

The search-and-read path answers these from whichever sentence looks most like the question: in a verdict of
two defendants "张朝伟被判处有期徒刑几年？" got the other's 四年, "犯什么罪" got 其行为已构成…罪 or a line of the
facts, and a fine stated after the term was not found at all. A verdict item is a formula (被告人X犯Y罪，判处…),
so it is read as one: the item of a defendant in a later instance (原审被告人X犯…) is the last one naming
them, a defendant convicted of several charges has the term 决定执行 after 数罪并罚.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.analysis.consistency import CRIMINAL_PARTY
from retrieval.covers import CoverAnswer
from retrieval.text import ZH_WHETHER

_ASKED_WHETHER = r"(?:是否|有没有|有无|是不是)[^，。？?]{0,8}"  # …whether it was imposed (是否被宣告缓刑)
# why a verdict is what it is, or on what law, is the court's reasoning: a sentence question
_WHY = re.compile(r"为什么|为何|何以|理由|原因|依据|根据")
_ASKS = (
    (
        "charges",
        re.compile(
            r"犯(?:了|有)?(?:什么|何|哪些|哪种|何种|哪个|哪几)(?:种|个|项)?罪"
            r"|(?:构成|认定|定)了?(?:什么|何|哪些|何种|哪种)罪"
        ),
    ),
    (
        "fine",
        re.compile(
            rf"罚金[^，。？?]{{0,6}}(?:多少|数额|金额)|(?:多少|几)[^，。？?]{{0,4}}罚金|{_ASKED_WHETHER}罚金"
        ),
    ),
    (
        "probation",
        re.compile(rf"缓刑[^，。？?]{{0,8}}(?:多久|多长|几年|几个月|期限|考验期)|{_ASKED_WHETHER}缓刑"),
    ),
    (
        "term",
        re.compile(
            r"刑期[^，。？?]{0,6}(?:何时|什么时[候间]|哪一?天|起止|届满|到期|截止)|(?:何时|什么时候)刑满"
        ),
    ),
    (
        "penalty",
        re.compile(
            r"判处?了?(?:什么|何种|哪种|多少|多久|多长|几年)|(?:什么|何种|哪种)(?:刑罚|刑)|判了"
            r"|(?:有期徒刑|拘役|管制)(?:是|为)?(?:多久|多长|几年|几个月|多少)|决定执行"
        ),
    ),
)
# 犯盗窃罪, 犯走私、贩卖、运输、制造毒品罪 (one charge), 犯盗窃罪、诈骗罪 (two)
# 提供侵入、非法控制计算机信息系统程序、工具罪 is one; 掩饰、隐瞒犯罪所得罪 holds 犯罪, 侵犯公民个人信息罪 犯 alone
_CHARGE = r"(?:犯罪|[^\s，,。；;：:（）()“”罪]){1,30}?罪"
_CHARGES = re.compile(rf"犯({_CHARGE}(?:、{_CHARGE})*)")
# a ruling reported in the facts or proceedings, up to the end of its sentence
_REPORTING = ("FACTS", "PROCEDURE")
VERDICT_BLOCKS = ("VERDICT", *_REPORTING)  # the blocks a verdict question reads
_RULED = re.compile(r"判决(?:如下)?[：:]")
_HOW_LONG = re.compile(r"多久|多长|几年|几个月|多少(?:年|个月)")
# what ends a penalty as printed: its note in brackets, the next item, the next sentence
_PENALTY_END = re.compile(r"[（(；;。”\"]")  # a quoted item's closing quote ends it too
_PAYMENT = re.compile(r"[，,]\s*(?:罚金)?(?:限|于|自|在)[^，,]*(?:缴纳|缴清)")  # ，限判决生效后十日内缴纳
_FINE = re.compile(
    r"罚金((?:人民币)?\s*(?:[\d,，.]+\s*万?元|[〇零一二三四五六七八九十百千万两]+元)(?:人民币)?)"
)
_PROBATION = re.compile(
    r"缓刑([〇零一二三四五六七八九十两]+(?:年|个月)(?:[零又]?[一二三四五六七八九十]+个月)?)"
)
_TERM = re.compile(r"(自.{6,16}?起至.{6,16}?止)")  # 即自2017年6月20日起至2021年6月19日止
# what a fine, a probation or a term is read with: the first two from the penalty, the term from the item
_READ = {"fine": _FINE, "probation": _PROBATION, "term": _TERM}


@dataclass(frozen=True)
class Conviction:
    """A defendant's item of a criminal verdict, as printed."""

    defendant: str
    charges: tuple[str, ...]  # 盗窃罪, 贩卖毒品罪
    penalty: str  # 有期徒刑二年六个月，缓刑三年，并处罚金人民币20000元 (决定执行 when several charges)
    item: str  # the item's text, from 被告人X犯 to the next item (its note in brackets may be a block of its own)
    blocks: tuple[tuple[int, int], ...]  # (block_idx, offset in `item` where the block's text starts)

    def block_at(self, offset: int) -> int:
        """The block holding the item's character at `offset`."""
        return next(idx for idx, start in reversed(self.blocks) if start <= offset)


def convictions(blocks: list[tuple[int, str, str]]) -> list[Conviction]:
    """The convictions of the VERDICT blocks among `blocks` ((block_idx, type, text)), else of the rulings
    their facts or proceedings report (a second instance upholding the first, 驳回上诉，维持原判; a case
    report: …作出…刑事判决：一、被告人王某犯抢劫罪，…). The last item naming each defendant is theirs (a later
    instance restates the first's verdict before its own)."""
    verdict = [(idx, text) for idx, kind, text in blocks if kind == "VERDICT"]
    return _items(verdict) or _items(_reported(blocks))


def _reported(blocks: list[tuple[int, str, str]]) -> list[tuple[int, str]]:
    """(block_idx, ruling) of each ruling a FACTS or PROCEDURE block reports, from 判决： to the end of its
    sentence."""
    out = []
    for idx, kind, text in blocks:
        for m in _RULED.finditer(text) if kind in _REPORTING else ():
            end = text.find("。", m.end())
            out.append((idx, text[m.end() : end if end >= 0 else len(text)]))
    return out


def _items(parts: list[tuple[int, str]]) -> list[Conviction]:
    """The convictions of `parts` ((block_idx, text)) read as one text."""
    starts, text = [], ""  # (block_idx, offset) where each part starts in the text
    for idx, part in parts:
        starts.append((idx, len(text)))
        text += part + "\n"
    found: dict[str, Conviction] = {}
    items = list(CRIMINAL_PARTY.finditer(text))
    for i, m in enumerate(items):
        a, b = m.start(), items[i + 1].start() if i + 1 < len(items) else len(text)
        item = text[a:b].strip()
        charges = tuple(dict.fromkeys(c for hit in _CHARGES.finditer(item) for c in _split(hit.group(1))))
        if charges:
            first = max(j for j, (_, start) in enumerate(starts) if start <= a)
            spans = ((starts[first][0], 0),) + tuple((idx, s - a) for idx, s in starts[first + 1 :] if s < b)
            found.pop(m.group(1), None)
            found[m.group(1)] = Conviction(m.group(1), charges, _penalty(item), item, spans)
    return list(found.values())


def _split(charges: str) -> list[str]:
    """盗窃罪、诈骗罪 → 盗窃罪, 诈骗罪; 走私、贩卖毒品罪 is one charge."""
    return [c if c.endswith("罪") else c + "罪" for c in charges.split("罪、")]


def _penalty(item: str) -> str:
    """The penalty of an item as printed: after 决定执行 when it joins several, else after the first 判处, to
    the item's note in brackets (单处罚金… as printed); a fine printed after a semicolon or a note (；并处罚金…)
    is part of it, when to pay is not. 免予刑事处罚 when the item says so."""
    at, imposed = item.rfind("决定执行"), re.search("判处|单处", item)
    if at >= 0:
        text = item[at + len("决定执行") :]
    elif imposed:  # 单处罚金人民币五千元: a fine alone, shown with the word saying so
        text = item[imposed.end() if imposed.group(0) == "判处" else imposed.start() :]
    else:
        return "免予刑事处罚" if "免予刑事处罚" in item else ""
    parts = []
    while text:
        m = _PENALTY_END.search(text)
        parts.append(text[: m.start()] if m else text)
        text = text[m.end() :] if m and m.group(0) != "。" else ""
        if m and m.group(0) in "（(":  # a note inside: 缓刑三个月（缓刑考验期限，从…计算），并处罚金…
            close = re.search(r"[）)]", text)
            text = text[close.end() :].lstrip("，, ") if close else ""
        if not text.lstrip().startswith(("并处", "罚金", "缓刑")):
            break
    return _PAYMENT.sub("", "，".join(p.strip() for p in parts if p.strip()))


def verdict_part(question: str) -> str | None:
    """What a question asks of a criminal verdict (charges, penalty, fine, probation or term), or None;
    a question asking both the charge and the penalty is a sentence's worth, left to the verdict's
    sentences, and one asking why to the court's reasoning; the term and the fine asked together are the
    penalty."""
    asked = [name for name, pattern in _ASKS if pattern.search(question)]
    if not asked or asked[0] == "charges" and "penalty" in asked or _WHY.search(question):
        return None
    # 判了几年，罚金多少？: the whole penalty answers both
    return "penalty" if "penalty" in asked and {"fine", "probation"} & set(asked) else asked[0]


def answer_verdict(
    blocks: list[tuple[int, str, str]], part: str, question: str, named_only: bool
) -> tuple[CoverAnswer, str] | None:
    """(the answer to `part` for the defendant the question names, else the verdict's only one unless
    `named_only`; its answer type), or None. A fine or probation is read from the penalty (决定执行's,
    not one charge's), the days a term runs from the item. A question naming several defendants (解梦祥和
    付天亮各被判了什么刑？) gets each one's, named (defendants given the same one together)."""
    found = convictions(blocks)
    named = [c for c in found if _named(c.defendant, question, found)]
    polar = ZH_WHETHER.search(question) is not None
    if len(named) > 1 and not polar:
        values = {c.defendant: _value(c, part, question) for c in named}
        if not all(values.values()):
            return None
        alike = {v: "、".join(d for d, w in values.items() if w == v) for v in values.values()}
        text = "；".join(f"{names}：{v}" for v, names in alike.items())
        return _cited(named[0], text, values[named[0].defendant]), "field"
    if len(named) != 1 and (named_only or len(found) != 1):
        return None
    c = named[0] if named else found[0]
    if polar and part in ("fine", "probation"):
        m = _READ[part].search(c.penalty)
        return _cited(c, "YES" if m else "NO", m.group(0) if m else None), "yes" if m else "no"
    value = _value(c, part, question)
    return (_cited(c, value, value), "field") if value else None


def _named(defendant: str, question: str, found: list[Conviction]) -> bool:
    """Whether the question names the defendant, not only a longer name holding it (王某 in 王某某)."""
    longer = sum(
        question.count(c.defendant) for c in found if defendant in c.defendant and c.defendant != defendant
    )
    return question.count(defendant) > longer


def _value(c: Conviction, part: str, question: str) -> str | None:
    """What the verdict imposed on one defendant, for `part`: the charges, the penalty (its term alone when
    asked how long), the fine, the probation or the days the term runs."""
    if part == "charges":
        return "、".join(c.charges)
    if part == "penalty":
        several = sum(bool(p.search(question)) for name, p in _ASKS if name != "charges") > 1
        return c.penalty.split("，")[0] if _HOW_LONG.search(question) and not several else c.penalty
    m = _READ[part].search(c.item if part == "term" else c.penalty)
    return m.group(1) if m else None


def _cited(c: Conviction, text: str, value: str | None) -> CoverAnswer:
    """The answer, cited at `value` where the item prints it once, else at the item's opening words."""
    if value and c.item.count(value) == 1:
        return CoverAnswer(text, c.block_at(c.item.find(value)), value)
    return CoverAnswer(text, c.blocks[0][0], c.item[: c.item.find("犯") + 1 + len(c.charges[0])])
