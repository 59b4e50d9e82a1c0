"""What `ldx ask` answers over the demo run (data/samples, the shipped encoder and reader): whole phrases,
sentence answers for decision/reason questions, "not found" with its best evidence, the JSON fields, the
interactive mode and a reused `retrieval.Asker`. Expected answers read off data/sample_texts/."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import retrieval
from retrieval.answer import Citation, complete_span, fits_question, is_heading, question_kind, term_share
from retrieval.ask_models import sentence_similarity
from retrieval.config import RetrievalConfig
from retrieval.eval.metrics import choose_threshold
from retrieval.evidence import SentenceVectors, segment_vectors
from retrieval.hybrid import Passage
from retrieval.sentence_rank import (
    KEY_SIMILARITY_WEIGHT,
    SIMILARITY_WEIGHT,
    is_sentence,
    rank_sentences,
    section_headings,
    with_dispositions,
)
from retrieval.sides import asked_side, is_claim, is_ruling, on_asked_side, states_ruling

ZH_DEMO = "被告人犯什么罪，判处什么刑罚？"
EN_DEMO = "What did the court decide on appeal?"
ALLOW = "For these reasons I would allow the appeal"


@pytest.fixture(scope="module")
def asker(demo_run, torch_one_thread):
    return retrieval.Asker(demo_run)


def test_the_demo_questions_read_from_stdin_get_whole_answers_in_json(demo_run):
    from flows.cli import app

    res = CliRunner().invoke(
        app, ["ask", "--index", str(demo_run), "--json"], input=f"{ZH_DEMO}\n{EN_DEMO}\n\nignored\n"
    )
    assert res.exit_code == 0, res.output
    zh, en = (
        json.loads(line) for line in res.output.strip().splitlines()
    )  # two questions, then the empty line
    assert zh["question"] == ZH_DEMO and en["question"] == EN_DEMO
    # 判处什么刑罚 asks for the disposition: the VERDICT sentence, not the reader's lone verb "判处"
    assert "周明远犯盗窃罪" in zh["answer"] and "有期徒刑十个月" in zh["answer"]
    assert zh["answer_type"] == "sentence"
    assert ALLOW in en["answer"] and en["answer_type"] == "sentence"
    assert "minilm" in en["arms"]  # the English question was searched and ranked with the sentence model
    for ev in en["more_evidence"]:
        assert ev["sentence"] != en["evidence"]["sentence"] and not is_heading(ev["sentence"])
    for a in (zh, en):
        assert {"answer", "answer_type", "confidence", "evidence", "citations"} <= set(a)
        assert 0 < a["confidence"] <= 1
        ev = a["evidence"]
        assert set(ev) == {"sentence", "segment_id", "page", "bbox"} and a["answer"] in ev["sentence"]
        cited = {c["segment_id"]: c for c in a["citations"]}
        assert ev["segment_id"] in cited and ev["sentence"] in cited[ev["segment_id"]]["text"]
        assert ev["page"] == cited[ev["segment_id"]]["page"] and len(ev["bbox"]) == 4


def test_a_question_the_corpus_cannot_answer_says_so_with_its_best_evidence(demo_run):
    from flows.cli import app

    res = CliRunner().invoke(app, ["ask", "What is the melting point of tungsten?", "--index", str(demo_run)])
    assert res.exit_code == 0, res.output
    assert "no confident answer found" in res.output and "best evidence: [" in res.output


@pytest.mark.parametrize(
    ("question", "expected", "kind"),
    [
        ("被告人周明远的辩护人是谁？", ["许晴"], "span"),
        ("扣押在案的作案工具如何处理？", ["没收"], "sentence"),
        # every reason the reasoning weighs, not the first (retrieval/circumstance_questions.py)
        ("本院为什么对被告人从轻处罚？", ["如实供述", "取得谅解"], "sentence"),
        ("被告应返还原告多少装修款？", ["30,400"], "span"),
        # the same sum asked as the plaintiff's request: the claim, not what the court awarded
        ("原告请求被告返还多少装修款？", ["86,000"], "span"),
        # what a party argued or asked for: its sentence, not the court's answer to it
        ("被告人的辩护意见是什么？", ["初犯"], "sentence"),
        ("What did the appellant argue?", ["appellant contends"], "sentence"),
        # what the court below decided, not this court's disposition
        ("What did the judge below decide?", ["judge below held"], "sentence"),
        ("法院酌定被告支付违约金多少元？", ["12,000"], "span"),
        # a cost is read from the ruling's costs line (retrieval/outcome_questions.py)
        ("案件受理费是多少？", ["2,450元"], "field"),
        ("案件受理费由谁负担？", ["原告李春华负担1,470元", "恒达装饰工程有限公司负担980元"], "field"),
        ("原告与被告签订的是什么合同？", ["家庭居室装饰装修施工合同"], "span"),
        # the court an appeal goes to: the judgment's own notice (retrieval/appeal_questions.py)
        ("不服判决可以上诉到哪个法院？", ["江南省临川市中级人民法院"], "field"),
        # who presided: the signature's line (retrieval/zh_cover_questions.py)
        ("本案的审判长是谁？", ["顾远"], "field"),
        # two things asked in two clauses, each with a route of its own: both answers (周明远's judgment was
        # heard by one judge)
        ("本案的审判长是谁，周明远犯什么罪？", ["林书言", "盗窃罪"], "field"),
        # what the verdict imposed on the defendant named (retrieval/verdict_questions.py)
        ("周明远犯什么罪？", ["盗窃罪"], "field"),
        ("周明远被判处罚金多少？", ["五千元"], "field"),
        ("周明远是否被宣告缓刑？", ["NO"], "no"),
        # the defendant's custody and circumstances (retrieval/custody_questions.py, circumstance_questions.py)
        ("被告人周明远何时被逮捕？", ["2023年3月10日"], "field"),
        ("周明远现羁押于何处？", ["临川市青岚区看守所"], "field"),
        ("周明远是否取得了被害人的谅解？", ["YES"], "yes"),
        ("周明远是否构成累犯？", ["NO"], "no"),
        ("工期是多少天？", ["九十日"], "span"),
        # the law a ruling rests on: the sentence citing the articles applied, though it ends in a colon
        ("本案依据哪些法律条文？", ["依照《中华人民共和国"], "sentence"),
        ("原告李春华的其他诉讼请求如何处理？", ["驳回"], "sentence"),
        # an England and Wales cover's counsel (retrieval/appeal_cover.py)
        ("Who represented the appellant?", ["Helen Artois KC"], "field"),
        # English questions naming their answer's type: typed spans (retrieval/english_spans.py), which the
        # reader (trained on Chinese spans and CUAD's clause categories) misses
        (
            "When does the controller report that the window requires cleaning?",
            ["correction factor exceeds a threshold"],
            "span",
        ),
    ],
)
def test_demo_documents_answers(asker, question, expected, kind):
    a = asker.ask(question)
    assert a.answer_type == kind, (a.answer, a.notes)
    assert all(e.lower() in a.answer.lower() for e in expected), (a.answer, a.notes)
    assert a.evidence is not None and a.evidence.segment_id in {c.segment_id for c in a.citations}
    if kind == "sentence":  # a sentence, or all those shown joined (the reasons weighed, a ruling's items)
        shown = [a.evidence, *a.more_evidence]
        assert a.answer in (a.evidence.sentence, "".join(e.sentence for e in shown))


def test_the_ruling_is_answered_whole_each_item_cited(asker):
    """What the court decided: the ruling's three items, without the interest, the costs or the appeal
    (retrieval/outcome_questions.py)."""
    a = asker.ask("李春华诉临川市恒达装饰工程有限公司一案的判决结果是什么？")
    items = [e.sentence for e in [a.evidence, *a.more_evidence]]
    assert a.answer_type == "sentence" and a.answer == "".join(items), a.notes
    assert (
        items[0].startswith("一、被告临川市恒达装饰工程有限公司")
        and items[-1] == "三、驳回原告李春华的其他诉讼请求。"
    )
    assert len(items) == 3 and "受理费" not in a.answer and "迟延履行" not in a.answer


def test_a_typed_span_cites_its_line_and_can_be_turned_off(demo_run, asker):
    question = "What fraction of the excitation light goes to the reference cell?"
    a = asker.ask(question)
    assert a.answer == "approximately five percent" and a.answer in a.evidence.sentence
    assert a.evidence.segment_id in {c.segment_id for c in a.citations}
    assert 0 < a.confidence <= 1 and any("english_spans" in n for n in a.notes)
    for config in (
        RetrievalConfig(typed_spans=False),
        RetrievalConfig(typed_min_relevance=a.confidence + 0.01),
    ):
        off = retrieval.Asker(demo_run, config).ask(question)  # off, or the line below the bar
        assert off.answer != a.answer and not any("english_spans" in n for n in off.notes)


def test_a_sum_is_answered_alone_and_never_to_a_who_question(asker):
    assert asker.ask("法院判决被告支付多少违约金？").answer == "人民币12,000元"
    who = asker.ask("案件受理费由谁负担？")  # the fee's sum is no answer: the sentence saying who is shown
    assert "2,450" not in who.answer and "负担" in who.evidence.sentence


def test_a_question_asking_two_things_gets_both_spans_each_whole(asker):
    a = asker.ask("合同总价及原告已支付的装修款是多少？")
    assert a.answer_type == "span" and a.answer.split("，") == ["人民币172,000元", "人民币129,000元"], a.notes
    # the evidence is the sentence around both spans, in the segment cited for them
    assert all(part in a.evidence.sentence for part in a.answer.split("，"))
    assert a.evidence.segment_id in {c.segment_id for c in a.citations}


def test_english_evidence_is_ranked_by_the_sentence_model(asker):
    a = asker.ask(EN_DEMO)
    cited = [(c.segment_id, c.block_type, c.text) for c in a.citations]
    ranked = rank_sentences(EN_DEMO, cited, "decision", asker.sentences.similarity(EN_DEMO), asker.headings)
    # the answer is the ranker's best
    assert ranked[0].text.strip() == a.answer and ranked[0].similarity > 0.3
    assert asker.sentences.similarity(ZH_DEMO) is None  # Chinese: term overlap alone
    assert SentenceVectors(RetrievalConfig(sentence_model=False)).similarity(EN_DEMO) is None
    assert all(s.similarity is None for s in rank_sentences(EN_DEMO, cited, "decision"))
    # ask ranks with the sentence model: the evidence shown next are the ranker's next sentences
    assert [e.sentence for e in a.more_evidence] == [s.text.strip() for s in ranked[1:3]]
    cached = len(asker.sentences.vectors)
    assert cached >= len(ranked)
    asker.ask(EN_DEMO)  # the same sentences again: nothing new to embed
    assert len(asker.sentences.vectors) == cached


def test_chinese_evidence_is_ranked_with_the_encoder_keys(asker):
    similar, weight = sentence_similarity(ZH_DEMO, asker.search_index, asker.sentences, asker.config)
    assert weight == KEY_SIMILARITY_WEIGHT and similar is not None
    cited = [(c.segment_id, c.block_type, c.text) for c in asker.ask(ZH_DEMO).citations]
    ranked = rank_sentences(ZH_DEMO, cited, "span", similar, asker.headings, weight)
    assert ranked and all(s.similarity is not None and -1 <= s.similarity <= 1 for s in ranked)
    # a key's cosine with itself: the keys are unit vectors, kept for the session
    arm = asker.search_index.dense["txl"]
    assert similar([ZH_DEMO])[0] == pytest.approx(1.0, abs=1e-5) and ranked[0].text in arm.keys
    off = RetrievalConfig(sentence_keys=False)
    assert sentence_similarity(ZH_DEMO, asker.search_index, asker.sentences, off)[0] is None
    assert (
        sentence_similarity(EN_DEMO, asker.search_index, asker.sentences, asker.config)[1]
        == SIMILARITY_WEIGHT
    )


def test_a_question_is_embedded_once_for_search_typed_spans_and_ranking(asker, monkeypatch):
    import retrieval.evidence as evidence

    said = []
    real = evidence.embed
    monkeypatch.setattr(evidence, "embed", lambda texts, **kw: said.extend(texts) or real(texts, **kw))
    question = "Which barrister represented the appellant at the hearing?"  # asked nowhere else
    a = asker.ask(question)
    assert a.answer_type == "span" and "minilm" in a.arms  # searched, typed and ranked by MiniLM
    assert said.count(question) == 1


def test_segment_vectors_are_kept_in_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts = ["For these reasons I would allow the appeal.", "The claim is dismissed with costs."]
    first = segment_vectors(texts)
    (file,) = (tmp_path / "longdoc-xl" / "minilm").glob("*.npy")
    assert first.shape == (2, 384) and np.array_equal(np.load(file), first)
    marked = np.full((2, 384), 0.5, dtype=np.float32)
    np.save(file, marked)
    assert np.array_equal(segment_vectors(texts), marked)  # read from the cache, not embedded again
    file.write_bytes(b"torn")  # a damaged file is embedded again and replaced
    assert np.allclose(segment_vectors(texts), first, atol=1e-5) and np.load(file).shape == (2, 384)


def test_the_asker_is_reused_and_keeps_document_states_across_questions(asker):
    assert retrieval.Asker is type(asker)
    first = asker.ask("被告人周明远的辩护人是谁？")
    doc = asker.passage(first.answer_segment).doc_id
    misses, hits = asker.cache.misses, asker.cache.hits
    again = asker.ask("扣押在案的作案工具如何处理？", doc_id=doc)
    asker.ask("周明远在滨河路某小区窃得现金多少？", doc_id=doc)
    assert asker.cache.misses == misses and asker.cache.hits > hits  # the judgment was not read again
    assert all(c.doc_id == doc for c in again.citations)


def test_question_kinds_and_phrase_growth():
    assert question_kind(EN_DEMO) == "decision" and question_kind("Why was the appeal allowed?") == "reason"
    assert question_kind("本案如何判决？") == "decision" and question_kind("判决的理由是什么？") == "reason"
    assert question_kind("Who is the appellant?") == "span" and question_kind("辩护人是谁？") == "span"
    text = "一、被告人周明远犯盗窃罪，判处有期徒刑十个月，并处罚金人民币五千元。"
    a = text.index("判处")
    assert text[slice(*complete_span(text, a, a + 2, ZH_DEMO))] == text  # two things asked: the sentence
    assert (
        text[slice(*complete_span(text, a, a + 2, "判处什么刑罚？"))] == "判处有期徒刑十个月"
    )  # a lone verb: its clause
    b = text.index("有期徒刑十个月")
    assert complete_span(text, b, b + 7, "判处什么刑罚？") == (b, b + 7)  # already a phrase
    paid = "二、陈某智于本判决生效之日起十日内向唐某纯支付护工费8500元；"
    c = paid.index("8500元")
    assert complete_span(paid, c, c + 5, "陈某智应支付多少护工费？") == (c, c + 5)  # a sum is a whole answer
    header = "IN THE COURT OF APPEAL (CIVIL DIVISION)\nON APPEAL FROM THE HIGH COURT"
    # part of a heading grows to the whole heading line
    assert complete_span(header, 0, 12, "Which court heard it?") == (0, header.index("\n"))
    assert question_kind("What does clause 4.5 of the policy provide?") == "statement"
    assert question_kind("What happens if the licensee is acquired?") == "statement"
    assert question_kind("What does section 7 of the lease prohibit?") == "statement"
    # how a thing is done is said by a sentence; how long or how much is a phrase
    assert question_kind("How can the customer terminate the license?") == "statement"
    assert question_kind("How are disputes resolved if mediation fails?") == "statement"
    assert question_kind("How long is the term?") == question_kind("How much is paid?") == "span"
    # the issue, the test applied or what a claim was about is said by a sentence; an issue price is a sum
    assert question_kind("What was the issue in Kilraine v Lion Academy Trust?") == "statement"
    assert question_kind("What is the test for whether a contract was adopted?") == "statement"
    assert question_kind("What was the underlying claim against the hospital trust about?") == "statement"
    assert question_kind("What was the issue price of the shares?") == "span"
    # how the court saw a point is said by its reasoning (怎么处理 is a decision)
    assert question_kind("辩护人认为奖池费不应计入抽头数额，法院怎么看？") == "reason"
    assert question_kind("登记机关有没有审查义务？法院怎么认定的？") == "span"  # whether: YES / NO first
    assert question_kind("赃款如何处理？") == "decision" and question_kind("辩护人是谁？") == "span"
    # a Chinese term counts where the sentence holds it, however jieba cuts the two
    assert term_share("刘汉月从敲诈所得中分到了多少钱？", "被告人刘汉月分得850元。") > 0
    assert term_share("What was paid?", "Nothing else.") == 0
    assert all(map(is_heading, ["Lady Justice Okonjo:", "The grounds of appeal", "判决如下：", "CONCLUSION"]))
    assert not is_heading("12. I also agree.")
    # a reader span that cannot be the answer: a heading's words, or no number for "how much"
    assert not fits_question(
        "Can the affiliate assign this agreement?", "AFFILIATE OFFICE AGREEMENT", "HEADER"
    )
    assert fits_question("Which court heard the appeal?", "COURT OF APPEAL", "HEADER")
    assert not fits_question("How much is the consultant paid?", "Consultant", "CLAUSE")
    assert fits_question("How much is the consultant paid?", "$18,000 per month", "CLAUSE")
    assert fits_question("被告应返还原告多少装修款？", "30,400元", "VERDICT")


def test_the_side_a_span_question_asks_about():
    """A sum a party asked for and the sum the court awarded stand side by side in one judgment: the
    question says which it wants (a question naming the court asks for its ruling, request or not)."""
    assert asked_side("原告请求被告返还多少装修款？") == "claim"
    assert asked_side("陈某智应支付多少护工费？") == "ruling"
    assert asked_side("法院是否支持原告的请求？") == "ruling"
    assert asked_side("What did the claimant seek?") == "claim"
    assert asked_side("How much was the defendant ordered to pay?") == "ruling"
    assert asked_side("Who is the appellant?") is None and asked_side("案件受理费是多少？") is None
    claim = "为此，唐某纯诉至法院，请求四子女每月支付赡养费800元，陈某智支付应由其负担的护工费12109元。"
    award = (
        "二、陈某智于本判决生效之日起十日内向唐某纯支付护工费8500元；"  # an item quoted in a digest's facts
    )
    ruling_q, claim_q = "法院判决陈某智支付多少护工费？", "唐某纯请求陈某智支付多少护工费？"
    assert on_asked_side(ruling_q, "FACTS", award) and not on_asked_side(ruling_q, "FACTS", claim)
    assert on_asked_side(claim_q, "FACTS", claim) and not on_asked_side(claim_q, "FACTS", award)
    # the disposition is the court's even where it names the claims it dismisses; a party's block is its own
    assert not on_asked_side(claim_q, "VERDICT", "三、驳回原告唐某纯其他诉讼请求。")
    assert on_asked_side(claim_q, "CLAIMS", "判令被告返还装修款人民币86,000元")
    # a prosecutor's proposed sentence reported in the facts is its word, not a ruling; a protest is argued
    proposed = "据此认为被告人史某的行为已构成盗窃罪，并建议对其判处有期徒刑六个月至八个月，并处罚金。"
    assert not is_ruling("FACTS", proposed) and is_claim("FACTS", proposed)
    assert is_ruling("VERDICT", "被告人史某犯盗窃罪，判处有期徒刑七个月，并处罚金人民币2000元。")
    assert asked_side("抗诉机关的抗诉理由是什么？") == "claim"
    assert is_claim("PROCEDURE", "某某区人民检察院抗诉称：原审判决罚金刑明显过高，量刑不均衡。")
    assert not on_asked_side("案件受理费是多少？", "VERDICT", award)


_PIECES = [
    "原告",
    "请求",
    "判决：",
    "本院予以采纳",
    "诉至法院",
    "判处",
    "于本判决生效之日",
    "，",
    "。",
    "appellant",
    " contends",
    " we affirm",
    " is dismissed",
    " sought",
    " the judge",
    " held",
    ".",
]


@given(
    st.sampled_from(["CLAIMS", "DEFENSE", "FACTS", "PROCEDURE", "OPINION", "VERDICT", "HEADER"]),
    st.lists(st.sampled_from(_PIECES), max_size=8).map("".join),
)
def test_a_sentence_is_never_on_both_sides(block_type, sentence):
    assert not (is_ruling(block_type, sentence) and is_claim(block_type, sentence))
    for question in ("原告请求被告返还多少装修款？", "法院判决被告返还多少装修款？", "案件受理费是多少？"):
        side = asked_side(question)
        expected = {"claim": is_claim, "ruling": is_ruling}.get(side, lambda *_: False)
        assert on_asked_side(question, block_type, sentence) == expected(block_type, sentence)


def test_a_question_about_what_a_party_argued_is_answered_by_its_sentence():
    """原告的诉讼请求是什么 or "What did the appellant argue?" asks for a party's words, wherever they are
    reported; the court's answer to an argument (本院予以采纳) and a sum asked for stay out."""
    for q in (
        "原告的诉讼请求是什么？",
        "上诉人的上诉理由是什么？",
        "辩护人提出了什么意见？",
        "What did the appellant argue?",
        "What were the grounds of appeal?",  # the appellant's, not the court's reasons
    ):
        assert question_kind(q) == "argument", q
    for q in (
        "原告请求被告返还多少装修款？",
        "What does claim 3 require?",
        "Which lawyer argued the appeal?",
    ):
        assert question_kind(q) != "argument", q
    assert question_kind("法院驳回张某某再审申请的理由是什么？") == "reason"  # the court's reasons
    defence = [
        ("a:7", "FACTS", "其辩护人提出，被告人系初犯，积极退赔被害人全部损失，并取得谅解，请求从轻处罚。"),
        ("a:10", "OPINION", "辩护人提出的相关辩护意见，与查明的事实相符，本院予以采纳。"),
    ]
    assert rank_sentences("辩护人提出了什么意见？", defence, "argument")[0].segment_id == "a:7"
    claims = Passage("d:8", "d", "李春华向本院提出诉讼请求：判令被告返还装修款人民币86,000元。", "CLAIMS")
    cited = [Citation("d", "d:11", "OPINION", None, None, 0.5, "本院认为，合同合法有效。")]
    assert [sid for sid, _, _ in with_dispositions("argument", cited, [claims])] == ["d:11", "d:8"]


