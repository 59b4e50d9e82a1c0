"""What the review pages read from a run's Parquet: its predictions (the flags among them), what each
prediction rests on (the `model_card` file metadata of the predictions parts), documents and blocks.

Every query runs over the views of `flows.report._connect` (`run_<table>`: one run's part files, listed in
Python), with values passed as parameters; nothing read from OUT_DIR is run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.store import part_files

# The predictions an analyst works through (retrieval/predict/stage.py lists every task): consistency
# flags (`consistency:<check>`), role disagreements, provisos and near-duplicates (documents and passages).
FLAG_TASKS = frozenset({"block_role_disagrees", "proviso", "near_duplicate", "shared_passage"})
ROLE_TASK = "block_role"  # one row per segment: shown beside the blocks, not as a finding
MAX_FLAGS = 5000  # rows of the flag queue
SNIPPET = 240  # characters of evidence shown in the flag queue


FLAG_LIST = sorted(FLAG_TASKS)  # the parameter of `flagged`'s SQL


def is_flag(task: str) -> bool:
    return task.startswith("consistency:") or task in FLAG_TASKS


def flagged(column: str) -> str:
    """SQL true for a flag's task in `column` (is_flag), with FLAG_LIST as its one parameter."""
    return f"(starts_with({column}, 'consistency:') OR list_contains(?, {column}))"


@dataclass
class Pred:
    doc_id: str
    task: str
    value: str | None
    values: list[str]
    score: float | None
    model_id: str | None
    segment_id: str | None
    evidence: list[dict] = field(default_factory=list)  # {segment_id, char_start, char_end, text}

    @property
    def anchor(self) -> str:
        """The prediction's id on its document's page, the same wherever the row is read from."""
        first = next((e.get("char_start") for e in self.evidence if e.get("char_start") is not None), None)
        key = json.dumps([self.task, self.segment_id, self.value, first], ensure_ascii=False)
        return "pred-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]

    @property
    def flag(self) -> bool:
        return is_flag(self.task)


_PRED_COLUMNS = "doc_id, task, value, values, score, model_id, segment_id, evidence"


def _pred(row: tuple) -> Pred:
    doc_id, task, value, values, score, model_id, segment_id, evidence = row
    return Pred(doc_id, task, value, list(values or []), score, model_id, segment_id, list(evidence or []))


def predictions_by_doc(con, doc_ids: list[str]) -> dict[str, list[Pred]]:
    out: dict[str, list[Pred]] = {d: [] for d in doc_ids}
    rows = con.execute(
        f"SELECT {_PRED_COLUMNS} FROM run_predictions WHERE list_contains(?, doc_id)", [doc_ids]
    ).fetchall()
    for row in rows:
        out[row[0]].append(_pred(row))
    return out


def model_cards(out_dir: Path, run_id: str) -> dict:
    """task -> model_id -> card entry (retrieval.predict.card), merged over the run's predictions parts.
    A part without a readable card adds nothing: its rows show their model id alone."""
    cards: dict[str, dict] = {}
    for path in part_files(out_dir, "predictions", run_id):
        try:
            meta = pq.read_metadata(path).metadata or {}
            card = json.loads(meta.get(b"model_card", b"{}"))
        except (OSError, ValueError):
            continue
        if isinstance(card, dict):
            for task, models in card.items():
                if isinstance(models, dict):
                    cards.setdefault(str(task), {}).update(models)
    return cards


def _figures(value) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return "" if value is None else str(value)


def card_text(cards: dict, task: str, model_id: str | None) -> str:
    """One line saying how far a row can be trusted: its model's held-apart figures and the task's own."""
    entry = cards.get(task, {}).get(model_id or "")
    if not isinstance(entry, dict):
        return "no model card for this row"
    parts = []
    held = _figures(entry.get("held_apart"))
    parts.append(f"held apart: {held}" if held else str(entry.get("measured") or "no held-apart figure"))
    figure = entry.get("task_figure")
    if isinstance(figure, dict) and figure.get("figure"):
        parts.append(f"task: {figure['figure']}")
    return " | ".join(parts)


_FLAG_SQL = f"""
SELECT {", ".join("p." + c for c in _PRED_COLUMNS.split(", "))},
       d.kind, d.meta.court, coalesce(d.title, d.source)
FROM run_predictions p LEFT JOIN run_documents d ON d.doc_id = p.doc_id
WHERE {flagged("p.task")}
ORDER BY p.score DESC NULLS LAST, p.doc_id, p.task, p.segment_id
LIMIT ?
"""


def flag_queue(con, cards: dict, doc_link) -> dict:
    """The run's flags, highest score first, with what the page's filters choose among; `doc_link(doc_id)`
    is the document page's relative address (None for a document without one)."""
    rows = con.execute(_FLAG_SQL, [FLAG_LIST, MAX_FLAGS]).fetchall()
    flags = []
    for row in rows:
        p = _pred(row[:8])
        kind, court, title = row[8:]
        texts = [e.get("text") for e in p.evidence if e.get("text")]
        link = doc_link(p.doc_id)
        flags.append(
            {
                "task": p.task,
                "kind": kind or "",
                "court": court or "",
                "score": p.score,
                "value": p.value,
                "doc_id": p.doc_id,
                "title": title,
                "href": f"{link}#{p.anchor}" if link else None,
                "evidence": (texts[0][:SNIPPET] if texts else ""),
                "model": p.model_id,
                "card": card_text(cards, p.task, p.model_id),
            }
        )
    return {
        "rows": flags,
        "truncated": len(flags) == MAX_FLAGS,
        "tasks": sorted({f["task"] for f in flags}),
        "kinds": sorted({f["kind"] for f in flags if f["kind"]}),
        "courts": sorted({f["court"] for f in flags if f["court"]}),
    }


def flag_counts(con) -> list[tuple]:
    """(task, flags, documents, top score) per flag task, for the overview."""
    return con.execute(
        "SELECT task, count(*), count(DISTINCT doc_id), max(score) FROM run_predictions "
        f"WHERE {flagged('task')} GROUP BY task ORDER BY 2 DESC, 1",
        [FLAG_LIST],
    ).fetchall()


@dataclass
class BlockRow:
    block_idx: int
    type: str
    text: str
    page: int | None
    spans: list[tuple[int, list[float]]]  # (page, bbox) per page the block covers
    char_start: int
    char_end: int


def page_boxes(page, bbox, spans) -> list[tuple[int, list[float]]]:
    """(page, bbox) for every page a block covers: its `spans`, or its one `page`/`bbox` without them."""
    boxes = [(s["page"], list(s["bbox"])) for s in spans or [] if s.get("bbox") is not None]
    if not boxes and page is not None and bbox is not None:
        boxes = [(page, list(bbox))]
    return boxes


def blocks_by_doc(con, doc_ids: list[str]) -> dict[str, list[BlockRow]]:
    out: dict[str, list[BlockRow]] = {d: [] for d in doc_ids}
    rows = con.execute(
        "SELECT doc_id, block_idx, CAST(type AS VARCHAR), text, page, bbox, spans, char_start, char_end "
        "FROM run_blocks WHERE list_contains(?, doc_id) ORDER BY doc_id, block_idx",
        [doc_ids],
    ).fetchall()
    for doc_id, idx, btype, text, page, bbox, spans, start, end in rows:
        boxes = page_boxes(page, bbox, spans)
        out[doc_id].append(BlockRow(idx, btype or "", text or "", page, boxes, start or 0, end or 0))
    return out
