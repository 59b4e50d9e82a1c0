"""Training and evaluation of the analyst heads (retrieval.predict.heads) on the documented corpora layouts.

- articles: any file in the `judge_criminal` layout (JSON lines, optionally gzipped, with `text` = the
  facts as the prosecution states them, `la` = the 刑法 articles applied, `fd` = the whole judgment) or
  a corpus of judgments (retrieval.predict.criminal). Evaluated by k-fold cross validation inside the
  file: the TF-IDF + linear baseline (scikit-learn) and ArticleHead with and without retrieved memory
  see the same folds, reading the same view, in the same run.
- roles: the `india_sc_roles` layout (one judgment per line, `sentences` with `text` and `label`) mapped
  to block types as DESIGN.md says (`pipeline.parsing.layouts.INDIA_ROLES`), plus the rule types of parsed Chinese judgments.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.errors import CorruptDocument
from pipeline.parsing.layouts import INDIA_ROLES, INDIA_TYPE
from pipeline.paths import HEADS_DIR
from pipeline.records import BlockType, Document
from retrieval.predict.criminal import CriminalCase, StatuteIndex, charge_articles, load_criminal, read_jsonl
from retrieval.predict.heads import ARTICLE_FILES, ROLE_LABELS, ArticleHead, ArticleHeads, RoleHead, TxlStates

Encode = Callable[[list[list[str]]], TxlStates]  # units of each document -> their encoder states


# ---- metrics ---------------------------------------------------------------------------------------


def multilabel_f1(pred: list[Iterable], gold: list[Iterable]) -> dict[str, float]:
    """Micro-F1 over all (case, label) decisions; macro-F1 averaged over the labels that occur in gold."""
    pred, gold = [set(p) for p in pred], [set(g) for g in gold]
    tp = sum(len(p & g) for p, g in zip(pred, gold, strict=True))
    micro = 2 * tp / max(1, sum(map(len, pred)) + sum(map(len, gold)))
    per_label = []
    for label in sorted(set().union(*gold)):
        ltp = sum(label in p and label in g for p, g in zip(pred, gold, strict=True))
        lfp = sum(label in p and label not in g for p, g in zip(pred, gold, strict=True))
        lfn = sum(label not in p and label in g for p, g in zip(pred, gold, strict=True))
        per_label.append(2 * ltp / max(1, 2 * ltp + lfp + lfn))
    return {"micro_f1": micro, "macro_f1": float(np.mean(per_label)) if per_label else 0.0}


def accuracy_macro_f1(pred: list[str], gold: list[str]) -> dict[str, float]:
    f1s = [s["f1"] for s in per_label_scores(pred, gold).values()]
    acc = sum(p == g for p, g in zip(pred, gold, strict=True)) / max(1, len(gold))
    return {"accuracy": acc, "macro_f1": float(np.mean(f1s)) if f1s else 0.0, "n": len(gold)}


def per_label_scores(pred: list[str], gold: list[str]) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support of every gold label."""
    out = {}
    for lab in sorted(set(gold)):
        tp = sum(p == lab and g == lab for p, g in zip(pred, gold, strict=True))
        n_pred, n_gold = sum(p == lab for p in pred), sum(g == lab for g in gold)
        out[lab] = {
            "precision": tp / max(1, n_pred),
            "recall": tp / max(1, n_gold),
            "f1": 2 * tp / max(1, n_pred + n_gold),
            "support": n_gold,
        }
    return out


# ---- articles --------------------------------------------------------------------------------------


