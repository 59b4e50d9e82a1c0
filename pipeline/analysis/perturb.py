"""Perturbed copies of real judgments, to measure what the consistency checks catch.

Each perturbation takes a quantity from another real case (a defendant's name, a restitution amount, a
charge, the custodial term whose days the verdict states) and puts it into this case's VERDICT, or (article) replaces the special-part 刑法 article the
OPINION applies with the one another case applies — the inconsistencies the checks exist for. Copies
keep every block's offsets valid, so flags point into the perturbed text.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pipeline.analysis import consistency, zh_numbers
from pipeline.records import BlockType, Document


@dataclass
class Edit:
    kind: str  # "name", "amount", "charge", "term", "article"
    span: tuple[int, int]  # where the new text sits in the perturbed document
    old: str
    new: str


def replace_span(doc: Document, start: int, end: int, new: str) -> Document:
    """A copy of `doc` with text[start:end] replaced; blocks after the edit shift, the edited one grows."""
    out = copy.deepcopy(doc)
    delta = len(new) - (end - start)
    out.text = doc.text[:start] + new + doc.text[end:]
    for b in out.blocks:
        if b.char_end <= start:
            continue
        if b.char_start >= end:
            b.char_start += delta
        b.char_end += delta
        b.text = out.text[b.char_start : b.char_end]
    return out


def _verdicts(doc: Document):
    return [b for b in doc.blocks if b.type == BlockType.VERDICT]


def _first(doc: Document, pattern) -> tuple[int, int, str] | None:
    for v in _verdicts(doc):
        m = pattern.search(v.text)
        if m:
            return v.char_start + m.start(1), v.char_start + m.end(1), m.group(1)
    return None


def _restitution_amount(doc: Document) -> tuple[int, int, str] | None:
    """The first amount a criminal verdict orders repaid or confiscated — the amounts the check covers
    (civil awards are computed, see consistency)."""
    verdicts = _verdicts(doc)
    if not any(consistency.CRIMINAL_PARTY.search(v.text) for v in verdicts):
        return None
    for v in verdicts:
        for q in zh_numbers.amounts(v.text):
            if not consistency.set_by_verdict(v.text, q.start):
                return v.char_start + q.start, v.char_start + q.end, q.text
    return None


def _dated_term(doc: Document) -> tuple[int, int, str] | None:
    """The custodial term (有期徒刑一年六个月) a criminal verdict states the days of (即自…起至…止)."""
    for v in _verdicts(doc):
        dated = re.search(r"即自.{6,16}?起至.{6,16}?止", v.text)
        terms = [q for q in zh_numbers.terms(v.text) if q.value.startswith(("有期徒刑", "拘役"))]
        before = [q for q in terms if dated and q.end <= dated.start()]
        if before:
            return v.char_start + before[-1].start, v.char_start + before[-1].end, before[-1].text
    return None


def _special_article(doc: Document) -> tuple[int, int, str] | None:
    """The first special-part article (分则, art. 102 on) of the criminal law cited in the OPINION or
    VERDICT, as the span of its citation (第二百六十四条)."""
    for b in doc.blocks:
        if b.type in (BlockType.OPINION, BlockType.VERDICT):
            for a, s, e in consistency.cited_articles(b.text):
                if a >= 102:
                    return b.char_start + s, b.char_start + e, b.text[s:e]
    return None


def _replace_citations(doc: Document, old: str, new: str) -> Document:
    """Every citation `old` in the OPINION and VERDICT replaced by `new`, last first so earlier offsets
    hold: a court that applies the wrong article cites it wherever it cites one."""
    spans = [
        (b.char_start + s, b.char_start + e)
        for b in doc.blocks
        if b.type in (BlockType.OPINION, BlockType.VERDICT)
        for _, s, e in consistency.cited_articles(b.text)
        if b.text[s:e] == old
    ]
    for start, end in sorted(spans, reverse=True):
        doc = replace_span(doc, start, end, new)
    return doc


def _swap(
    doc: Document, kind: str, donors: list[Document], rng: random.Random
) -> tuple[Document, Edit] | None:
    if doc.language != "zh" and kind != "name":
        return None  # English dispositions state no amounts or charges the checks read
    find = {
        # English: the surname of the first person the disposition names by title
        "name": lambda d: _first(
            d, consistency.CRIMINAL_PARTY if d.language == "zh" else consistency.EN_NAMED
        ),
        "amount": _restitution_amount,
        "charge": lambda d: _first(d, consistency.CHARGE),
        "term": _dated_term,
        "article": _special_article,
    }[kind]
    here = find(doc)
    if here is None:
        return None
    start, end, old = here
    for donor in rng.sample(donors, len(donors)):
        there = find(donor)
        # a donor value that this case already mentions would not be an inconsistency
        if there is None or there[2] == old or there[2] in doc.text:
            continue
        if kind == "amount" and {q.value for q in zh_numbers.amounts(there[2])} & {
            q.value for q in zh_numbers.amounts(doc.text)
        }:
            continue
        if kind == "term" and zh_numbers.terms(there[2])[0].value == zh_numbers.terms(old)[0].value:
            continue  # 有期徒刑1年 for 有期徒刑一年 is the same term
        new = there[2]
        copy_ = _replace_citations(doc, old, new) if kind == "article" else replace_span(doc, start, end, new)
        return copy_, Edit(kind, (start, start + len(new)), old, new)
    return None


KINDS = ("name", "amount", "charge", "term", "article")


def perturbed_copies(
    docs: list[Document], seed: int = 0, kinds: tuple[str, ...] = KINDS
) -> list[tuple[Document, Document, Edit]]:
    """(original, perturbed copy, edit) for every document and perturbation kind that applies to it."""
    rng = random.Random(seed)
    out = []
    for i, doc in enumerate(docs):
        donors = [d for d in docs[:i] + docs[i + 1 :] if d.language == doc.language]
        for kind in kinds:
            swapped = _swap(doc, kind, donors, rng)
            if swapped is not None:
                out.append((doc, *swapped))
    return out


def _overlaps(flag: consistency.Flag, span: tuple[int, int]) -> bool:
    return any(s < span[1] and span[0] < e for s, e in flag.spans)


def measure(
    docs: list[Document],
    seed: int = 0,
    articles: Callable[[Document], Mapping[int, float] | None] | None = None,
    **check_kwargs,
) -> dict:
    """False-positive rate on the real documents (share with any flag) and, per perturbation kind, the
    detection rate: share of perturbed copies with a flag whose evidence covers the edited words.

    `articles` gives the articles a model predicts from a document's facts; with it the article checks
    run (check_kwargs then may hold their charge_articles and article_threshold) and article
    perturbations are measured, otherwise neither."""

    def check(doc: Document) -> list[consistency.Flag]:
        predicted = articles(doc) if articles is not None else None
        return consistency.check_document(doc, predicted_articles=predicted, **check_kwargs)

    with_verdict = [d for d in docs if _verdicts(d)]
    flagged = sum(bool(check(d)) for d in with_verdict)
    kinds = KINDS if articles is not None else tuple(k for k in KINDS if k != "article")
    detected: dict[str, list[int]] = {}
    for _, copy_, edit in perturbed_copies(with_verdict, seed, kinds):
        hit = any(_overlaps(f, edit.span) for f in check(copy_))
        detected.setdefault(edit.kind, []).append(int(hit))
    return {
        "documents": len(with_verdict),
        "false_positive_rate": flagged / max(1, len(with_verdict)),
        "detection": {k: {"copies": len(v), "rate": sum(v) / len(v)} for k, v in detected.items()},
    }
