"""Verdict–facts consistency: what the VERDICT states that the rest of the judgment does not support.

Each check is a rule an analyst can reread: a name, charge, amount or date quoted from the VERDICT and
looked up in the blocks that should contain it. A flag carries document-level character spans (offsets
into `Document.text`) of what it quotes, so the reviewer lands on the words.

What is deliberately not checked: sentences (有期徒刑…) and fines (罚金…) are decided in the VERDICT
itself and appear nowhere earlier in a first-instance judgment, and the end date of a custodial term is
computed by the court; flagging them would flag every judgment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

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

_HAN_NAME = r"[\u4e00-\u9fff·•．A-Za-z0-9（）()]"
# 被告人安旭犯盗窃罪 — the criminal verdict formula; the name is what sits between the role and 犯.
CRIMINAL_PARTY = re.compile(rf"被告(?:人|单位)({_HAN_NAME}{{1,30}}?)犯")
# 被告南京某公司于本判决生效之日起… / 驳回原告程浩的其他诉讼请求 — civil formulas.
_CIVIL_PARTY = re.compile(
    rf"(?:原审原告|原审被告|被上诉人|上诉人|原告|被告人|被告|第三人)({_HAN_NAME}{{2,30}}?)"
    r"(?=于本判决|于判决|应于本判决|的(?:其他|全部)?诉讼请求|的上诉请求|负担|承担)"
)
CHARGE = re.compile(r"犯(?!前款|本款|上述|该)([^\s，,。；;：:、（）()“”犯罪]{1,20}罪)")
_LAW = re.compile(r"《([^《》]{2,60})》")
_ARTICLE = re.compile(rf"第([{zh_numbers.CN_NUM}0-9]+)条")
FINE_OR_FEE = re.compile(r"罚金|没收财产|受理费|诉讼费|保全费|鉴定费|公告费|申请费|执行费")
# Where a lazily matched name runs on into the sentence (罗鑫在所涉…, 张朋经济损失…), it is cut here.
_NAME_END = re.compile(
    r"在|与|和|、|各|自行|对|的|本人|供|上述|经济|购|返还|赔偿|支付|给付|偿还|共同|连带|退赔|退缴|违法|不能|为|要求|应|于|负担|反诉|另"
)
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
        # the first character is a surname even when it reads as a word (于, 应, 为)
        name = (raw[:1] + _NAME_END.split(raw[1:], maxsplit=1)[0]).strip("（）()")
        if len(name) < 2 or name[0] in "的对另反负" or name in basis:
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


def _zh_quantity_flags(verdict, reasoned: str, facts: str, criminal: bool) -> list[Flag]:
    known = [float(q.value) for q in zh_numbers.amounts(reasoned)]
    in_verdict = [float(q.value) for q in zh_numbers.amounts(verdict.text)]
    # A verdict may total what the facts list (退赔 17780 = 3980 + 7700 + 6100 to three victims) or break a
    # stated total down, so sums of two stated amounts and a verdict total over verdict parts also count.
    supported = {round(a, 2) for a in known} | {
        round(a + b, 2) for i, a in enumerate(known) for b in known[i + 1 :]
    }
    events = [q.value for q in zh_numbers.dates(facts) if len(q.value) == 10]
    flags = []
    # Civil awards are computed (interest, shares, fee splits) from figures the verdict does not repeat;
    # only a criminal verdict's restitution and confiscation amounts must be found verbatim.
    for q in zh_numbers.amounts(verdict.text) if criminal else []:
        # fines and court fees are set by the verdict itself
        value = float(q.value)
        if value in supported or FINE_OR_FEE.search(verdict.text[max(0, q.start - 12) : q.start]):
            continue
        others = [a for a in in_verdict if a != value]
        if round(sum(a for a in others if a < value), 2) == value or any(
            round(value + a, 2) in supported for a in others
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
    # 即自…起 opens the custody credit. Many judgments never state the detention day, so its absence
    # proves nothing; but custody for a crime cannot begin before the first event the facts narrate.
    first_event = min(events, default=None)
    for q in zh_numbers.dates(verdict.text):
        if first_event is None or len(q.value) != 10 or q.value >= first_event:
            continue
        if not criminal or not re.search(r"^\s*起", verdict.text[q.end : q.end + 2]):
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


def _article_flags(
    doc: Document,
    predicted: Mapping[int, float],
    charge_articles: Mapping[str, set[int]],
    threshold: float,
) -> list[Flag]:
    """Articles of the special part (分则, art. 102 on) that the opinion cites, against the articles the
    model predicts from the facts and the articles each convicted charge is known to fall under."""
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
                f"the opinion applies art. {sorted(special)} but the facts point to art. {sorted(confident)}",
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
    for v in verdicts:
        flags += _zh_party_flags(v, basis, criminal)
        flags += _zh_charge_flags(v, reasoned)
        flags += _zh_quantity_flags(v, reasoned, _joined(doc, {BlockType.FACTS, BlockType.CLAIMS}), criminal)
    if predicted_articles is not None or charge_articles:
        flags += _article_flags(doc, predicted_articles or {}, charge_articles or {}, article_threshold)
    return flags