def tfidf_linear_baseline(train_texts, train_labels, test_texts) -> list[set[int]]:
    """The baseline: scikit-learn TF-IDF over character 1–3-grams and one linear SVM per article
    (labels seen at least twice), an article predicted where its decision value is positive, at least
    the best one per case."""
    # scikit-learn costs ~0.8 s to import (measured after flows.tasks, which every ldx command loads);
    # only training and evaluation need it, so a run never pays it
    from sklearn.feature_extraction.text import TfidfVectorizer  # start-up: sklearn ~0.8 s
    from sklearn.multiclass import OneVsRestClassifier  # start-up: sklearn ~0.8 s
    from sklearn.preprocessing import MultiLabelBinarizer  # start-up: sklearn ~0.8 s
    from sklearn.svm import LinearSVC  # start-up: sklearn ~0.8 s

    counts: dict[int, int] = {}
    for arts in train_labels:
        for a in set(arts):
            counts[a] = counts.get(a, 0) + 1
    keep = sorted(a for a, c in counts.items() if c >= 2)
    mlb = MultiLabelBinarizer(classes=keep)
    y = mlb.fit_transform([[a for a in arts if a in set(keep)] for arts in train_labels])
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), sublinear_tf=True, min_df=2)
    x = vec.fit_transform(train_texts)
    clf = OneVsRestClassifier(LinearSVC(C=1.0)).fit(x, y)
    scores = clf.decision_function(vec.transform(test_texts))
    out = []
    for row in scores:
        chosen = {keep[j] for j in np.flatnonzero(row > 0)} or {keep[int(np.argmax(row))]}
        out.append(chosen)
    return out


def shipped_results(heads: ArticleHeads, cases: list[CriminalCase]) -> dict:
    """Micro/macro-F1 of the shipped heads on the cases they never trained on (outside their
    `memory_ids`: every case a head trained on is in its retrieval memory), each case read by the head
    its view calls for (`ArticleHeads.view_for`); `cases_by_view` says how many each read."""
    trained = {i for h in (heads.facts, heads.judgment) if h is not None for i in h.memory_ids}
    unseen = [c for c in cases if c.case_id not in trained]
    if not unseen:
        return {"cases": 0, "note": "every case in this file trained the heads"}
    views = [heads.view_for(c.court) for c in unseen]
    pred: list[set[int]] = [set() for _ in unseen]
    for view in set(views):
        rows = [n for n, v in enumerate(views) if v == view]
        for n, p in zip(rows, heads.head(view).predict([unseen[n].text(view) for n in rows]), strict=True):
            pred[n] = set(p)
    scores = multilabel_f1(pred, [c.articles for c in unseen])
    return {**scores, "cases": len(unseen), "cases_by_view": {v: views.count(v) for v in sorted(set(views))}}


def eval_articles(
    path: str | Path,
    folds: int = 5,
    seed: int = 0,
    limit: int | None = None,
    shipped: ArticleHeads | None = None,
    view: str = "judgment",
) -> dict:
    """Cross-validated micro/macro-F1 of the baseline and of ArticleHead without and with retrieved
    memory (the memory bank of each fold holds only that fold's training cases), every arm reading
    `view` of each case ("judgment": the facts and the court's part where the file has it, else the
    facts), and with `shipped` those heads on the file's cases they never trained on
    (`results.shipped`; `results.shipped_facts`: the facts head alone on the facts, when there are both)."""
    # scikit-learn: ~0.8 s import, training and evaluation only (see tfidf_linear_baseline)
    from sklearn.model_selection import KFold  # start-up: sklearn ~0.8 s

    cases = load_criminal(path, limit)
    if len(cases) < 2 * folds:
        raise CorruptDocument(str(path), f"{len(cases)} cases are too few for {folds}-fold evaluation")
    preds: dict[str, list[set[int]]] = {
        "baseline_tfidf_linear": [],
        "head_without_memory": [],
        "head_with_memory": [],
    }
    gold: list[list[int]] = []
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(cases):
        tr = [cases[i] for i in train]
        te = [cases[i] for i in test]
        tr_texts, tr_labels = [c.text(view) for c in tr], [c.articles for c in tr]
        te_texts = [c.text(view) for c in te]
        preds["baseline_tfidf_linear"] += tfidf_linear_baseline(tr_texts, tr_labels, te_texts)
        head = ArticleHead().fit(tr_texts, tr_labels, seed=seed)
        preds["head_without_memory"] += [set(p) for p in head.predict(te_texts, memory=False)]
        preds["head_with_memory"] += [set(p) for p in head.predict(te_texts, memory=True)]
        gold += [c.articles for c in te]
    results = {name: multilabel_f1(p, gold) for name, p in preds.items()}
    if shipped is not None:
        results["shipped"] = shipped_results(shipped, cases)
        if shipped.facts is not None and shipped.judgment is not None:
            results["shipped_facts"] = shipped_results(ArticleHeads(facts=shipped.facts), cases)
    return {"file": str(path), "cases": len(cases), "folds": folds, "view": view, "results": results}


