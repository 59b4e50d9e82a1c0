"""What a predictions row rests on: the held-apart figures of the model behind it, for an analyst to
judge how far to trust it.

    model_card(pairs: Iterable[tuple[str, str]], path: Path = MODEL_CARD) -> dict

`pairs` are the (task, model_id) of some rows; the result maps task -> model_id -> {file, held_apart,
measured, task_figure?}. A head's model id ends in "@" and the first 12 hex digits of its file's sha256
(retrieval.predict.stage); the card (data/models/heads/model_card.json) gives each measured head file
with its sha256, so a head retrained since it was measured gets `held_apart: null`. Rule and MinHash
rows carry no model figure, only the task's own figure where one was measured (e.g. claim_tree).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from pipeline.errors import CorruptDocument
from pipeline.paths import HEADS_DIR

MODEL_CARD = HEADS_DIR / "model_card.json"


@cache
def _load(path: Path) -> dict:
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
        return {"models": dict(card["models"]), "tasks": dict(card.get("tasks", {}))}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CorruptDocument(str(path), f"not a model card ({e})") from None


def _entry(task: str, model_id: str, card: dict) -> dict:
    _, _, digest = model_id.rpartition("@")
    found = next(
        (
            (name, m)
            for name, m in card["models"].items()
            if digest and m.get("sha256", "").startswith(digest)
        ),
        None,
    )
    if found is not None:
        name, model = found
        entry = {"file": name, "held_apart": model.get("held_apart"), "measured": model.get("measured")}
    elif "@" in model_id:
        entry = {"file": None, "held_apart": None, "measured": "this head file was not measured held apart"}
    else:
        entry = {"file": None, "held_apart": None, "measured": "rules: no trained model"}
    figure = card["tasks"].get(task) or card["tasks"].get(task.partition(":")[0])
    if figure is not None:
        entry["task_figure"] = figure
    return entry


def model_card(pairs: Iterable[tuple[str, str]], path: Path = MODEL_CARD) -> dict:
    card = _load(Path(path))
    out: dict[str, dict[str, dict]] = {}
    for task, model_id in sorted(set(pairs)):
        out.setdefault(task, {})[model_id] = _entry(task, model_id, card)
    return out
