"""The cache's data-only entries (pipeline.records_codec): a FileWork of real parsed, segmented and
predicted documents reads back equal, field by field and type by type, and so do generated records;
data that does not fit its type is refused, and a type without a data form is refused before any data
is read."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline
from flows.file_cache import FileCache
from flows.work import FileWork, InputFile
from pipeline.config import ParseConfig
from pipeline.errors import EmptyDocument
from pipeline.parsing import iter_documents
from pipeline.records import (
    Block,
    DocMeta,
    Document,
    ErrorRecord,
    Evidence,
    Party,
    Prediction,
    Segment,
    sha256_file,
)
from pipeline.records_codec import CodecError, dumps, loads
from retrieval.predict.config import PredictConfig
from retrieval.predict.stage import predict_stage
from retrieval.stages import DocWork

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
RECORDS = (
    InputFile,
    FileWork,
    DocWork,
    Document,
    DocMeta,
    Party,
    Block,
    Segment,
    Prediction,
    Evidence,
    ErrorRecord,
)
for _cls in RECORDS:  # every field drawn, not only those without a default (st.builds' own choice)
    st.register_type_strategy(_cls, st.builds(_cls, **{f.name: ... for f in dataclasses.fields(_cls)}))


def _file(path: Path) -> FileWork:
    work = FileWork(InputFile(str(path), sha256_file(path), path.stat().st_size))
    work.docs = [DocWork(d, pipeline.segment(d)) for d in iter_documents(path, ParseConfig())]
    return work


@pytest.fixture(scope="module")
def works() -> list[FileWork]:
    """The samples (a patent, English and Chinese judgments) with every rules and text-head task's
    predictions, a near-duplicate copy of one judgment, and errors."""
    out = [_file(p) for p in sorted(SAMPLES.glob("*.pdf"))]
    copy = _file(SAMPLES / "zh_civil_judgment.pdf")
    copy.file = InputFile("copy.pdf", "cd" * 32, copy.file.size)
    copy.docs[0].document.doc_id = "copy"
    for b in copy.docs[0].document.blocks:
        b.doc_id = "copy"
    copy.docs[0].segments = [dataclasses.replace(s, doc_id="copy") for s in copy.docs[0].segments]
    out.append(copy)
    docs = [d for w in out for d in w.docs]
    config = PredictConfig(role_encoder=False, claim_support_dense=False, connective_attention=False)
    preds = predict_stage([d.document for d in docs], [s for d in docs for s in d.segments], config)
    for d in docs:
        d.predictions = [p for p in preds if p.doc_id == d.document.doc_id]
    out[0].fail(out[0].file.path, "parse", EmptyDocument(out[0].file.path, "page 4 has no text"))
    out[1].fail(out[1].file.path, "predict", RuntimeError("the device went away"), "d1")
    docs[0].document.warnings.append("a record's lone surrogate: \ud800")  # JSONL text may hold one
    return out


def test_real_work_reads_back_exactly(works, tmp_path):
    preds = [p for w in works for d in w.docs for p in d.predictions]
    tasks = {p.task for p in preds}
    assert {"block_role", "claim_tree", "claim_support", "proviso", "articles", "shared_passage"} <= tasks
    assert "near_duplicate" in tasks
    evidence = [e for p in preds for e in p.evidence]
    assert any(e.bbox for e in evidence) and any(e.char_start is None for e in evidence)
    blocks = [b for w in works for d in w.docs for b in d.document.blocks]
    assert all(b.spans and isinstance(b.bbox, tuple) for b in blocks)
    assert any(d.document.meta.date for w in works for d in w.docs)
    cache = FileCache(tmp_path, "fp", key=b"k" * 32)
    for work in works:
        back = loads(dumps(work), FileWork)
        assert back == work and repr(back) == repr(work)  # repr: the same types (tuple, enum, date) too
        cache.put(work)
        got = cache.get(work.file)
        assert got.cached and dataclasses.replace(got, cached=False) == work
    assert all(p.suffix == ".json" for p in (tmp_path / "entries").iterdir())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(st.from_type(FileWork))
def test_generated_work_reads_back_exactly(work):
    # repr, not ==: a NaN equals nothing, and -0.0 equals 0.0
    assert repr(loads(dumps(work), FileWork)) == repr(work)


def test_a_numpy_score_is_written_as_the_float_it_equals():
    pred = Prediction("d", "t", "v", np.float32(0.3), "m", evidence=[Evidence("d:0", np.int64(2), 5)])
    back = loads(dumps(pred), Prediction)
    assert back == pred and type(back.score) is float and type(back.evidence[0].char_start) is int


BLOCK = {
    "doc_id": "d",
    "block_idx": 0,
    "type": "OPINION",
    "text": "x",
    "char_start": 0,
    "char_end": 1,
    "page": None,
    "bbox": [1.0, 2.0, 3.0, 4.0],
    "ocr": False,
    "spans": [[0, [1, 2, 3, 4]]],
}


@pytest.mark.parametrize(
    "change",
    [
        {"block_idx": True},  # JSON's true is no int here
        {"char_start": 1.0},
        {"text": None},
        {"type": "NOT_A_TYPE"},
        {"bbox": [1.0, 2.0, 3.0]},
        {"spans": [[0, [1, 2, 3, 4], 5]]},
        {"ocr": 0},
        {"__class__": "os.system"},  # a name in the data is one field too many, never looked up
    ],
)
def test_data_that_does_not_fit_is_refused(change):
    assert loads(json.dumps(BLOCK).encode(), Block).bbox == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(CodecError):
        loads(json.dumps({**BLOCK, **change}).encode(), Block)


def test_a_missing_field_or_a_payload_that_is_not_json_is_refused():
    less = {k: v for k, v in BLOCK.items() if k != "ocr"}
    with pytest.raises(CodecError, match="fields"):
        loads(json.dumps(less).encode(), Block)
    with pytest.raises(CodecError, match="not JSON"):
        loads(b"\x80\x04\x95 a pickle's first bytes", Block)


@pytest.mark.parametrize(
    "value",
    [
        DocMeta(date=dt.datetime(2024, 1, 1, 12)),  # would read back as a date
        Party("n", 3),
        Prediction("d", "t", "v", "0.5", "m"),
        Block("d", 0, "NOT_A_TYPE", "x", 0, 1),
        Document(
            "d", "s", "generic", "en", "x", meta=DocMeta(parties=[dataclasses.make_dataclass("P", [])()])
        ),
    ],
)
def test_a_value_that_does_not_fit_its_annotation_is_not_written(value):
    with pytest.raises(CodecError):
        dumps(value)


@pytest.mark.parametrize("hint", ["dict[str, int]", "int | str", "tuple[int, ...]", "set[str]", "object"])
def test_a_type_without_a_data_form_is_refused_before_any_data(hint):
    odd = dataclasses.make_dataclass("Odd", [("x", hint, dataclasses.field(default=None))])
    with pytest.raises(TypeError, match="data form"):
        dumps(odd())
    with pytest.raises(TypeError, match="data form"):
        loads(b"not even JSON", odd)
