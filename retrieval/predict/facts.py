"""What the article heads read of a document: whether it is a criminal judgment, its facts (cut of statute
citations where only the charge states them), the court's reasoning and sentence with every citation cut,
and a head's scores over what it reads. Shared by the predict stage and the consistency benchmark."""

from __future__ import annotations

import re

from pipeline.records import BlockType, Document

_NUMERAL = "零〇一二三四五六七八九十百千0-9"
_CITATION = re.compile(rf"《[^《》]*》(?:第[{_NUMERAL}]+条(?:第[^，。；、]{{1,4}}款)?[、，和及]?)+")
_ARTICLE = rf"(?:第[{_NUMERAL}]+|[{_NUMERAL}]{{2,}})(?:[、，,][{_NUMERAL}]+)*条(?:之[一二三四五六七八九十])?"
_PART = rf"第[（(]?[{_NUMERAL}]+[）)]?[款项]"
# Every article reference, with or without the statute's name or its 第 (《刑法》第六十七条第三款、第五十二条 /
# 刑法第64条 / 依照六十七条 / 第二十五、二十六条 / 第二十五条之一 / 第（七）项): the court's text names the
# articles it applies, which is what the head predicts, so not one number of them may reach it.
_REFERENCE = re.compile(rf"(?:《[^《》]{{1,60}}》)?(?:(?:{_ARTICLE}|{_PART})[、，,和及与以]?)+")
COURT_PART = (BlockType.OPINION, BlockType.VERDICT)  # what the judgment view reads beside the facts
# 附：相关法律条文 / 附本案适用的法律条文 …: quoted article texts, where a parser left them in the verdict
_APPENDIX = re.compile(r"附[^。\n]{0,15}(?:法律|条文|法条).*", re.S)


def is_criminal_judgment(doc: Document) -> bool:
    if doc.language != "zh":
        return False
    head = " ".join(b.text for b in doc.blocks if b.type in (BlockType.HEADER, BlockType.PARTIES))
    return "刑事" in (doc.title or "") or "刑事" in head or "公诉机关" in head


def facts_text(doc: Document) -> str:
    """What the article head reads: the prosecution's charge (CLAIMS, with any statute citations cut so
    no article leaks in) and the FACTS the court found, after the title when the title names the charge
    (张三犯盗窃罪一审刑事判决书). judge_criminal's `text`, which the head trains on, is the charge with
    its facts in this order; on clcr's criminal judgments the FACTS alone name the charge in a third of
    the cases, and reading the charge too took the shipped head's micro-F1 there from 0.41 to 0.47."""
    facts = "\n".join(b.text for b in doc.blocks if b.type == BlockType.FACTS)
    claims = _CITATION.sub("", "\n".join(b.text for b in doc.blocks if b.type == BlockType.CLAIMS))
    title = doc.title if doc.title and "罪" in doc.title else ""
    return "\n".join(t for t in (title, claims.strip(), facts) if t).strip()


def court_text(doc: Document) -> str:
    """The court's reasoning and sentence (OPINION and VERDICT) with every article reference and any
    quoted article text cut: what the court found (构成盗窃罪, 系共同犯罪, 如实供述) and what it imposed
    (并处罚金, 缓刑, 责令退赔), which decide most general-part articles, and never which articles it
    cited. "" when the document has neither part."""
    text = "\n".join(b.text for b in doc.blocks if b.type in COURT_PART)
    return cut_references(text).strip()


def cut_references(text: str) -> str:
    """`text` without its article references and without any quoted article texts after them."""
    return _REFERENCE.sub("", _APPENDIX.sub("", text))


def reads(facts: str, court: str, view: str) -> str:
    """What a head reading `view` ("facts" or "judgment") reads of a case: the facts, and for the
    judgment view the court's part after them when there is one."""
    return f"{facts}\n{court}" if view == "judgment" and court else facts


def article_text(doc: Document, view: str, court: str | None = None) -> str:
    """What a head reading `view` reads of the document (`reads`; `court`: the document's `court_text`
    when the caller has it); "" without facts."""
    facts = facts_text(doc)
    if not facts:
        return ""
    if view == "judgment" and court is None:
        court = court_text(doc)
    return reads(facts, court or "", view)


def scores_of(head, text: str, memory: bool = True) -> dict[int, float]:
    """{article: probability} of an ArticleHead over `text`."""
    return dict(zip(head.outputs, head.predict_proba([text], memory=memory)[0].tolist(), strict=True))


def article_scores(doc: Document, head, memory: bool = True) -> dict[int, float] | None:
    """{article: probability} of an ArticleHead over what it reads of the document (`head.reads`; None
    without facts)."""
    text = article_text(doc, head.reads)
    return scores_of(head, text, memory) if text else None
