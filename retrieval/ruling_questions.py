"""Questions whether a court granted what was asked of it (法院是否支持原告的诉讼请求, 是否驳回上诉, 是否准许撤诉,
二审是否维持原判), answered from the items of the ruling.

The yes-no decider weighs a question against the facts, and CJRC, on which it learned, asks mostly about
facts, where YES is the likelier answer: asked "法院是否支持了再审申请" of a ruling that reads "驳回院某某的再审
申请", it answered YES. What a court granted stands in its ruling's items: an item grants what was asked (it
orders the other side to pay, return or stop, allows a withdrawal, sets aside the judgment below) or rejects
it (驳回, 不予支持, 不予准许); a judgment that grants some claims rejects "the other claims" (驳回…其他诉讼请求),
and the answer is then "partly" (部分支持). `ruling_answer(question, passages)` reads the question's verb and
what it asks about, and the ruling (VERDICT passages) of the document; an English question ("Was the appeal
allowed?") is read from the disposition by retrieval.ruling_questions_en.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.hybrid import Passage
from retrieval.ruling_questions_en import asked_outcome, english_ruling
from retrieval.text import HAN, sentences, terms

_ASK = re.compile(
    r"是否(?:已经?|予以|依法|会|全部)?(支持|采纳|采信|准许|准予|同意|认可|驳回|维持|撤销|改判)"
    r"|是否(?:得到|获得)了?(?:法院|本院|二审法院|一审法院)?的?(支持|准许)"
)
# verbs asking the opposite of granting: a rejection, the judgment below falling
_FLIP = frozenset({"驳回", "撤销", "改判"})

# what the question asks about, tried in order; a question asking whether the judgment below stands
# (维持, 撤销, 改判) asks about that judgment whatever it names
_WHAT = (
    ("retrial", re.compile(r"再审")),
    ("withdrawal", re.compile(r"撤诉|撤回")),
    ("appeal", re.compile(r"上诉")),
    ("argument", re.compile(r"意见|辩解|抗辩|主张|理由|证据")),
    ("claims", re.compile(r"诉讼请求|诉请|请求|起诉|离婚|诉求")),
)
# an item's number where an item can start (判决：一、 …；十二、), not in 第二、三项
_ITEM_MARK = re.compile(r"(?:^|(?<=[\s：:；;。]))[一二三四五六七八九十]{1,3}、")
# what a ruling says besides its decision: interest for late payment, costs, the right to appeal
# (由徐某负担三万元（已交纳）； opens the second half of a costs line cut at its semicolon)
_BOILERPLATE = re.compile(
    r"迟延履行|受理费|诉讼费|保全费|鉴定费|如不服|上诉于|终审|申请执行的期间|^由[^。；，]{1,40}(?:负担|承担)"
)
_REJECT = {
    "appeal": re.compile(r"驳回[^。；]{0,40}上诉"),
    "retrial": re.compile(r"驳回[^。；]{0,40}再审申请|不予再审"),
    "withdrawal": re.compile(r"不[予准]{1,2}[许予][^。；]{0,30}撤"),
    "claims": re.compile(r"驳回[^。；]{0,60}(?:诉讼请求|起诉|诉请|请求)|不予支持"),
}
_GRANT = {
    "appeal": re.compile(r"撤销|改判|变更"),
    "retrial": re.compile(r"提审|再审本案|指令[^。；]{0,30}再审|中止原判决"),
    "withdrawal": re.compile(r"(?:准许|准予)[^。；]{0,40}撤"),
    "claims": re.compile(
        r"支付|偿还|给付|赔偿|赔付|返还|归还|退还|停止|承担|履行|解除|确认|准予[^。；]{0,10}离婚|离婚"
    ),
}
_REST = re.compile(r"其他|其余|其它")  # 驳回原告的其他诉讼请求: some claims were granted
_UPHELD = re.compile(r"维持")
_CHANGED = re.compile(r"撤销|变更|改判")
# an item ordering the claimant (原告) to act grants the other side's claim, not the claimant's
_CLAIMANT_ORDERED = re.compile(r"^[一二三四五六七八九十]{0,3}、?(?:由|限)?原告")


# an argument the court weighed in its reasoning ("辩护人关于从犯的意见本院不予采纳", "原告主张3000元合理，故本院予以
# 支持"); the defence's own words ("指控…罪不能成立") stand in its DEFENSE block, not in the court's
_WEIGHED_NO = re.compile(r"不予(?:采纳|支持|采信|认可)|(?:意见|辩解|主张)[^。，；]{0,6}不能成立")
_WEIGHED_YES = re.compile(r"予以(?:采纳|支持|采信|认可)|(?:意见|辩解|主张)[^。，；]{0,6}成立")
_COURT_BLOCKS = frozenset({"OPINION", "VERDICT"})
# words every such question and sentence share: the argument is named by the others (从犯, 交通费 …)
_GENERIC = frozenset(
    "法院 本院 一审 二审 采纳 支持 采信 认可 意见 辩护 护人 辩护人 辩解 主张 理由 证据 被告 被告人 原告 关于 提出 上述 "
    "该项".split()
)
WEIGHED_SHARE = 0.5  # of the question's own words, the weighing sentence holds at least this share


@dataclass(frozen=True)
class Ruling:
    answer: str  # YES, NO, 部分支持 (partly granted), 部分驳回, 部分维持
    answer_type: str  # yes / no / span
    units: list[tuple[str, str]]  # (segment_id, item) the answer rests on, the deciding one first


def asked_ruling(question: str) -> tuple[str, str] | None:
    """(verb, what) of a question whether the court granted something: the verb as asked (支持, 驳回, 维持 …)
    and what it asks about (appeal, retrial, withdrawal, claims, judgment); None for any other question."""
    m = _ASK.search(question)
    if m is None:
        return None
    verb = m.group(1) or m.group(2)
    if verb in ("维持", "撤销", "改判"):
        return verb, "judgment"
    rest = question[m.end() :] or question
    what = next((name for name, p in _WHAT if p.search(rest)), None)
    what = what or next((name for name, p in _WHAT if p.search(question)), "claims")
    return verb, what


def asks_ruling(question: str) -> bool:
    """Whether the question asks if the court granted what was asked (Chinese or English)."""
    return (asked_ruling(question) if HAN.search(question) else asked_outcome(question)) is not None


def units(text: str) -> list[str]:
    """The units of a ruling's text as printed: cut after each 。 or ； and before each item's number
    (一、 十二、), never inside brackets (a term's note: （刑期…至2021年6月19日止。）)."""
    out, depth, start = [], 0, 0
    marks = {m.start() for m in _ITEM_MARK.finditer(text)}
    for i, ch in enumerate(text):
        depth += (ch in "（(") - (ch in "）)" and depth > 0)
        if i in marks and depth == 0 and text[start:i].strip():
            out.append(text[start:i])
            start = i
        if ch in "。；;" and depth == 0:
            out.append(text[start : i + 1])
            start = i + 1
    return [u.strip() for u in [*out, text[start:]] if u.strip()]


def ruling_items(passages: list[Passage]) -> list[tuple[str, str]]:
    """(segment_id, item) of every decision item of the ruling (its VERDICT passages), boilerplate left
    out."""
    return [
        (p.segment_id, item)
        for p in passages
        if p.block_type == "VERDICT"
        for item in units(p.text)
        if not _BOILERPLATE.search(item)
    ]


def _outcome(what: str, items: list[tuple[str, str]]) -> tuple[list, list]:
    """(items granting, items rejecting) what is asked about; for the judgment below, (upheld, changed)."""
    if what == "judgment":
        return [i for i in items if _UPHELD.search(i[1])], [i for i in items if _CHANGED.search(i[1])]
    rejects = [i for i in items if _REJECT[what].search(i[1])]
    grants = [
        i
        for i in items
        if i not in rejects
        and _GRANT[what].search(i[1])
        and not (what == "claims" and _CLAIMANT_ORDERED.search(i[1]))
    ]
    if what == "claims" and not grants and any(_REST.search(i[1]) for i in rejects):
        return [], []  # "the other claims" rejected, but no item says what was granted: undecided
    return grants, rejects


def _weighed(question: str, passages: list[Passage]) -> tuple[bool, str, str] | None:
    """(accepted, segment_id, sentence): the court's sentence weighing the argument the question names, the
    one holding the largest share of the question's own words (WEIGHED_SHARE at least); None without one."""
    asked = set(terms(question)) - _GENERIC
    best = None
    for p in passages if asked else []:
        if p.block_type not in _COURT_BLOCKS:
            continue
        for a, b in sentences(p.text):
            sentence = p.text[a:b].strip()
            refused = _WEIGHED_NO.search(sentence)
            if refused is None and _WEIGHED_YES.search(sentence) is None:
                continue
            share = len(asked & set(terms(sentence))) / len(asked)
            if best is None or share > best[0]:
                best = (share, refused is None, p.segment_id, sentence)
    return best[1:] if best is not None and best[0] >= WEIGHED_SHARE else None


def ruling_answer(question: str, passages: list[Passage]) -> Ruling | None:
    """The answer to a question whether the court granted what was asked, from the document's ruling; None
    when the question is no such question or the ruling does not decide it."""
    if not HAN.search(question):
        found = english_ruling(question, passages)
        return Ruling(*found) if found else None
    asked = asked_ruling(question)
    if asked is None:
        return None
    verb, what = asked
    if what == "argument":
        weighed = _weighed(question, passages)
        if weighed is None:
            return None
        yes = weighed[0] != (verb in _FLIP)
        return Ruling("YES" if yes else "NO", "yes" if yes else "no", [weighed[1:]])
    granted, rejected = _outcome(what, ruling_items(passages))
    if not granted and not rejected:
        return None
    positive = "维持" if what == "judgment" else "支持"
    if granted and rejected:
        partly = "驳回" if verb in _FLIP and what != "judgment" else positive
        return Ruling(f"部分{partly}", "span", rejected + granted)
    yes = bool(granted) != (verb in _FLIP)
    return Ruling("YES" if yes else "NO", "yes" if yes else "no", granted or rejected)