def test_what_a_court_below_decided_is_not_this_courts_disposition():
    assert question_kind("What did the district court decide?") == "ruling below"
    assert question_kind("What did the judge below decide?") == "ruling below"
    assert question_kind("What did the court decide on appeal?") == "decision"
    opinion = [
        (
            "u:3",
            "OPINION",
            "The district court sentenced him to eighty-seven months, at the bottom of the range.",
        ),
        ("u:5", "OPINION", "He asked that his second sentence be vacated."),
        ("u:9", "VERDICT", "We affirm the judgment of the district court."),
    ]
    ranked = rank_sentences("What did the district court decide?", opinion, "ruling below")
    assert ranked[0].segment_id == "u:3"
    disposition = Passage("u:9", "u", "We affirm the judgment of the district court.", "VERDICT")
    assert with_dispositions("decision", [], [disposition]) == [("u:9", "VERDICT", disposition.text)]
    assert with_dispositions("ruling below", [], [disposition]) == []  # this court's, not added


def test_a_reason_is_the_courts_reasoning_not_the_order_it_led_to():
    opinion = [
        (
            "e:14",
            "OPINION",
            "14. For these reasons I would order the Local Authority to pay the costs of the appeal.",
        ),
        (
            "e:12",
            "OPINION",
            "12. The Local Authority was not even-handed in presenting the case to the judge below.",
        ),
        (
            "e:9",
            "OPINION",
            "9. The appellant contends that the Local Authority should pay the costs of the appeal.",
        ),
    ]
    ranked = rank_sentences(
        "Why did the court order the Local Authority to pay the costs?", opinion, "reason"
    )
    assert [r.segment_id for r in ranked][:1] == ["e:12"]