def article_training_cases(paths: list[str | Path]) -> tuple[list[CriminalCase], list[CriminalCase]]:
    """(training cases, held-apart cases) of every file, split by case id (`is_held_apart`)."""
    cases = [c for p in paths for c in load_criminal(p)]
    return [c for c in cases if not is_held_apart(c.case_id)], [c for c in cases if is_held_apart(c.case_id)]


def train_article_head(
    paths: list[str | Path],
    out: str | Path | None = None,
    seed: int = 0,
    statutes: str | Path | None = None,
    view: str = "facts",
) -> ArticleHead:
    """Train on `view` of the cases of every file outside the held-apart quarter
    (`article_training_cases`); `statutes` (criminal_law_articles.jsonl) turns the charge channel's lookup
    in the article texts on. Written to `out`, by default the view's shipped file (`ARTICLE_FILES`)."""
    cases, _ = article_training_cases(paths)
    texts, articles = [c.text(view) for c in cases], [c.articles for c in cases]
    head = ArticleHead(
        charge_articles=charge_articles(cases),
        statutes=StatuteIndex.read(statutes) if statutes else None,
        reads=view,
    ).fit(texts, articles, seed=seed)
    head.memory_ids = [c.case_id for c in cases]
    head.save(Path(out) if out else HEADS_DIR / ARTICLE_FILES[view])
    return head


# ---- roles -----------------------------------------------------------------------------------------


@dataclass
class LabelledDoc:
    doc_id: str
    units: list[str]  # sentences, paragraphs or segments, in reading order
    gold: list[set[BlockType]]  # the types that count as right, per unit
    train: list[BlockType]  # the one type each unit trains as


def load_india(path: str | Path) -> list[LabelledDoc]:
    docs = []
    for n, row in enumerate(read_jsonl(path)):
        try:
            sents = [(s["text"], s["label"]) for s in row["sentences"]]
            doc_id = str(row["doc_id"])
        except (KeyError, TypeError):
            raise CorruptDocument(str(path), f"record {n + 1} is not in the india_sc_roles layout") from None
        unknown = {lab for _, lab in sents} - set(INDIA_ROLES)
        if unknown:
            raise CorruptDocument(str(path), f"record {n + 1} has unknown roles {sorted(unknown)}")
        docs.append(
            LabelledDoc(
                doc_id,
                [t for t, _ in sents],
                [INDIA_ROLES[lab] for _, lab in sents],
                [INDIA_TYPE[lab] for _, lab in sents],
            )
        )
    return docs


def is_held_apart(doc_id: str, fraction: float = 0.25) -> bool:
    """A stable split by id, so the shipped head and `ldx eval roles` agree on what was held apart."""
    return random.Random(doc_id).random() < fraction


# Words a Chinese judgment uses to open its parts; the "markers removed" evaluation deletes them so the
# head must recognise a part from what it says.
ZH_MARKERS = re.compile(
    r"经审理查明|本院查明|经审理认定|经审理|本院认为|判决如下|裁定如下|综上所述|公诉机关|指控|诉称|辩称|"
    r"辩护意见|诉讼请求|如不服本判决|如不服本裁定|本判决为终审判决|审\s*判\s*长|审\s*判\s*员|人民陪审员|"
    r"书\s*记\s*员|法官助理|附[:：]?\s*(?:相关|本判决|本案)?法律条文|附[:：]"
)


def zh_units(doc: Document, strip_markers: bool = False) -> LabelledDoc:
    """A parsed judgment's blocks as labelled units (the parser's rule types are the labels)."""
    units, types = [], []
    for b in doc.blocks:
        text = ZH_MARKERS.sub("", b.text) if strip_markers else b.text
        if not text.strip():
            continue
        t = b.type if b.type in ROLE_LABELS else BlockType.OTHER
        units.append(text)
        types.append(t)
    return LabelledDoc(doc.doc_id, units, [{t} for t in types], types)


