"""Typing of English judgment PDFs: character-level accuracy against hand labels.

    .venv/bin/python benchmarks/pdf_typing.py [--data ../shared/data]

The labels (`tests/data/en_judgment_typing.json`, described in `tests/typing_labels.py`) give each
block of five shared US opinion PDFs its part of the judgment: header, body, footnote or disposition.
Printed: the share of labelled characters typed right, per part, and the blocks typed wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the labels and their scorer
from typing_labels import typing_accuracy  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
    ap.add_argument("--show", type=int, default=20, help="blocks typed wrong printed")
    args = ap.parse_args()
    accuracy, parts, misses = typing_accuracy(args.data.resolve())
    print(f"typing accuracy (characters): {accuracy:.1%}")
    for name, (right, total) in sorted(parts.items()):
        print(f"  {name:12s} {right:6d}/{total:6d} = {right / max(total, 1):6.1%}")
    for line in misses[: args.show]:
        print("  miss:", line)


if __name__ == "__main__":
    main()