def test_a_decision_question_is_answered_by_a_ruling_wherever_it_is_reported():
    """A case digest reports its courts' rulings in its facts; a 裁定书's ruling is one short sentence; an
    index line naming a ruling's case number, or a party's request, is no answer to what was decided."""
    for q in (
        "法院对张某某的再审申请如何处理？",
        "再审申请结果如何？",
        "法院作出什么裁定？",
        "二审法院如何判决？",
    ):
        assert question_kind(q) == "decision", q
    ruling = "驳回张某某的再审申请。"
    passages = [
        (
            "d:8",
            "PROCEDURE",
            "再审申请人张某某因与被申请人何某某民间借贷纠纷一案，不服民事判决，向本院申请再审。",
        ),
        ("d:9", "CLAIMS", "张某某申请再审称，请求撤销二审判决，改判驳回何某某的诉讼请求。"),
        ("d:17", "VERDICT", ruling),
    ]
    assert rank_sentences("法院对张某某的再审申请如何处理？", passages, "decision")[0].text == ruling
    digest = [
        (
            "c:7",
            "OPINION",
            "本案中，对于被告人杨某海的行为是否构成交通肇事罪，法院充分听取了控辩双方的意见。",
        ),
        ("c:9", "FACTS", "容县人民法院作出刑事判决：被告人杨某海犯交通肇事罪，判处有期徒刑七个月。"),
        (
            "c:24",
            "APPENDIX",
            "一审：广西壮族自治区容县人民法院（2023）桂0921刑初144号刑事判决（2023年9月27日）",
        ),
    ]
    ranked = rank_sentences("被告人杨某海被判处什么刑罚？", digest, "decision")
    assert ranked[0].segment_id == "c:9" and "c:24" not in {r.segment_id for r in ranked}
    assert [r.segment_id for r in rank_sentences("一审判决的理由是什么？", digest, "reason")][:1] == ["c:7"]
    assert is_sentence(ruling) and not is_sentence("裁判理由") and not is_sentence("驳回。")
    # which instance ruled: told by the case number (民初 a first instance, 民终 a second)
    two = [
        ("t:6", "FACTS", "九龙坡区人民法院作出（2024）渝0107民初17358号民事判决：驳回原告其他诉讼请求。"),
        ("t:6", "FACTS", "重庆市第五中级人民法院作出（2024）渝05民终11440号民事判决：驳回上诉，维持原判。"),
    ]
    for question, number in (("二审法院如何判决？", "民终"), ("一审法院如何判决？", "民初")):
        assert number in rank_sentences(question, two, "decision")[0].text


