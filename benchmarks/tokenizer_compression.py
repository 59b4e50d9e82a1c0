"""Tokens per character of the shipped tokenizer on the records held apart from its training, per corpus
and per language, as ratios to a character baseline (1 token per character) and a byte baseline (1 token
per UTF-8 byte, what a byte-level model reads). The held-apart split is the one training used, re-made
from data/tokenizer/training.json (corpora, seed, fraction).

    .venv/bin/python benchmarks/tokenizer_compression.py [--tokenizer data/tokenizer]
"""

from __future__ import annotations

from pipeline.environment import set_environment_defaults

set_environment_defaults()  # before `tokenizers` is imported

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from pipeline.paths import REPO_ROOT, TOKENIZER_FILE  # noqa: E402
from pipeline.tokenizer import CorpusSpec, held_out_report, load_tokenizer, split_corpus  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokenizer", type=Path, default=TOKENIZER_FILE.parent, help="folder with training.json")
    args = ap.parse_args()

    training = json.loads((args.tokenizer / "training.json").read_text(encoding="utf-8"))
    tokenizer = load_tokenizer(args.tokenizer)
    held = {}
    for corpus in training["corpora"]:
        spec = CorpusSpec.parse(corpus)
        spec = CorpusSpec(
            REPO_ROOT / spec.path, spec.fields
        )  # the recorded paths are relative to the repository
        held[corpus] = split_corpus(spec, training["seed"], training["holdout"], max_chars=0)[1]
    for name, row in held_out_report(tokenizer, held).items():
        print(json.dumps({"corpus": Path(name).name if not name.startswith("all ") else name, **row}))


if __name__ == "__main__":
    main()
