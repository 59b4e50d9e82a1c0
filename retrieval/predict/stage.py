"""The predict stage of `ldx run`: the analyst tasks over parsed, segmented documents, as Prediction rows.

    predict_stage(documents: list[Document], segments: list[Segment], config: PredictConfig | None = None,
                  model=None, out_dir: str | None = None, dtype: str = "auto") -> list[Prediction]

- `documents` carry their blocks; `segments` are the segments of those documents, in any order.
- `config` switches each task (retrieval.predict.config.PredictConfig); None = all on with defaults.
- `model` is optional: the (TransformerXLLM, LegalTokenizer) pair of `retrieval.encoder.load_encoder`.
  With it, the connective-attention summary is computed from the model's diagnostics; without it that
  task is skipped. The role head brings its own encoder when its towers read one (the checkpoint it was
  trained on, data/models/txl_lm.pt): the batch's segments are encoded once, blind to the rule types.
- `out_dir`: where the MinHash signatures of documents already seen persist (OUT_DIR/dedup/), so
  near-duplicates of earlier batches and runs are found; None = within this call only.
- `dtype`: the precision of the role head's encoding (txl.config.ModelConfig.dtype).
- The result is flat; group it by `Prediction.doc_id` to attach rows to their documents.
  `PREDICT_STAGE(docs, ctx)` does that for `ldx run` (flows.tasks registers it as the "predict" batch stage).

Tasks (`Prediction.task`) and what their rows hold:

| task | one row per | value / values | evidence |
|---|---|---|---|
| block_role | segment of a judgment | predicted type / [predicted, rule type] | the segment |
| block_role_disagrees | disagreement above (text_)role_disagreement_min_score | predicted type / [predicted, rule type] | the segment |
| claim_tree | claim of a patent | "independent" or "dependent" / [claim number, parent claims…] | the reference words ("as claimed in claim 3"); an independent claim: the claim |
| claim_support | element of an independent claim | the element / [claim, element, segment ids…] | the element, then its description passages with page and bbox (retrieval/predict/support.py) |
| clause | clause category a contract holds (CUAD's 41; retrieval/predict/clauses.py) | category / [category, the answer: the sentence, or the title, party or date in it] | up to `clause_evidence_k` (3) sentences, likeliest first, with page and bbox |
| articles | zh criminal judgment | "264,67" / article numbers | FACTS (and OPINION, VERDICT) segments, retrieved cases |
| consistency:<check> | flag (pipeline.analysis.consistency) | message / [check] | the quoted words |
| proviso | proviso | marker / [marker] | the proviso, then the restricted clause |
| near_duplicate | document pair (row on each side in this call; this side for an earlier one) | other doc_id | — |
| shared_passage | segment with a near-identical one elsewhere | other segment_id / all of them | the segment |
| connective_attention | document (with a model) | lift / [mass, share, lift] | — |

The role head was trained on judgments' parts (HEADER … VERDICT): patents, contracts and generic documents
keep their rule types and get no block_role rows.

Evidence offsets (`char_start`, `char_end`) are offsets into `Document.text`; `segment_id` names the
segment that holds the start of the span.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import torch

from pipeline.analysis.consistency import check_document
from pipeline.analysis.provisos import find_provisos
from pipeline.parsing.kinds.patent import claim_number, claim_references
from pipeline.paths import CLAUSE_HEAD, HEADS_DIR
from pipeline.records import BlockType, DocKind, Document, Evidence, Prediction, Segment, sha256_file
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.predict.attention import connective_attention
from retrieval.predict.clauses import ClauseHead, clause_rows
from retrieval.predict.config import PredictConfig
from retrieval.predict.dedup import SignatureStore, duplicates_of, signatures
from retrieval.predict.facts import COURT_PART, article_text, court_text, is_criminal_judgment, scores_of
from retrieval.predict.heads import ArticleHeads, RoleHead
from retrieval.predict.role_states import head_encoder, unit_states
from retrieval.predict.support import claim_support
from retrieval.stages import DocWork, StageConfig, StageContext

RULES_ID = "rules-v1"
ARTICLE_MODELS = {"facts": "articles-tfidf-knnmem", "judgment": "articles-judgment-tfidf-knnmem"}
MINHASH_ID = "minhash-5gram-v1"
# Every judgment of a court repeats its appeal notice, signature lines and quoted statutes; sharing
# them is not what an analyst looks for in a shared passage.
BOILERPLATE = frozenset({BlockType.HEADER, BlockType.NOTICE, BlockType.SIGNATURE, BlockType.APPENDIX})
# The kinds whose parts the role head knows (it was trained on judgments only).
ROLE_KINDS = frozenset({DocKind.ZH_JUDGMENT, DocKind.EN_JUDGMENT})


@dataclass
class _Heads:
    roles: object | None
    roles_id: str
    articles: ArticleHeads
    articles_ids: dict[str, str]  # view -> model id
    role_encoder: tuple | None = None  # (model, tokenizer) the role head's encoder towers were trained on
    clauses: ClauseHead | None = None
    clauses_id: str = ""


def _file_id(name: str, path: Path) -> str:
    return f"{name}@{sha256_file(path)[:12]}"


@cache
def load_heads(heads_dir: str | None = None, role_encoder: bool = True) -> _Heads:
    """The shipped (or configured) heads; a missing file leaves its task off rather than failing a run.
    `role_encoder` picks the role head whose towers read the Transformer-XL (roles.npz) or the text-only
    one (roles_text.npz)."""
    root = Path(heads_dir) if heads_dir else HEADS_DIR
    roles_file = root / ("roles.npz" if role_encoder else "roles_text.npz")
    roles = RoleHead.load(roles_file) if roles_file.exists() else None
    encoder = None
    if roles is not None and roles.reads_txl:
        encoder = head_encoder(roles)
    if encoder is None and roles is not None and roles.reads_txl:
        roles = None
    articles = ArticleHeads.load(root)
    clauses_file = root / CLAUSE_HEAD.name
    clauses = ClauseHead.load(clauses_file) if clauses_file.exists() else None
    return _Heads(
        roles,
        _file_id(f"roles-dualtower-{roles.towers}", roles_file) if roles else "",
        articles,
        {v: _file_id(ARTICLE_MODELS[v], f) for v, f in articles.files.items()},
        encoder,
        clauses,
        _file_id("clauses-tfidf-logistic", clauses_file) if clauses else "",
    )


class _Locator:
    """Maps document offsets to the segment holding them."""

    def __init__(self, segments: list[Segment]):
        self.segments = sorted(segments, key=lambda s: s.char_start)
        self.starts = [s.char_start for s in self.segments]

    def segment_id(self, offset: int) -> str | None:
        i = bisect.bisect_right(self.starts, offset) - 1
        if i >= 0 and offset < self.segments[i].char_end:
            return self.segments[i].segment_id
        return None

    def evidence(self, doc: Document, start: int, end: int) -> Evidence:
        return Evidence(self.segment_id(start), start, end, doc.text[start:end])


def _segment_evidence(s: Segment) -> Evidence:
    return Evidence(s.segment_id, s.char_start, s.char_end, s.text)


def _role_states(by_doc: dict[str, list[Segment]], heads: _Heads, dtype: str) -> dict[str, tuple]:
    """The role head's encoder views of every document's segments, encoded as one batch."""
    if not heads.roles.reads_txl:
        return {}
    ids = [d for d, segs in by_doc.items() if segs]
    model, tokenizer = heads.role_encoder
    states = unit_states(
        model, tokenizer, [[s.text for s in by_doc[d]] for d in ids], heads.roles.decay, dtype=dtype
    )
    return dict(zip(ids, states, strict=True))


def _roles(
    doc: Document, segs: list[Segment], heads: _Heads, config: PredictConfig, states
) -> list[Prediction]:
    out = []
    threshold = (
        config.role_disagreement_min_score
        if heads.roles.reads_txl
        else config.text_role_disagreement_min_score
    )
    (predicted,) = heads.roles.predict([[s.text for s in segs]], [states] if states is not None else None)
    for s, (role, score) in zip(segs, predicted, strict=True):
        values = [str(role), str(s.type)]
        ev = [_segment_evidence(s)]
        out.append(
            Prediction(doc.doc_id, "block_role", str(role), score, heads.roles_id, s.segment_id, values, ev)
        )
        if role != s.type and score >= threshold:
            out.append(
                Prediction(
                    doc.doc_id,
                    "block_role_disagrees",
                    str(role),
                    score,
                    heads.roles_id,
                    s.segment_id,
                    values,
                    ev,
                )
            )
    return out


def claim_tree(doc: Document, locator: _Locator) -> list[Prediction]:
    """One row per CLAIM block: independent or dependent, and the claims it refers back to, from its
    wording (pipeline.parsing.kinds.patent.claim_references). A claim without a leading number takes
    its place among the claims."""
    out = []
    claims = [b for b in doc.blocks if b.type == BlockType.CLAIM]
    for n, b in enumerate(claims, 1):
        refs = claim_references(b.text)
        parents = sorted({p for _, _, numbers in refs for p in numbers})
        number = claim_number(b.text) or n
        spans = [(b.char_start + s, b.char_start + e) for s, e, _ in refs] or [(b.char_start, b.char_end)]
        out.append(
            Prediction(
                doc.doc_id,
                "claim_tree",
                "dependent" if parents else "independent",
                1.0,
                RULES_ID,
                locator.segment_id(spans[0][0]),
                [str(number), *map(str, parents)],
                [locator.evidence(doc, s, e) for s, e in spans],
            )
        )
    return out


def _articles(doc: Document, segs: list[Segment], heads: _Heads, config: PredictConfig):
    """(probabilities, rows, model id) of the article head the document's view calls for."""
    court = court_text(doc)
    view = heads.articles.view_for(court)
    head = heads.articles.head(view)
    text = article_text(doc, head.reads, court)
    if not text:
        return None, [], RULES_ID
    probs = scores_of(head, text, config.article_memory)
    chosen = head.decide(np.fromiter(probs.values(), np.float32, len(probs)), config.article_memory)
    fact_segs = [s for s in segs if s.type == BlockType.FACTS]
    court_segs = [s for s in segs if s.type in COURT_PART] if view == "judgment" else []
    # up to eight segments, the court's first four among them when the head read them
    ev = [_segment_evidence(s) for s in fact_segs[: 8 - min(4, len(court_segs))] + court_segs[:4]]
    if config.article_memory:
        for row, sim in head.retrieved(text, 3):
            arts = ",".join(str(a) for a, y in zip(head.labels, head.memory_y[row], strict=True) if y)
            case = head.memory_ids[row] if head.memory_ids else str(row)
            ev.append(Evidence(None, None, None, f"retrieved case {case} (similarity {sim:.2f}): {arts}"))
    arts = sorted(chosen)
    score = float(min(chosen.values())) if chosen else 0.0
    model_id = heads.articles_ids[view]
    pred = Prediction(
        doc.doc_id, "articles", ",".join(map(str, arts)), score, model_id, None, [str(a) for a in arts], ev
    )
    return probs, [pred], model_id