def eval_roles(
    head: RoleHead, docs: list[LabelledDoc], encode: Encode | None = None, per_role: bool = False
) -> dict:
    """Unit-level accuracy and macro-F1 of the head's decoded roles (RoleHead.decode); a prediction is
    right when it is one of the unit's gold types, and macro-F1 is over the gold groups (CLAIMS and
    DEFENSE are one group for India's Argument). `encode` gives the encoder's states of the units
    (retrieval.predict.role_states) for heads that read them; `per_role` adds each gold group's
    precision, recall and F1 (`per_role`)."""
    units = [d.units for d in docs]
    states = encode(units) if head.reads_txl else None
    decoded = [head.decode(p) for p in head.predict_proba(units, states)]
    return role_scores(docs, decoded, per_role)


def role_scores(docs: list[LabelledDoc], decoded: list[np.ndarray], per_role: bool = False) -> dict:
    """eval_roles's figures of role indices (into ROLE_LABELS) decoded for each document. A gold label
    may be a group of roles (India's Argument is CLAIMS or DEFENSE); a wrong prediction of a role in a
    group counts against that group's precision, as a prediction of any of its roles elsewhere would."""
    groups = {role: "|".join(sorted(g)) for doc in docs for g in doc.gold for role in g}
    pred_all, gold_all = [], []
    for doc, roles in zip(docs, decoded, strict=True):
        for gold, j in zip(doc.gold, roles, strict=True):
            predicted = ROLE_LABELS[int(j)]
            name = "|".join(sorted(gold))
            gold_all.append(name)
            pred_all.append(name if predicted in gold else groups.get(predicted, str(predicted)))
    out = accuracy_macro_f1(pred_all, gold_all)
    if per_role:
        out["per_role"] = per_label_scores(pred_all, gold_all)
    return out


# The options of the shipped role heads (RoleHead fields), chosen by grouped cross-validation over the
# Indian and Chinese *training* judgments alone (benchmarks/role_cv.py; data/models/README.md)
ROLE_OPTIONS: dict = {"cues": True, "future": True, "smoothing": 0.5, "debias": 1.0}


def train_role_head(
    india: list[LabelledDoc],
    zh: list[LabelledDoc],
    out: str | Path | None = None,
    epochs: int = 8,
    seed: int = 0,
    towers: str = "text",
    encode: Encode | None = None,
    encoder: dict[str, str] | None = None,
    members: int = 3,
    options: dict | None = None,
) -> RoleHead:
    """Train on the documents given (the caller holds apart what it evaluates on). Chinese documents are
    seen twice: as written and with their structural markers removed, so the head learns a part's
    content and not only its opening words. Heads whose towers read the encoder need `encode` (the
    units' states) and `encoder` (which checkpoint that is). `options`: further RoleHead fields (what the
    text view reads, class weighting, decoding); None: ROLE_OPTIONS, {}: the fields' defaults."""
    rng = random.Random(seed)
    docs = [d.units for d in india] + [d.units for d in zh]
    labels = [d.train for d in india] + [d.train for d in zh]
    stripped = [[ZH_MARKERS.sub("", u) or u for u in d.units] for d in zh]
    docs += stripped
    labels += [d.train for d in zh]
    order = list(range(len(docs)))
    rng.shuffle(order)
    docs, labels = [docs[i] for i in order], [labels[i] for i in order]
    head = RoleHead(
        towers=towers,
        members=members,
        encoder=dict(encoder or {}),
        **(ROLE_OPTIONS if options is None else options),
    )
    if head.reads_txl and encode is None:
        raise ValueError(f"a {towers!r} role head needs the encoder's states (encode=...)")
    states = encode(docs) if head.reads_txl else None
    head.fit(docs, labels, epochs=epochs, seed=seed, doc_ids=[d.doc_id for d in india + zh], states=states)
    if out is not None:
        head.save(out)
    return head
