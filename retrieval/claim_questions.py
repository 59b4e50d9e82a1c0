"""Questions about a patent's numbered claims: the text of one ("What does claim 1 claim?", "What is claimed
in claim 3?") and the claim tree ("Which claims depend on claim 1?", "What claim does claim 5 depend on?",
"Is claim 4 independent?", "Does claim 9 depend on claim 1?", "Which claims are independent?", "How many
claims does the patent have?").

A claim's text is a question a search ranks poorly: "claim" is in every line of a claims section, and in a
judgment beside it the word is a party's claim. `asked_claim(question)` reads the claim's number;
`states_claim(n, block_type, sentence)` is true of the sentence that opens claim n in a claims block ("1. A
fluorescence sensor comprising: …"), which `retrieval.sentence_rank.rank_sentences` then puts first among the
document's claims. The claim tree is no sentence's to state: `claim_tree_answer(question, passages)` reads
it from the claims' own wording ("The device of claim 1, wherein …"), as the predict stage's claim tree
does, and answers with the claims it rests on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.parsing.kinds.patent import claim_dependencies, claim_number
from retrieval.hybrid import Passage
from retrieval.text import joined

_ASKS_CLAIM = re.compile(
    r"^\s*what\s+(?:does|did|is|was)\s+(?:in\s+)?claim\s+(\d{1,3})\b|"
    r"\bclaimed\s+(?:in|by)\s+claim\s+(\d{1,3})\b|"
    r"\b(?:text|scope|wording|subject[- ]matter|elements?)\s+of\s+claim\s+(\d{1,3})\b",
    re.I,
)
CLAIM_BLOCKS = frozenset({"CLAIM"})


def asked_claim(question: str) -> int | None:
    """The number of the claim whose text the question asks for, or None."""
    m = _ASKS_CLAIM.search(question)
    return int(next(g for g in m.groups() if g)) if m else None


def states_claim(n: int, block_type: str, sentence: str) -> bool:
    """The sentence opening claim `n` in a claims block."""
    return block_type in CLAIM_BLOCKS and re.match(rf"\s*{n}\s*\.\s", sentence) is not None


# ---- the claim tree: which claims depend on which ---------------------------------------------------

_N = r"claim\s+(?:no\.\s*)?(\d{1,3})"
_TREE_ASKS: list[tuple[str, re.Pattern[str]]] = [
    # "Does claim 5 depend on claim 1?", "Is claim 5 dependent on claim 2?"
    (
        "depends",
        re.compile(
            rf"^\s*(?:does|is)\s+{_N}\s+(?:depend(?:ent)?|refer(?:\s+back)?)\s+(?:on|upon|from|to)\s+{_N}",
            re.I,
        ),
    ),
    # "Is claim 4 an independent claim?", "Is claim 4 a dependent claim?"
    ("kind", re.compile(rf"^\s*is\s+{_N}\s+(?:an?\s+)?(in)?dependent\b", re.I)),
    # "Which claims depend on claim 1?", "List the claims that depend from claim 3."
    (
        "dependents",
        re.compile(
            r"\bclaims\s+(?:that\s+|which\s+)?(?:depend|are\s+dependent|refer(?:\s+back)?)\s+"
            rf"(?:on|upon|from|to)\s+"
            rf"{_N}|\bdependent\s+claims\s+of\s+{_N}",
            re.I,
        ),
    ),
    # "What claim does claim 5 depend on?", "Which claim is claim 5 dependent on?", "parent claim of claim 5"
    (
        "parents",
        re.compile(
            rf"\b{_N}\s+(?:depends?|(?:is\s+)?dependent|refers?(?:\s+back)?)\b"
            rf"|\bparent\s+(?:claims?\s+)?of\s+{_N}",
            re.I,
        ),
    ),
    # "How many claims does the patent have?", "How many independent claims are there?"
    ("count", re.compile(r"\bhow\s+many\s+(independent\s+|dependent\s+)?claims\b", re.I)),
    # "Which claims are independent?", "What are the independent claims?"
    (
        "independents",
        re.compile(
            r"\b(?:which|what)\s+(?:are\s+)?(?:the\s+)?(?:claims\s+are\s+)?independent\b"
            r"|\bindependent\s+claims\s+(?:are|of)\b|\blist\s+the\s+independent",
            re.I,
        ),
    ),
]


def asks_tree(question: str) -> str | None:
    """Which claim-tree question this is ("depends", "kind", "dependents", "parents", "independents",
    "count"), or None."""
    return next((kind for kind, rx in _TREE_ASKS if rx.search(question)), None)


# "What is claimed is:", "I claim:": the claims' lead-in, typed with them
_LEAD_IN = re.compile(r"^[^.]{0,80}:\s*$")


@dataclass(frozen=True)
class Claim:
    number: int
    parents: tuple[int, ...]  # the claims its wording refers back to
    segment_id: str
    text: str


def claim_tree(passages: list[Passage]) -> dict[int, Claim]:
    """The document's claims by number (one passage per block), each with the earlier claims it refers back
    to ("The device of claim 1", "as claimed in any of claims 2 to 4"); a claim printed without its number
    takes its place, the lead-in before the claims none."""
    claims: dict[int, Claim] = {}
    for p in (p for p in passages if p.block_type in CLAIM_BLOCKS):
        if claim_number(p.text) is None and _LEAD_IN.match(p.text):
            continue
        number = claim_number(p.text) or len(claims) + 1
        parents = tuple(n for n in claim_dependencies(p.text) if 0 < n < number)
        claims.setdefault(number, Claim(number, parents, p.segment_id, p.text.strip()))
    return claims


def _listed(numbers: list[int]) -> str:
    """ "claim 1", "claims 2 and 5", "claims 2, 3 and 5"."""
    ns = [str(n) for n in sorted(numbers)]
    return ("claim " if len(ns) == 1 else "claims ") + joined(ns)


def _ancestors(claims: dict[int, Claim], n: int) -> set[int]:
    """Every claim that claim n depends on, directly or through another."""
    out: set[int] = set()
    todo = list(claims[n].parents)
    while todo:
        if (p := todo.pop()) not in out and p in claims:
            out.add(p)
            todo += claims[p].parents
    return out


_Answer = tuple[str, str, list[tuple[str, str]]]


def _units(claims: list[Claim]) -> list[tuple[str, str]]:
    return [(c.segment_id, c.text) for c in claims]


def claim_tree_answer(question: str, passages: list[Passage]) -> _Answer | None:
    """(answer, answer type, the claims it rests on) of a claim-tree question (`asks_tree`) from a patent's
    passages, one per block; None when the question asks none or the document has no claims. A claim the
    patent does not have is answered "none", with its last claim shown."""
    kind = asks_tree(question)
    claims = claim_tree(passages) if kind else {}
    if not claims:
        return None
    asked = [int(n) for n in re.findall(r"claim\s+(?:no\.\s*)?(\d{1,3})", question, re.I)]
    last = claims[max(claims)]
    if missing := [n for n in asked if n not in claims]:
        return f"none: the patent has no claim {missing[0]}", "none", _units([last])
    independent = [c for c in claims.values() if not c.parents]
    if kind == "count":
        which = re.search(r"how\s+many\s+(independent|dependent)", question, re.I)
        if which is None:
            return f"{len(claims)} claims", "span", _units([last])
        wanted = which.group(1).lower()
        chosen = [c for c in claims.values() if (wanted == "dependent") == bool(c.parents)]
        return f"{len(chosen)} {wanted} claim{'s' * (len(chosen) != 1)}", "span", _units(chosen[:3] or [last])
    if kind == "independents":
        return _listed([c.number for c in independent]), "span", _units(independent)
    return _about_claim(kind, question, asked, claims)


def _about_claim(kind: str, question: str, asked: list[int], claims: dict[int, Claim]) -> _Answer:
    """The answer of a question about claim `asked[0]`: its dependents, its parents, whether it is
    (in)dependent, whether it depends on claim `asked[1]`."""
    claim = claims[asked[0]]
    if kind == "dependents":
        children = [c for c in claims.values() if claim.number in c.parents]
        if not children:
            return f"none: no claim refers back to claim {claim.number}", "none", _units([claim])
        return _listed([c.number for c in children]), "span", _units(children)
    if kind == "parents":
        if not claim.parents:
            return f"none: claim {claim.number} is independent", "none", _units([claim])
        return _listed(list(claim.parents)), "span", _units([claim])
    if kind == "kind":
        yes = bool(claim.parents) == (re.search(r"\bdependent\b", question, re.I) is not None)
    else:
        yes = asked[1] in _ancestors(claims, claim.number)
    return ("YES", "yes", _units([claim])) if yes else ("NO", "no", _units([claim]))