def _consistency(
    doc, locator: _Locator, probs, model_id: str, heads: _Heads, config: PredictConfig
) -> list[Prediction]:
    charge_articles = {k: set(v) for k, v in heads.articles.charge_articles.items()}
    flags = check_document(doc, probs, charge_articles, config.article_consistency_threshold)
    return [
        Prediction(
            doc.doc_id,
            f"consistency:{f.check}",
            f.message,
            f.score,
            model_id if f.check.startswith(("article", "charge_article")) else RULES_ID,
            locator.segment_id(f.spans[0][0]) if f.spans else None,
            [f.check],
            [locator.evidence(doc, s, e) for s, e in f.spans],
        )
        for f in flags
    ]


def _provisos(doc: Document, locator: _Locator) -> list[Prediction]:
    out = []
    for b in doc.blocks:
        for p in find_provisos(b.text, doc.language):
            spans = [
                (b.char_start + p.proviso[0], b.char_start + p.proviso[1]),
                (b.char_start + p.restricted[0], b.char_start + p.restricted[1]),
            ]
            out.append(
                Prediction(
                    doc.doc_id,
                    "proviso",
                    p.marker,
                    1.0,
                    RULES_ID,
                    locator.segment_id(spans[0][0]),
                    [p.marker],
                    [locator.evidence(doc, s, e) for s, e in spans],
                )
            )
    return out


