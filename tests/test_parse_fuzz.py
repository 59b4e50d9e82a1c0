"""Fuzzing the readers with mutated real files (bytes flipped, cut short, spliced with another file,
inside or outside their gzip layer): every input gives documents and per-record errors, or one
`DocumentError`, never another exception, and reading it holds a bounded amount of memory."""

from __future__ import annotations

import gzip
import resource
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import ParseConfig
from pipeline.errors import DocumentError
from pipeline.parsing import iter_documents

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
SEEDS = [
    "en/judgments/us_opinions_pdf/circuit_8thCircuit-071306U.pdf",
    "en/judgments/uk_ewca_2020_xml/2020-ewca-77-civ.xml.gz",
    "en/patents/uspto_samples_go_uspto/grant/v2-5-S1.xml",
    "en/judgments/us_opinions_fastcase_xml/NE2d/944/944ne2d1119.xml",
    "zh/doc/张某院某民间借贷纠纷再审审查和审判监督民事裁定书.doc",
    "en/patents/pdf/us-223898-edison-lightbulb.source_text.txt",
]
MULTI = (".jsonl", ".jsonl.gz", ".xml", ".xml.gz")  # several documents (or records) per file
# Small limits, so that mutations reach them and the bound below means something.
CONFIG = ParseConfig(ocr_max_pages=1, max_decompressed_bytes=16 * 2**20, max_line_bytes=2**20)
PYTHON_HEAP = 64 * 2**20  # what reading one mutated input may allocate in Python at its peak
PROCESS_GROWTH = 512 * 2**20  # and what the whole fuzz run may add to the process's peak RSS


def _name(path: str) -> str:
    name = Path(path).name
    return next((name[-len(s) :] for s in (".jsonl.gz", ".xml.gz") if name.endswith(s)), Path(path).suffix)


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


seeds_rss: list[int] = []  # the process's peak RSS before the first fuzz case


@pytest.fixture(scope="module")
def seeds(shared_data) -> list[tuple[str, bytes]]:
    seeds_rss.append(_max_rss())
    out = [(_name(p), (shared_data / p).read_bytes()) for p in SEEDS]
    out.append((".pdf", (SAMPLES / "zh_civil_judgment.pdf").read_bytes()))
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rb") as f:
        out.append((".jsonl", b"".join(next(f) for _ in range(3))))
    return out


@st.composite
def mutations(draw, n_seeds: int):
    """(seed index, whether to mutate inside the gzip layer, edits): each edit flips, cuts or splices."""
    edits = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["flip", "cut", "splice"]),
                st.floats(0, 1),
                st.integers(1, 4096),
                st.integers(0, n_seeds - 1),
                st.integers(0, 255),
            ),
            min_size=1,
            max_size=4,
        )
    )
    return draw(st.integers(0, n_seeds - 1)), draw(st.booleans()), edits


def _mutate(data: bytes, edits, seeds: list[tuple[str, bytes]]) -> bytes:
    buf = bytearray(data)
    for op, where, size, other, value in edits:
        at = int(where * len(buf))
        if op == "flip":
            for i in range(at, min(at + max(1, size // 256), len(buf))):
                buf[i] ^= value or 0xFF
        elif op == "cut":
            del buf[at:]
        else:  # a piece of another real file in place of this file's bytes
            piece = seeds[other][1]
            start = int(where * max(len(piece) - size, 0))
            buf[at : at + size] = piece[start : start + size]
    return bytes(buf)


def _read(path: Path) -> tuple[int, list]:
    """(documents, errors) from the reader, or (0, [the one DocumentError it raised])."""
    errors: list = []
    try:
        docs = sum(1 for _ in iter_documents(path, CONFIG, errors))
    except DocumentError as e:
        return 0, [e]
    return docs, errors


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.data())
def test_mutated_real_files_give_documents_or_one_line_errors(seeds, data):
    index, inside_gzip, edits = data.draw(mutations(len(seeds)))
    suffix, original = seeds[index]
    if inside_gzip and original[:2] == b"\x1f\x8b":
        mutated = gzip.compress(_mutate(gzip.decompress(original), edits, seeds))
    else:
        mutated = _mutate(original, edits, seeds)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"input{suffix}"
        path.write_bytes(mutated)
        tracemalloc.start()
        try:
            docs, errors = _read(path)  # any exception but a DocumentError fails the test here
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert all(isinstance(e, DocumentError) and "\n" not in str(e) for e in errors), errors
    if suffix not in MULTI:
        assert docs + len(errors) == 1, (docs, errors)
    assert peak < PYTHON_HEAP, f"{peak / 2**20:.0f} MiB for {path.name}"
    # the C libraries' memory (MuPDF, lxml) is outside tracemalloc's view: bound the process as well
    assert _max_rss() - seeds_rss[0] < PROCESS_GROWTH
