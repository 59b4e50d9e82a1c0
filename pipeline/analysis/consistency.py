"""Verdict–facts consistency: what the VERDICT states that the rest of the judgment does not support.

Each check is a rule an analyst can reread: a name, charge, amount or date quoted from the VERDICT and
looked up in the blocks that should contain it. A flag carries document-level character spans (offsets
into `Document.text`) of what it quotes, so the reviewer lands on the words.

What is deliberately not checked: sentences (有期徒刑…) and fines (罚金…) are decided in the VERDICT
itself and appear nowhere earlier in a first-instance judgment; flagging their absence would flag every
judgment. A custodial term is checked against itself instead: the days the verdict says it runs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta

from pipeline.analysis import zh_numbers
from pipeline.records import BlockType, Document

# Blocks that state who the parties are and what happened; the VERDICT may only name what they name.
_BASIS = {
    BlockType.HEADER,
    BlockType.PARTIES,
    BlockType.PROCEDURE,
    BlockType.CLAIMS,
    BlockType.DEFENSE,
    BlockType.FACTS,
}
_REASONED = _BASIS | {BlockType.OPINION}

_HAN_NAME = r"[\u4e00-\u9fff·•．A-Za-z0-9×（）()]"  # 朱× is a masked name
# 被告人安旭犯盗窃罪 — the criminal verdict formula; the name is what sits between the role and 犯, after a
# bracketed role's close (上诉人（原审被告人）吴传忠犯…).
CRIMINAL_PARTY = re.compile(rf"被告(?:人|单位)[）)]?({_HAN_NAME}{{1,30}}?)犯")
# 被告南京某公司于本判决生效之日起… / 驳回原告程浩的其他诉讼请求 — civil formulas.
_CIVIL_PARTY = re.compile(
    rf"(?:原审原告|原审被告|被上诉人|上诉人|原告|被告人|被告|第三人)({_HAN_NAME}{{2,30}}?)"
    r"(?=于本判决|于判决|应于本判决|的(?:其他|全部)?诉讼请求|的上诉请求|负担|承担)"
)
CHARGE = re.compile(r"犯(?!前款|本款|上述|该)([^\s，,。；;：:、（）()“”犯罪]{1,20}罪)")
_LAW = re.compile(r"《([^《》]{2,60})》")
_ARTICLE = re.compile(rf"第([{zh_numbers.CN_NUM}0-9]+)条")
FINE_OR_FEE = re.compile(r"罚金|没收财产|受理费|诉讼费|保全费|鉴定费|公告费|申请费|执行费")
# Money the verdict records as already in the court's or police's hands (扣押在案的…, 已经退缴的…, 暂存于…):
# custody records of property that the facts have no reason to state, so the verdict is where they appear.
HELD_PROPERTY = re.compile(r"扣押|退缴|查封|冻结|暂存|已退|已经退|已赔|已经赔|抵扣")
# Beyond this many stated amounts, sums of three would cover most round figures and catch nothing.
_MAX_TRIPLES = 30
# 即自2017年1月5日起至2020年11月4日止: the days a custodial term runs, stated after the term
_TERM_DATES = re.compile(r"即自(.{6,16}?)起至(.{6,16}?)止")
# 扣除已服刑期四个月又十六天: time served on a sentence this one absorbs, credited beyond custody
_TIME_SERVED = re.compile(r"扣除|已服|已执行")
# Where a lazily matched name runs on into the sentence (罗鑫在所涉…, 张朋经济损失…), it is cut here.
_NAME_END = re.compile(
    r"在|与|和|、|各|自行|自愿|对|的|本人|供|上述|经济|购|返还|赔偿|支付|给付|偿还|共同|连带|退赔|退缴|违法|不能|为|要求|应|于|负担|反诉|另"
)
# Words that cannot open a name (自行负担, 本人承担), unlike one-character words that are also surnames (于, 应)
_NOT_A_NAME = re.compile(r"自行|自愿|本人|上述|共同|连带|各自|经济|违法|不能|要求")
_ROLE_NOTE = re.compile(r"[（(][^（）()]*(?:原告|被告|上诉|申请)[^（）()]*[）)]")  # 原告（反诉被告）XX
EN_NAMED = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr)\.? ([A-Z][A-Za-z'’-]+)")


@dataclass
class Flag:
    check: str  # party_absent, charge_unsupported, amount_absent, date_absent, article_disagrees, ...
    message: str
    spans: list[tuple[int, int]] = field(default_factory=list)  # offsets into Document.text
    score: float = 1.0


def _blocks(doc: Document, types: set[BlockType]):
    return [b for b in doc.blocks if b.type in types]


def _joined(doc: Document, types: set[BlockType]) -> str:
    return "\n".join(b.text for b in _blocks(doc, types))


def cited_articles(text: str, law: str = "刑法") -> list[tuple[int, int, int]]:
    """Articles of `law` cited in `text`, as (article number, start, end).

    A citation list runs from 《…刑法》 to the next 《: 依照《中华人民共和国刑法》第二百六十四条、第二十五条
    第一款…，《中华人民共和国刑事诉讼法》第二百零一条 cites 264 and 25 of the criminal law only.
    """
    out = []
    laws = list(_LAW.finditer(text))
    for i, m in enumerate(laws):
        name = m.group(1)
        if not name.endswith(law) or "修正案" in name:
            continue
        stop = laws[i + 1].start() if i + 1 < len(laws) else len(text)
        for a in _ARTICLE.finditer(text, m.end(), stop):
            value = zh_numbers.number(a.group(1))
            if value is not None and text[a.start() - 1 : a.start()] != "款":
                out.append((int(value), a.start(), a.end()))
    return out


def _zh_party_flags(verdict, basis: str, criminal: bool) -> list[Flag]:
    flags = []
    # the civil formulas would misread 被告人X犯…罪 (and vice versa), so a verdict gets one family
    pattern = CRIMINAL_PARTY if criminal else _CIVIL_PARTY
    for m in pattern.finditer(verdict.text):
        raw = _ROLE_NOTE.sub("", m.group(1))
        if _NOT_A_NAME.match(raw):
            continue
        # the first character is a surname even when it reads as a word (于, 应, 为)
        name = (raw[:1] + _NAME_END.split(raw[1:], maxsplit=1)[0]).strip("（）()")
        if len(name) < 2 or name[0] in "的对另反负" or name in basis:
            continue
        # a civil formula's lazy name can run on into the sentence (胡海林未能…): a party's name opening it
        if not criminal and any(name[:k] in basis for k in range(2, len(name))):
            continue
        start = verdict.char_start + m.start(1) + m.group(1).find(name)
        flags.append(
            Flag(
                "party_absent",
                f"{name} is named in the verdict but not among the parties or facts",
                [(start, start + len(name))],
            )
        )
    return flags


def _bare(text: str) -> str:
    # 生产、销售假药罪 and 生产销售假药罪 are the same charge
    return re.sub(r"[\s、，,“”\"]", "", text)


def _zh_charge_flags(verdict, reasoned: str) -> list[Flag]:
    flags = []
    reasoned = _bare(reasoned)
    for m in CHARGE.finditer(verdict.text):
        charge = m.group(1)
        if _bare(charge) in reasoned:
            continue
        start = verdict.char_start + m.start(1)
        flags.append(
            Flag(
                "charge_unsupported",
                f"the verdict convicts of {charge}, which the charge and the reasoning never name",
                [(start, start + len(charge))],
            )
        )
    return flags


def set_by_verdict(verdict_text: str, start: int) -> bool:
    """Whether the amount at `start` is one the verdict sets or records itself (a fine or court fee, money
    already seized or returned), rather than one the facts must state."""
    before = verdict_text[max(0, start - 15) : start]
    return bool(FINE_OR_FEE.search(before[-12:]) or HELD_PROPERTY.search(before))


def _zh_amount_flags(verdict, reasoned: str) -> list[Flag]:
    known = [float(q.value) for q in zh_numbers.amounts(reasoned)]
    in_verdict = [float(q.value) for q in zh_numbers.amounts(verdict.text)]
    # A verdict may total what the facts list (退赔 17780 = 3980 + 7700 + 6100 to three victims) or break a
    # stated total down, so sums of two stated amounts and a verdict total over verdict parts also count;
    # so does what remains of another verdict amount (余款 137124 of a 400000 fine, 262876 offset)
    supported = {round(a, 2) for a in known} | {
        round(a + b, 2) for i, a in enumerate(known) for b in known[i + 1 :]
    }
    # or the total of all (违法所得 400 over five sales of 50 and 100), or of three of them
    supported.add(round(sum(known), 2))
    if len(known) <= _MAX_TRIPLES:
        supported |= {round(sum(t), 2) for t in itertools.combinations(known, 3)}
    flags = []
    for q in zh_numbers.amounts(verdict.text):
        value = float(q.value)
        if value in supported or set_by_verdict(verdict.text, q.start):
            continue
        others = [a for a in in_verdict if a != value]
        if round(sum(a for a in others if a < value), 2) == value or any(
            round(value + a, 2) in supported or round(value + a, 2) in in_verdict for a in others
        ):
            continue
        s = verdict.char_start + q.start
        flags.append(
            Flag(
                "amount_absent",
                f"amount {q.text} in the verdict appears nowhere in the facts or reasoning",
                [(s, s + len(q.text))],
                0.8,
            )
        )
    return flags


def _zh_custody_flags(verdict, first_event: str | None) -> list[Flag]:
    """即自…起 opens the custody credit. Many judgments never state the detention day, so its absence
    proves nothing; but custody for a crime cannot begin before the first event the facts narrate."""
    flags = []
    for q in zh_numbers.dates(verdict.text):
        if first_event is None or len(q.value) != 10 or q.value >= first_event:
            continue
        if not re.search(r"^\s*起", verdict.text[q.end : q.end + 2]):
            continue
        if not re.search(r"即|刑期", verdict.text[max(0, q.start - 8) : q.start]):
            continue
        s = verdict.char_start + q.start
        flags.append(
            Flag(
                "date_inconsistent",
                f"custody from {q.text} would begin before the facts' first event ({first_event})",
                [(s, s + len(q.text))],
                0.9,
            )
        )
    return flags


def _plus_months(day: date, months: int) -> date:
    y, m = divmod(day.month - 1 + months, 12)
    first = date(day.year + y, m + 1, 1)
    last = (date(first.year + (first.month == 12), first.month % 12 + 1, 1) - timedelta(days=1)).day
    return first.replace(day=min(day.day, last))


def _zh_term_flags(verdict, custody_from: str | None) -> list[Flag]:
    """A custodial term (有期徒刑/拘役 N) and the days it runs (即自 S 起至 E 止) must agree: E is the day
    before S + N, earlier only by the days already served in custody, which began no earlier than
    `custody_from` (the first date after the facts' first event that the parties' record states, or that
    event itself); a term that ends later than it could, or earlier than the credit allows, is flagged."""
    terms = [q for q in zh_numbers.terms(verdict.text) if q.value.startswith(("有期徒刑", "拘役"))]
    flags = []
    for m in _TERM_DATES.finditer(verdict.text):
        before = [q for q in terms if q.end <= m.start()]
        spans = [zh_numbers.dates(g) for g in m.groups()]
        if not before or any(len(d) != 1 or len(d[0].value) != 10 for d in spans):
            continue
        term = before[-1]  # the term executed: the last stated before its dates (决定执行…)
        months = int(term.value.partition(":")[2])
        start, end = (date.fromisoformat(d[0].value) for d in spans)
        latest = _plus_months(start, months) - timedelta(days=1)
        floor = (
            date.fromisoformat(custody_from) if custody_from and custody_from <= start.isoformat() else start
        )
        earliest = _plus_months(floor, months) - timedelta(days=1)
        if _TIME_SERVED.search(verdict.text, term.end, m.start()):
            earliest = end  # time served on an earlier sentence is credited too: no lower bound
        slack = timedelta(days=3)  # courts count the last day in or out
        if earliest - slack <= end <= latest + slack:
            continue
        s = verdict.char_start + term.start
        flags.append(
            Flag(
                "term_inconsistent",
                f"{term.text} from {spans[0][0].text} would end by {latest.isoformat()}, "
                f"not on {spans[1][0].text}",
                [(s, s + len(term.text)), (verdict.char_start + m.start(), verdict.char_start + m.end())],
                0.9,
            )
        )
    return flags


def _article_flags(
    doc: Document,
    predicted: Mapping[int, float],
    charge_articles: Mapping[str, set[int]],
    threshold: float,
) -> list[Flag]:
    """Articles of the special part (分则, art. 102 on) that the opinion cites, against the articles the
    model predicts (from the facts, or from the facts and the court's findings with every citation cut)
    and the articles each convicted charge is known to fall under."""
    flags = []
    cited: list[tuple[int, int, int]] = []
    for b in _blocks(doc, {BlockType.OPINION, BlockType.VERDICT}):
        cited += [(a, b.char_start + s, b.char_start + e) for a, s, e in cited_articles(b.text)]
    special = {a for a, _, _ in cited if a >= 102}
    if not special:
        return flags
    confident = {a for a, p in predicted.items() if a >= 102 and p >= threshold}
    if confident and not confident & special:
        flags.append(
            Flag(
                "article_disagrees",
                f"the opinion applies art. {sorted(special)} but the article head, reading the case with its "
                f"citations cut, points to art. {sorted(confident)}",
                [(s, e) for a, s, e in cited if a in special],
                max(predicted[a] for a in confident),
            )
        )
    for verdict in _blocks(doc, {BlockType.VERDICT}):
        for m in CHARGE.finditer(verdict.text):
            known = charge_articles.get(m.group(1))
            if known and not known & special:
                s = verdict.char_start + m.start(1)
                # both sides of the disagreement: the charge, then the citations it does not fit
                spans = [(s, s + len(m.group(1)))] + [(cs, ce) for a, cs, ce in cited if a in special]
                flags.append(
                    Flag(
                        "charge_article_mismatch",
                        f"{m.group(1)} falls under art. {sorted(known)}, "
                        f"but the opinion applies art. {sorted(special)}",
                        spans,
                    )
                )
    return flags


def _en_flags(doc: Document) -> list[Flag]:
    """Persons the disposition names by title (Mr X, Ms Y) that neither the header nor any other part of
    the judgment introduces. English judgments name counsel and witnesses everywhere, and the header's
    counsel lines are not always a HEADER block, so a name counts as known anywhere outside the VERDICT."""
    known = " ".join(
        [doc.title or ""]
        + [p.name for p in doc.meta.parties]
        + [b.text for b in doc.blocks if b.type != BlockType.VERDICT]
    ).lower()
    flags = []
    for verdict in _blocks(doc, {BlockType.VERDICT}):
        for m in EN_NAMED.finditer(verdict.text):
            surname = re.sub(r"['’]s?$", "", m.group(1))
            if len(surname) < 2 or re.search(rf"\b{re.escape(surname.lower())}\b", known):
                continue
            s = verdict.char_start + m.start()
            flags.append(
                Flag(
                    "disposition_party",
                    f"the disposition names {m.group()}, who appears nowhere else in the judgment",
                    [(s, s + len(m.group()))],
                    0.7,
                )
            )
    return flags


def _custody_from(doc: Document, first_event: str | None) -> str | None:
    """The earliest day custody can have begun: the first date the parties' record states on or after
    the facts' first event (被刑事拘留 / 被逮捕 dates), else that event."""
    if first_event is None:
        return None
    stated = [q.value for q in zh_numbers.dates(_joined(doc, {BlockType.PARTIES}))]
    return min((d for d in stated if len(d) == 10 and d >= first_event), default=first_event)


def check_document(
    doc: Document,
    predicted_articles: Mapping[int, float] | None = None,
    charge_articles: Mapping[str, set[int]] | None = None,
    article_threshold: float = 0.5,
) -> list[Flag]:
    """Every consistency flag of one parsed judgment (an empty list for other kinds or no VERDICT)."""
    verdicts = _blocks(doc, {BlockType.VERDICT})
    if not verdicts:
        return []
    if doc.language != "zh":
        return _en_flags(doc)
    basis, reasoned = _joined(doc, _BASIS), _joined(doc, _REASONED)
    flags: list[Flag] = []
    # one judgment, one family of formulas: a criminal verdict's later items (责令…退赔) name no charge
    criminal = any(CRIMINAL_PARTY.search(v.text) for v in verdicts)
    events = [q.value for q in zh_numbers.dates(_joined(doc, {BlockType.FACTS, BlockType.CLAIMS}))]
    first_event = min((e for e in events if len(e) == 10), default=None)
    for v in verdicts:
        flags += _zh_party_flags(v, basis, criminal)
        flags += _zh_charge_flags(v, reasoned)
        # Civil awards are computed (interest, shares, fee splits) from figures the verdict does not
        # repeat; only a criminal verdict's amounts, custody dates and terms are checked
        if criminal:
            flags += _zh_amount_flags(v, reasoned)
            flags += _zh_custody_flags(v, first_event)
            flags += _zh_term_flags(v, _custody_from(doc, first_event))
    if predicted_articles is not None or charge_articles:
        flags += _article_flags(doc, predicted_articles or {}, charge_articles or {}, article_threshold)
    return flags