def _duplicates(
    by_doc: dict[str, list[Segment]], config: PredictConfig, out_dir: str | None
) -> list[Prediction]:
    """Rows for the batch's documents only: a pair with an earlier document (out_dir's SignatureStore)
    gets its row on this side; the earlier document's rows were written with its own batch."""

    batch = signatures(by_doc, skip_passage_types=BOILERPLATE)

    def find(seen=None):
        return duplicates_of(batch, seen, config.duplicate_doc_threshold, config.duplicate_passage_threshold)

    if out_dir is None:
        found = find()
    else:
        with SignatureStore(out_dir).update() as seen:
            found = find(seen)
            seen.merge(batch)
    out = []
    for p in found.documents:
        out.append(Prediction(p.a, "near_duplicate", p.b, p.similarity, MINHASH_ID, None, [p.b]))
        if p.b in by_doc:
            out.append(Prediction(p.b, "near_duplicate", p.a, p.similarity, MINHASH_ID, None, [p.a]))
    partners: dict[str, list[tuple[str, float]]] = {}
    segs = {s.segment_id: s for segs in by_doc.values() for s in segs}
    for p in found.passages:
        partners.setdefault(p.a, []).append((p.b, p.similarity))
        if p.b in segs:
            partners.setdefault(p.b, []).append((p.a, p.similarity))
    for seg_id, others in partners.items():
        others.sort(key=lambda o: -o[1])
        s = segs[seg_id]
        out.append(
            Prediction(
                s.doc_id,
                "shared_passage",
                others[0][0],
                others[0][1],
                MINHASH_ID,
                seg_id,
                [o for o, _ in others],
                [_segment_evidence(s)],
            )
        )
    return out


