"""Whose words a span question asks for: what the court ordered (法院判决…, 应支付…, "what was he ordered to
pay") or what a party asked for (原告要求…, "what did the claimant seek"). The same sum is often claimed,
then cut down and awarded, in one judgment; `ask` ranks a span read from a sentence of the side asked about
higher (`retrieval.side_prior`).
"""

from __future__ import annotations

import re

from retrieval.answer import fits_kind
from retrieval.text import HAN

_ZH_ASKS_RULING = re.compile(
    r"判决|判令|判处|判赔|裁定|法院|本院|酌定|支持|驳回|最终|应当?(支付|赔偿|返还|承担|给付|偿还|负担)"
)
_ZH_ASKS_CLAIM = re.compile(r"要求|请求|诉请|主张|诉称|辩称|起诉|索赔|索要")
_EN_ASKS_RULING = re.compile(r"\b(order(ed|s)?|award(ed|s)?|sentenced?|granted|judgment for)\b", re.I)
_EN_ASKS_CLAIM = re.compile(
    r"\b(claim(ed)?|seek|sought|ask(ed)? for|request(ed)?|demand(ed)?|argue[ds]?|contend(ed)?)\b", re.I
)
_ZH_CLAIMED = re.compile(r"请求|诉请|要求|诉至|诉称|辩称|上诉称|申请再审称|主张")
_EN_CLAIMED = re.compile(
    r"\b(claim(s|ed)|seeks?|sought|request(s|ed)|demand(s|ed)|argue[sd]|contend(s|ed)|submit(s|ted))\b", re.I
)
CLAIM_BLOCKS = frozenset({"CLAIMS", "DEFENSE"})


def asked_side(question: str) -> str | None:
    """The side a question asks about: "ruling" (what the court ordered), "claim" (what a party asked for)
    or None; a question naming the court asks about its ruling even when it names a request."""
    zh = bool(HAN.search(question))
    if (_ZH_ASKS_RULING if zh else _EN_ASKS_RULING).search(question):
        return "ruling"
    return "claim" if (_ZH_ASKS_CLAIM if zh else _EN_ASKS_CLAIM).search(question) else None


def on_asked_side(question: str, block_type: str, sentence: str) -> bool:
    """Whether the sentence is on the side the question asks about (`asked_side`): a ruling (`fits_kind` of
    a decision), or a party's words (its block CLAIMS or DEFENSE, or it reports a request: 诉至法院，请求…)."""
    side = asked_side(question)
    if side is None:
        return False
    ruled = fits_kind("decision", block_type, sentence)
    claimed = not ruled and (
        block_type in CLAIM_BLOCKS
        or bool((_ZH_CLAIMED if HAN.search(sentence) else _EN_CLAIMED).search(sentence))
    )
    return ruled if side == "ruling" else claimed