def test_an_english_ruling_outside_the_disposition_and_a_disposition_the_search_left_out():
    opinion = [
        ("o:3", "OPINION", "The failure to memorialize the judgment of the trial court is a clerical error."),
        ("o:9", "OPINION", "Finding no error, we affirm the motion court's judgment."),
    ]
    assert rank_sentences("What did the court decide?", opinion, "decision")[0].segment_id == "o:9"
    cited = [Citation("d", "d:1", "OPINION", 1, None, 0.03, "The district court denied the motion.")]
    doc = [
        Passage("d:1", "d", "The district court denied the motion.", "OPINION"),
        Passage("d:7", "d", "For these reasons, the appeal is dismissed.", "VERDICT"),
        Passage("d:8", "d", "So ordered.", "SIGNATURE"),
    ]
    assert [p[0] for p in with_dispositions("decision", cited, doc)] == ["d:1", "d:7"]
    assert [p[0] for p in with_dispositions("reason", cited, doc)] == ["d:1"]


def test_an_english_disposition_s_ruling_before_the_sentences_beside_it():
    """A disposition block may open with what the appellant argued; the ruling itself, however short
    ("AFFIRMED."), answers. A ruling the court only supposes ("only if … will its decision be reversed") or
    reports from below ranks under the court's own, and "court" / "decide" tell no sentence apart."""
    opinion = [
        (
            "v:1",
            "VERDICT",
            "In this venue, the Chapel renews its substantive claims and asserts that the district court "
            "abused its discretion. Consequently, we dismiss the appeal without prejudice.",
        ),
        (
            "o:5",
            "OPINION",
            "Only if the lower court's conclusions are irrational will its decision be reversed.",
        ),
        ("v:9", "VERDICT", "AFFIRMED."),
    ]
    ranked = rank_sentences("What did the court decide?", opinion, "decision")
    assert [r.text for r in ranked[:2]] == [
        "Consequently, we dismiss the appeal without prejudice.",
        "AFFIRMED.",
    ]
    assert {r.text[:7] for r in ranked[2:]} == {"In this", "Only if"}
    assert states_ruling("Order reversed, etc.") and states_ruling(
        "His requested relief is denied at this time."
    )
    assert states_ruling("73. All three grounds fail, and if my Lord agrees the appeal should be dismissed.")
    assert not states_ruling("However, no new trial is required if only the contract claims are reversed.")
    assert states_ruling("MODIFIED AND AFFIRMED.") and states_ruling(
        "Accordingly, we modify and affirm the decision."
    )
    assert not states_ruling("The Court will order why the counterclaims ought not to be dismissed.")
    assert not states_ruling("“51. The Appeal is dismissed (Article 3 only)")  # the tribunal's, quoted
    assert [
        p[0]
        for p in with_dispositions(
            "decision", [], [Passage("o:2", "o", "I would also dismiss the appeal.", "OPINION")]
        )
    ] == ["o:2"]


