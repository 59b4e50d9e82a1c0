"""Questions about a patent's numbered claims ("What does claim 1 claim?", "What is claimed in claim 3?").

Such a question asks for the text of one claim, which a search ranks poorly: "claim" is in every line of a
claims section, and in a judgment beside it the word is a party's claim. `asked_claim(question)` reads the
claim's number; `states_claim(n, block_type, sentence)` is true of the sentence that opens claim n in a
claims block ("1. A fluorescence sensor comprising: …"), which `retrieval.answer.rank_sentences` then puts
first among the document's claims.
"""

from __future__ import annotations

import re

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
