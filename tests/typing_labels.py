"""Character-level typing accuracy of English judgment PDFs against the hand labels in
`tests/data/en_judgment_typing.json`.

Each label is one block of a shared US opinion PDF (under `en/judgments/us_opinions_pdf`): its page, the
first 40 characters of its text, its length and its gold part of the judgment, one of four: `header`
(court, case number, parties, counsel, judges, the cover page), `body` (facts, reasoning, headings),
`footnote` and `disposition` (the order made, what follows it: signatures, concurrences). The labels
were set by hand by reading every block of the parser's output of five opinions (blocks without two
letters running, rules and caption brackets, are left out); the shared data holds no UK opinion PDF.
The four pages whose blocks changed when rules, caption asterisks and clerks' stamps stopped being text
(page 1 of the Fifth Circuit's two and the Eighth Circuit's, page 5 of the Missouri opinion) were
labelled again the same way.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from pipeline.config import ParseConfig
from pipeline.parsing import parse_file
from pipeline.records import BlockType

LABELS = Path(__file__).resolve().parent / "data" / "en_judgment_typing.json"
PART = {
    BlockType.HEADER: "header",
    BlockType.PARTIES: "header",
    BlockType.APPENDIX: "footnote",  # DESIGN: footnotes are APPENDIX blocks
    BlockType.VERDICT: "disposition",
    BlockType.SIGNATURE: "disposition",
}


def part(kind: BlockType) -> str:
    """The part of a judgment a block type belongs to; every other type is body text."""
    return PART.get(kind, "body")


def typing_accuracy(data: Path) -> tuple[float, dict[str, tuple[int, int]], list[str]]:
    """Share of labelled characters whose block has its gold part; per gold part (right, all) and the
    misses. A label whose block is gone (no block on its page starts with its prefix) counts as missed."""
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    per_doc: dict[str, list[dict]] = defaultdict(list)
    for lab in labels:
        per_doc[lab["doc"]].append(lab)
    parts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses = []
    for name, labs in per_doc.items():
        doc = parse_file(data / "en/judgments/us_opinions_pdf" / name, ParseConfig(ocr=False))
        for lab in labs:
            found = next(
                (b for b in doc.blocks if b.page == lab["page"] and b.text.startswith(lab["prefix"])), None
            )
            got = part(found.type) if found is not None else "missing"
            parts[lab["gold"]][1] += lab["chars"]
            if got == lab["gold"]:
                parts[lab["gold"]][0] += lab["chars"]
            else:
                misses.append(f"{name} p{lab['page']}: {lab['prefix']!r} gold {lab['gold']}, got {got}")
    right = sum(r for r, _ in parts.values())
    total = sum(n for _, n in parts.values())
    return right / max(total, 1), {k: (r, n) for k, (r, n) in parts.items()}, misses
