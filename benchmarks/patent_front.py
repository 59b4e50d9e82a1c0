"""A patent PDF's front page as the parser reads it: number, grant and filing dates, title, inventors and
assignee in `documents.meta` / `title`, against hand-written gold for the 12 shared patent PDFs.

    .venv/bin/python benchmarks/patent_front.py [--data ../shared/data] [--json FILE]

Gold: `benchmarks/data/patent_front.json` (how it was made is in its "about"). Printed per field: values
right, wrong (a value that is not the gold's) and missing, over the fields the gold states; inventors are
counted one name each. Run it from a checkout of another commit to compare (PYTHONPATH=that checkout).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from pipeline.parsing import parse_file

FIELDS = ("number", "granted", "filed", "title", "inventors", "assignee")
GOLD = Path(__file__).resolve().parent / "data" / "patent_front.json"


def _norm(s: str) -> str:
    return re.sub(r"[^a-z]", "", s.lower())


def read_fields(path: Path) -> dict[str, object]:
    doc = parse_file(path)
    meta = doc.meta
    return {
        "number": meta.patent_number,
        "granted": meta.date.isoformat() if meta.date else None,
        "filed": meta.filing_date.isoformat() if meta.filing_date else None,
        "title": doc.title,
        "inventors": [p.name for p in meta.parties if p.role == "inventor"],
        "assignee": next((p.name for p in meta.parties if p.role == "assignee"), None),
    }


def score(gold: dict, got: dict) -> dict[str, list[int]]:
    """Per field [right, wrong, missing]."""
    out = {f: [0, 0, 0] for f in FIELDS}
    for f in FIELDS:
        want, have = gold[f], got[f]
        if want is None:
            continue
        if f == "inventors":
            names = {_norm(n) for n in have}
            right = sum(_norm(n) in names for n in want)
            out[f][0] += right
            out[f][1 if have else 2] += len(want) - right
            continue
        same = _norm(want) == _norm(have or "") if f in ("title", "assignee") else want == have
        out[f][0 if same else (2 if have is None else 1)] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    gold = json.loads(GOLD.read_text(encoding="utf-8"))["patents"]
    totals = {f: [0, 0, 0] for f in FIELDS}
    read = {}
    for name, want in sorted(gold.items()):
        read[name] = got = read_fields(args.data / "en" / "patents" / "pdf" / name)
        for f, counts in score(want, got).items():
            totals[f] = [a + b for a, b in zip(totals[f], counts, strict=True)]
        print(name, json.dumps(got, ensure_ascii=False))
    right = sum(t[0] for t in totals.values())
    stated = sum(sum(t) for t in totals.values())
    print(f"\n{'field':10s} right wrong missing")
    for f, (r, w, m) in totals.items():
        print(f"{f:10s} {r:5d} {w:5d} {m:7d}")
    print(f"all fields: {right}/{stated} = {right / stated:.3f} right")
    if args.json:
        args.json.write_text(
            json.dumps({"totals": totals, "right": right, "stated": stated, "read": read}, indent=1)
        )


if __name__ == "__main__":
    main()
