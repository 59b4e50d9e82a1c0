"""Tokens per second of tokenize + segment on the shared judgments, beside the bare tokenizer (one
batch encode of the same blocks, measured in this process), and the share of segmenting in the
document stages before the model (parse → segment → token ids and connective masks).

The model's forward pass comes after these stages in `ldx run`, so the printed share is an upper bound
of the tokenizer's share of the end-to-end time. One thread, as one worker of the run uses; times are
CPU seconds of this process, so other jobs on a shared machine do not skew them.

    .venv/bin/python benchmarks/segment_speed.py [--zh 200] [--en 18] [--max-tokens 384]
"""

from __future__ import annotations

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import pipeline  # noqa: E402
from pipeline.config import ParseConfig, SegmentConfig  # noqa: E402
from pipeline.errors import DocumentError  # noqa: E402
from pipeline.paths import SHARED_DATA  # noqa: E402
from pipeline.tokenizer import encode_segments, load_tokenizer  # noqa: E402


def parsed_judgments(n_zh: int, n_en: int) -> tuple[list, float]:
    """Real judgments through the parser, and the seconds the parsing took."""
    start = time.process_time()
    zh = pipeline.load_documents(
        SHARED_DATA / "zh/judgments/judge_criminal.jsonl.gz", ParseConfig(jsonl_text_field="fd")
    )
    docs = list(itertools.islice(zh, n_zh))
    # OCR off: the few image-only pages would time Tesseract, not this stage's neighbours.
    pdf_config = ParseConfig(ocr=False)
    for path in sorted((SHARED_DATA / "en/judgments/us_opinions_pdf").glob("*.pdf"))[:n_en]:
        try:
            docs.append(pipeline.parse(path, pdf_config))
        except DocumentError as e:
            print(f"skipped {e}")
    return docs, time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zh", type=int, default=200, help="zh criminal judgments")
    ap.add_argument("--en", type=int, default=18, help="en US court opinions (PDF)")
    ap.add_argument("--max-tokens", type=int, default=384)
    args = ap.parse_args()

    tokenizer = load_tokenizer()
    config = SegmentConfig(max_tokens=args.max_tokens)
    docs, parse_s = parsed_judgments(args.zh, args.en)
    pipeline.segment(docs[0], config)  # warm the tokenizer cache of load_tokenizer

    start = time.process_time()
    all_segments = [pipeline.segment(doc, config) for doc in docs]
    segment_s = time.process_time() - start

    start = time.process_time()
    for segments in all_segments:
        encode_segments(segments, tokenizer)
    encode_s = time.process_time() - start

    start = time.process_time()
    for doc in docs:
        tokenizer.count([b.text for b in doc.blocks])
    bare_s = time.process_time() - start

    n_tokens = sum(s.n_tokens for segments in all_segments for s in segments)
    n_chars = sum(len(doc.text) for doc in docs)
    stages = parse_s + segment_s + encode_s
    result = {
        "documents": len(docs),
        "chars": n_chars,
        "tokens": n_tokens,
        "segments": sum(map(len, all_segments)),
        "segment_tokens_per_s": round(n_tokens / segment_s),
        "bare_tokenizer_tokens_per_s": round(n_tokens / bare_s),
        "segment_to_bare_tokenizer_time_ratio": round(segment_s / bare_s, 2),
        "parse_s": round(parse_s, 2),
        "segment_s": round(segment_s, 2),
        "encode_ids_masks_s": round(encode_s, 2),
        "segment_plus_encode_share_of_document_stages": round((segment_s + encode_s) / stages, 3),
        "judgments_per_min_segment_plus_encode_one_core": round(60 * len(docs) / (segment_s + encode_s)),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
