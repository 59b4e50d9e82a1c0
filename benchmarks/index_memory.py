"""The index stage's memory over a run: peak RSS and the allocator's heap as the store fills.

Parses the 22 judgment PDFs once (OCR on, as `ldx run` does), then indexes their segments and K marked
copies of them in this process, as the index process does (retrieval.stage.index_segments, the shipped
model, its sentence vectors included unless --no-sentences). A copy's doc_id is new and its first
segment starts "[copy k]", so that shared-prefix reuse cannot serve it from its original's states
(as run_common.marked_pdf does for a PDF). Every --every documents handed over it prints the process's
RSS and, under glibc, the heap's bytes in use and free (mallinfo2): RSS that grows while the bytes in use
stay flat is freed memory the heap keeps, not live data.

    python benchmarks/index_memory.py [--copies 9] [--threads 2] [--every 20] [--no-sentences]

Run it on a baseline commit by putting that commit's tree first on PYTHONPATH. Under another allocator
(LD_PRELOAD) the heap columns read "-".
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import torch
from run_common import PDF_DIRS

import pipeline
from pipeline.config import ParseConfig
from pipeline.paths import SHARED_DATA
from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.stage import index_segments


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
    ]


_libc = ctypes.CDLL(None)
_mallinfo2 = getattr(_libc, "mallinfo2", None)
if _mallinfo2 is not None:
    _mallinfo2.restype = _MallInfo2


def status_mib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    return 0


def heap() -> str:
    """'in use / free' MiB of glibc's heap (mapped blocks counted as in use); '-' under another allocator."""
    info = _mallinfo2() if _mallinfo2 is not None else None
    if info is None or info.arena == 0:
        return "      -       -"
    return f"{(info.uordblks + info.hblkhd) >> 20:7d} {info.fordblks >> 20:7d}"


def documents(copies: int) -> list[list]:
    """The PDFs' segments, then `copies` marked copies of each document (module docstring)."""
    originals = []
    for path in sorted(p for rel in PDF_DIRS for p in (SHARED_DATA / rel).glob("*.pdf")):
        try:
            originals.append(pipeline.segment(pipeline.parse(path, ParseConfig())))
        except Exception as e:  # noqa: BLE001 - a PDF the pipeline rejects is left out, and said so
            print(f"skipped {path.name}: {e}", file=sys.stderr)
    docs = list(originals)
    for k in range(1, copies + 1):
        for segs in originals:
            doc_id = f"{segs[0].doc_id}~{k}"
            copy = [dataclasses.replace(s, doc_id=doc_id) for s in segs]
            copy[0] = dataclasses.replace(copy[0], text=f"[copy {k}] {copy[0].text}")
            docs.append(copy)
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--every", type=int, default=20)
    ap.add_argument("--no-sentences", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    docs = documents(args.copies)
    model, tokenizer = load_encoder(checkpoint_file(None), "cpu")
    config = RetrievalConfig(sentence_model=not args.no_sentences)
    print(f"{len(docs)} documents, {sum(map(len, docs))} segments, {args.threads} threads")
    print("  docs  seconds  RSS MiB  heap in use  free")
    t0 = time.perf_counter()

    def handed_over():
        for i, doc in enumerate(docs):
            if i % args.every == 0:
                print(f"{i:6d} {time.perf_counter() - t0:8.1f} {status_mib('VmRSS'):8d} {heap()}", flush=True)
            yield doc

    with tempfile.TemporaryDirectory() as tmp:
        counts = index_segments(tmp, handed_over(), model, tokenizer, config)
    wall = time.perf_counter() - t0
    print(f"{len(docs):6d} {wall:8.1f} {status_mib('VmRSS'):8d} {heap()}")
    print(
        f"indexed {counts['indexed_segments']} segments in {wall:.1f} s; peak RSS {status_mib('VmHWM')} MiB"
    )


if __name__ == "__main__":
    main()