def test_choose_threshold_maximises_answer_vs_abstain_f1():
    conf = [0.9, 0.8, 0.6, 0.4, 0.3, 0.0]
    right = [True, True, False, True, False, False]
    answerable = [True, True, True, True, False, False]
    # t=0.4: 3 right of 4 given, recall 3/4 -> F1 0.75; t=0.8: P 1, R 0.5 -> 0.667; t=0.3: P 0.6, R 0.75 -> 0.667
    threshold, f1 = choose_threshold(conf, right, answerable)
    assert threshold == 0.4 and abs(f1 - 0.75) < 1e-9


def test_a_sentence_holds_the_words_of_the_heading_it_stands_under():
    """ "What were the grounds of appeal?" is answered under the heading "Grounds of appeal", though no
    sentence there repeats it; a long line ending in a colon is no heading, and headings stop at the end of
    their document."""
    doc = [
        Passage("e:3", "e", "Background", "FACTS"),
        Passage("e:4", "e", "The lease was granted in 2011 for a term of ten years.", "FACTS"),
        Passage("e:5", "e", "Grounds of appeal", "CLAIMS"),
        Passage("e:6", "e", "The tenant says that the notice was served too late.", "CLAIMS"),
        Passage(
            "e:7",
            "e",
            "For these reasons the notice was held valid by the judge, and we now turn to it:",
            "OPINION",
        ),
        Passage("f:0", "f", "The appeal was heard in May of that year.", "CLAIMS"),
    ]
    headings = section_headings(doc)
    assert headings == {"e:4": "Background", "e:6": "Grounds of appeal", "e:7": "Grounds of appeal"}
    passages = [(p.segment_id, p.block_type, p.text) for p in doc]
    question = "What were the grounds of appeal?"
    assert rank_sentences(question, passages, "argument", None, headings)[0].segment_id == "e:6"
    assert rank_sentences(question, passages, "argument")[0].segment_id == "f:0"  # without the headings


