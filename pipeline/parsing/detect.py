"""Language and document-kind detection from the text itself."""

from __future__ import annotations

import re

from pipeline.parsing.kinds import registry
from pipeline.records import DocKind

_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_SAMPLE = 5000  # enough characters to tell the script apart
MIN_SCORE = 0.15  # below this no kind is convincing and the document stays generic


def detect_language(text: str) -> str:
    sample = text[:_SAMPLE]
    han = len(_HAN.findall(sample))
    # A Chinese document quotes Latin names and numbers; a Han char carries ~3 letters' worth of text.
    return "zh" if han * 3 >= len(_LATIN.findall(sample)) and han > 0 else "en"


def detect_kind(text: str, language: str) -> DocKind:
    scores = {kind: mod.score(text, language) for kind, mod in registry().items()}
    best = max(scores, key=scores.get)
    return best if scores[best] >= MIN_SCORE else DocKind.GENERIC