def predict_stage(
    documents: list[Document],
    segments: list[Segment],
    config: PredictConfig | None = None,
    model=None,
    out_dir: str | None = None,
    dtype: str = "auto",
) -> list[Prediction]:
    config = config or PredictConfig()
    heads = load_heads(config.heads_dir, config.role_encoder)
    by_doc: dict[str, list[Segment]] = {d.doc_id: [] for d in documents}
    for s in segments:
        by_doc.setdefault(s.doc_id, []).append(s)
    for segs in by_doc.values():
        segs.sort(key=lambda s: s.seg_idx)
    judgments = {d.doc_id for d in documents if d.kind in ROLE_KINDS}
    roles_on = config.roles and heads.roles is not None
    role_states = _role_states({d: by_doc[d] for d in judgments}, heads, dtype) if roles_on else {}
    preds: list[Prediction] = []
    for doc in documents:
        segs = by_doc[doc.doc_id]
        locator = _Locator(segs)
        if roles_on and segs and doc.doc_id in judgments:
            preds += _roles(doc, segs, heads, config, role_states.get(doc.doc_id))
        if config.claim_tree and doc.kind == DocKind.PATENT:
            preds += claim_tree(doc, locator)
        if config.claim_support and doc.kind == DocKind.PATENT and segs:
            preds += claim_support(doc, segs, config.claim_support_k, config.claim_support_dense)
        if config.clauses and heads.clauses is not None and doc.kind == DocKind.CONTRACT:
            preds += clause_rows(
                doc,
                locator.segment_id,
                heads.clauses,
                heads.clauses_id,
                config.clause_min_probability,
                config.clause_evidence_k,
            )
        probs, article_model = None, RULES_ID
        if config.articles and heads.articles.files and is_criminal_judgment(doc):
            probs, rows, article_model = _articles(doc, segs, heads, config)
            preds += rows
        if config.consistency:
            preds += _consistency(doc, locator, probs, article_model, heads, config)
        if config.provisos:
            preds += _provisos(doc, locator)
        if config.connective_attention and model is not None and segs:
            row = connective_attention(doc, segs, model, config.attention_max_segments)
            if row is not None:
                preds.append(row)
    if config.duplicates and (len(documents) > 1 or out_dir is not None):
        preds += _duplicates({d.doc_id: by_doc[d.doc_id] for d in documents}, config, out_dir)
    return preds


@cache
def _encoder(checkpoint: str, device: str):
    return load_encoder(Path(checkpoint), device)


class PredictStage:
    """`ldx run`'s "predict" batch stage (a retrieval.stages.BatchStage): fills each DocWork's `predictions`.

    Reads `ctx.config.predict` and, for the connective-attention summary, the run's checkpoint
    (`ctx.config.model`) when one exists; near-duplicates are looked up among the documents earlier
    batches stored under `ctx.out_dir`."""

    def prepare(self, config: StageConfig) -> None:
        """Nothing to start ahead: the heads load with the first batch (cached for the later ones)."""

    def __call__(self, docs: list[DocWork], ctx: StageContext) -> None:
        config = ctx.config.predict
        torch.set_num_threads(ctx.config.model.stage_threads())
        model = None
        if config.connective_attention:
            path = checkpoint_file(ctx.config.model.checkpoint)
            if path is not None and path.exists():
                model = _encoder(str(path), ctx.config.model.device)
        preds = predict_stage(
            [w.document for w in docs],
            [s for w in docs for s in w.segments],
            config,
            model,
            ctx.out_dir,
            ctx.config.model.dtype,
        )
        by_doc: dict[str, list[Prediction]] = {}
        for p in preds:
            by_doc.setdefault(p.doc_id, []).append(p)
        for w in docs:
            w.predictions = by_doc.get(w.document.doc_id, [])


PREDICT_STAGE = PredictStage()
