"""Near-duplicates across batches and runs: the MinHash signatures of earlier documents persist under
OUT_DIR, a pair split across two batches is found, and a rerun adds neither entries nor rows."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

import pipeline
from pipeline.config import ParseConfig
from retrieval.predict.config import PredictConfig
from retrieval.predict.dedup import SignatureStore
from retrieval.predict.stage import predict_stage

ONLY_DUPLICATES = PredictConfig(
    roles=False, articles=False, consistency=False, provisos=False, connective_attention=False
)


def _copy(doc, doc_id: str):
    blocks = [dataclasses.replace(b, doc_id=doc_id) for b in doc.blocks]
    return dataclasses.replace(doc, doc_id=doc_id, blocks=blocks)


@pytest.fixture(scope="module")
def batches(shared_data):
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    docs = list(itertools.islice(pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")), 12))
    # the copy of the first judgment arrives in the second batch (a re-filed or re-published judgment)
    first, second = docs[:6], docs[6:] + [_copy(docs[0], "refiled-copy")]
    return [(b, [s for d in b for s in pipeline.segment(d)]) for b in (first, second)]


def _duplicate_rows(preds):
    return sorted((p.doc_id, p.value) for p in preds if p.task == "near_duplicate")


def test_pair_split_across_batches_is_found_and_reruns_add_nothing(batches, tmp_path):
    (first, first_segs), (second, second_segs) = batches
    original = first[0].doc_id
    assert _duplicate_rows(predict_stage(first, first_segs, ONLY_DUPLICATES, out_dir=str(tmp_path))) == []
    rows = _duplicate_rows(predict_stage(second, second_segs, ONLY_DUPLICATES, out_dir=str(tmp_path)))
    # the earlier document's rows were written with its batch; the new side names it
    assert rows == [("refiled-copy", original)]
    # without the stored signatures the second batch alone finds nothing
    assert _duplicate_rows(predict_stage(second, second_segs, ONLY_DUPLICATES)) == []

    stored = SignatureStore(tmp_path).load()
    n_docs, n_passages = len(stored.documents), len(stored.passages)
    assert n_docs == 13 and n_passages > 13
    # a rerun of the second batch: the same single row, no second copy of any stored entry
    again = predict_stage(second, second_segs, ONLY_DUPLICATES, out_dir=str(tmp_path))
    assert _duplicate_rows(again) == rows
    shared = [p for p in again if p.task == "shared_passage"]
    assert len({p.segment_id for p in shared}) == len(shared)
    assert all(p.doc_id == "refiled-copy" for p in shared)
    rerun = SignatureStore(tmp_path).load()
    assert (len(rerun.documents), len(rerun.passages)) == (n_docs, n_passages)
    # the first batch rerun now sees its copy from the later batch, on its own side only
    assert _duplicate_rows(predict_stage(first, first_segs, ONLY_DUPLICATES, out_dir=str(tmp_path))) == [
        (original, "refiled-copy")
    ]


def test_a_symlink_planted_as_the_lock_file_is_refused_and_its_target_left_alone(tmp_path):
    store = SignatureStore(tmp_path / "out")
    store.path.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    store.path.with_suffix(".lock").symlink_to(victim)
    with pytest.raises(OSError), store.update():
        pass
    assert victim.read_text(encoding="utf-8") == "keep me"
    assert not store.path.exists()
