"""Questions about a Chinese judgment's head and signature (本案由哪个法院审理？案号是什么？案由是什么？
裁判日期是哪一天？审判长是谁？合议庭成员有哪些？原告是谁？当事人有哪些？), answered from what the parser
read there (pipeline.parsing.kinds.zh_judgment: the court, the case number, 案由 as the court site files
it, the date above the clerk's name, the judges and the parties with their roles in `documents.meta`) and
from the signature's lines.

A search cannot answer these in a corpus of 裁判文书: every judgment's head names a court, a number and a
cause in the same places, and the reader, trained on facts, answers "日沈阳市中级人民法院" or another
case's company. The judgment asked about is the one given (--doc), the one the question names by its
number or parties (retrieval.named_documents), else the one cited first.
"""

from __future__ import annotations

import datetime as dt
import re

from pipeline.parsing.kinds.zh_judgment import CN_DATE_PARTS, cn_date
from retrieval.covers import Cover, CoverAnswer
from retrieval.named_documents import AGENTS
from retrieval.outcome_questions import CASE_INSTANCE

_END = r"(?:呢)?[？?。！!\s]*$"  # the question ends with what it asks: not 原告是谁的儿子
_WHO = r"(?:分别)?(?:是谁|是哪[个家些位方几]*(?:法官|人)?|有哪些|有谁|都有谁|叫什么(?:名字)?|是什么(?:人|公司|单位|机关))"
_OFFICES = "审判长 代理审判员 审判员 人民陪审员 陪审员 书记员 法官助理 执行员".split()
_ROLES = (
    "再审申请人 被申请人 申请执行人 被执行人 申请人 被上诉人 上诉人 被告人 原告 被告 公诉机关 第三人 被申诉人 "
    "申诉人 自诉人 罪犯"
).split()
_ASKS = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("office", rf"({'|'.join(_OFFICES)}){_WHO}{_END}"),
        (
            "judges",
            rf"(?:合议庭(?:成员|组成人员)?|审判人员|审理法官|承办法官|法官){_WHO}{_END}"
            r"|(?:哪些|哪几位|哪位|谁)(?:法官|审判员)",
        ),
        ("role", rf"({'|'.join(_ROLES)}){_WHO}{_END}"),
        ("parties", rf"(?:当事人|诉讼(?:双方|各方)|双方){_WHO}{_END}|当事人(?:包括|都有)"),
        ("number", r"案号|案件编号|文书编号"),
        ("court", r"(?:哪个|哪家|哪一?级|(?<![为凭])什么|(?<!为)何)法院|审理法院"),
        ("charge", r"罪名"),  # 某某犯什么罪 asks of one defendant: the reader's, from the verdict
        ("cause", r"案由(?![哪谁何])|(?:什么|何种|哪种|哪类|哪一类)(?:纠纷|案件)"),
        (
            "date",
            r"(?:判决|裁定|裁判|宣判|调解|审结|结案)书?的?(?:日期|时间)"
            r"|(?:何时|什么时候|哪一?天|哪年哪月哪日)[^，。？?]{0,4}(?:作出|宣判|判决|裁定|下达|审结|结案|调解)"
            r"|(?:判决|裁定|调解)书?[^，。？?]{0,3}(?:何时|什么时候|哪一?天)(?:作出|下达|作成)",
        ),
    )
)
# a question of another case, an earlier instance or what follows the judgment is not about this cover
_ELSEWHERE = re.compile(
    r"原审|一审|二审|再审|原判|上诉|申诉|向哪|移送|引用|依据|另案|生效|履行|期限|之日起|后"
)
# a question asking what was appealed or reviewed asks of the instance below, whatever this one is
_BELOW = re.compile(r"不服|申请|申诉|上诉|原审|原判")
# ... but the instance in a judgment's title names this one (王富贵危险驾驶一审刑事判决书)
_TITLED = re.compile(r"[一二再]审(?=(?:民事|刑事|行政|执行|赔偿)?(?:判决|裁定|调解|决定)书)")


def zh_asked_part(question: str, title: str = "", case_number: str = "") -> tuple[str, str | None] | None:
    """(what the question asks of a judgment's head or signature, the office or role it names), or
    None. The judgment's own `title` in the question names it ("…移送执行…裁定书的审理法院") and asks
    nothing; so does the instance its `case_number` names (这个二审行政案是哪个法院审的 of a 行终 number),
    unless the question asks what was appealed or reviewed (不服哪个法院的判决而申请再审: the one below)."""
    own = next((word for word, number in CASE_INSTANCE if number.search(case_number)), None)
    own = None if _BELOW.search(question) else own
    question = question.replace(title, " ") if title else question
    question = question.replace(own, " ") if own else question
    for name, pattern in _ASKS:
        if (m := pattern.search(question)) is None:
            continue
        if name in ("office", "role"):
            return name, m.group(1)
        if name in ("judges", "parties") or not _ELSEWHERE.search(_TITLED.sub("", question)):
            return name, None
        return None
    return None