@pytest.mark.parametrize(
    ("question", "want"),
    [
        # a cover's parties with their roles, its court whole, the court below as the cover names it
        # (retrieval/caption_questions.py)
        (
            "Who are the parties to the appeal?",
            "Marlowe Freight Limited (appellant); Bristow Anchor Insurance PLC (respondent)",
        ),
        ("Which court heard the appeal?", "COURT OF APPEAL (CIVIL DIVISION)"),
        ("Which court was the appeal from?", "THE HIGH COURT OF JUSTICE, BUSINESS AND PROPERTY COURTS"),
        ("Who are the inventors?", "Clara Westbrook and Tomas Leidecker"),
        ("When was the patent filed?", "Feb. 17, 2023"),
        ("What is the patent number?", "US 12,345,678 B2"),
        ("What fraction of the excitation light goes to the reference cell?", "approximately five percent"),
    ],
)
def test_the_demo_heads_and_measures_answer_with_their_phrase(asker, question, want):
    assert asker.ask(question).answer == want


def test_a_patents_front_page_answers_from_the_field_that_states_it(asker):
    filed = asker.ask("When was the fluorescence sensor patent filed?")
    assert (filed.answer, filed.answer_type) == ("Feb. 17, 2023", "field")
    assert "Feb. 17, 2023" in filed.evidence.sentence and filed.evidence.page is not None
    assert filed.evidence.segment_id in {c.segment_id for c in filed.citations}
    assert asker.ask("Who owns the patent?").answer == "Riverstone Instruments Inc."
    assert asker.ask("When was the patent granted?").answer == "Jun. 3, 2025"
    # a judgment's filing is no patent's: the question takes the usual route
    assert asker.ask("When was the appeal filed?").answer_type != "field"


def test_whether_the_court_granted_the_claims_is_read_from_the_ruling(asker):
    found = asker.ask("法院是否支持了原告李春华的诉讼请求？")
    assert (found.answer, found.answer_type) == ("部分支持", "span")  # two claims granted, the rest rejected
    assert found.evidence.sentence == "三、驳回原告李春华的其他诉讼请求。" and found.evidence.page is not None
    assert [e.sentence[:2] for e in found.more_evidence] == ["一、", "二、"]
    assert asker.ask("法院是否驳回了原告的全部诉讼请求？").answer == "部分驳回"


def test_the_demo_claim_and_the_sentence_of_a_numbered_paragraph(asker):
    claim = asker.ask("What does claim 1 claim?")
    assert claim.answer.startswith("1. A fluorescence sensor comprising:") and claim.answer_type == "sentence"
    held = asker.ask("How long was the vessel detained?")
    assert held.answer == "nineteen days"
    assert held.evidence.sentence.startswith("3. On arrival the vessel was detained for nineteen days")
