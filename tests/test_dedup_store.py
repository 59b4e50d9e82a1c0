"""Near-duplicates across batches and runs: the MinHash signatures of earlier documents persist under
OUT_DIR, a pair split across two batches is found, and a rerun adds neither entries nor rows."""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys

import numpy as np
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


def test_each_batch_writes_only_its_own_signatures(batches, tmp_path):
    """A batch's update writes a part of its own entries, not every signature seen so far again."""
    (first, first_segs), (second, second_segs) = batches
    predict_stage(first, first_segs, ONLY_DUPLICATES, out_dir=str(tmp_path))
    after_first = SignatureStore(tmp_path).load()
    predict_stage(second, second_segs, ONLY_DUPLICATES, out_dir=str(tmp_path))
    held = []
    for part in (tmp_path / "dedup").glob("minhash-*.npz"):
        with np.load(part) as z:
            held.append(frozenset(z["documents_ids"].tolist()))
    assert sorted(held, key=len) == sorted(
        [frozenset(d.doc_id for d in first), frozenset(d.doc_id for d in second)], key=len
    )
    assert after_first.documents.keys() == {d.doc_id for d in first}


def test_a_part_another_process_wrote_is_read_by_the_next_batch(batches, shared_data, tmp_path):
    """Dask workers share OUT_DIR: a process that kept what it read still sees what others wrote since."""
    (first, _), (second, second_segs) = batches
    copy_segs = [s for s in second_segs if s.doc_id == "refiled-copy"]
    others = [s for s in second_segs if s.doc_id != "refiled-copy"]
    predict_stage(second[:-1], others, ONLY_DUPLICATES, out_dir=str(tmp_path))  # kept in this process
    # another process writes the first batch, which holds the original of the copy
    code = (
        "import itertools, sys, pipeline\n"
        "from pipeline.config import ParseConfig\n"
        "from retrieval.predict.config import PredictConfig\n"
        "from retrieval.predict.stage import predict_stage\n"
        "docs = list(itertools.islice(pipeline.load_documents(sys.argv[1], ParseConfig(jsonl_text_field='fd')), 6))\n"
        "only = PredictConfig(roles=False, articles=False, consistency=False, provisos=False, connective_attention=False)\n"
        "predict_stage(docs, [s for d in docs for s in pipeline.segment(d)], only, out_dir=sys.argv[2])\n"
    )
    source = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    subprocess.run([sys.executable, "-c", code, str(source), str(tmp_path)], check=True, timeout=300)
    rows = _duplicate_rows(predict_stage(second[-1:], copy_segs, ONLY_DUPLICATES, out_dir=str(tmp_path)))
    assert rows == [("refiled-copy", first[0].doc_id)]