def answer_zh_cover(cover: Cover, part: str, asked: str | None) -> CoverAnswer | None:
    """The judgment's answer to `part` (zh_asked_part) and the block that states it, or None."""
    meta = cover.meta
    if part == "office" and asked == "审判长":  # a judge sitting alone (独任审判) presides
        return _signed(cover, [asked]) or _signed(cover, _JUDGES, with_office=True)
    if part in ("office", "judges"):
        return _signed(cover, [asked] if asked else _JUDGES)
    if part == "date":
        return _dated(cover, meta.get("date"))
    if part in ("role", "parties"):
        return _parties(cover, asked)
    text = meta.get(_FIELD[part])
    if part == "charge" and text and not text.endswith("罪"):
        text += "罪"  # 盗窃、抢劫罪; 走私、贩卖、运输、制造毒品罪 is one charge
    found = cover.block_of(meta.get(_FIELD[part])) if text else None
    return CoverAnswer(text, found, meta[_FIELD[part]]) if found is not None else None


_FIELD = {"court": "court", "number": "case_number", "cause": "cause", "charge": "cause"}
_JUDGES = ["审判长", "代理审判员", "审判员", "人民陪审员"]


def _signed(cover: Cover, offices: list[str], with_office: bool = False) -> CoverAnswer | None:
    """The holders of `offices` as the signature lines name them ("审　判　长　　杨方宁"), in their order, each
    with its office when `with_office` (李丹（审判员）); a 陪审员 is also a 人民陪审员."""
    spaced = "|".join(r"\s*".join(o) for o in offices + (["人民陪审员"] if "陪审员" in offices else []))
    # a name spread over the line's width: "审　判　长　陈　　　　　　　　　　　　睿"
    line = re.compile(rf"^\s*({spaced})\s*[：:]?\s*([\u4e00-\u9fff·•][\u4e00-\u9fff·•\s]{{1,40}}?)\s*$", re.M)
    names, first = {}, None
    for idx, _, text in cover.blocks:
        for m in line.finditer(text):
            if len(name := "".join(m.group(2).split())) <= 8:
                names.setdefault(name, "".join(m.group(1).split()))
                first = first or (idx, m.group(0).strip())
    shown = [f"{n}（{office}）" if with_office else n for n, office in names.items()]
    return CoverAnswer("、".join(shown), *first) if names else None


def _dated(cover: Cover, iso: str | None) -> CoverAnswer | None:
    """The date of the judgment as printed above its clerk's name (二〇一七年十二月二十五日), last of the
    blocks that print it."""
    if not iso:
        return None
    day = dt.date.fromisoformat(iso)
    for idx, _, text in reversed(cover.blocks):
        for m in CN_DATE_PARTS.finditer(text):
            if cn_date(m.group(0)) == day:
                return CoverAnswer(m.group(0), idx, m.group(0))
        arabic = f"{day.year}年{day.month}月{day.day}日"
        if arabic in text:
            return CoverAnswer(arabic, idx, arabic)
    return None


def _parties(cover: Cover, role: str | None) -> CoverAnswer | None:
    """The parties in `role` (原告: 陈清立), or all of them by role (陈清立（原告）；李红军、…（被告）); those who
    act for a party are not parties. A role asked of a later instance is found as the earlier one's
    (被告 → 原审被告)."""
    parties = [p for p in cover.meta.get("parties") or [] if not AGENTS.search(p["role"] or "")]
    if role:
        parties = [p for p in parties if p["role"] == role] or [
            p for p in parties if re.fullmatch(rf"(?:原审|一审|二审){role}", p["role"] or "")
        ]
    if not parties:
        return None
    sides: dict[str, list[str]] = {}
    for p in parties:
        sides.setdefault(p["role"] or "", []).append(p["name"])
    if role:
        text = "、".join(n for names in sides.values() for n in names)
    else:
        text = "；".join(
            f"{'、'.join(names)}（{r}）" if r else "、".join(names) for r, names in sides.items()
        )
    first = parties[0]
    # the party's own line (原告：陈清立，男，…), not the title that also names them
    lines = [(idx, kind, t) for idx, kind, t in cover.blocks if first["name"] in t]
    found = next(
        (idx for idx, kind, t in lines if kind == "PARTIES" and t.lstrip().startswith(first["role"])), None
    )
    found = found if found is not None else cover.block_of(first["name"])
    return CoverAnswer(text, found, first["name"]) if found is not None else None
