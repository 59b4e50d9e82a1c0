"""Every prediction row says what it rests on: the predictions Parquet part of a file carries a model
card (task -> model id -> held-apart figures) for exactly the rows it holds."""

from __future__ import annotations

import itertools
import json

import pyarrow.parquet as pq
import pytest

import pipeline
from flows.tasks import FileWork, InputFile, write_parts
from pipeline.config import ParseConfig
from pipeline.records import sha256_file
from pipeline.store import OutputStore
from retrieval.predict.card import MODEL_CARD, model_card
from retrieval.predict.config import PredictConfig
from retrieval.predict.stage import load_heads, predict_stage
from retrieval.stages import DocWork

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_predictions_part_carries_the_card_of_its_rows(shared_data, tmp_path):
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    doc = next(itertools.islice(pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")), 1))
    segs = pipeline.segment(doc)
    preds = predict_stage([doc], segs, PredictConfig(role_encoder=False, duplicates=False))
    work = FileWork(InputFile(str(path), sha256_file(path), path.stat().st_size), [DocWork(doc, segs, preds)])
    store = OutputStore(tmp_path, "run-1")
    write_parts(store, work)
    meta = pq.read_schema(store.part_path("predictions", work.file.key)).metadata
    card = json.loads(meta[b"model_card"])
    assert set(card) == {p.task for p in preds}
    roles_id = load_heads(None, False).roles_id
    entry = card["block_role"][roles_id]
    assert entry["file"] == "roles_text.npz" and "0.779 / 0.535" in " ".join(entry["held_apart"].values())
    # no card on the tables that hold no predictions
    assert b"model_card" not in pq.read_schema(store.part_path("segments", work.file.key)).metadata


def test_a_head_file_not_measured_gets_no_figure():
    card = model_card([("block_role", "roles-dualtower-both@000000000000"), ("claim_tree", "rules-v1")])
    assert card["block_role"]["roles-dualtower-both@000000000000"]["held_apart"] is None
    rules = card["claim_tree"]["rules-v1"]
    assert (
        rules["held_apart"] is None
        and rules["measured"].startswith("rules")
        and "99.66%" in rules["task_figure"]["figure"]
    )
    shipped = json.loads(MODEL_CARD.read_text(encoding="utf-8"))["models"]
    for name, entry in shipped.items():
        assert sha256_file(MODEL_CARD.parent / name) == entry["sha256"], (
            f"{name} changed since it was measured"
        )
