"""Article disagreement on real criminal judgments: the special-part article the OPINION applies is
swapped for another case's; the check, fed by an article head that never saw these cases, flags the
swapped citation and stays quiet on the judgments as written."""

from __future__ import annotations

import itertools

import pytest

import pipeline
from pipeline.analysis.consistency import check_document
from pipeline.analysis.perturb import measure, perturbed_copies
from pipeline.config import ParseConfig
from retrieval.predict.config import PredictConfig
from retrieval.predict.criminal import charge_articles, load_criminal
from retrieval.predict.facts import article_scores
from retrieval.predict.heads import ArticleHead

N_DOCS = 40
ARTICLE_CHECKS = {"article_disagrees", "charge_article_mismatch"}


@pytest.fixture(scope="module")
def setting(shared_data):
    path = shared_data / "zh/judgments/judge_criminal.jsonl.gz"
    docs = list(itertools.islice(pipeline.load_documents(path, ParseConfig(jsonl_text_field="fd")), N_DOCS))
    # records 100 on train the head; the judgments checked are records 0..39
    cases = load_criminal(path)[100:]
    # the judgment head, as the run reads a judgment: its facts and the court's part, citations cut
    head = ArticleHead(reads="judgment").fit([c.text("judgment") for c in cases], [c.articles for c in cases])
    kwargs = {
        "charge_articles": {k: set(v) for k, v in charge_articles(cases).items()},
        "article_threshold": PredictConfig().article_consistency_threshold,
    }
    return docs, head, kwargs


def test_swapped_article_is_flagged_on_its_citation(setting):
    docs, head, kwargs = setting
    copies = perturbed_copies(docs, seed=0, kinds=("article",))
    assert len(copies) >= 30
    for original, copy, edit in copies[:5]:
        assert edit.old != edit.new and copy.text[edit.span[0] : edit.span[1]] == edit.new
        flags = [
            f for f in check_document(copy, article_scores(copy, head), **kwargs) if f.check in ARTICLE_CHECKS
        ]
        # the flag quotes the swapped citation (a charge mismatch quotes the charge first, then it)
        assert any(copy.text[s:e] == edit.new for f in flags for s, e in f.spans), (edit, flags)
        assert not [
            f
            for f in check_document(original, article_scores(original, head), **kwargs)
            if f.check in ARTICLE_CHECKS
        ]


def test_article_check_rates_on_real_judgments(setting):
    docs, head, kwargs = setting
    report = measure(docs, seed=0, articles=lambda d: article_scores(d, head), **kwargs)
    print(report)
    article = report["detection"]["article"]
    assert article["copies"] >= 30 and article["rate"] >= 0.8
    # every check together, article checks included, on the unperturbed judgments
    assert report["false_positive_rate"] <= 0.15
